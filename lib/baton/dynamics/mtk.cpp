#include "baton/dynamics/mtk.hpp"

#include <cmath>

namespace baton::dynamics {

void validate(const MtkOptions& p) {
  const char* who = "baton::dynamics::MtkOptions";
  detail::validate_thermostat(p, who, false);
  detail::require(who, "pressure", p.pressure, std::isfinite(p.pressure), "finite");
  detail::require(who, "tau_p", p.tau_p, p.tau_p > 0 && std::isfinite(p.tau_p),
                  "positive and finite");
  const int c = static_cast<int>(p.coupling);
  detail::require(who, "coupling", c, c >= 0 && c <= 2, "iso, aniso or tri");
}

MtkUpdate::MtkUpdate(const MtkOptions& p)
    : verlet(detail::verlet_options(p)),
      kt(p.units.boltz * p.temperature),
      tau2(p.tau * p.tau),
      tau_p2(p.tau_p * p.tau_p),
      pressure(p.pressure),
      coupling(static_cast<int>(p.coupling)) {}

template class IntegratorStage<LennardJones, MtkUpdate>;
template class IntegratorStage<Morse, MtkUpdate>;
template class IntegratorStage<Eam, MtkUpdate>;
template class MtkStage<LennardJones>;
template class MtkStage<Morse>;
template class MtkStage<Eam>;

}  // namespace baton::dynamics
