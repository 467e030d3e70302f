#include "baton/dynamics/fire.hpp"

#include <algorithm>
#include <cmath>

#include "baton/runtime/error.hpp"

namespace baton::dynamics {

void validate(const FireParams& p) {
  using detail::require;
  const char* who = "baton::dynamics::FireParams";
  require(who, "fmax", p.fmax, p.fmax >= 0 && std::isfinite(p.fmax), ">= 0 and finite");
  require(who, "dt", p.dt, p.dt > 0 && std::isfinite(p.dt), "positive and finite");
  require(who, "dt_max", p.dt_max, p.dt_max >= p.dt && std::isfinite(p.dt_max), "finite and >= dt");
  require(who, "n_min", p.n_min, p.n_min >= 0, ">= 0");
  require(who, "f_inc", p.f_inc, p.f_inc >= 1 && std::isfinite(p.f_inc), ">= 1 and finite");
  require(who, "f_dec", p.f_dec, p.f_dec > 0 && p.f_dec < 1, "in (0, 1)");
  require(who, "alpha_start", p.alpha_start, p.alpha_start >= 0 && p.alpha_start < 1, "in [0, 1)");
  require(who, "f_alpha", p.f_alpha, p.f_alpha > 0 && p.f_alpha <= 1, "in (0, 1]");
  require(who, "max_step", p.max_step, p.max_step > 0 && std::isfinite(p.max_step),
          "positive and finite");
  require(who, "max_steps", p.max_steps, p.max_steps >= 0, ">= 0");
}

FireStage::FireStage(LennardJones lj, FireParams params) : lj_(lj), params_(params) {
  validate(lj_);
  validate(params_);
}

double FireStage::cost_estimate() const {
  return std::min(static_cast<double>(params_.max_steps), typical_fire_steps);
}

void FireStage::enter(SystemsBatch& batch, int first, int n) {
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
  compute_forces(lj_, batch, first, n);
}

void FireStage::advance(SystemsBatch& batch, int max_steps) {
  detail::check_max_steps("FireStage::advance", max_steps);
  const int n = batch.num_systems();
  if (n == 0 || max_steps == 0)
    return;
  const detail::LjTerms lj = detail::lj_terms(lj_);
  const FireParams p = params_;
  const auto x = batch.positions;
  const auto v = batch.velocities;
  const auto f = batch.forces;
  const auto mass = batch.masses;
  const auto offset = batch.offset;
  const auto count = batch.count;
  const auto status = batch.status;
  const auto energy = batch.energy;
  const auto fmax = batch.fmax;
  const auto steps = batch.steps;
  const auto scratch = batch.scratch;
  constexpr int active = static_cast<int>(SystemStatus::Active);
  Kokkos::parallel_for(
      "baton::dynamics::fire", detail::system_teams(n),
      KOKKOS_LAMBDA(const detail::TeamMember& team) {
        const int s = team.league_rank();
        if (status(s) != active)
          return;
        const int b = offset(s), e = offset(s) + count(s);
        double dt = scratch(s, 0), alpha = scratch(s, 1), n_pos = scratch(s, 2);
        if (dt == 0) {  // first step of this system here
          dt = p.dt;
          alpha = p.alpha_start;
          n_pos = 0;
        }
        double en = energy(s), fm = fmax(s);
        std::int64_t taken = steps(s);
        bool done = false;
        for (int k = 0;; ++k) {
          if (fm <= p.fmax || taken >= p.max_steps) {
            done = true;
            break;
          }
          if (k == max_steps)
            break;
          // FIRE: P = F.v decides between mixing v towards F (and speeding up) and a restart.
          const double power = detail::team_sum(team, b, e, [&](int i) {
            return f(i, 0) * v(i, 0) + f(i, 1) * v(i, 1) + f(i, 2) * v(i, 2);
          });
          double keep = 0, mix = 0;
          if (power >= 0) {
            const double v2 = detail::team_sum(team, b, e, [&](int i) {
              return v(i, 0) * v(i, 0) + v(i, 1) * v(i, 1) + v(i, 2) * v(i, 2);
            });
            const double f2 = detail::team_sum(team, b, e, [&](int i) {
              return f(i, 0) * f(i, 0) + f(i, 1) * f(i, 1) + f(i, 2) * f(i, 2);
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
              const double back = 0.5 * dt;
              Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b, e), [&](int i) {
                for (int d = 0; d < 3; ++d)
                  x(i, d) -= back * v(i, d);
              });
            }
            dt *= p.f_dec;
            alpha = p.alpha_start;
            n_pos = 0;
          }
          // Semi-implicit Euler step, no atom moving more than max_step.
          const double step_dt = dt;
          const double v2max = detail::team_max(team, b, e, [&](int i) {
            const double im = step_dt / mass(i);
            double v2i = 0;
            for (int d = 0; d < 3; ++d) {
              v(i, d) = keep * v(i, d) + mix * f(i, d) + im * f(i, d);
              v2i += v(i, d) * v(i, d);
            }
            return v2i;
          });
          const double vmax = detail::math_sqrt(v2max);
          const double move = dt * vmax > p.max_step ? p.max_step / vmax : dt;
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b, e), [&](int i) {
            x(i, 0) += move * v(i, 0);
            x(i, 1) += move * v(i, 1);
            x(i, 2) += move * v(i, 2);
          });
          team.team_barrier();
          detail::team_forces<detail::on_host>(team, lj, x, f, b, e, en, fm);
          ++taken;
        }
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          scratch(s, 0) = dt;
          scratch(s, 1) = alpha;
          scratch(s, 2) = n_pos;
          energy(s) = en;
          fmax(s) = fm;
          steps(s) = taken;
          if (done)
            status(s) = static_cast<int>(SystemStatus::Finished);
        });
      });
}

}  // namespace baton::dynamics
