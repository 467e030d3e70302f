#pragma once
/// \file
/// The kernel building blocks every dynamics stage shares: one Kokkos team per system, and sums
/// and maxima over a system's atoms in a fixed order.

#include <Kokkos_Core.hpp>

#include "baton/core/config.hpp"

#include "baton/dynamics/random.hpp"
#include "baton/systems/systems_batch.hpp"

namespace baton::dynamics::detail {

using ExecutionSpace = systems::SystemsBatch::execution_space;
using TeamPolicy = Kokkos::TeamPolicy<ExecutionSpace>;
using TeamMember = TeamPolicy::member_type;
using Positions = systems::SystemsBatch::view<double* [3]>;
using SpeciesView = systems::SystemsBatch::view<int*>;
using AtomScratch = systems::SystemsBatch::view<double* [2]>;
using MovableView = systems::SystemsBatch::view<int*>;  ///< 1: the atom moves; 0: fixed

/// True for host execution spaces (Serial, OpenMP, Threads).
inline constexpr bool host_space =
    Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible;

/// True where kernels take the host algorithms: teams of one thread loop over pairs i < j once and
/// use Newton's third law. Elsewhere (GPUs, and host spaces in a build with the CMake option
/// BATON_DEVICE_ALGORITHMS_ON_HOST) a team's threads take atoms i and loop over all j != i.
inline constexpr bool on_host = host_space && !BATON_DEVICE_ALGORITHMS_ON_HOST;

/// One team per system for `n` systems: one thread per team for the host algorithms, Kokkos' choice
/// on GPUs, and teams of up to 4 of the space's threads for the GPU algorithms on a host space (1
/// on Serial), so that a team's threads really run side by side there.
inline TeamPolicy system_teams(int n) {
  if constexpr (on_host) {
    return TeamPolicy(n, 1);
  } else if constexpr (host_space) {
    const int threads = ExecutionSpace().concurrency();
    return TeamPolicy(n, threads < 1 ? 1 : (threads > 4 ? 4 : threads));
  } else {
    return TeamPolicy(n, Kokkos::AUTO);
  }
}

/// Sum over [begin, end) of f(i), in the team (sequential in index order on one thread).
template <class F>
KOKKOS_INLINE_FUNCTION double team_sum(const TeamMember& team, int begin, int end, const F& f) {
  double sum = 0;
  Kokkos::parallel_reduce(
      Kokkos::TeamThreadRange(team, begin, end), [&](int i, double& acc) { acc += f(i); }, sum);
  return sum;
}

/// Maximum over [begin, end) of f(i) (0 when empty or all smaller), in the team.
template <class F>
KOKKOS_INLINE_FUNCTION double team_max(const TeamMember& team, int begin, int end, const F& f) {
  double result = 0;
  Kokkos::parallel_reduce(
      Kokkos::TeamThreadRange(team, begin, end),
      [&](int i, double& acc) {
        const double v = f(i);
        acc = v > acc ? v : acc;
      },
      Kokkos::Max<double>(result));
  return result > 0 ? result : 0;
}

/// The atoms of [begin, end) that move (HostSystem::move_mask; the others are fixed); every thread
/// of the team gets it.
KOKKOS_INLINE_FUNCTION int team_moving(const TeamMember& team, const MovableView& movable,
                                       int begin, int end) {
  return static_cast<int>(
      team_sum(team, begin, end, [&](int i) { return movable(i) != 0 ? 1.0 : 0.0; }));
}

/// After a force call on atoms [begin, end) of which some are fixed: their forces zeroed, and
/// fmax the largest force norm of the atoms that move (every thread of the team; barriers before
/// and after, as the forces are written and read by other threads).
template <class Forces>
KOKKOS_INLINE_FUNCTION void hold_fixed(const TeamMember& team, const MovableView& movable,
                                       const Positions& f, int begin, int end, Forces& r) {
  team.team_barrier();
  const double f2 = team_max(team, begin, end, [&](int i) {
    if (movable(i) == 0) {
      for (int d = 0; d < 3; ++d)
        f(i, d) = 0;
      return 0.0;
    }
    return f(i, 0) * f(i, 0) + f(i, 1) * f(i, 1) + f(i, 2) * f(i, 2);
  });
  team.team_barrier();
  r.fmax = math_sqrt(f2);
}

}  // namespace baton::dynamics::detail
