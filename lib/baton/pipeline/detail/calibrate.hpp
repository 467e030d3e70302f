#pragma once
/// \file
/// Measured stage costs (internal to the driver): before planning, rank 0 runs every stage on a
/// copy of the first input systems for a few calls and times it, so that the planner weighs a stage
/// by its step budget times its measured time per atom-step, not by steps alone.

#include <vector>

#include "baton/pipeline/pipeline.hpp"
#include "baton/systems/host_system.hpp"

namespace baton::pipeline::detail {

/// Seconds per atom-step of each stage on `sample` (0 for a stage that took no step), each stage
/// run on its own copy, after one untimed step, for `steps_per_call` steps per call until about
/// `seconds` have passed or its systems finished.
std::vector<double> seconds_per_atom_step(const std::vector<StageSpec>& specs,
                                          const std::vector<systems::HostSystem>& sample,
                                          int steps_per_call, double seconds = 0.01);

}  // namespace baton::pipeline::detail
