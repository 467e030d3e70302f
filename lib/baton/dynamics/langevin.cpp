#include "baton/dynamics/langevin.hpp"

#include <cmath>

namespace baton::dynamics {

void validate(const LangevinOptions& p) {
  using detail::require;
  const char* who = "baton::dynamics::LangevinOptions";
  require(who, "dt", p.dt, p.dt > 0 && std::isfinite(p.dt), "positive and finite");
  require(who, "steps", static_cast<double>(p.steps), p.steps >= 0, ">= 0");
  require(who, "temperature", p.temperature, p.temperature >= 0 && std::isfinite(p.temperature),
          ">= 0 and finite");
  require(who, "friction", p.friction, p.friction > 0 && std::isfinite(p.friction),
          "positive and finite");
  validate(p.units);
  validate(p.neighbours);
}

LangevinUpdate::LangevinUpdate(const LangevinOptions& p)
    : dt(p.dt),
      ftm2v(p.units.ftm2v),
      steps(p.steps),
      kt(p.units.boltz * p.temperature / p.units.mvv2e),
      c1(std::exp(-p.friction * p.dt)),
      c2(std::sqrt(1 - c1 * c1)),
      seed(p.seed) {}

template class IntegratorStage<LennardJones, LangevinUpdate>;
template class IntegratorStage<Morse, LangevinUpdate>;
template class IntegratorStage<Eam, LangevinUpdate>;
template class LangevinStage<LennardJones>;
template class LangevinStage<Morse>;
template class LangevinStage<Eam>;

}  // namespace baton::dynamics
