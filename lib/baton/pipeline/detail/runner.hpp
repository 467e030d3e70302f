#pragma once
/// \file
/// One stage on this rank (internal to the driver): the stage object, its batch, its counters, and
/// the moves of finished systems between batches.

#include <memory>
#include <vector>

#include "baton/dynamics/stage.hpp"
#include "baton/pipeline/stage_counters.hpp"
#include "baton/systems/systems_batch.hpp"
#include "baton/timing/timers.hpp"

namespace baton::pipeline::detail {

struct Runner {
  std::unique_ptr<dynamics::Stage> impl;
  systems::SystemsBatch batch;
  StageCounters counters;
  /// Per slot of `batch`: whether its system failed, from the step's snapshot and the arrivals
  /// since (note_arrivals()); what move_held() needs to enter failed systems Finished. Valid from
  /// the snapshot until the batch first loses systems in the step (rebuilt by the next snapshot).
  std::vector<char> failed;
  /// take_finished()'s slot list on the device, and its host copy: kept from call to call (on a
  /// GPU every allocation costs a synchronisation), grown as needed.
  systems::SystemsBatch::view<int*> finished_slots;
  systems::SystemsBatch::view<int*>::HostMirror finished_host;
};

/// After systems were appended to `r.batch` from slot `first` on: notes which of them failed
/// (they arrived Finished: systems::PackedIndex).
void note_arrivals(Runner& r, int first);

/// Slots of `batch` whose status is `status` as the host knows it (host_slots(): the step's
/// snapshot and the host's changes since), ascending.
std::vector<int> slots_with(const systems::SystemsBatch& batch, systems::SystemStatus status);

/// Counts the systems that the runner's last call finished (Finished in the host's view), records
/// their steps as this stage's and marks them Held (a kernel; the host's view follows). Returns
/// their slots.
std::vector<int> take_finished(Runner& r);

/// Runs the stage's call on the runner's Active systems (as the host knows them), up to `steps`
/// steps each, timed as "<stage> compute" (the timer waits for it). Reads nothing back: the next
/// step's snapshot does.
void advance(Runner& r, int steps, TimerRegistry& timers);

/// Moves Held systems of `from` (slot order, as the host knows them) that fit `to` there, and calls
/// `enter` on them when a stage is given. They arrive Active, or Finished where `failed` (one flag
/// per slot of `from`; null: none known) says the system failed: no stage steps a failed system,
/// it passes through. One kernel copies them batch to batch (as unpacking a message packed of
/// them would, without the message). Returns the slots of `from` that moved (removed from `from`).
std::vector<int> move_held(systems::SystemsBatch& from, systems::SystemsBatch& to,
                           dynamics::Stage* enter, const std::vector<char>* failed = nullptr);
/// move_held() between two stages on this rank: `to.failed` notes the arrivals; `from.failed`
/// forgets the slots that left. Returns whether any moved.
bool move_held(Runner& from, Runner& to);

}  // namespace baton::pipeline::detail
