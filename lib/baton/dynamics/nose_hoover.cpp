#include "baton/dynamics/nose_hoover.hpp"

#include <cmath>

namespace baton::dynamics {

namespace {
VerletOptions verlet_options(const NoseHooverOptions& p) {
  VerletOptions v;
  v.dt = p.dt;
  v.steps = p.steps;
  v.temperature = p.draw ? p.temperature : -1;
  v.seed = p.seed;
  v.units = p.units;
  v.neighbours = p.neighbours;
  return v;
}
}  // namespace

void validate(const NoseHooverOptions& p) {
  using detail::require;
  const char* who = "baton::dynamics::NoseHooverOptions";
  require(who, "dt", p.dt, p.dt > 0 && std::isfinite(p.dt), "positive and finite");
  require(who, "steps", static_cast<double>(p.steps), p.steps >= 0, ">= 0");
  require(who, "temperature", p.temperature, p.temperature > 0 && std::isfinite(p.temperature),
          "positive and finite");
  require(who, "tau", p.tau, p.tau > 0 && std::isfinite(p.tau), "positive and finite");
  validate(p.units);
  validate(p.neighbours);
}

NoseHooverUpdate::NoseHooverUpdate(const NoseHooverOptions& p)
    : verlet(verlet_options(p)),
      kt(p.units.boltz * p.temperature / p.units.mvv2e),
      tau2(p.tau * p.tau),
      mvv2e(p.units.mvv2e) {}

template class IntegratorStage<LennardJones, NoseHooverUpdate>;
template class IntegratorStage<Morse, NoseHooverUpdate>;
template class IntegratorStage<Eam, NoseHooverUpdate>;
template class NoseHooverStage<LennardJones>;
template class NoseHooverStage<Morse>;
template class NoseHooverStage<Eam>;

}  // namespace baton::dynamics
