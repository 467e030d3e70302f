#pragma once
/// \file
/// Langevin dynamics (BAOAB splitting, Leimkuhler and Matthews 2013) of every system in a batch.

#include <cstdint>
#include <string>

#include <utility>

#include "baton/dynamics/detail/checks.hpp"
#include "baton/dynamics/eam.hpp"
#include "baton/dynamics/forces.hpp"
#include "baton/dynamics/integrator.hpp"
#include "baton/dynamics/lennard_jones.hpp"
#include "baton/dynamics/morse.hpp"
#include "baton/dynamics/potential.hpp"
#include "baton/dynamics/random.hpp"
#include "baton/dynamics/stage.hpp"
#include "baton/dynamics/team.hpp"
#include "baton/dynamics/units.hpp"

namespace baton::dynamics {

/// Langevin parameters, in the units of `units` (defaults for Lennard-Jones units).
struct LangevinOptions {
  double dt = 0.005;            ///< time step
  long steps = 1000;            ///< steps per system
  double temperature = 0.1;     ///< bath temperature
  double friction = 1.0;        ///< gamma, in 1 / time
  std::uint64_t seed = 1;       ///< noise seed
  Units units = Units::lj();    ///< the unit system of the potential, masses and temperature
  NeighbourOptions neighbours;  ///< how pairs are found (neighbours.hpp)
};

/// Throws baton::Error naming the parameter when `p` is not usable.
void validate(const LangevinOptions& p);

/// BAOAB as an Update of IntegratorStage (integrator.hpp): the numbers of LangevinOptions its steps
/// use.
struct LangevinUpdate {
  double dt, ftm2v;
  long steps;
  double kt;           ///< k_B T / mvv2e (velocity^2 x mass)
  double c1, c2;       ///< O step: v <- c1 v + c2 sqrt(kT/m) xi
  std::uint64_t seed;  ///< noise seed

  explicit LangevinUpdate(const LangevinOptions& p = {});

  std::string name() const { return "langevin"; }
  long step_limit() const { return steps; }
  double cost_estimate() const { return static_cast<double>(steps); }

  /// B, A, O, A (the step: before_forces, forces, after_forces).
  template <class System>
  KOKKOS_INLINE_FUNCTION void before_forces(System& s) const {
    const int b = s.begin();
    const std::uint64_t key = random_key(seed, s.id(), s.steps());  // the noise's system and step
    if constexpr (detail::on_host) {  // the same numbers, a block of atoms at a time
      s.template for_each_block<normal3_block>([&](int first, int n) {
        double m[normal3_block], moves[normal3_block];
        for (int k = 0; k < n; ++k) {
          m[k] = s.mass(first + k);
          moves[k] = s.movable(first + k) ? 1.0 : 0.0;
        }
#if BATON_AVX2_DISPATCH
        if (detail::host_has_avx2())
          baoa_block_avx2(key, first - b, n, &s.x(first, 0), &s.v(first, 0), &s.f(first, 0), m,
                          moves);
        else
#endif
          baoa_block(key, first - b, n, &s.x(first, 0), &s.v(first, 0), &s.f(first, 0), m, moves);
      });
    } else {
      s.for_each_atom([&](int i) {
        const Normal3 xi = random_normal3(key, i - b);
        const double noise[3] = {xi.x, xi.y, xi.z};
        baoa(s.mass(i), s.movable(i) ? 1.0 : 0.0, noise, &s.x(i, 0), &s.v(i, 0), &s.f(i, 0));
      });
    }
  }
  /// B, A, O, A for one atom of mass m that moves (1) or is fixed (0; its noise is then dropped),
  /// with its noise, position, velocity and force (3 each).
  KOKKOS_FORCEINLINE_FUNCTION void baoa(double m, double moves, const double* noise, double* x,
                                        double* v, const double* f) const {
    const double h = 0.5 * dt * ftm2v / m;
    const double sd = c2 * detail::math_sqrt(kt / m) * moves;
    for (int d = 0; d < 3; ++d) {
      v[d] += h * f[d];                  // B
      x[d] += 0.5 * dt * v[d];           // A
      v[d] = c1 * v[d] + sd * noise[d];  // O
      x[d] += 0.5 * dt * v[d];           // A
    }
  }
  /// before_forces on the host for n <= normal3_block atom rows of one system: positions x,
  /// velocities v and forces f (3 per row), masses m and 1 (moves) or 0 (fixed) per row, the noise
  /// of its atoms atom0, atom0 + 1, ... for `key` (random_normal3_block). Its loops vectorise; the
  /// numbers are the device step's, bit for bit.
  KOKKOS_FORCEINLINE_FUNCTION void baoa_block_body(std::uint64_t key, std::int64_t atom0, int n,
                                                   double* __restrict x, double* __restrict v,
                                                   const double* __restrict f,
                                                   const double* __restrict m,
                                                   const double* __restrict moves) const {
    double noise[3 * normal3_block];
    random_normal3_block(key, atom0, n, noise);
    for (int k = 0; k < n; ++k)
      baoa(m[k], moves[k], noise + 3 * k, x + 3 * k, v + 3 * k, f + 3 * k);
  }
  BATON_NOINLINE KOKKOS_FUNCTION void baoa_block(std::uint64_t key, std::int64_t atom0, int n,
                                                 double* x, double* v, const double* f,
                                                 const double* m, const double* moves) const {
    baoa_block_body(key, atom0, n, x, v, f, m, moves);
  }
#if BATON_AVX2_DISPATCH
  /// baoa_block for AVX2 (team.hpp, BATON_AVX2_DISPATCH): the same bits.
  BATON_NOINLINE BATON_TARGET_AVX2 void baoa_block_avx2(std::uint64_t key, std::int64_t atom0,
                                                        int n, double* x, double* v,
                                                        const double* f, const double* m,
                                                        const double* moves) const {
    baoa_block_body(key, atom0, n, x, v, f, m, moves);
  }
#endif
  /// B, with the new forces.
  template <class System>
  KOKKOS_INLINE_FUNCTION void after_forces(System& s) const {
    s.for_each_atom([&](int i) {
      const double h = 0.5 * dt * ftm2v / s.mass(i);
      for (int d = 0; d < 3; ++d)
        s.v(i, d) += h * s.f(i, d);  // B
    });
  }
};

/// The "langevin" stage: params.steps BAOAB steps per system, then Finished. The O-step noise of
/// atom a (index in its system) at step k (batch.steps) of system `id` is
/// random_normal3(random_key(seed, id, k), a), its x, y, z for the three components. Incoming
/// velocities are kept; enter() computes forces.
template <class Potential = LennardJones>
class LangevinStage : public IntegratorStage<Potential, LangevinUpdate> {
 public:
  explicit LangevinStage(Potential potential = {}, LangevinOptions params = {})
      : IntegratorStage<Potential, LangevinUpdate>(std::move(potential), LangevinUpdate(params),
                                                   params.neighbours, params.units),
        params_(std::move(params)) {
    validate(params_);
  }

  const LangevinOptions& params() const noexcept { return params_; }

 private:
  LangevinOptions params_;
};

extern template class IntegratorStage<LennardJones, LangevinUpdate>;
extern template class IntegratorStage<Morse, LangevinUpdate>;
extern template class IntegratorStage<Eam, LangevinUpdate>;
extern template class LangevinStage<LennardJones>;
extern template class LangevinStage<Morse>;
extern template class LangevinStage<Eam>;

}  // namespace baton::dynamics
