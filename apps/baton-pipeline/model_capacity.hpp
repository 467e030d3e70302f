#pragma once
// baton-pipeline's model calls (--potential torch): the memory one call takes, measured at setup on
// the input's densest system, and what a memory budget then allows: the edges of one call and the
// stages' atom capacity (docs/models.md, "Capacity").

#include <baton/baton.hpp>
#include <baton/dynamics/model.hpp>
#include <cstdint>
#include <string>

#include "input.hpp"
#include "options.hpp"

namespace pipeline_app {

struct ModelCapacity {
  std::int64_t max_edges = 0;  // edges of one call (0: no limit)
  int capacity_atoms = 0;      // every stage's atom capacity
  std::string description;     // rank 0: what was measured and chosen, a few lines
};

/// Rank 0 probes the model's memory and sizes its calls within --model-memory (or the node's
/// available memory shared among its ranks); every rank gets the result. A system with more edges
/// than a call may have, or a budget that holds no call of the stages' capacity, is a usage error
/// (exit code 2) before any work.
ModelCapacity size_model_calls(const baton::Communicator& world, const Options& o,
                               const FilePotential& file, const EdgeScan& scan);

}  // namespace pipeline_app
