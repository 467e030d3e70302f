#pragma once
/// \file
/// FIRE minimisation (Bitzek et al., PRL 97, 170201, 2006) of every system in a batch.

#include <string>

#include <algorithm>

#include "baton/dynamics/detail/checks.hpp"
#include "baton/dynamics/eam.hpp"
#include "baton/dynamics/forces.hpp"
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
struct FireParams {
  double fmax = 1e-6;            ///< converged when the largest atom force norm is at most this
  double dt = 0.05;              ///< initial time step
  double dt_max = 0.1;           ///< largest time step
  int n_min = 5;                 ///< steps with P = F.v >= 0 before dt may grow
  double f_inc = 1.1;            ///< dt growth factor
  double f_dec = 0.5;            ///< dt shrink factor when P < 0
  double alpha_start = 0.1;      ///< initial velocity-mixing coefficient
  double f_alpha = 0.99;         ///< alpha decay factor
  double max_step = 0.1;         ///< largest atom displacement per step (sigma)
  bool half_step_back = true;    ///< when P < 0, first move back half a step (FIRE 2.0)
  long max_steps = 100000;       ///< a system that has not converged after this many steps stops
  Units units = Units::lj();     ///< the unit system of the potential and the masses
  NeighbourSettings neighbours;  ///< how pairs are found (neighbours.hpp)
};

/// Throws baton::Error naming the parameter when `p` is not usable.
void validate(const FireParams& p);

namespace detail {
/// The numbers of FireParams the kernel uses (FireParams holds Units, whose std::string name must
/// not be copied into a device lambda).
struct FireConstants {
  double fmax, dt, dt_max, f_inc, f_dec, alpha_start, f_alpha, max_step;
  int n_min;
  bool half_step_back;
  long max_steps;
  explicit FireConstants(const FireParams& p)
      : fmax(p.fmax),
        dt(p.dt),
        dt_max(p.dt_max),
        f_inc(p.f_inc),
        f_dec(p.f_dec),
        alpha_start(p.alpha_start),
        f_alpha(p.f_alpha),
        max_step(p.max_step),
        n_min(p.n_min),
        half_step_back(p.half_step_back),
        max_steps(p.max_steps) {}
};
}  // namespace detail

/// The "fire" stage over any potential (potential.hpp): relaxes every system to fmax <=
/// params.fmax. Per-system state (dt, alpha, steps since P <= 0, the last move's time step) lives
/// in batch.scratch (0: not started). enter() zeroes velocities and computes forces; a system is
/// Finished when converged (checked before each step, so a relaxed system takes 0 steps) or after
/// params.max_steps steps, with its forces, energy, fmax and virial current.
template <class Potential = LennardJones>
class FireStage : public Stage {
 public:
  explicit FireStage(Potential potential = {}, FireParams params = {});
  std::string name() const override { return "fire"; }
  void enter(systems::SystemsBatch& batch, int first, int n) override;
  void advance(systems::SystemsBatch& batch, int max_steps) override;
  /// Expected steps per system: min(max_steps, typical_fire_steps).
  double cost_estimate() const override;
  long step_limit() const override { return params_.max_steps; }

  const Potential& potential() const noexcept { return potential_; }
  const FireParams& params() const noexcept { return params_; }
  /// The neighbour lists the stage keeps (builds(), capacity()).
  const NeighbourLists& neighbour_lists() const noexcept { return lists_; }

  /// Typical steps to fmax 1e-6 for perturbed LJ13 / LJ55 with the default parameters.
  static constexpr double typical_fire_steps = 200;

 private:
  Potential potential_;
  FireParams params_;
  NeighbourLists lists_;
};

// Implementation.

template <class Potential>
FireStage<Potential>::FireStage(Potential potential, FireParams params)
    : potential_(std::move(potential)), params_(params), lists_(params_.neighbours) {
  (void)potential_.kernel();  // checks the potential's parameters
  validate(params_);
}

template <class Potential>
double FireStage<Potential>::cost_estimate() const {
  return std::min(static_cast<double>(params_.max_steps), typical_fire_steps);
}

template <class Potential>
void FireStage<Potential>::enter(systems::SystemsBatch& batch, int first, int n) {
  detail::check_slots("FireStage::enter", batch, first, n);
  const auto v = batch.velocities;
  const auto offset = batch.offset;
  const auto count = batch.count;
  Kokkos::parallel_for(
      "baton::dynamics::fire_enter", detail::system_teams(n),
      KOKKOS_LAMBDA(const detail::TeamMember& team) {
        const int s = first + team.league_rank();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, offset(s), offset(s) + count(s)),
                             [&](int i) { v(i, 0) = v(i, 1) = v(i, 2) = 0; });
      });
  enter_forces(potential_, batch, first, n, lists_, params_.neighbours.skin_in(params_.units));
}

template <class Potential>
void FireStage<Potential>::advance(systems::SystemsBatch& batch, int max_steps) {
  detail::check_max_steps("FireStage::advance", max_steps);
  const int n = batch.num_systems();
  if (n == 0 || max_steps == 0)
    return;
  const auto pot = potential_.kernel();
  const detail::FireConstants p(params_);
  const double ftm2v = params_.units.ftm2v;
  const auto scratch = batch.scratch;
  constexpr int active = static_cast<int>(systems::SystemStatus::Active);
  lists_.begin_call(batch, pot.cutoff_squared(), params_.neighbours.skin_in(params_.units));
  do {  // again for the rest of the steps when a neighbour list had to grow
    const detail::StageViews sv(batch, lists_);
    Kokkos::parallel_for(
        "baton::dynamics::fire", detail::system_teams(n),
        KOKKOS_LAMBDA(const detail::TeamMember& team) {
          const int s = team.league_rank();
          if (sv.status(s) != active || !sv.ready(team, pot, s))
            return;
          detail::StageSystem sys = sv.begin(team, pot, s);
          const int b = sys.begin, e = sys.end;
          double dt = scratch(s, 0), alpha = scratch(s, 1), n_pos = scratch(s, 2);
          double last_move = scratch(s, 3);  // the time step of the last move (<= dt: max_step)
          if (dt == 0) {                     // first step of this system here
            dt = p.dt;
            alpha = p.alpha_start;
            n_pos = 0;
            last_move = 0;
          }
          while (!sys.done) {
            if (sys.r.fmax <= p.fmax || sys.taken >= p.max_steps) {
              sys.done = true;
              break;
            }
            if (sv.call_over(sys, max_steps))
              break;
            // FIRE: P = F.v decides between mixing v towards F (and speeding up) and a restart.
            const double power = detail::team_sum(team, b, e, [&](int i) {
              return sv.f(i, 0) * sv.v(i, 0) + sv.f(i, 1) * sv.v(i, 1) + sv.f(i, 2) * sv.v(i, 2);
            });
            double keep = 0, mix = 0;
            if (power >= 0) {
              const double v2 = detail::team_sum(team, b, e, [&](int i) {
                return sv.v(i, 0) * sv.v(i, 0) + sv.v(i, 1) * sv.v(i, 1) + sv.v(i, 2) * sv.v(i, 2);
              });
              const double f2 = detail::team_sum(team, b, e, [&](int i) {
                return sv.f(i, 0) * sv.f(i, 0) + sv.f(i, 1) * sv.f(i, 1) + sv.f(i, 2) * sv.f(i, 2);
              });
              keep = 1 - alpha;
              mix = alpha * detail::math_sqrt(v2 / f2);
              if (n_pos > p.n_min) {
                dt = dt * p.f_inc < p.dt_max ? dt * p.f_inc : p.dt_max;
                alpha *= p.f_alpha;
              }
              n_pos += 1;
            } else {
              if (p.half_step_back) {  // FIRE 2.0: undo half of the last move uphill
                // Half of the move the last step made (x += last_move v, v unchanged since), not
                // half of dt: where max_step shortened that move, dt v is far longer than it was.
                const double back = 0.5 * last_move;
                Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b, e), [&](int i) {
                  for (int d = 0; d < 3; ++d)
                    sv.x(i, d) -= back * sv.v(i, d);
                });
              }
              dt *= p.f_dec;
              alpha = p.alpha_start;
              n_pos = 0;
            }
            // Semi-implicit Euler step, no atom moving more than max_step.
            const double step_dt = dt;
            const double v2max = detail::team_max(team, b, e, [&](int i) {
              const double im = step_dt * ftm2v / sv.mass(i);
              double v2i = 0;
              for (int d = 0; d < 3; ++d) {
                sv.v(i, d) = keep * sv.v(i, d) + mix * sv.f(i, d) + im * sv.f(i, d);
                v2i += sv.v(i, d) * sv.v(i, d);
              }
              return v2i;
            });
            const double vmax = detail::math_sqrt(v2max);
            const double move = dt * vmax > p.max_step ? p.max_step / vmax : dt;
            last_move = move;
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b, e), [&](int i) {
              sv.x(i, 0) += move * sv.v(i, 0);
              sv.x(i, 1) += move * sv.v(i, 1);
              sv.x(i, 2) += move * sv.v(i, 2);
            });
            team.team_barrier();
            sv.forces<false>(team, pot, sys);
            if (sv.stepped(team, pot, sys))
              break;
          }
          Kokkos::single(Kokkos::PerTeam(team), [&]() {
            scratch(s, 0) = dt;
            scratch(s, 1) = alpha;
            scratch(s, 2) = n_pos;
            scratch(s, 3) = last_move;
          });
          sv.finish(team, pot, sys);
        });
  } while (lists_.grow_after_call(batch));
}

extern template class FireStage<LennardJones>;
extern template class FireStage<Morse>;
extern template class FireStage<Eam>;

}  // namespace baton::dynamics
