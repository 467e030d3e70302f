#pragma once
/// \file
/// The kernel building blocks every dynamics stage shares: one Kokkos team per system, and sums
/// and maxima over a system's atoms in a fixed order.

#include <Kokkos_Core.hpp>
#include <utility>

#include "baton/core/config.hpp"

#include "baton/dynamics/random.hpp"
#include "baton/systems/systems_batch.hpp"

/// Keeps a function out of line (GCC, Clang and nvcc): the rarely taken paths of a hot loop, so
/// that they do not change how the compiler inlines the loop itself.
#if defined(__GNUC__) || defined(__clang__)
#define BATON_NOINLINE __attribute__((noinline))
#else
#define BATON_NOINLINE
#endif

/// x86-64 host builds whose flags leave AVX2 out (a distribution's generic x86-64) also compile a
/// few host loops for AVX2 (BATON_TARGET_AVX2), without FMA, and take that copy where the CPU has
/// AVX2 (detail::host_has_avx2): those loops' sums are in an order the source fixes and nothing is
/// fused, so both copies give the same bits and a rank's results do not depend on its node's CPU.
/// (AVX-512's target includes FMA, which would change them.) 0 elsewhere: GPU compilers, other
/// CPUs, and builds with AVX2 on already.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__AVX2__) && \
    !defined(__CUDACC__) && !defined(__HIPCC__) && !defined(__SYCL_DEVICE_ONLY__) &&          \
    !defined(__NVCOMPILER)
#define BATON_AVX2_DISPATCH 1
#define BATON_TARGET_AVX2 __attribute__((target("avx2")))
namespace baton::dynamics::detail {
/// Whether this CPU, and its OS, run AVX2.
inline bool host_has_avx2() {
  return __builtin_cpu_supports("avx2");
}
}  // namespace baton::dynamics::detail
#else
#define BATON_AVX2_DISPATCH 0
#endif

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

/// True where kernels take the host algorithms: teams of one thread visit each pair once and
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

/// Systems of at least this many atoms (that use a neighbour list) run on a wide team: all the
/// rank's threads on one system, where the host algorithms run on a space of more than one thread
/// (system_launches() in forces.hpp). Smaller systems keep one thread each. The choice depends on
/// the system alone, so a system's result does not depend on the batch around it; on a wide team
/// it depends on the number of threads (the order in which the threads' sums are added).
inline constexpr int wide_team_atoms = 2048;

/// Components per atom, and sums after them, of a wide team's accumulators
/// (NeighbourData::team_acc).
inline constexpr int team_acc_width = 3;
inline constexpr int team_acc_sums = 8;
/// Atoms per block of a wide team's half-pair loop: thread t takes blocks t, t + T, t + 2T, ... so
/// that a half list's work (larger for lower indices when atoms are in no spatial order) is shared
/// evenly and neighbouring atoms stay on one thread.
inline constexpr int team_acc_block = 64;

/// Which slot each team of a launch takes: league rank r takes slot first + r, or slots(r) when
/// `mapped`. Copied into the kernel.
struct SlotMap {
  systems::SystemsBatch::view<int*> slots;
  int first = 0;
  bool mapped = false;
  explicit SlotMap(int first_slot) : first(first_slot) {}
  explicit SlotMap(systems::SystemsBatch::view<int*> s) : slots(std::move(s)), mapped(true) {}
  KOKKOS_INLINE_FUNCTION int slot(int league_rank) const {
    return mapped ? slots(league_rank) : first + league_rank;
  }
};

/// One kernel launch over systems: its policy and its teams' slots.
struct SystemLaunch {
  TeamPolicy policy;
  SlotMap map;
  SystemLaunch(TeamPolicy p, SlotMap m) : policy(std::move(p)), map(std::move(m)) {}
};

/// A wide team's half-pair loop over atoms [begin, end) of one system, without atomics: thread t
/// runs body(i, a, sums) for the atoms i of its blocks (team_acc_block), adding to its own
/// accumulators a (team_acc_width components per atom, atom i at a + width (i - begin)) and to
/// its partial sums (team_acc_sums of them); then every atom's total over the threads, added in
/// thread order, goes to finish(i, total), and every thread gets the sums' totals in `sums`.
/// `Width` <= team_acc_width components per atom are used.
template <int Width, class Body, class Finish>
KOKKOS_INLINE_FUNCTION void wide_half_loop(const TeamMember& team,
                                           const systems::SystemsBatch::view<double**>& acc,
                                           int begin, int end, double* sums, const Body& body,
                                           const Finish& finish) {
  static_assert(Width >= 1 && Width <= team_acc_width, "Width: 1 to team_acc_width");
  const int threads = team.team_size(), t = team.team_rank();
  const int n = end - begin;
  if (acc.extent(0) < static_cast<std::size_t>(threads) ||
      acc.extent(1) < static_cast<std::size_t>(Width) * n + team_acc_sums)
    Kokkos::abort("baton::dynamics: a wide team without its accumulators (reserve_team_acc)");
  double* a = &acc(t, 0);
  double* partial = a + static_cast<std::size_t>(Width) * n;
  for (int k = 0; k < Width * n + team_acc_sums; ++k)
    a[k] = 0;
  for (int block = t; block * team_acc_block < n; block += threads) {
    const int lo = begin + block * team_acc_block;
    const int hi = lo + team_acc_block < end ? lo + team_acc_block : end;
    for (int i = lo; i < hi; ++i)
      body(i, a, partial);
  }
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end), [&](int i) {
    double total[Width];
    for (int c = 0; c < Width; ++c)
      total[c] = 0;
    for (int u = 0; u < threads; ++u)
      for (int c = 0; c < Width; ++c)
        total[c] += acc(u, static_cast<std::size_t>(Width) * (i - begin) + c);
    finish(i, total);
  });
  for (int k = 0; k < team_acc_sums; ++k) {
    double total = 0;
    for (int u = 0; u < threads; ++u)
      total += acc(u, static_cast<std::size_t>(Width) * n + k);
    sums[k] = total;
  }
  team.team_barrier();  // every thread has read every accumulator before one is zeroed again
}

/// Sum over [begin, end) of f(i), in the team (sequential in index order on one thread).
template <class F>
KOKKOS_INLINE_FUNCTION double team_sum(const TeamMember& team, int begin, int end, const F& f) {
  double sum = 0;
  Kokkos::parallel_reduce(
      Kokkos::TeamThreadRange(team, begin, end), [&](int i, double& acc) { acc += f(i); }, sum);
  return sum;
}

/// N sums reduced together (team_sums): one pass where N team_sum calls would take N.
template <int N>
struct Sums {
  double v[N];
  KOKKOS_INLINE_FUNCTION Sums() {
    for (int c = 0; c < N; ++c)
      v[c] = 0;
  }
  KOKKOS_INLINE_FUNCTION Sums& operator+=(const Sums& o) {
    for (int c = 0; c < N; ++c)
      v[c] += o.v[c];
    return *this;
  }
#if KOKKOS_VERSION < 40000
  // Kokkos 3's reducers also join through volatile references.
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile Sums& o) volatile {
    for (int c = 0; c < N; ++c)
      v[c] += o.v[c];
  }
#endif
};

/// The N sums over [begin, end) of what f(i, acc) adds into acc[0..N), in the team, every thread
/// of it getting them.
template <int N, class F>
KOKKOS_INLINE_FUNCTION Sums<N> team_sums(const TeamMember& team, int begin, int end, const F& f) {
  Sums<N> total;
  Kokkos::parallel_reduce(
      Kokkos::TeamThreadRange(team, begin, end), [&](int i, Sums<N>& acc) { f(i, acc.v); },
      Kokkos::Sum<Sums<N>>(total));
  return total;
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

/// Sums<N> as a Kokkos reduction value (Kokkos::Sum needs its identity).
namespace Kokkos {
template <int N>
struct reduction_identity<baton::dynamics::detail::Sums<N>> {
  KOKKOS_FORCEINLINE_FUNCTION static baton::dynamics::detail::Sums<N> sum() { return {}; }
};
}  // namespace Kokkos
