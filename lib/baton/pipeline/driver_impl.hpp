#pragma once
/// \file
/// What a Driver holds on its rank (internal: shared by driver.cpp, the step, and
/// driver_setup.cpp, which builds it).

#include <cstddef>
#include <optional>
#include <vector>

#include "baton/dynamics/systems_batch.hpp"
#include "baton/pipeline/collector.hpp"
#include "baton/pipeline/driver.hpp"
#include "baton/pipeline/feeder.hpp"
#include "baton/pipeline/links.hpp"
#include "baton/pipeline/overflow.hpp"
#include "baton/pipeline/runner.hpp"
#include "baton/pipeline/source.hpp"

namespace baton::pipeline {

struct Driver::Impl {
  std::vector<detail::Runner> runners;
  std::vector<detail::UpLink> up;      // chain links, or rank 0's input link
  std::vector<detail::DownLink> down;  // chain links
  std::optional<detail::OverflowChain> overflow;
  std::optional<detail::Feeder> feeder;  // rank 0
  std::optional<detail::Collector> collector;
  std::optional<VectorSource> vector_source;  // setup(vector)
  bool last_segment = false;
  std::size_t round_robin = 0;
  bool eos_sent = false;
};

}  // namespace baton::pipeline
