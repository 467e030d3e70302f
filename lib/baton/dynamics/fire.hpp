#pragma once
/// \file
/// FIRE minimisation (Bitzek et al., PRL 97, 170201, 2006) of every system in a batch.

#include <string>

#include <algorithm>

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

/// FIRE's parameters, in the units of `units` (defaults for Lennard-Jones units). The defaults are
/// Bitzek et al.'s (n_min, f_inc, f_dec, alpha_start, f_alpha); dt was tuned on perturbed LJ13 and
/// LJ55 (dt_max is rarely reached there).
struct FireOptions {
  double fmax = 1e-6;           ///< converged when the largest atom force norm is at most this
  double dt = 0.05;             ///< initial time step
  double dt_max = 0.1;          ///< largest time step
  int n_min = 5;                ///< steps with P = F.v >= 0 before dt may grow
  double f_inc = 1.1;           ///< dt growth factor
  double f_dec = 0.5;           ///< dt shrink factor when P < 0
  double alpha_start = 0.1;     ///< initial velocity-mixing coefficient
  double f_alpha = 0.99;        ///< alpha decay factor
  double max_step = 0.1;        ///< largest atom displacement per step (sigma)
  bool half_step_back = true;   ///< when P < 0, first move back half a step (FIRE 2.0)
  long max_steps = 100000;      ///< a system that has not converged after this many steps stops
  Units units = Units::lj();    ///< the unit system of the potential and the masses
  NeighbourOptions neighbours;  ///< how pairs are found (neighbours.hpp)
};

/// Throws baton::Error naming the parameter when `p` is not usable.
void validate(const FireOptions& p);

/// FIRE as an Update of IntegratorStage (integrator.hpp): the numbers of FireOptions its steps use
/// (FireOptions holds Units, whose std::string must not be copied into a kernel). Per-system state
/// (state[0..3]): dt, alpha, steps since P <= 0, the time step of the last move (0: not started).
struct FireUpdate {
  double fmax, dt, dt_max, f_inc, f_dec, alpha_start, f_alpha, max_step, ftm2v;
  int n_min;
  bool half_step_back;
  long max_steps;

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
    }
  }
  /// Converged: checked before each step, so a relaxed system takes 0 steps.
  template <class System>
  KOKKOS_INLINE_FUNCTION bool done(const System& s) const {
    return s.fmax() <= fmax;
  }
  /// The whole move (the step: before_forces, forces, after_forces; nothing after the forces).
  template <class System>
  KOKKOS_INLINE_FUNCTION void before_forces(System& s) const {
    double& dt_now = s.state[0];
    double& alpha = s.state[1];
    double& n_pos = s.state[2];
    double& last_move = s.state[3];  // the time step of the last move (<= dt_now: max_step)
    // FIRE: P = F.v decides between mixing v towards F (and speeding up) and a restart.
    const double power = s.sum([&](int i) {
      return s.f(i, 0) * s.v(i, 0) + s.f(i, 1) * s.v(i, 1) + s.f(i, 2) * s.v(i, 2);
    });
    double keep = 0, mix = 0;
    if (power >= 0) {
      const double v2 = s.sum([&](int i) {
        return s.v(i, 0) * s.v(i, 0) + s.v(i, 1) * s.v(i, 1) + s.v(i, 2) * s.v(i, 2);
      });
      const double f2 = s.sum([&](int i) {
        return s.f(i, 0) * s.f(i, 0) + s.f(i, 1) * s.f(i, 1) + s.f(i, 2) * s.f(i, 2);
      });
      keep = 1 - alpha;
      mix = alpha * detail::math_sqrt(v2 / f2);
      if (n_pos > n_min) {
        dt_now = dt_now * f_inc < dt_max ? dt_now * f_inc : dt_max;
        alpha *= f_alpha;
      }
      n_pos += 1;
    } else {
      if (half_step_back) {  // FIRE 2.0: undo half of the last move uphill
        // Half of the move the last step made (x += last_move v, v unchanged since), not half of
        // dt: where max_step shortened that move, dt v is far longer than it was.
        const double back = 0.5 * last_move;
        s.for_each_atom([&](int i) {
          for (int d = 0; d < 3; ++d)
            s.x(i, d) -= back * s.v(i, d);
        });
      }
      dt_now *= f_dec;
      alpha = alpha_start;
      n_pos = 0;
    }
    // Semi-implicit Euler step, no atom moving more than max_step.
    const double step_dt = dt_now;
    const double v2max = s.max([&](int i) {
      const double im = step_dt * ftm2v / s.mass(i);
      double v2i = 0;
      for (int d = 0; d < 3; ++d) {
        s.v(i, d) = keep * s.v(i, d) + mix * s.f(i, d) + im * s.f(i, d);
        v2i += s.v(i, d) * s.v(i, d);
      }
      return v2i;
    });
    const double vmax = detail::math_sqrt(v2max);
    const double move = dt_now * vmax > max_step ? max_step / vmax : dt_now;
    last_move = move;
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
