#include "baton/dynamics/fire.hpp"

#include <cmath>

namespace baton::dynamics {

void validate(const FireParams& p) {
  using detail::require;
  const char* who = "baton::dynamics::FireParams";
  require(who, "fmax", p.fmax, p.fmax >= 0 && std::isfinite(p.fmax), ">= 0 and finite");
  require(who, "dt", p.dt, p.dt > 0 && std::isfinite(p.dt), "positive and finite");
  require(who, "dt_max", p.dt_max, p.dt_max >= p.dt && std::isfinite(p.dt_max), "finite and >= dt");
  require(who, "n_min", p.n_min, p.n_min >= 0, ">= 0");
  require(who, "f_inc", p.f_inc, p.f_inc >= 1 && std::isfinite(p.f_inc), ">= 1 and finite");
  require(who, "f_dec", p.f_dec, p.f_dec > 0 && p.f_dec < 1, "in (0, 1)");
  require(who, "alpha_start", p.alpha_start, p.alpha_start >= 0 && p.alpha_start < 1, "in [0, 1)");
  require(who, "f_alpha", p.f_alpha, p.f_alpha > 0 && p.f_alpha <= 1, "in (0, 1]");
  require(who, "max_step", p.max_step, p.max_step > 0 && std::isfinite(p.max_step),
          "positive and finite");
  require(who, "max_steps", p.max_steps, p.max_steps >= 0, ">= 0");
  validate(p.units);
  validate(p.neighbours);
}

template class FireStage<LennardJones>;
template class FireStage<Morse>;
template class FireStage<Eam>;

}  // namespace baton::dynamics
