#include "baton/dynamics/csvr.hpp"

#include <cmath>

namespace baton::dynamics {

namespace {
VerletOptions verlet_options(const CsvrOptions& p) {
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

void validate(const CsvrOptions& p) {
  using detail::require;
  const char* who = "baton::dynamics::CsvrOptions";
  require(who, "dt", p.dt, p.dt > 0 && std::isfinite(p.dt), "positive and finite");
  require(who, "steps", static_cast<double>(p.steps), p.steps >= 0, ">= 0");
  require(who, "temperature", p.temperature, p.temperature >= 0 && std::isfinite(p.temperature),
          ">= 0 and finite");
  require(who, "tau", p.tau, p.tau > 0 && std::isfinite(p.tau), "positive and finite");
  validate(p.units);
  validate(p.neighbours);
}

CsvrUpdate::CsvrUpdate(const CsvrOptions& p)
    : verlet(verlet_options(p)),
      kt(p.units.boltz * p.temperature / p.units.mvv2e),
      c(std::exp(-p.dt / p.tau)),
      seed(p.seed) {}

template class IntegratorStage<LennardJones, CsvrUpdate>;
template class IntegratorStage<Morse, CsvrUpdate>;
template class IntegratorStage<Eam, CsvrUpdate>;
template class CsvrStage<LennardJones>;
template class CsvrStage<Morse>;
template class CsvrStage<Eam>;

}  // namespace baton::dynamics
