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
  validate(p.units);
  validate(p.neighbours);
}

template class LangevinStage<LennardJones>;
template class LangevinStage<Morse>;
template class LangevinStage<Eam>;

}  // namespace baton::dynamics
