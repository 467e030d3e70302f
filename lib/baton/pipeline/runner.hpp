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

/// Slots of `batch` whose status is `status` as the host knows it (host_slots(): the step's
/// snapshot and the host's changes since), ascending.
std::vector<int> slots_with(const dynamics::SystemsBatch& batch, dynamics::SystemStatus status);

/// Counts the systems that the runner's last call finished (Finished in the host's view), records
/// their steps as this stage's and marks them Held (a kernel; the host's view follows). Returns
/// their slots.
std::vector<int> take_finished(Runner& r);

/// Runs the stage's call on the runner's Active systems (as the host knows them), up to `steps`
/// steps each, timed as "<stage> compute" (the timer waits for it). Reads nothing back: the next
/// step's snapshot does.
void advance(Runner& r, int steps, TimerRegistry& timers);

/// Moves Held systems of `from` (slot order, as the host knows them) that fit `to` there as
/// Active, and calls `enter` on them when a stage is given. Returns how many moved.
int move_held(dynamics::SystemsBatch& from, dynamics::SystemsBatch& to, Stage* enter);

}  // namespace baton::pipeline::detail
