#include "baton/dynamics/csvr.hpp"

#include <cmath>

namespace baton::dynamics {

void validate(const CsvrOptions& p) {
  detail::validate_thermostat(p, "baton::dynamics::CsvrOptions", true);
}

CsvrUpdate::CsvrUpdate(const CsvrOptions& p)
    : verlet(detail::verlet_options(p)),
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
