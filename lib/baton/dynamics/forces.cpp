#include "baton/dynamics/forces.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "baton/systems/cell.hpp"

namespace baton::dynamics::detail {

void check_cutoff(const systems::SystemsBatch& batch, int first, int n, double cutoff_squared) {
  // From the host's view of the slots: nothing is read back unless a cell is too small.
  const double cutoff = std::sqrt(cutoff_squared);
  for (int k = first; k < first + n; ++k) {
    const systems::HostSlot& slot = batch.host_slots()[static_cast<std::size_t>(k)];
    if (slot.pbc == 0)
      continue;
    const std::string problem = systems::cutoff_problem(slot.cell, slot.pbc, cutoff);
    if (problem.empty())
      continue;
    // Only systems that run are checked: read this one's status (and id, for the message).
    const auto one = std::make_pair(k, k + 1);
    const auto status = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(),
                                                            Kokkos::subview(batch.status, one));
    const auto id =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Kokkos::subview(batch.id, one));
    systems::count_host_sync();
    systems::count_host_sync();
    if (status(0) == static_cast<int>(systems::SystemStatus::active))
      throw Error("baton::dynamics::compute_forces: system " + std::to_string(id(0)) + ": " +
                  problem);
  }
}

std::vector<SystemLaunch> system_launches(const systems::SystemsBatch& batch, int first, int n,
                                          NeighbourLists& lists, bool half_pairs, bool wide) {
  if (!half_pairs)
    return {SystemLaunch(system_teams(n), SlotMap(first))};
  const int threads = ExecutionSpace().concurrency();
  if (!host_space || !wide || threads <= 1)
    return {SystemLaunch(TeamPolicy(n, 1), SlotMap(first))};
  // From the host's view of the slots; a list is used from all_pairs_below atoms.
  const int list_from = lists.settings().all_pairs_below;
  std::vector<int> narrow, wide_slots;
  int largest = 0;
  for (int s = first; s < first + n; ++s) {
    const int atoms = batch.host_slots()[static_cast<std::size_t>(s)].count;
    if (atoms >= wide_team_atoms && atoms >= list_from) {
      wide_slots.push_back(s);
      largest = atoms > largest ? atoms : largest;
    } else {
      narrow.push_back(s);
    }
  }
  if (wide_slots.empty())
    return {SystemLaunch(TeamPolicy(n, 1), SlotMap(first))};
  lists.reserve_team_acc(threads, largest);
  const auto to_view = [](const std::vector<int>& slots) {
    systems::SystemsBatch::view<int*> v(
        Kokkos::view_alloc("baton::dynamics::launch_slots", Kokkos::WithoutInitializing),
        slots.size());
    Kokkos::deep_copy(
        v, Kokkos::View<const int*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
               slots.data(), slots.size()));
    return v;
  };
  std::vector<SystemLaunch> launches;
  if (!narrow.empty())
    launches.emplace_back(TeamPolicy(static_cast<int>(narrow.size()), 1), SlotMap(to_view(narrow)));
  launches.emplace_back(TeamPolicy(static_cast<int>(wide_slots.size()), threads),
                        SlotMap(to_view(wide_slots)));
  return launches;
}

void stop_fixed_atoms(systems::SystemsBatch& batch, int first, int n) {
  if (n <= 0)
    return;
  const auto v = batch.velocities;
  const auto movable = batch.movable;
  const auto offset = batch.offset;
  const auto count = batch.count;
  Kokkos::parallel_for(
      "baton::dynamics::stop_fixed_atoms", system_teams(n), KOKKOS_LAMBDA(const TeamMember& team) {
        const int s = first + team.league_rank();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, offset(s), offset(s) + count(s)),
                             [&](int i) {
                               if (movable(i) == 0)
                                 for (int d = 0; d < 3; ++d)
                                   v(i, d) = 0;
                             });
      });
}

void forget_conserved(systems::SystemsBatch& batch, int first, int n) {
  if (n <= 0)
    return;
  Kokkos::deep_copy(Kokkos::subview(batch.conserved, std::make_pair(first, first + n)),
                    std::numeric_limits<double>::quiet_NaN());
}

}  // namespace baton::dynamics::detail
