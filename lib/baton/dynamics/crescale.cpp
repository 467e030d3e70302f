#include "baton/dynamics/crescale.hpp"

#include <cmath>

namespace baton::dynamics {

void validate(const CrescaleOptions& p) {
  const char* who = "baton::dynamics::CrescaleOptions";
  detail::validate_thermostat(p, who, false);
  detail::require(who, "pressure", p.pressure, std::isfinite(p.pressure), "finite");
  detail::require(who, "tau_p", p.tau_p, p.tau_p > 0 && std::isfinite(p.tau_p),
                  "positive and finite");
  detail::require(who, "compressibility", p.compressibility,
                  p.compressibility > 0 && std::isfinite(p.compressibility), "positive and finite");
  const int coupling = static_cast<int>(p.coupling);
  detail::require(who, "coupling", coupling,
                  p.coupling == CrescaleOptions::Coupling::iso ||
                      p.coupling == CrescaleOptions::Coupling::aniso,
                  "iso or aniso");
}

namespace {
CsvrOptions csvr_options(const CrescaleOptions& p) {
  CsvrOptions c;
  static_cast<ThermostatOptions&>(c) = p;
  return c;
}
}  // namespace

CrescaleUpdate::CrescaleUpdate(const CrescaleOptions& p)
    : csvr(csvr_options(p)),
      pressure(p.pressure),
      beta_dt_tau(p.compressibility * p.dt / p.tau_p),
      kt_energy(p.units.boltz * p.temperature),
      mvv2e(p.units.mvv2e),
      seed(p.seed),
      coupling(static_cast<int>(p.coupling)) {}

template class IntegratorStage<LennardJones, CrescaleUpdate>;
template class IntegratorStage<Morse, CrescaleUpdate>;
template class IntegratorStage<Eam, CrescaleUpdate>;
template class CrescaleStage<LennardJones>;
template class CrescaleStage<Morse>;
template class CrescaleStage<Eam>;

}  // namespace baton::dynamics
