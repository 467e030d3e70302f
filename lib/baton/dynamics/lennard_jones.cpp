#include "baton/dynamics/lennard_jones.hpp"

#include <cmath>
#include <limits>

#include "baton/dynamics/detail/checks.hpp"

namespace baton::dynamics {

void validate(const LennardJones& lj) {
  using detail::require;
  const char* who = "baton::dynamics::LennardJones";
  require(who, "epsilon", lj.epsilon, lj.epsilon > 0 && std::isfinite(lj.epsilon),
          "positive and finite");
  require(who, "sigma", lj.sigma, lj.sigma > 0 && std::isfinite(lj.sigma), "positive and finite");
  require(who, "cutoff", lj.cutoff, std::isfinite(lj.cutoff), "finite (<= 0: no cutoff)");
}

LennardJones::Kernel LennardJones::kernel() const {
  validate(*this);
  const double s6 = std::pow(sigma, 6);
  Kernel k;
  k.c12 = 4 * epsilon * s6 * s6;
  k.c6 = 4 * epsilon * s6;
  k.f12 = 12 * k.c12;
  k.f6 = 6 * k.c6;
  if (cutoff > 0) {
    k.rc2 = cutoff * cutoff;
    const double inv6 = 1 / (k.rc2 * k.rc2 * k.rc2);
    k.shift = shift ? inv6 * (k.c12 * inv6 - k.c6) : 0.0;
  } else {
    k.rc2 = std::numeric_limits<double>::infinity();
  }
  return k;
}

}  // namespace baton::dynamics
