#pragma once
/// \file
/// The kernel building blocks every dynamics stage shares: one Kokkos team per system, and sums
/// and maxima over a system's atoms in a fixed order.

#include <Kokkos_Core.hpp>

#include "baton/systems/systems_batch.hpp"

namespace baton::dynamics::detail {

using ExecutionSpace = systems::SystemsBatch::execution_space;
using TeamPolicy = Kokkos::TeamPolicy<ExecutionSpace>;
using TeamMember = TeamPolicy::member_type;
using Positions = systems::SystemsBatch::view<double* [3]>;
using SpeciesView = systems::SystemsBatch::view<int*>;
using AtomScratch = systems::SystemsBatch::view<double* [2]>;

/// True where kernels run on the host: teams of one thread there loop over pairs i < j once and use
/// Newton's third law; on GPUs the team's threads take atoms i and loop over all j != i.
inline constexpr bool on_host =
    Kokkos::SpaceAccessibility<ExecutionSpace, Kokkos::HostSpace>::accessible;

/// One team per system for `n` systems: one thread per team on the host, Kokkos' choice on GPUs.
inline TeamPolicy system_teams(int n) {
  if constexpr (on_host)
    return TeamPolicy(n, 1);
  else
    return TeamPolicy(n, Kokkos::AUTO);
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

}  // namespace baton::dynamics::detail
