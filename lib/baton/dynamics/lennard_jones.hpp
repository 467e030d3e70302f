#pragma once
/// \file
/// The Lennard-Jones potential on a SystemsBatch: all pairs inside each system (no periodic box),
/// one Kokkos team per system. Also the team building blocks the dynamics stages share.

#include <Kokkos_Core.hpp>

#include "baton/dynamics/random.hpp"
#include "baton/dynamics/systems_batch.hpp"

namespace baton::dynamics {

/// E = sum over pairs 4 epsilon ((sigma/r)^12 - (sigma/r)^6), for r < cutoff when cutoff > 0,
/// minus its value at the cutoff when `shift` is set (the energy is then continuous there).
struct LennardJones {
  double epsilon = 1;
  double sigma = 1;
  double cutoff = 0;  ///< <= 0: no cutoff
  bool shift = true;  ///< shift the energy to 0 at the cutoff
};

/// Throws baton::Error naming the parameter unless epsilon and sigma are positive and finite and
/// the cutoff is finite.
void validate(const LennardJones& lj);

/// Forces, per-system energy and fmax (largest atom force norm) for slots [first_slot,
/// first_slot + n_slots), skipping systems that are not Active. A system's result depends only on
/// its own atoms (bit-identical in any slot, beside any other systems, run to run).
void compute_forces(const LennardJones& lj, SystemsBatch& batch, int first_slot, int n_slots);

namespace detail {

using ExecutionSpace = SystemsBatch::execution_space;
using TeamPolicy = Kokkos::TeamPolicy<ExecutionSpace>;
using TeamMember = TeamPolicy::member_type;
using Positions = SystemsBatch::view<double* [3]>;

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

/// The potential's constants, ready for the pair loop.
struct LjTerms {
  double c12 = 0, c6 = 0;  ///< 4 eps sigma^12, 4 eps sigma^6 (energy)
  double f12 = 0, f6 = 0;  ///< 48 eps sigma^12, 24 eps sigma^6 (force / r^2 times r^6)
  double rc2 = 0;          ///< squared cutoff (infinity: none)
  double shift = 0;        ///< pair energy at the cutoff, subtracted inside it
};

/// Validates `lj` and precomputes its terms.
LjTerms lj_terms(const LennardJones& lj);

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

/// Forces on atoms [begin, end) of one system from all its pairs; every thread of the team gets the
/// system's energy and fmax. HalfPairs: one thread, pairs i < j once (host); otherwise the team's
/// threads share the atoms i and loop over all j != i (no atomics).
template <bool HalfPairs>
KOKKOS_INLINE_FUNCTION void team_forces(const TeamMember& team, const LjTerms& lj,
                                        const Positions& x, const Positions& f, int begin, int end,
                                        double& energy, double& fmax) {
  double e = 0;
  if constexpr (HalfPairs) {
    // One thread, pairs i < j once, Newton's third law; raw pointers into the LayoutRight rows.
    const double* __restrict xp = &x(0, 0);
    double* __restrict fp = &f(0, 0);
    for (int i = 3 * begin; i < 3 * end; ++i)
      fp[i] = 0;
    for (int i = begin; i < end; ++i) {
      const double xi = xp[3 * i], yi = xp[3 * i + 1], zi = xp[3 * i + 2];
      double fx = 0, fy = 0, fz = 0;
      for (int j = i + 1; j < end; ++j) {
        const double dx = xi - xp[3 * j], dy = yi - xp[3 * j + 1], dz = zi - xp[3 * j + 2];
        const double r2 = dx * dx + dy * dy + dz * dz;
        if (r2 < lj.rc2) {
          const double inv2 = 1.0 / r2;
          const double inv6 = inv2 * inv2 * inv2;
          e += inv6 * (lj.c12 * inv6 - lj.c6) - lj.shift;
          const double s = inv6 * (lj.f12 * inv6 - lj.f6) * inv2;
          fx += s * dx;
          fy += s * dy;
          fz += s * dz;
          fp[3 * j] -= s * dx;
          fp[3 * j + 1] -= s * dy;
          fp[3 * j + 2] -= s * dz;
        }
      }
      fp[3 * i] += fx;
      fp[3 * i + 1] += fy;
      fp[3 * i + 2] += fz;
    }
  } else {
    e = 0.5 * team_sum(team, begin, end, [&](int i) {
          const double xi = x(i, 0), yi = x(i, 1), zi = x(i, 2);
          double fx = 0, fy = 0, fz = 0, ei = 0;
          for (int j = begin; j < end; ++j) {
            const double dx = xi - x(j, 0), dy = yi - x(j, 1), dz = zi - x(j, 2);
            const double r2 = dx * dx + dy * dy + dz * dz;
            if (j != i && r2 < lj.rc2) {
              const double inv2 = 1.0 / r2;
              const double inv6 = inv2 * inv2 * inv2;
              ei += inv6 * (lj.c12 * inv6 - lj.c6) - lj.shift;
              const double s = inv6 * (lj.f12 * inv6 - lj.f6) * inv2;
              fx += s * dx;
              fy += s * dy;
              fz += s * dz;
            }
          }
          f(i, 0) = fx;
          f(i, 1) = fy;
          f(i, 2) = fz;
          return ei;
        });
  }
  team.team_barrier();
  const double f2 = team_max(team, begin, end, [&](int i) {
    return f(i, 0) * f(i, 0) + f(i, 1) * f(i, 1) + f(i, 2) * f(i, 2);
  });
  energy = e;
  fmax = detail::math_sqrt(f2);
}

/// Throws baton::Error "<who>: <parameter> = <value>, but it must be <requirement>" unless `ok`.
void require(const char* who, const char* parameter, double value, bool ok,
             const char* requirement);
/// Throws baton::Error unless slots [first, first + n) are in the batch.
void check_slots(const char* who, const SystemsBatch& batch, int first, int n);
/// Throws baton::Error unless max_steps >= 0.
void check_max_steps(const char* who, int max_steps);

/// compute_forces with the pair loop chosen explicitly (tests run the GPU loop on the host too).
void compute_forces(const LennardJones& lj, SystemsBatch& batch, int first_slot, int n_slots,
                    bool half_pairs);

}  // namespace detail

}  // namespace baton::dynamics
