#pragma once
/// \file
/// NPT: stochastic cell rescaling (C-rescale: Bernetti and Bussi, J. Chem. Phys. 153, 114107,
/// 2020), isotropic or each of the cell's axes on its own, for the pressure, with stochastic
/// velocity rescaling (CSVR, csvr.hpp) for the temperature, on velocity Verlet. A first-order
/// barostat: no cell mass, no oscillations, and the volume fluctuations of the isothermal-isobaric
/// ensemble.

#include <cstdint>
#include <string>
#include <utility>

#include "baton/dynamics/csvr.hpp"
#include "baton/dynamics/detail/cell_axes.hpp"
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
  /// Which strains the barostat moves.
  enum class Coupling {
    iso,   ///< the volume only: the cell keeps its shape
    aniso  ///< the three lengths along the cell's own axes, each toward P0, with noise of its own
  };
  double pressure = 0;  ///< target pressure, energy / length^3
  double tau_p = 1;     ///< the barostat's time constant, time
  /// An estimate of the isothermal compressibility, length^3 / energy: it sets only how strongly
  /// the volume is coupled (with tau_p), not the fluctuations sampled.
  double compressibility = 0.05;
  Coupling coupling = Coupling::iso;  ///< which strains move
};

/// Throws baton::Error naming the parameter when `p` is not usable.
void validate(const CrescaleOptions& p);

/// CSVR's step, with C-rescale's move of the cell after its drift, as an Update of
/// IntegratorStage. Per step of a system periodic along a, b and c, with V its volume, K the
/// kinetic energy after the first half kick, W the virial of the last forces, P = (2 K + tr W) /
/// (3 V), kT the bath's k_B T, beta the compressibility estimate and R a standard normal
/// (random_normal(seed', id, step, 0, 0)), iso:
///
///     d eps = -(beta / tau_p) (P0 - P - kT / V) dt + sqrt(2 kT beta dt / (V tau_p)) R
///
/// and the cell and every position scale by mu = exp(d eps / 3), every velocity by 1 / mu (so the
/// forces are computed at the scaled positions). aniso: along each of the cell's own axes e_a
/// (detail::CellAxes: e1 along a, e2 in the ab plane, e3 normal to it), with P_aa the pressure
/// tensor's (2 K + W) / V component along e_a and R_a its own normal (component a of the key),
///
///     d ln L_a = -(beta / (3 tau_p)) (P0 - P_aa - kT / V) dt + sqrt(2 kT beta dt / (3 V tau_p))
///     R_a
///
/// and the space scales by mu_a along e_a (positions and the cell's rows by M = sum_a mu_a e_a
/// e_a^T, velocities by M^-1): the sum of the three is iso's d eps, with iso's noise variance
/// split equally over the axes. A system not periodic along all three axes runs at constant
/// volume (CSVR alone).
struct CrescaleUpdate {
  CsvrUpdate csvr;     ///< the thermostat and its Verlet step
  double pressure;     ///< P0
  double beta_dt_tau;  ///< compressibility x dt / tau_p
  double kt_energy;    ///< k_B T, energy
  double mvv2e;        ///< mass x velocity^2 -> energy
  std::uint64_t seed;  ///< the barostat's noise
  int coupling;        ///< CrescaleOptions::Coupling as int

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
    s.barrier();  // every velocity kicked before they are summed
    if (coupling == 0)
      rescale_volume(s, cell);
    else
      rescale_axes(s, cell);
  }
  /// The second half kick and CSVR's rescaling.
  template <class System>
  KOKKOS_INLINE_FUNCTION void after_forces(System& s) const {
    csvr.after_forces(s);
  }

 private:
  /// iso: the volume's move.
  template <class System>
  KOKKOS_INLINE_FUNCTION void rescale_volume(System& s, const systems::CellImage& cell) const {
    const double k2 = s.sum([&](int i) {  // 2 K / mvv2e
      return s.mass(i) * (s.v(i, 0) * s.v(i, 0) + s.v(i, 1) * s.v(i, 1) + s.v(i, 2) * s.v(i, 2));
    });
    const double volume = s.volume();
    const double p = (mvv2e * k2 + s.virial(0) + s.virial(1) + s.virial(2)) / (3 * volume);
    const double r = random_normal(seed ^ noise_key, s.id(), s.steps(), 0, 0);
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

  /// aniso: each axis's move.
  template <class System>
  KOKKOS_INLINE_FUNCTION void rescale_axes(System& s, const systems::CellImage& cell) const {
    detail::CellAxes axes;
    detail::cell_axes(cell.h, axes);
    const double* r = axes.r;
    double w[6];  // the virial, in the axes
    for (int c = 0; c < 6; ++c)
      w[c] = s.virial(c);
    axes.rotate(w);
    const double volume = s.volume();
    const double c = beta_dt_tau / 3;
    double mu[3];
    for (int a = 0; a < 3; ++a) {
      const double k2 = s.sum([&](int i) {  // 2 K_aa / mvv2e along e_a
        const double va =
            r[3 * a] * s.v(i, 0) + r[3 * a + 1] * s.v(i, 1) + r[3 * a + 2] * s.v(i, 2);
        return s.mass(i) * va * va;
      });
      const double p = (mvv2e * k2 + w[a]) / volume;
      const double n = random_normal(seed ^ noise_key, s.id(), s.steps(), 0, a);
      mu[a] = detail::math_exp(-c * (pressure - p - kt_energy / volume) +
                               detail::math_sqrt(2 * kt_energy * c / volume) * n);
    }
    // M = R^T diag(mu) R, and M^-1 = R^T diag(1 / mu) R.
    const auto apply = [&](const double* in, double* out, bool inverse) {
      double t[3];
      axes.in(in, t);
      for (int a = 0; a < 3; ++a)
        t[a] = inverse ? t[a] / mu[a] : t[a] * mu[a];
      axes.out(t, out);
    };
    double h[9];
    for (int k = 0; k < 3; ++k)
      apply(cell.h + 3 * k, h + 3 * k, false);
    if (!s.set_cell(h)) {
      s.fail(systems::Failure::cell);
      return;
    }
    s.for_each_atom([&](int i) {
      double x[3] = {s.x(i, 0), s.x(i, 1), s.x(i, 2)}, v[3] = {s.v(i, 0), s.v(i, 1), s.v(i, 2)};
      double xo[3], vo[3];
      apply(x, xo, false);
      apply(v, vo, true);
      for (int d = 0; d < 3; ++d) {
        s.x(i, d) = xo[d];
        s.v(i, d) = vo[d];
      }
    });
  }

  static constexpr std::uint64_t noise_key = 0x6372657363ull;  // "cresc"
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
