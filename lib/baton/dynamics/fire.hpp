#pragma once
/// \file
/// FIRE minimisation (Bitzek et al., PRL 97, 170201, 2006) of every system in a batch.

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "baton/dynamics/detail/checks.hpp"
#include "baton/dynamics/eam.hpp"
#include "baton/dynamics/forces.hpp"
#include "baton/dynamics/integrator.hpp"
#include "baton/dynamics/lennard_jones.hpp"
#include "baton/dynamics/morse.hpp"
#include "baton/dynamics/potential.hpp"
#include "baton/dynamics/stage.hpp"
#include "baton/dynamics/team.hpp"
#include "baton/dynamics/units.hpp"

namespace baton::dynamics {

/// Variable-cell relaxation (FireOptions::cell): the cell's strain relaxes beside the atoms, toward
/// a target pressure, on every system periodic along some axis (docs/dynamics.md, "Variable-cell
/// relaxation"). Components are in Voigt order, xx yy zz yz xz xy, as ASE's cell filters take
/// their masks.
struct CellRelaxation {
  bool enabled = false;  ///< relax the cells (off: the atoms only, the cell fixed)
  /// The target pressure tensor, Voigt order, energy / length^3, positive when compressive (as
  /// LAMMPS' pressure; ASE's stress is its negative). Converged when the stress is minus this.
  std::array<double, 6> pressure{};
  /// How the cell may deform: any symmetric strain; hydrostatic (its shape kept: the same
  /// strain along every free axis, no shear); or at constant volume (traceless strain, the volume
  /// held exactly; every diagonal component must then be free).
  enum class Strain { any, hydrostatic, constant_volume };
  Strain strain = Strain::any;
  /// false: that strain component is held (Voigt order). Components along an axis that is not
  /// periodic are always held.
  std::array<bool, 6> mask{{true, true, true, true, true, true}};
  /// The cell's degrees of freedom are factor x the strain, their forces (virial - volume x
  /// target) / factor, as ASE's cell_factor (a preconditioner: it sets how stiff the cell is
  /// beside the atoms). 0: the square root of the system's atom count, which converged in about
  /// 200 steps from 108 to 864 atoms where ASE's default, the atom count, took 4,000 to 32,000
  /// (docs/dynamics.md). It does not change what converged means.
  double factor = 0;

  /// The target `p` on the diagonal (hydrostatic), no shear.
  void set_pressure(double p) { pressure = {{p, p, p, 0, 0, 0}}; }
};

/// FIRE's parameters, in the units of `units` (defaults for Lennard-Jones units). The defaults are
/// Bitzek et al.'s (n_min, f_inc, f_dec, alpha_start, f_alpha); dt was tuned on perturbed LJ13 and
/// LJ55 (dt_max is rarely reached there). fire2() gives FIRE 2.0's.
struct FireOptions {
  /// FIRE (Bitzek et al. 2006, with FIRE 2.0's half step back) or FIRE 2.0 (Guenole et al. 2020,
  /// as LAMMPS' min_style fire): mixing after the velocity update, an initial delay, a smallest
  /// dt and a limit on uphill steps in a row (docs/dynamics.md, "FIRE 2.0").
  enum class Variant { fire, fire2 };
  Variant variant = Variant::fire;
  double fmax = 1e-6;  ///< converged when the largest atom force norm is at most this
  /// A second criterion, composed with fmax (both must hold; 0: off): the energy per atom changed
  /// by at most this over the last `energy_steps` steps. Checked every energy_steps steps.
  double energy_change = 0;
  int energy_steps = 10;       ///< the window of energy_change (>= 1)
  double dt = 0.05;            ///< initial time step
  double dt_max = 0.1;         ///< largest time step
  int n_min = 5;               ///< steps with P = F.v >= 0 before dt may grow
  double f_inc = 1.1;          ///< dt growth factor
  double f_dec = 0.5;          ///< dt shrink factor when P < 0
  double alpha_start = 0.1;    ///< initial velocity-mixing coefficient
  double f_alpha = 0.99;       ///< alpha decay factor
  double max_step = 0.1;       ///< largest atom displacement per step (sigma)
  bool half_step_back = true;  ///< when P < 0, first move back half a step (FIRE 2.0)
  long max_steps = 100000;     ///< a system that has not converged after this many steps stops
  /// FIRE 2.0: dt never shrinks below this (fire2(): 0.02 dt).
  double dt_min = 0;
  /// FIRE 2.0: in a system's first n_min steps an uphill step (P <= 0) neither shrinks dt nor
  /// resets alpha.
  bool initial_delay = true;
  /// FIRE 2.0: a system that went uphill this many steps in a row stops, not converged (0: never).
  long max_uphill = 2000;
  /// A system that stops without converging (max_steps, or max_uphill) fails with
  /// systems::Failure::not_converged, so no later stage takes it for a relaxed structure. false:
  /// it goes on as it is (its fmax says how far it got).
  bool fail_unconverged = true;
  CellRelaxation cell;          ///< the cell's relaxation (off by default)
  Units units = Units::lj();    ///< the unit system of the potential and the masses
  NeighbourOptions neighbours;  ///< how pairs are found (neighbours.hpp)

  /// FIRE 2.0 with Guenole et al.'s parameters for an initial time step `dt`: dt_max 10 dt,
  /// dt_min 0.02 dt, n_min 20, alpha_start 0.25 (f_inc, f_dec and f_alpha as Bitzek et al.), the
  /// initial delay, at most 2000 uphill steps in a row. The rest as `base` (default:
  /// FireOptions{}).
  static FireOptions fire2(double dt, FireOptions base);
  static FireOptions fire2(double dt);
};

/// Throws baton::Error naming the parameter when `p` is not usable.
void validate(const FireOptions& p);

/// FIRE as an Update of IntegratorStage (integrator.hpp): the numbers of FireOptions its steps use
/// (FireOptions holds Units, whose std::string must not be copied into a kernel). Per-system state
/// (state[0..3]): dt, alpha, steps since P <= 0, the time step of the last move (0: not started);
/// with a variable cell, state[4..9]: the cell's velocity (xx yy zz xy xz yz); state[10]: uphill
/// steps in a row (FIRE 2.0); state[11..12]: the energy and step the energy criterion compares
/// with; state[13]: 1 after FIRE 2.0 moved back (the next step restarts from v = 0); state[14]:
/// FIRE 2.0's iterations (its steps but those restarts).
///
/// The cell's degrees of freedom are those of a strain e applied to the current configuration,
/// scaled by the cell factor n (q = n e, ASE's cell_factor): their force is exactly minus the
/// derivative of the enthalpy, g = (W - V P) / n, with W the virial (sum over pairs of r (x) f)
/// and P the target pressure tensor, since such a strain changes the energy by -W : e and the
/// work against P by V P : e. Each step strains the cell and every atom (fixed atoms too: they
/// keep their fractional coordinates) by D = I + move u / n, u the cell's velocity, after the
/// atoms' own moves; the cell's rows count as three more atoms of the atoms' mean mass in FIRE's
/// sums and its largest displacement. Converged: the largest atom force and the largest row of
/// (W - V P) / N (N atoms: ASE's criterion with its default cell factor) at most fmax.
struct FireUpdate {
  double fmax, dt, dt_max, f_inc, f_dec, alpha_start, f_alpha, max_step, ftm2v;
  int n_min;
  bool half_step_back;
  long max_steps;
  bool fire2;             ///< FireOptions::variant is fire2
  double dt_min;          ///< FireOptions::dt_min
  bool initial_delay;     ///< FireOptions::initial_delay
  long max_uphill;        ///< FireOptions::max_uphill
  bool fail_unconverged;  ///< FireOptions::fail_unconverged
  double energy_change;   ///< FireOptions::energy_change
  int energy_steps;       ///< FireOptions::energy_steps
  bool relax_cell;        ///< FireOptions::cell.enabled
  double target[6];       ///< the target pressure tensor, xx yy zz xy xz yz (the virial's order)
  int free_strain;        ///< bit c: strain component c (virial order) may change
  int strain;             ///< CellRelaxation::Strain as int
  double cell_factor;     ///< CellRelaxation::factor (0: the square root of the atom count)

  /// Typical steps to fmax 1e-6 for perturbed LJ13 / LJ55 with the default parameters.
  static constexpr double typical_steps = 200;

  explicit FireUpdate(const FireOptions& p = {});

  std::string name() const { return "fire"; }
  long step_limit() const { return max_steps; }
  /// Expected steps per system: min(max_steps, typical_steps).
  double cost_estimate() const { return std::min(static_cast<double>(max_steps), typical_steps); }
  /// Zeroes the velocities of slots [first, first + n).
  void enter(systems::SystemsBatch& batch, int first, int n) const;

  /// A system's first call in the stage starts FIRE's state.
  template <class System>
  KOKKOS_INLINE_FUNCTION void begin(System& s) const {
    if (s.state[0] == 0) {
      s.state[0] = dt;
      s.state[1] = alpha_start;
      s.state[2] = 0;
      s.state[3] = 0;
      s.state[10] = 0;
      s.state[11] = s.energy();
      s.state[12] = 0;
      s.state[13] = 0;
      s.state[14] = 0;
    }
  }
  /// It took max_steps steps without converging: failed (Failure::not_converged) unless
  /// fail_unconverged is off.
  template <class System>
  KOKKOS_INLINE_FUNCTION void out_of_steps(System& s) const {
    if (fail_unconverged)
      s.fail(systems::Failure::not_converged);
  }
  /// Whether the stage's steps read the virial of every force call and change cells (a variable
  /// cell).
  KOKKOS_INLINE_FUNCTION bool virial_each_step() const { return relax_cell; }
  bool changes_cells() const { return relax_cell; }

  /// Whether the system's cell relaxes: a variable cell, and a periodic axis.
  template <class System>
  KOKKOS_INLINE_FUNCTION bool cell_moves(const System& s) const {
    return relax_cell && (s.cell().periodic[0] || s.cell().periodic[1] || s.cell().periodic[2]);
  }

  /// The cell factor n of the system (CellRelaxation::factor).
  template <class System>
  KOKKOS_INLINE_FUNCTION double factor(const System& s) const {
    return cell_factor > 0 ? cell_factor : detail::math_sqrt(static_cast<double>(s.atoms()));
  }

  /// W - V P (xx yy zz xy xz yz, energy), restricted to the strains that may happen (the Strain
  /// mode, the mask, the periodic axes): the cell's force times its factor.
  template <class System>
  KOKKOS_INLINE_FUNCTION void cell_force(const System& s, double* g) const {
    const int a[6] = {0, 1, 2, 0, 0, 1}, b[6] = {0, 1, 2, 1, 2, 2};
    const double volume = s.volume();
    bool free[6];
    for (int c = 0; c < 6; ++c) {
      free[c] = ((free_strain >> c) & 1) != 0 && s.cell().periodic[a[c]] && s.cell().periodic[b[c]];
      g[c] = free[c] ? s.virial(c) - volume * target[c] : 0.0;
    }
    if (strain == static_cast<int>(CellRelaxation::Strain::any))
      return;
    double trace = 0;
    int diagonal = 0;
    for (int c = 0; c < 3; ++c)
      if (free[c]) {
        trace += g[c];
        ++diagonal;
      }
    const double mean = diagonal > 0 ? trace / diagonal : 0.0;
    for (int c = 0; c < 3; ++c)
      if (free[c])
        g[c] = strain == static_cast<int>(CellRelaxation::Strain::hydrostatic) ? mean : g[c] - mean;
    if (strain == static_cast<int>(CellRelaxation::Strain::hydrostatic))
      g[3] = g[4] = g[5] = 0;
  }

  /// The largest row norm of a symmetric 3 x 3 matrix m (xx yy zz xy xz yz): the cell rows' part
  /// of fmax (of forces) and of the largest displacement (of velocities).
  KOKKOS_INLINE_FUNCTION static double row_max(const double* m) {
    const double r0 = m[0] * m[0] + m[3] * m[3] + m[4] * m[4];
    const double r1 = m[3] * m[3] + m[1] * m[1] + m[5] * m[5];
    const double r2 = m[4] * m[4] + m[5] * m[5] + m[2] * m[2];
    const double r = r0 > r1 ? r0 : r1;
    return detail::math_sqrt(r > r2 ? r : r2);
  }

  /// Strains the cell and every atom by D = I + e (e: xx yy zz xy xz yz; at constant volume D is
  /// scaled to det D = 1) after moving each atom by `move` v: false, nothing moved and the system
  /// failed (systems::Failure::cell), when the strained cell is degenerate or too small for the
  /// cutoff.
  template <class System>
  KOKKOS_INLINE_FUNCTION bool strain_by(System& s, const double* e, double move) const {
    double d[9] = {1 + e[0], e[3], e[4], e[3], 1 + e[1], e[5], e[4], e[5], 1 + e[2]};
    if (strain == static_cast<int>(CellRelaxation::Strain::constant_volume)) {
      const double det = d[0] * (d[4] * d[8] - d[5] * d[7]) - d[1] * (d[3] * d[8] - d[5] * d[6]) +
                         d[2] * (d[3] * d[7] - d[4] * d[6]);
      const double scale = det > 0 ? 1 / detail::math_cbrt(det) : 0.0;
      for (double& x : d)
        x *= scale;
    }
    double h[9];
    const double* old = s.cell().h;
    for (int k = 0; k < 3; ++k)  // row k: D a_k (D symmetric)
      for (int r = 0; r < 3; ++r)
        h[3 * k + r] =
            d[3 * r] * old[3 * k] + d[3 * r + 1] * old[3 * k + 1] + d[3 * r + 2] * old[3 * k + 2];
    if (!s.set_cell(h)) {
      s.fail(systems::Failure::cell);
      return false;
    }
    s.for_each_atom([&](int i) {
      const double y[3] = {s.x(i, 0) + move * s.v(i, 0), s.x(i, 1) + move * s.v(i, 1),
                           s.x(i, 2) + move * s.v(i, 2)};
      for (int r = 0; r < 3; ++r)
        s.x(i, r) = d[3 * r] * y[0] + d[3 * r + 1] * y[1] + d[3 * r + 2] * y[2];
    });
    return true;
  }

  /// Converged: checked before each step, so a relaxed system takes 0 steps. With a variable
  /// cell, the largest row of cell_force() / N (N atoms) must be at most fmax too.
  template <class System>
  KOKKOS_INLINE_FUNCTION bool done(const System& s) const {
    if (stuck(s))
      return true;  // stops (FIRE 2.0's max_uphill), failed where fail_unconverged
    if (!(s.fmax() <= fmax))
      return false;
    if (energy_change > 0) {  // and the energy per atom over the last energy_steps steps
      if (s.steps() - static_cast<std::int64_t>(s.state[12]) < energy_steps)
        return false;
      const double change = (s.energy() - s.state[11]) / s.atoms();
      if (!(change <= energy_change && -change <= energy_change))
        return false;
    }
    if (!cell_moves(s))
      return true;
    double g[6];
    cell_force(s, g);
    return row_max(g) <= fmax * s.atoms();
  }
  /// FIRE 2.0: more than max_uphill uphill steps in a row.
  template <class System>
  KOKKOS_INLINE_FUNCTION bool stuck(const System& s) const {
    return fire2 && max_uphill > 0 && s.state[10] > static_cast<double>(max_uphill);
  }
  /// The whole move (the step: before_forces, forces, after_forces; nothing after the forces).
  template <class System>
  KOKKOS_INLINE_FUNCTION void before_forces(System& s) const {
    double& dt_now = s.state[0];
    double& alpha = s.state[1];
    double& n_pos = s.state[2];
    double& last_move = s.state[3];  // the time step of the last move (<= dt_now: max_step)
    double* u = &s.state[4];         // the cell's velocity (a variable cell)
    double& uphill = s.state[10];    // uphill steps in a row (FIRE 2.0)
    double& restart = s.state[13];   // FIRE 2.0 moved back: restart from v = 0 with new forces
    double& iterations = s.state[14];
    if (energy_change > 0 &&
        s.steps() - static_cast<std::int64_t>(s.state[12]) >= energy_steps) {  // a new window
      s.state[11] = s.energy();
      s.state[12] = static_cast<double>(s.steps());
    }
    const bool cell = cell_moves(s);
    double g[6] = {0, 0, 0, 0, 0, 0}, gu = 0, uu = 0, gg = 0;
    if (cell) {
      cell_force(s, g);
      const double n = factor(s);
      for (int c = 0; c < 6; ++c) {
        g[c] /= n;  // Frobenius products: off-diagonal components count twice
        const double w = c < 3 ? 1.0 : 2.0;
        gu += w * g[c] * u[c];
        uu += w * u[c] * u[c];
        gg += w * g[c] * g[c];
      }
    }
    // FIRE: P = F.v decides between mixing v towards F (and speeding up) and a restart. FIRE 2.0
    // takes P = 0 (the first step, v = 0) as uphill, FIRE as downhill. A FIRE 2.0 step that
    // restarts after moving back has v = 0 and new forces: no P to test.
    const bool restarting = fire2 && restart != 0;
    restart = 0;
    if (fire2 && !restarting)
      iterations += 1;
    const double power = restarting ? 0.0 : gu + s.sum([&](int i) {
      return s.f(i, 0) * s.v(i, 0) + s.f(i, 1) * s.v(i, 1) + s.f(i, 2) * s.v(i, 2);
    });
    // The new v is after * (before * v + dt F / m) + mix F: FIRE mixes the old v (after = 1),
    // FIRE 2.0 the updated one (before = 1); uphill, v restarts from 0 (before = 0).
    double before = 0, after = 1, mix = 0;
    if (restarting) {
      // the Euler step below, from v = 0
    } else if (fire2 ? power > 0 : power >= 0) {
      const double v2 = uu + s.sum([&](int i) {
        return s.v(i, 0) * s.v(i, 0) + s.v(i, 1) * s.v(i, 1) + s.v(i, 2) * s.v(i, 2);
      });
      const double f2 = gg + s.sum([&](int i) {
        return s.f(i, 0) * s.f(i, 0) + s.f(i, 1) * s.f(i, 1) + s.f(i, 2) * s.f(i, 2);
      });
      before = fire2 ? 1 : 1 - alpha;
      after = fire2 ? 1 - alpha : 1;
      mix = f2 > 0 ? alpha * detail::math_sqrt(v2 / f2) : 0.0;
      // FIRE: after more than n_min downhill steps; FIRE 2.0 (LAMMPS' delaystep): after n_min.
      if (fire2 ? n_pos >= n_min : n_pos > n_min) {
        dt_now = dt_now * f_inc < dt_max ? dt_now * f_inc : dt_max;
        alpha *= f_alpha;
      }
      n_pos += 1;
      uphill = 0;
    } else {
      if (fire2) {
        uphill += 1;
        if (max_uphill > 0 && uphill > static_cast<double>(max_uphill)) {
          if (fail_unconverged)  // stops here, unmoved (done() says stuck)
            s.fail(systems::Failure::not_converged);
          return;
        }
      }
      // FIRE 2.0's initial delay: uphill steps among the first n_min iterations keep dt and alpha.
      if (!(fire2 && initial_delay && iterations < n_min)) {
        if (!fire2 || dt_now * f_dec >= dt_min)
          dt_now *= f_dec;
        alpha = alpha_start;
      }
      n_pos = 0;
      // Undo half of the last move uphill: half of the move the last step made (x += last_move v,
      // v unchanged since), not half of dt: where max_step shortened that move, dt v is far longer
      // than it was. FIRE 2.0 moves back half of the (shrunk) dt, never more than half that move.
      const double back = 0.5 * (fire2 && dt_now < last_move ? dt_now : last_move);
      if (half_step_back && back > 0) {
        if (cell) {  // and half of the cell's strain
          const double n = factor(s);
          double e[6];
          for (int c = 0; c < 6; ++c)
            e[c] = -back * u[c] / n;
          if (!strain_by(s, e, -back))
            return;
        } else {
          s.for_each_atom([&](int i) {
            for (int d = 0; d < 3; ++d)
              s.x(i, d) -= back * s.v(i, d);
          });
        }
        if (fire2) {
          // FIRE 2.0 (as LAMMPS) takes its Euler step from the forces where it moved back: this
          // step ends here with v = 0, its force call computes them, and the next step restarts.
          s.for_each_atom([&](int i) { s.v(i, 0) = s.v(i, 1) = s.v(i, 2) = 0; });
          for (int c = 0; c < 6; ++c)
            u[c] = 0;
          restart = 1;
          last_move = 0;
          return;
        }
      }
    }
    // Semi-implicit Euler step, no atom moving more than max_step.
    const double step_dt = dt_now;
    const double v2max = s.max([&](int i) {
      const double im = step_dt * ftm2v / s.mass(i);
      double v2i = 0;
      for (int d = 0; d < 3; ++d) {
        s.v(i, d) = fire2 ? after * (before * s.v(i, d) + im * s.f(i, d)) + mix * s.f(i, d)
                          : before * s.v(i, d) + mix * s.f(i, d) + im * s.f(i, d);
        v2i += s.v(i, d) * s.v(i, d);
      }
      return v2i;
    });
    double vmax = detail::math_sqrt(v2max);
    double n = 1;
    if (cell) {  // the cell's velocity, as an atom of the atoms' mean mass
      const double mass = s.sum([&](int i) { return s.mass(i); }) / s.atoms();
      for (int c = 0; c < 6; ++c)
        u[c] = fire2 ? after * (before * u[c] + step_dt * ftm2v / mass * g[c]) + mix * g[c]
                     : before * u[c] + mix * g[c] + step_dt * ftm2v / mass * g[c];
      const double um = row_max(u);
      vmax = um > vmax ? um : vmax;
      n = factor(s);
    }
    const double move = dt_now * vmax > max_step ? max_step / vmax : dt_now;
    last_move = move;
    if (cell) {
      double e[6];
      for (int c = 0; c < 6; ++c)
        e[c] = move * u[c] / n;
      strain_by(s, e, move);
      return;
    }
    s.for_each_atom([&](int i) {
      s.x(i, 0) += move * s.v(i, 0);
      s.x(i, 1) += move * s.v(i, 1);
      s.x(i, 2) += move * s.v(i, 2);
    });
  }
  template <class System>
  KOKKOS_INLINE_FUNCTION void after_forces(System&) const {}
};

/// The "fire" stage over any potential (potential.hpp): relaxes every system to fmax <=
/// params.fmax. Per-system state (dt, alpha, steps since P <= 0, the last move's time step) lives
/// in batch.scratch (0: not started). enter() zeroes velocities and computes forces; a system is
/// Finished when converged (checked before each step, so a relaxed system takes 0 steps) or after
/// params.max_steps steps, with its forces, energy, fmax and virial current.
template <class Potential = LennardJones>
class FireStage : public IntegratorStage<Potential, FireUpdate> {
 public:
  explicit FireStage(Potential potential = {}, FireOptions params = {})
      : IntegratorStage<Potential, FireUpdate>(std::move(potential), FireUpdate(params),
                                               params.neighbours, params.units),
        params_(std::move(params)) {
    validate(params_);
  }

  const FireOptions& params() const noexcept { return params_; }

  /// Typical steps to fmax 1e-6 for perturbed LJ13 / LJ55 with the default parameters.
  static constexpr double typical_fire_steps = FireUpdate::typical_steps;

 private:
  FireOptions params_;
};

extern template class IntegratorStage<LennardJones, FireUpdate>;
extern template class IntegratorStage<Morse, FireUpdate>;
extern template class IntegratorStage<Eam, FireUpdate>;
extern template class FireStage<LennardJones>;
extern template class FireStage<Morse>;
extern template class FireStage<Eam>;

}  // namespace baton::dynamics
