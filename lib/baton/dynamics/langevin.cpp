#include "baton/dynamics/langevin.hpp"

#include <cmath>

namespace baton::dynamics {

void validate(const LangevinParams& p) {
  using detail::require;
  const char* who = "baton::dynamics::LangevinParams";
  require(who, "dt", p.dt, p.dt > 0 && std::isfinite(p.dt), "positive and finite");
  require(who, "steps", static_cast<double>(p.steps), p.steps >= 0, ">= 0");
  require(who, "temperature", p.temperature, p.temperature >= 0 && std::isfinite(p.temperature),
          ">= 0 and finite");
  require(who, "friction", p.friction, p.friction > 0 && std::isfinite(p.friction),
          "positive and finite");
}

LangevinStage::LangevinStage(LennardJones lj, LangevinParams params) : lj_(lj), params_(params) {
  validate(lj_);
  validate(params_);
}

void LangevinStage::enter(SystemsBatch& batch, int first, int n) {
  detail::check_slots("LangevinStage::enter", batch, first, n);
  compute_forces(lj_, batch, first, n);
}

void LangevinStage::advance(SystemsBatch& batch, int max_steps) {
  detail::check_max_steps("LangevinStage::advance", max_steps);
  const int n = batch.num_systems();
  if (n == 0 || max_steps == 0)
    return;
  const detail::LjTerms lj = detail::lj_terms(lj_);
  const double dt = params_.dt;
  const long limit = params_.steps;
  const double kt = params_.temperature;
  const std::uint64_t seed = params_.seed;
  const double c1 = std::exp(-params_.friction * dt);  // O step: v <- c1 v + c2 sqrt(kT/m) xi
  const double c2 = std::sqrt(1 - c1 * c1);
  const auto x = batch.positions;
  const auto v = batch.velocities;
  const auto f = batch.forces;
  const auto mass = batch.masses;
  const auto offset = batch.offset;
  const auto count = batch.count;
  const auto id = batch.id;
  const auto status = batch.status;
  const auto energy = batch.energy;
  const auto fmax = batch.fmax;
  const auto steps = batch.steps;
  constexpr int active = static_cast<int>(SystemStatus::Active);
  Kokkos::parallel_for(
      "baton::dynamics::langevin", detail::system_teams(n),
      KOKKOS_LAMBDA(const detail::TeamMember& team) {
        const int s = team.league_rank();
        if (status(s) != active)
          return;
        const int b = offset(s), e = offset(s) + count(s);
        const std::int64_t sid = id(s);
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
            const double sd = c2 * detail::math_sqrt(kt / mass(i));
            for (int d = 0; d < 3; ++d) {
              v(i, d) += h * f(i, d);                                                   // B
              x(i, d) += 0.5 * dt * v(i, d);                                            // A
              v(i, d) = c1 * v(i, d) + sd * random_normal(seed, sid, taken, i - b, d);  // O
              x(i, d) += 0.5 * dt * v(i, d);                                            // A
            }
          });
          team.team_barrier();
          detail::team_forces<detail::on_host>(team, lj, x, f, b, e, en, fm);
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b, e), [&](int i) {
            const double h = 0.5 * dt / mass(i);
            for (int d = 0; d < 3; ++d)
              v(i, d) += h * f(i, d);  // B
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
