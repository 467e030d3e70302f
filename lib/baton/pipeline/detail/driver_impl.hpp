#pragma once
/// \file
/// What a Driver holds on its rank (internal: shared by driver.cpp, the step, and
/// driver_setup.cpp, which builds it).

#include <cstddef>
#include <optional>
#include <vector>

#include "baton/pipeline/checkpoint.hpp"
#include "baton/pipeline/detail/collector.hpp"
#include "baton/pipeline/detail/feeder.hpp"
#include "baton/pipeline/detail/links.hpp"
#include "baton/pipeline/detail/overflow.hpp"
#include "baton/pipeline/detail/runner.hpp"
#include "baton/pipeline/detail/snapshot.hpp"
#include "baton/pipeline/driver.hpp"
#include "baton/pipeline/source.hpp"
#include "baton/systems/codec.hpp"
#include "baton/systems/systems_batch.hpp"

namespace baton::pipeline {

namespace detail {

/// A hand-off received this step, its index read with the step's snapshot.
struct Arrival {
  std::size_t link = 0;  ///< index into Driver::Impl::up
  systems::PackedSystems wire;
  int max_systems = 0;  ///< the credit it came under: it holds no more systems
  std::size_t at = 0;   ///< where the snapshot holds its index
};

}  // namespace detail

struct Driver::Impl {
  std::vector<detail::Runner> runners;
  std::vector<detail::UpLink> up;      // chain links, or rank 0's input link
  std::vector<detail::DownLink> down;  // chain links
  std::optional<detail::OverflowChain> overflow;
  std::optional<detail::Feeder> feeder;  // rank 0
  std::optional<detail::Collector> collector;
  std::optional<VectorSource> vector_source;  // setup(vector)
  std::optional<detail::Snapshot> snapshot;   // the step's one read (set by setup)
  std::vector<detail::Arrival> arrivals;      // this step's hand-offs
  std::vector<std::size_t> runner_at;         // where the snapshot holds each runner's batch
  bool last_segment = false;
  std::size_t round_robin = 0;
  bool eos_sent = false;
  HandoffCopies copies;  // the paths counted here (the feeder and the collector count their own)
  Checkpoints resume;    // systems that go on from a checkpoint (every rank: set by setup)
  long checkpoint_interval = 0;  // pipeline steps between checkpoints (0: none)
  // Input balanced by load (a one-segment plan; Feeder::balance_by_load): each of this rank's
  // stages' share of the segment's cost, and the steps it expects a system to take.
  bool balanced = false;
  std::vector<double> stage_share;
  std::vector<double> stage_steps;
};

}  // namespace baton::pipeline
