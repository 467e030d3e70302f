#include "baton/pipeline/detail/runner.hpp"

#include <algorithm>

#include "baton/systems/codec.hpp"

namespace baton::pipeline::detail {

using systems::BatchCapacity;
using systems::SystemsBatch;
using systems::SystemStatus;

std::vector<int> slots_with(const systems::SystemsBatch& batch, systems::SystemStatus status) {
  std::vector<int> out;
  const std::vector<systems::HostSlot>& slots = batch.host_slots();
  for (std::size_t s = 0; s < slots.size(); ++s)
    if (slots[s].status == static_cast<int>(status))
      out.push_back(static_cast<int>(s));
  return out;
}

std::vector<int> take_finished(Runner& r) {
  const std::vector<int> finished = slots_with(r.batch, systems::SystemStatus::Finished);
  if (finished.empty())
    return finished;
  Kokkos::View<int*, systems::SystemsBatch::memory_space> d_slots("baton::pipeline::finished",
                                                                  finished.size());
  {
    auto h = Kokkos::create_mirror_view(d_slots);
    for (std::size_t i = 0; i < finished.size(); ++i)
      h(i) = finished[i];
    Kokkos::deep_copy(d_slots, h);
  }
  auto steps = r.batch.steps;
  auto stage_steps = r.batch.stage_steps;
  auto status = r.batch.status;
  const int stage = r.counters.stage;
  Kokkos::parallel_for(
      "baton::pipeline::record_finished",
      Kokkos::RangePolicy<systems::SystemsBatch::execution_space>(
          0, static_cast<int>(finished.size())),
      KOKKOS_LAMBDA(int i) {
        const int s = d_slots(i);
        stage_steps(s, stage) = steps(s);
        status(s) = static_cast<int>(systems::SystemStatus::Held);
      });
  for (int s : finished) {
    systems::HostSlot& slot = r.batch.host_slot(s);
    r.counters.systems += 1;
    r.counters.steps += static_cast<long>(slot.steps);
    r.counters.atom_steps += static_cast<long>(slot.steps) * slot.count;
    slot.status = static_cast<int>(systems::SystemStatus::Held);
  }
  return finished;
}

void advance(Runner& r, int steps, TimerRegistry& timers) {
  if (slots_with(r.batch, systems::SystemStatus::Active).empty())
    return;
  const double t0 = TimerRegistry::now();
  r.impl->advance(r.batch, steps);
  Kokkos::fence();  // for the timer (the next step's snapshot would wait for it anyway)
  const double dt = TimerRegistry::now() - t0;
  timers.record(r.counters.name + " compute", t0, dt);
  r.counters.compute_seconds += dt;
}

void note_arrivals(Runner& r, int first) {
  const std::vector<systems::HostSlot>& slots = r.batch.host_slots();
  r.failed.resize(static_cast<std::size_t>(first));
  for (std::size_t s = static_cast<std::size_t>(first); s < slots.size(); ++s)
    r.failed.push_back(slots[s].status == static_cast<int>(systems::SystemStatus::Finished) ? 1
                                                                                            : 0);
}

std::vector<int> move_held(systems::SystemsBatch& from, systems::SystemsBatch& to,
                           dynamics::Stage* enter, const std::vector<char>* failed) {
  const std::vector<int> held = slots_with(from, systems::SystemStatus::Held);
  if (held.empty())
    return {};
  const std::vector<int> atoms = from.count_on_host();
  systems::BatchCapacity room = to.free();
  std::vector<int> chosen;
  for (int s : held) {
    const int a = atoms[static_cast<std::size_t>(s)];
    if (room.systems >= 1 && room.atoms >= a) {
      chosen.push_back(s);
      room.systems -= 1;
      room.atoms -= a;
    }
  }
  if (chosen.empty())
    return {};
  systems::PackedSystems wire = systems::pack_systems(from, chosen);
  if (failed != nullptr) {
    std::vector<char> chosen_failed;
    for (int s : chosen)
      chosen_failed.push_back(static_cast<std::size_t>(s) < failed->size()
                                  ? (*failed)[static_cast<std::size_t>(s)]
                                  : 0);
    systems::mark_failed_in_index(wire, chosen_failed);
  }
  const int first = systems::unpack_systems(to, wire);
  from.remove(chosen);
  if (enter != nullptr)
    enter->enter(to, first, static_cast<int>(chosen.size()));
  return chosen;
}

bool move_held(Runner& from, Runner& to) {
  const int first = to.batch.num_systems();
  const std::vector<int> moved = move_held(from.batch, to.batch, to.impl.get(), &from.failed);
  if (moved.empty())
    return false;
  note_arrivals(to, first);
  for (auto s = moved.rbegin(); s != moved.rend(); ++s)  // ascending: the back first
    if (static_cast<std::size_t>(*s) < from.failed.size())
      from.failed.erase(from.failed.begin() + *s);
  return true;
}

}  // namespace baton::pipeline::detail
