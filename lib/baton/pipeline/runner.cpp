#include "baton/pipeline/runner.hpp"

#include <algorithm>

#include "baton/pipeline/wire.hpp"

namespace baton::pipeline::detail {

using dynamics::BatchCapacity;
using dynamics::SystemsBatch;
using dynamics::SystemStatus;

std::vector<int> slots_with(const std::vector<int>& statuses, SystemStatus status) {
  std::vector<int> out;
  for (std::size_t s = 0; s < statuses.size(); ++s)
    if (statuses[s] == static_cast<int>(status))
      out.push_back(static_cast<int>(s));
  return out;
}

namespace {

// Records the steps of newly Finished systems as their step count for `stage`, marks them Held, and
// counts them.
void record_finished(Runner& r, const std::vector<int>& finished) {
  if (finished.empty())
    return;
  Kokkos::View<int*, SystemsBatch::memory_space> d_slots("baton::pipeline::finished",
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
      Kokkos::RangePolicy<SystemsBatch::execution_space>(0, static_cast<int>(finished.size())),
      KOKKOS_LAMBDA(int i) {
        const int s = d_slots(i);
        stage_steps(s, stage) = steps(s);
        status(s) = static_cast<int>(SystemStatus::Held);
      });
  auto h_steps = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), steps);
  dynamics::count_host_sync();
  const std::vector<int> atoms = r.batch.count_on_host();
  for (int s : finished) {
    r.counters.systems += 1;
    r.counters.steps += static_cast<long>(h_steps(s));
    r.counters.atom_steps += static_cast<long>(h_steps(s)) * atoms[static_cast<std::size_t>(s)];
  }
}

}  // namespace

std::vector<int> advance(Runner& r, int steps, TimerRegistry& timers) {
  if (r.batch.empty())
    return {};
  std::vector<int> status = r.batch.status_on_host();
  if (std::find(status.begin(), status.end(), static_cast<int>(SystemStatus::Active)) !=
      status.end()) {
    const double t0 = TimerRegistry::now();
    r.impl->advance(r.batch, steps);
    Kokkos::fence();
    const double dt = TimerRegistry::now() - t0;
    timers.record(r.counters.name + " compute", t0, dt);
    r.counters.compute_seconds += dt;
    status = r.batch.status_on_host();
  }
  std::vector<int> finished = slots_with(status, SystemStatus::Finished);
  record_finished(r, finished);
  return finished;
}

int move_held(SystemsBatch& from, SystemsBatch& to, Stage* enter) {
  const std::vector<int> held = slots_with(from.status_on_host(), SystemStatus::Held);
  if (held.empty())
    return 0;
  const std::vector<int> atoms = from.count_on_host();
  BatchCapacity room = to.free();
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
    return 0;
  const WireBatch wire = pack_systems(from, chosen);
  const int first = unpack_systems(to, wire);
  from.remove(chosen);
  if (enter != nullptr)
    enter->enter(to, first, static_cast<int>(chosen.size()));
  return static_cast<int>(chosen.size());
}

}  // namespace baton::pipeline::detail
