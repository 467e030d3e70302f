#include "baton/dynamics/verlet.hpp"

#include <cmath>

namespace baton::dynamics {

void validate(const VerletParams& p) {
  using detail::require;
  const char* who = "baton::dynamics::VerletParams";
  require(who, "dt", p.dt, p.dt > 0 && std::isfinite(p.dt), "positive and finite");
  require(who, "steps", static_cast<double>(p.steps), p.steps >= 0, ">= 0");
  require(who, "temperature", p.temperature, std::isfinite(p.temperature),
          "finite (< 0: keep the incoming velocities)");
}

void draw_velocities(SystemsBatch& batch, int first, int n, double temperature,
                     std::uint64_t seed) {
  detail::check_slots("draw_velocities", batch, first, n);
  detail::require("baton::dynamics::draw_velocities", "temperature", temperature,
                  temperature >= 0 && std::isfinite(temperature), ">= 0 and finite");
  const auto v = batch.velocities;
  const auto mass = batch.masses;
  const auto offset = batch.offset;
  const auto count = batch.count;
  const auto id = batch.id;
  Kokkos::parallel_for(
      "baton::dynamics::draw_velocities", detail::system_teams(n),
      KOKKOS_LAMBDA(const detail::TeamMember& team) {
        const int s = first + team.league_rank();
        const int b = offset(s), e = offset(s) + count(s);
        const std::int64_t sid = id(s);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b, e), [&](int i) {
          const double scale = detail::math_sqrt(temperature / mass(i));
          for (int d = 0; d < 3; ++d)
            v(i, d) = scale * random_normal(seed, sid, initial_velocity_step, i - b, d);
        });
        team.team_barrier();
        const double m = detail::team_sum(team, b, e, [&](int i) { return mass(i); });
        double p[3];
        for (int d = 0; d < 3; ++d)
          p[d] = detail::team_sum(team, b, e, [&](int i) { return mass(i) * v(i, d); });
        team.team_barrier();
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b, e), [&](int i) {
          for (int d = 0; d < 3; ++d)
            v(i, d) -= p[d] / m;
        });
      });
}

VerletStage::VerletStage(LennardJones lj, VerletParams params) : lj_(lj), params_(params) {
  validate(lj_);
  validate(params_);
}

void VerletStage::enter(SystemsBatch& batch, int first, int n) {
  detail::check_slots("VerletStage::enter", batch, first, n);
  if (params_.temperature >= 0 && n > 0)
    draw_velocities(batch, first, n, params_.temperature, params_.seed);
  compute_forces(lj_, batch, first, n);
}

void VerletStage::advance(SystemsBatch& batch, int max_steps) {
  detail::check_max_steps("VerletStage::advance", max_steps);
  const int n = batch.num_systems();
  if (n == 0 || max_steps == 0)
    return;
  const detail::LjTerms lj = detail::lj_terms(lj_);
  const double dt = params_.dt;
  const long limit = params_.steps;
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
  constexpr int active = static_cast<int>(SystemStatus::Active);
  Kokkos::parallel_for(
      "baton::dynamics::verlet", detail::system_teams(n),
      KOKKOS_LAMBDA(const detail::TeamMember& team) {
        const int s = team.league_rank();
        if (status(s) != active)
          return;
        const int b = offset(s), e = offset(s) + count(s);
        double en = energy(s), fm = fmax(s);
        std::int64_t taken = steps(s);
        bool done = false;
        for (int k = 0;; ++k) {
          if (taken >= limit) {
            done = true;
            break;
          }
          if (k == max_steps)
            break;
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b, e), [&](int i) {
            const double h = 0.5 * dt / mass(i);
            for (int d = 0; d < 3; ++d) {
              v(i, d) += h * f(i, d);
              x(i, d) += dt * v(i, d);
            }
          });
          team.team_barrier();
          detail::team_forces<detail::on_host>(team, lj, x, f, b, e, en, fm);
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b, e), [&](int i) {
            const double h = 0.5 * dt / mass(i);
            for (int d = 0; d < 3; ++d)
              v(i, d) += h * f(i, d);
          });
          ++taken;
        }
        team.team_barrier();
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          energy(s) = en;
          fmax(s) = fm;
          steps(s) = taken;
          if (done)
            status(s) = static_cast<int>(SystemStatus::Finished);
        });
      });
}

}  // namespace baton::dynamics
