#pragma once
/// \file
/// One stage on this rank (internal to the driver): the stage object, its batch, its counters, and
/// the moves of finished systems between batches.

#include <memory>
#include <vector>

#include "baton/dynamics/stage.hpp"
#include "baton/dynamics/systems_batch.hpp"
#include "baton/pipeline/stage_counters.hpp"
#include "baton/timing/timers.hpp"

namespace baton::pipeline::detail {

struct Runner {
  std::unique_ptr<Stage> impl;
  dynamics::SystemsBatch batch;
  StageCounters counters;
};

/// Slots whose status is `status`, ascending.
std::vector<int> slots_with(const std::vector<int>& statuses, dynamics::SystemStatus status);

/// Advances the runner's Active systems by up to `steps` steps (timed as "<stage> compute"), then
/// counts the systems that finished and marks them Held. Returns their slots.
std::vector<int> advance(Runner& r, int steps, TimerRegistry& timers);

/// Moves Held systems of `from` (slot order) that fit `to` there as Active, and calls `enter` on
/// them when a stage is given. Returns how many moved.
int move_held(dynamics::SystemsBatch& from, dynamics::SystemsBatch& to, Stage* enter);

}  // namespace baton::pipeline::detail
