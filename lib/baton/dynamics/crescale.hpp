#pragma once
/// \file
/// NPT: stochastic cell rescaling (C-rescale: Bernetti and Bussi, J. Chem. Phys. 153, 114107,
/// 2020), isotropic, for the pressure, with stochastic velocity rescaling (CSVR, csvr.hpp) for the
/// temperature, on velocity Verlet. A first-order barostat: no cell mass, no oscillations, and the
/// volume fluctuations of the isothermal-isobaric ensemble.

#include <cstdint>
#include <string>
#include <utility>

#include "baton/dynamics/csvr.hpp"
#include "baton/dynamics/detail/checks.hpp"
#include "baton/dynamics/eam.hpp"
#include "baton/dynamics/forces.hpp"
#include "baton/dynamics/integrator.hpp"
#include "baton/dynamics/lennard_jones.hpp"
#include "baton/dynamics/morse.hpp"
#include "baton/dynamics/random.hpp"
#include "baton/dynamics/thermostat.hpp"

namespace baton::dynamics {

/// C-rescale NPT parameters (ThermostatOptions: dt, steps, temperature, tau (CSVR's), draw, seed,
/// units, neighbours; and the barostat's).
struct CrescaleOptions : ThermostatOptions {
  double pressure = 0;  ///< target pressure, energy / length^3
  double tau_p = 1;     ///< the barostat's time constant, time
  /// An estimate of the isothermal compressibility, length^3 / energy: it sets only how strongly
  /// the volume is coupled (with tau_p), not the fluctuations sampled.
  double compressibility = 0.05;
};

/// Throws baton::Error naming the parameter when `p` is not usable.
void validate(const CrescaleOptions& p);

/// CSVR's step, with C-rescale's move of the volume after its drift, as an Update of
/// IntegratorStage. Per step of a system periodic along a, b and c, with V its volume, K the
/// kinetic energy after the first half kick, W the virial of the last forces, P = (2 K + tr W) /
/// (3 V), kT the bath's k_B T and R a standard normal (random_normal(seed', id, step, 0, 0)):
///
///     d eps = -(beta / tau_p) (P0 - P - kT / V) dt + sqrt(2 kT beta dt / (V tau_p)) R
///
/// and the cell and every position scale by mu = exp(d eps / 3), every velocity by 1 / mu (so the
/// forces are computed at the scaled positions). A system not periodic along all three axes runs
/// at constant volume (CSVR alone).
struct CrescaleUpdate {
  CsvrUpdate csvr;     ///< the thermostat and its Verlet step
  double pressure;     ///< P0
  double beta_dt_tau;  ///< compressibility x dt / tau_p
  double kt_energy;    ///< k_B T, energy
  double mvv2e;        ///< mass x velocity^2 -> energy
  std::uint64_t seed;  ///< the barostat's noise

  explicit CrescaleUpdate(const CrescaleOptions& p = {});

  std::string name() const { return "npt"; }
  long step_limit() const { return csvr.step_limit(); }
  double cost_estimate() const { return csvr.cost_estimate(); }
  void enter(systems::SystemsBatch& batch, int first, int n) const { csvr.enter(batch, first, n); }
  /// The barostat reads the virial of every force call.
  KOKKOS_INLINE_FUNCTION bool virial_each_step() const { return true; }
  bool changes_cells() const { return true; }

  template <class System>
  KOKKOS_INLINE_FUNCTION void before_forces(System& s) const {
    csvr.before_forces(s);  // half kick and drift
    const systems::CellImage& cell = s.cell();
    if (!(cell.periodic[0] && cell.periodic[1] && cell.periodic[2]))
      return;
    s.barrier();                          // every velocity kicked before they are summed
    const double k2 = s.sum([&](int i) {  // 2 K / mvv2e
      return s.mass(i) * (s.v(i, 0) * s.v(i, 0) + s.v(i, 1) * s.v(i, 1) + s.v(i, 2) * s.v(i, 2));
    });
    const double volume = s.volume();
    const double p = (mvv2e * k2 + s.virial(0) + s.virial(1) + s.virial(2)) / (3 * volume);
    const double r = random_normal(seed ^ 0x6372657363ull, s.id(), s.steps(), 0, 0);  // "cresc"
    const double de = -beta_dt_tau * (pressure - p - kt_energy / volume) +
                      detail::math_sqrt(2 * kt_energy * beta_dt_tau / volume) * r;
    const double mu = detail::math_exp(de / 3);
    double h[9];
    for (int k = 0; k < 9; ++k)
      h[k] = mu * cell.h[k];
    if (!s.set_cell(h)) {
      s.fail(systems::Failure::cell);
      return;
    }
    s.for_each_atom([&](int i) {
      for (int d = 0; d < 3; ++d) {
        s.x(i, d) *= mu;
        s.v(i, d) /= mu;
      }
    });
  }
  /// The second half kick and CSVR's rescaling.
  template <class System>
  KOKKOS_INLINE_FUNCTION void after_forces(System& s) const {
    csvr.after_forces(s);
  }
};

/// The "npt" stage: params.steps C-rescale + CSVR steps per system, then Finished. enter() draws
/// velocities (params.draw) and computes forces.
template <class Potential = LennardJones>
class CrescaleStage : public IntegratorStage<Potential, CrescaleUpdate> {
 public:
  explicit CrescaleStage(Potential potential = {}, CrescaleOptions params = {})
      : IntegratorStage<Potential, CrescaleUpdate>(std::move(potential), CrescaleUpdate(params),
                                                   params.neighbours, params.units),
        params_(std::move(params)) {
    validate(params_);
  }

  const CrescaleOptions& params() const noexcept { return params_; }

 private:
  CrescaleOptions params_;
};

extern template class IntegratorStage<LennardJones, CrescaleUpdate>;
extern template class IntegratorStage<Morse, CrescaleUpdate>;
extern template class IntegratorStage<Eam, CrescaleUpdate>;
extern template class CrescaleStage<LennardJones>;
extern template class CrescaleStage<Morse>;
extern template class CrescaleStage<Eam>;

}  // namespace baton::dynamics
