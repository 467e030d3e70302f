#include "baton/dynamics/forces.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

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
