#pragma once
/// \file
/// Nose-Hoover chains (Martyna, Klein and Tuckerman, J. Chem. Phys. 97, 2635, 1992; the splitting
/// of Martyna, Tuckerman, Tobias and Klein, Mol. Phys. 87, 1117, 1996; LAMMPS' fix nvt) of every
/// system in a batch: a chain of two thermostats around velocity Verlet, deterministic, with a
/// conserved quantity.

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

/// Nose-Hoover chain parameters (ThermostatOptions: dt, steps, temperature, tau, draw, seed, units,
/// neighbours).
struct NoseHooverOptions : ThermostatOptions {};

/// Throws baton::Error naming the parameter when `p` is not usable.
void validate(const NoseHooverOptions& p);

/// A chain of two Nose-Hoover thermostats (positions eta_1, eta_2 and velocities v_1, v_2: the
/// system's state[0..3]) around a velocity-Verlet step: half a chain step, the Verlet step, half a
/// chain step. With N_f degrees of freedom (3 N - 3; 3 N_moving with fixed atoms), kT, masses
/// Q_1 = N_f kT tau^2 and Q_2 = kT tau^2 (LAMMPS' choice), the conserved quantity is E_pot + E_kin
/// + thermostat_energy(state, N_f).
struct NoseHooverUpdate {
  VerletUpdate verlet;  ///< the Verlet step (and the velocities drawn on entry)
  double kt;            ///< k_B T / mvv2e (velocity^2 x mass)
  double tau2;          ///< tau^2
  double mvv2e;

  explicit NoseHooverUpdate(const NoseHooverOptions& p = {});

  std::string name() const { return "nose_hoover"; }
  long step_limit() const { return verlet.steps; }
  double cost_estimate() const { return static_cast<double>(verlet.steps); }
  void enter(systems::SystemsBatch& batch, int first, int n) const {
    verlet.enter(batch, first, n);
  }

  /// The thermostats' energy for `state` of a system of `dof` kinetic degrees of freedom (3 N - 3;
  /// 3 N_moving with fixed atoms): Q_1 v_1^2 / 2 + Q_2 v_2^2 / 2 + N_f kT eta_1 + kT eta_2, in
  /// energy units.
  KOKKOS_INLINE_FUNCTION double thermostat_energy(const double* state, int dof) const {
    const double nf = dof, q1 = nf * kt * tau2, q2 = kt * tau2;
    return mvv2e * (0.5 * q1 * state[2] * state[2] + 0.5 * q2 * state[3] * state[3] +
                    nf * kt * state[0] + kt * state[1]);
  }

  /// The conserved quantity: E_pot + E_kin + thermostat_energy().
  template <class System>
  KOKKOS_INLINE_FUNCTION double conserved(const System& s) const {
    return s.energy() + verlet.kinetic(s) + thermostat_energy(s.state, s.degrees_of_freedom());
  }

  template <class System>
  KOKKOS_INLINE_FUNCTION void before_forces(System& s) const {
    chain_half(s);
    s.barrier();
    verlet.before_forces(s);
  }
  template <class System>
  KOKKOS_INLINE_FUNCTION void after_forces(System& s) const {
    verlet.after_forces(s);
    chain_half(s);
  }

 private:
  /// Half a time step of the chain (the Trotter factor of MTTK 1996, one Suzuki-Yoshida stage),
  /// then the velocities scaled.
  template <class System>
  KOKKOS_INLINE_FUNCTION void chain_half(System& s) const {
    const int nf = s.degrees_of_freedom();
    if (nf < 1)
      return;
    s.barrier();                    // every velocity written before they are summed
    double k2 = s.sum([&](int i) {  // 2 K / mvv2e
      return s.mass(i) * (s.v(i, 0) * s.v(i, 0) + s.v(i, 1) * s.v(i, 1) + s.v(i, 2) * s.v(i, 2));
    });
    const double dt = verlet.dt, q1 = nf * kt * tau2, q2 = kt * tau2;
    double v1 = s.state[2], v2 = s.state[3];
    v2 += 0.25 * dt * (q1 * v1 * v1 - kt) / q2;
    v1 *= detail::math_exp(-0.125 * dt * v2);
    v1 += 0.25 * dt * (k2 - nf * kt) / q1;
    v1 *= detail::math_exp(-0.125 * dt * v2);
    s.state[0] += 0.5 * dt * v1;
    s.state[1] += 0.5 * dt * v2;
    const double scale = detail::math_exp(-0.5 * dt * v1);
    k2 *= scale * scale;
    v1 *= detail::math_exp(-0.125 * dt * v2);
    v1 += 0.25 * dt * (k2 - nf * kt) / q1;
    v1 *= detail::math_exp(-0.125 * dt * v2);
    v2 += 0.25 * dt * (q1 * v1 * v1 - kt) / q2;
    s.state[2] = v1;
    s.state[3] = v2;
    s.barrier();  // every thread read the velocities
    s.for_each_atom([&](int i) {
      for (int d = 0; d < 3; ++d)
        s.v(i, d) *= scale;
    });
  }
};

/// The "nose_hoover" stage: params.steps steps per system, then Finished. enter() draws velocities
/// (params.draw) and computes forces.
template <class Potential = LennardJones>
class NoseHooverStage : public IntegratorStage<Potential, NoseHooverUpdate> {
 public:
  explicit NoseHooverStage(Potential potential = {}, NoseHooverOptions params = {})
      : IntegratorStage<Potential, NoseHooverUpdate>(std::move(potential), NoseHooverUpdate(params),
                                                     params.neighbours, params.units),
        params_(std::move(params)) {
    validate(params_);
  }

  const NoseHooverOptions& params() const noexcept { return params_; }

 private:
  NoseHooverOptions params_;
};

extern template class IntegratorStage<LennardJones, NoseHooverUpdate>;
extern template class IntegratorStage<Morse, NoseHooverUpdate>;
extern template class IntegratorStage<Eam, NoseHooverUpdate>;
extern template class NoseHooverStage<LennardJones>;
extern template class NoseHooverStage<Morse>;
extern template class NoseHooverStage<Eam>;

}  // namespace baton::dynamics
