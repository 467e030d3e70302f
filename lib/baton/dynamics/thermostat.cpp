#include "baton/dynamics/thermostat.hpp"

#include <cmath>

#include "baton/dynamics/detail/checks.hpp"

namespace baton::dynamics::detail {

void validate_thermostat(const ThermostatOptions& p, const char* who, bool zero_temperature) {
  require(who, "dt", p.dt, p.dt > 0 && std::isfinite(p.dt), "positive and finite");
  require(who, "steps", static_cast<double>(p.steps), p.steps >= 0, ">= 0");
  if (zero_temperature)
    require(who, "temperature", p.temperature, p.temperature >= 0 && std::isfinite(p.temperature),
            ">= 0 and finite");
  else
    require(who, "temperature", p.temperature, p.temperature > 0 && std::isfinite(p.temperature),
            "positive and finite");
  require(who, "tau", p.tau, p.tau > 0 && std::isfinite(p.tau), "positive and finite");
  validate(p.units);
  validate(p.neighbours);
}

VerletOptions verlet_options(const ThermostatOptions& p) {
  VerletOptions v;
  v.dt = p.dt;
  v.steps = p.steps;
  v.temperature = p.draw ? p.temperature : -1;
  v.seed = p.seed;
  v.units = p.units;
  v.neighbours = p.neighbours;
  return v;
}

}  // namespace baton::dynamics::detail
