#include "baton/dynamics/verlet.hpp"

#include <cmath>

namespace baton::dynamics {

void validate(const VerletOptions& p) {
  using detail::require;
  const char* who = "baton::dynamics::VerletOptions";
  require(who, "dt", p.dt, p.dt > 0 && std::isfinite(p.dt), "positive and finite");
  require(who, "steps", static_cast<double>(p.steps), p.steps >= 0, ">= 0");
  require(who, "temperature", p.temperature, std::isfinite(p.temperature),
          "finite (< 0: keep the incoming velocities)");
  validate(p.units);
  validate(p.neighbours);
}

void draw_velocities(systems::SystemsBatch& batch, int first, int n, double temperature,
                     std::uint64_t seed, const Units& units) {
  detail::check_slots("draw_velocities", batch, first, n);
  detail::require("baton::dynamics::draw_velocities", "temperature", temperature,
                  temperature >= 0 && std::isfinite(temperature), ">= 0 and finite");
  validate(units);
  detail::draw_velocities(batch, first, n, units.boltz * temperature / units.mvv2e, seed);
}

namespace detail {
void draw_velocities(systems::SystemsBatch& batch, int first, int n, double kt,
                     std::uint64_t seed) {
  const auto v = batch.velocities;
  const auto mass = batch.masses;
  const auto movable = batch.movable;
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
          const double scale = movable(i) != 0 ? detail::math_sqrt(kt / mass(i)) : 0.0;
          for (int d = 0; d < 3; ++d)
            v(i, d) = scale * random_normal(seed, sid, initial_velocity_step, i - b, d);
        });
        team.team_barrier();
        // With fixed atoms the momentum is not conserved: the draw is kept as it is.
        if (detail::team_moving(team, movable, b, e) < e - b)
          return;
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

}  // namespace detail

VerletUpdate::VerletUpdate(const VerletOptions& p)
    : dt(p.dt),
      ftm2v(p.units.ftm2v),
      steps(p.steps),
      draw(p.temperature >= 0),
      kt(p.units.boltz * p.temperature / p.units.mvv2e),
      seed(p.seed),
      mvv2e(p.units.mvv2e) {}

void VerletUpdate::enter(systems::SystemsBatch& batch, int first, int n) const {
  if (draw && n > 0)
    detail::draw_velocities(batch, first, n, kt, seed);
}

template class IntegratorStage<LennardJones, VerletUpdate>;
template class IntegratorStage<Morse, VerletUpdate>;
template class IntegratorStage<Eam, VerletUpdate>;
template class VerletStage<LennardJones>;
template class VerletStage<Morse>;
template class VerletStage<Eam>;

}  // namespace baton::dynamics
