#include "baton/pipeline/detail/runner.hpp"

#include <algorithm>
#include <utility>

#include <Kokkos_Core.hpp>

#include "baton/systems/fields.hpp"

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
  const std::vector<int> finished = slots_with(r.batch, systems::SystemStatus::finished);
  if (finished.empty())
    return finished;
  const std::size_t n = finished.size();
  if (r.finished_slots.extent(0) < n) {
    r.finished_slots = systems::SystemsBatch::view<int*>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "baton::pipeline::finished"),
        std::max(n, static_cast<std::size_t>(r.batch.capacity().systems)));
    r.finished_host = Kokkos::create_mirror_view(r.finished_slots);
  }
  {
    const auto rows = std::make_pair(std::size_t{0}, n);
    const auto h = Kokkos::subview(r.finished_host, rows);
    for (std::size_t i = 0; i < n; ++i)
      h(i) = finished[i];
    Kokkos::deep_copy(Kokkos::subview(r.finished_slots, rows), h);
  }
  const auto d_slots = r.finished_slots;
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
        status(s) = static_cast<int>(systems::SystemStatus::held);
      });
  for (int s : finished) {
    systems::HostSlot& slot = r.batch.host_slot(s);
    r.counters.systems += 1;
    r.counters.steps += static_cast<long>(slot.steps);
    r.counters.atom_steps += static_cast<long>(slot.steps) * slot.count;
    slot.status = static_cast<int>(systems::SystemStatus::held);
  }
  return finished;
}

void advance(Runner& r, int steps, TimerRegistry& timers) {
  if (slots_with(r.batch, systems::SystemStatus::active).empty())
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
    r.failed.push_back(slots[s].status == static_cast<int>(systems::SystemStatus::finished) ? 1
                                                                                            : 0);
}

namespace {

// Appends the systems in `slots` of `from` to `to` with one kernel, batch to batch, as
// systems::unpack_systems() would from a message packed of them: in that order, in `status`
// (one per system), steps 0, scratch 0, forces 0, lists to be built. Returns the first new slot.
// `to` must have room (the caller chose `slots` to fit).
int move_systems(const systems::SystemsBatch& from, const std::vector<int>& slots,
                 systems::SystemsBatch& to, const std::vector<int>& status) {
  using exec = systems::SystemsBatch::execution_space;
  using team_policy = Kokkos::TeamPolicy<exec>;
  const int n = static_cast<int>(slots.size());
  const int s0 = to.num_systems();
  const int a0 = to.num_atoms();
  // Per system: its slot in `from`, its first atom there, its first atom in `to`, its status.
  const std::vector<systems::HostSlot>& from_slots = from.host_slots();
  std::vector<int> atom_of_slot(from_slots.size() + 1, 0);
  for (std::size_t s = 0; s < from_slots.size(); ++s)
    atom_of_slot[s + 1] = atom_of_slot[s] + from_slots[s].count;
  Kokkos::View<int* [4], Kokkos::LayoutRight, systems::SystemsBatch::memory_space> plan(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "baton::pipeline::move"),
      static_cast<std::size_t>(n));
  std::vector<systems::HostSlot> added;
  {
    auto h = Kokkos::create_mirror_view(plan);
    int dst = a0;
    for (int k = 0; k < n; ++k) {
      const auto s = static_cast<std::size_t>(slots[static_cast<std::size_t>(k)]);
      h(k, 0) = static_cast<int>(s);
      h(k, 1) = atom_of_slot[s];
      h(k, 2) = dst;
      h(k, 3) = status[static_cast<std::size_t>(k)];
      dst += from_slots[s].count;
      systems::HostSlot slot = from_slots[s];
      slot.status = status[static_cast<std::size_t>(k)];
      slot.steps = 0;
      added.push_back(slot);
    }
    Kokkos::deep_copy(plan, h);
  }
  // Every field as unpack would set it from a message of `from` (systems/fields.hpp): the
  // travelling ones copied, the others 0 or kept; the bookkeeping (offset, status, system_of_atom)
  // here.
  const int stages = to.num_stages();
  const auto f_count = from.count;
  const auto offset = to.offset;
  const auto st = to.status;
  const auto system_of_atom = to.system_of_atom;
  const systems::fields::BatchViews src_views(from), dst_views(to);
  Kokkos::parallel_for(
      "baton::pipeline::move_systems", team_policy(n, Kokkos::AUTO),
      KOKKOS_LAMBDA(const team_policy::member_type& team) {
        const int k = team.league_rank();
        const int from_s = plan(k, 0);
        const int src = plan(k, 1);
        const int dst = plan(k, 2);
        const int s = s0 + k;
        const int c = f_count(from_s);
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          offset(s) = dst;
          st(s) = plan(k, 3);
          systems::fields::batch_fields::for_each([&](auto f) {
            systems::fields::move_field<systems::fields::Per::system, decltype(f)>(
                src_views, dst_views, stages, from_s, s);
          });
        });
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, c), [&](int i) {
          system_of_atom(dst + i) = s;
          systems::fields::batch_fields::for_each([&](auto f) {
            systems::fields::move_field<systems::fields::Per::atom, decltype(f)>(
                src_views, dst_views, stages, src + i, dst + i);
          });
        });
      });
  Kokkos::fence();  // `plan` goes out of scope; `from` loses these systems next
  to.append_slots(added);
  return s0;
}

}  // namespace

std::vector<int> move_held(systems::SystemsBatch& from, systems::SystemsBatch& to,
                           dynamics::Stage* enter, const std::vector<char>* failed) {
  const std::vector<int> held = slots_with(from, systems::SystemStatus::held);
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
  // Arrival status as the wire's (systems::PackedIndex): Finished for a system that failed before.
  std::vector<int> status;
  for (int s : chosen) {
    const bool f = failed != nullptr && static_cast<std::size_t>(s) < failed->size() &&
                   (*failed)[static_cast<std::size_t>(s)] != 0;
    status.push_back(
        static_cast<int>(f ? systems::SystemStatus::finished : systems::SystemStatus::active));
  }
  const int first = move_systems(from, chosen, to, status);
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
