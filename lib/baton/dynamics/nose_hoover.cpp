#include "baton/dynamics/nose_hoover.hpp"

#include <cmath>

namespace baton::dynamics {

void validate(const NoseHooverOptions& p) {
  detail::validate_thermostat(p, "baton::dynamics::NoseHooverOptions", false);
}

NoseHooverUpdate::NoseHooverUpdate(const NoseHooverOptions& p)
    : verlet(detail::verlet_options(p)),
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
