#pragma once
/// \file
/// Stochastic velocity rescaling (CSVR: Bussi, Donadio and Parrinello, J. Chem. Phys. 126, 014101,
/// 2007; LAMMPS' fix temp/csvr) of every system in a batch: velocity Verlet whose kinetic energy
/// is rescaled after every step so that it samples the canonical distribution at the bath
/// temperature.

#include <cstdint>
#include <string>
#include <utility>

#include "baton/dynamics/detail/checks.hpp"
#include "baton/dynamics/eam.hpp"
#include "baton/dynamics/forces.hpp"
#include "baton/dynamics/integrator.hpp"
#include "baton/dynamics/lennard_jones.hpp"
#include "baton/dynamics/morse.hpp"
#include "baton/dynamics/random.hpp"
#include "baton/dynamics/thermostat.hpp"
#include "baton/dynamics/verlet.hpp"

namespace baton::dynamics {

/// CSVR parameters (ThermostatOptions: dt, steps, temperature, tau, draw, seed, units,
/// neighbours).
struct CsvrOptions : ThermostatOptions {};

/// Throws baton::Error naming the parameter when `p` is not usable.
void validate(const CsvrOptions& p);

/// A chi-squared deviate of `dof` >= 2 degrees of freedom, 2 Gamma(dof / 2), by Marsaglia and
/// Tsang's method (ACM TOMS 26, 363, 2000) from the counter-based stream of (seed, system, step):
/// its tries use atom keys 1, 2, ... (a normal and a uniform each). The same on every thread.
KOKKOS_INLINE_FUNCTION double chi_squared(int dof, std::uint64_t seed, std::int64_t system,
                                          std::int64_t step) {
  const double d = 0.5 * dof - 1.0 / 3.0, c = 1 / detail::math_sqrt(9 * d);
  for (std::int64_t t = 1;; ++t) {
    const double x = random_normal(seed, system, step, t, 1);
    const double v1 = 1 + c * x;
    if (v1 <= 0)
      continue;
    const double v = v1 * v1 * v1;
    const double u = 1.0 - random_uniform(seed, system, step, t, 2);  // (0, 1]
    if (detail::math_log(u) < 0.5 * x * x + d - d * v + d * detail::math_log(v))
      return 2 * d * v;
  }
}

/// Velocity Verlet, then Bussi's rescaling of the velocities, as an Update of IntegratorStage.
struct CsvrUpdate {
  VerletUpdate verlet;  ///< the Verlet step (and the velocities drawn on entry)
  double kt;            ///< k_B T / mvv2e (velocity^2 x mass)
  double c;             ///< exp(-dt / tau)
  std::uint64_t seed;   ///< the rescaling's noise

  explicit CsvrUpdate(const CsvrOptions& p = {});

  std::string name() const { return "csvr"; }
  long step_limit() const { return verlet.steps; }
  double cost_estimate() const { return static_cast<double>(verlet.steps); }
  void enter(systems::SystemsBatch& batch, int first, int n) const {
    verlet.enter(batch, first, n);
  }

  template <class System>
  KOKKOS_INLINE_FUNCTION void before_forces(System& s) const {
    verlet.before_forces(s);
  }
  /// The second half kick, then the rescaling: with K the kinetic energy, N_f degrees of freedom
  /// (3 N - 3: the centre of mass's momentum is conserved; 3 N_moving with fixed atoms), Kt = N_f
  /// kT / 2, R_1 ... R_Nf standard normals (R_1 = random_normal(seed', id, step, 0, 0); the sum of
  /// the others a chi-squared deviate of N_f - 1 degrees of freedom, chi_squared()), alpha^2 = c +
  /// (1 - c) (R_1^2 + sum_{j>=2} R_j^2) Kt / (N_f K)
  ///                        + 2 R_1 sqrt(c (1 - c) Kt / (N_f K)),
  /// with alpha's sign that of R_1 + sqrt(c N_f K / ((1 - c) Kt)) (Bussi et al., eq. A7).
  template <class System>
  KOKKOS_INLINE_FUNCTION void after_forces(System& s) const {
    verlet.after_forces(s);
    const int nf = s.degrees_of_freedom();
    if (nf < 1)
      return;
    s.barrier();                          // every velocity kicked before they are summed
    const double k2 = s.sum([&](int i) {  // 2 K / mvv2e
      return s.mass(i) * (s.v(i, 0) * s.v(i, 0) + s.v(i, 1) * s.v(i, 1) + s.v(i, 2) * s.v(i, 2));
    });
    if (!(k2 > 0))
      return;  // no motion to rescale (the checks catch non-finite velocities)
    const std::int64_t sid = s.id(), k = s.steps();
    const std::uint64_t key = seed ^ 0x63737672ull;        // "csvr": apart from Langevin's noise
    const double rest = chi_squared(nf - 1, key, sid, k);  // sum of R_j^2, j = 2 .. N_f
    const double r1 = random_normal(key, sid, k, 0, 0);
    const double ratio = nf * kt / k2;  // Kt / K
    const double f = ratio / nf;        // Kt / (N_f K)
    const double a2 =
        c + (1 - c) * (r1 * r1 + rest) * f + 2 * r1 * detail::math_sqrt(c * (1 - c) * f);
    const double sign = r1 + detail::math_sqrt(c / ((1 - c) * f)) >= 0 ? 1.0 : -1.0;
    const double alpha = sign * detail::math_sqrt(a2 > 0 ? a2 : 0.0);
    s.barrier();  // every thread read the velocities
    s.for_each_atom([&](int i) {
      for (int d = 0; d < 3; ++d)
        s.v(i, d) *= alpha;
    });
  }
};

/// The "csvr" stage: params.steps CSVR steps per system, then Finished. enter() draws velocities
/// (params.draw) and computes forces.
template <class Potential = LennardJones>
class CsvrStage : public IntegratorStage<Potential, CsvrUpdate> {
 public:
  explicit CsvrStage(Potential potential = {}, CsvrOptions params = {})
      : IntegratorStage<Potential, CsvrUpdate>(std::move(potential), CsvrUpdate(params),
                                               params.neighbours, params.units),
        params_(std::move(params)) {
    validate(params_);
  }

  const CsvrOptions& params() const noexcept { return params_; }

 private:
  CsvrOptions params_;
};

extern template class IntegratorStage<LennardJones, CsvrUpdate>;
extern template class IntegratorStage<Morse, CsvrUpdate>;
extern template class IntegratorStage<Eam, CsvrUpdate>;
extern template class CsvrStage<LennardJones>;
extern template class CsvrStage<Morse>;
extern template class CsvrStage<Eam>;

}  // namespace baton::dynamics
