#include "baton/dynamics/fire.hpp"

#include <cmath>

namespace baton::dynamics {

void validate(const FireOptions& p) {
  using detail::require;
  const char* who = "baton::dynamics::FireOptions";
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
  require(who, "energy_change", p.energy_change,
          p.energy_change >= 0 && std::isfinite(p.energy_change), ">= 0 and finite (0: off)");
  require(who, "energy_steps", p.energy_steps, p.energy_steps >= 1, ">= 1");
  require(who, "dt_min", p.dt_min, p.dt_min >= 0 && p.dt_min <= p.dt, "in [0, dt]");
  require(who, "max_uphill", p.max_uphill, p.max_uphill >= 0, ">= 0 (0: no limit)");
  for (double x : p.cell.pressure)
    require(who, "cell.pressure", x, std::isfinite(x), "finite");
  require(who, "cell.factor", p.cell.factor, p.cell.factor >= 0 && std::isfinite(p.cell.factor),
          ">= 0 and finite (0: the atom count)");
  const auto& m = p.cell.mask;
  const int held = (m[0] ? 0 : 1) + (m[1] ? 0 : 1) + (m[2] ? 0 : 1);
  require(who, "cell.mask's held diagonal components", held,
          p.cell.strain != CellRelaxation::Strain::constant_volume || held == 0,
          "0 for a constant volume (xx, yy and zz free)");
  validate(p.units);
  validate(p.neighbours);
}

FireUpdate::FireUpdate(const FireOptions& p)
    : fmax(p.fmax),
      dt(p.dt),
      dt_max(p.dt_max),
      f_inc(p.f_inc),
      f_dec(p.f_dec),
      alpha_start(p.alpha_start),
      f_alpha(p.f_alpha),
      max_step(p.max_step),
      ftm2v(p.units.ftm2v),
      n_min(p.n_min),
      half_step_back(p.half_step_back),
      max_steps(p.max_steps),
      fire2(p.variant == FireOptions::Variant::fire2),
      dt_min(p.dt_min),
      initial_delay(p.initial_delay),
      max_uphill(p.max_uphill),
      fail_unconverged(p.fail_unconverged),
      energy_change(p.energy_change),
      energy_steps(p.energy_steps),
      relax_cell(p.cell.enabled),
      target{},
      free_strain(0),
      strain(static_cast<int>(p.cell.strain)),
      cell_factor(p.cell.factor) {
  // Voigt (xx yy zz yz xz xy) to the virial's order (xx yy zz xy xz yz).
  const int voigt[6] = {0, 1, 2, 5, 4, 3};
  for (int c = 0; c < 6; ++c) {
    target[c] = p.cell.pressure[static_cast<std::size_t>(voigt[c])];
    if (p.cell.mask[static_cast<std::size_t>(voigt[c])])
      free_strain |= 1 << c;
  }
}

FireOptions FireOptions::fire2(double dt, FireOptions base) {
  base.variant = Variant::fire2;
  base.dt = dt;
  base.dt_max = 10 * dt;
  base.dt_min = 0.02 * dt;
  base.n_min = 20;
  base.f_inc = 1.1;
  base.f_dec = 0.5;
  base.alpha_start = 0.25;
  base.f_alpha = 0.99;
  base.half_step_back = true;
  base.initial_delay = true;
  base.max_uphill = 2000;
  return base;
}

FireOptions FireOptions::fire2(double dt) {
  return fire2(dt, FireOptions{});
}

void FireUpdate::enter(systems::SystemsBatch& batch, int first, int n) const {
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
}

template class IntegratorStage<LennardJones, FireUpdate>;
template class IntegratorStage<Morse, FireUpdate>;
template class IntegratorStage<Eam, FireUpdate>;
template class FireStage<LennardJones>;
template class FireStage<Morse>;
template class FireStage<Eam>;

}  // namespace baton::dynamics
