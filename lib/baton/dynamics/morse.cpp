#include "baton/dynamics/morse.hpp"

#include <cmath>
#include <limits>

#include "baton/dynamics/detail/checks.hpp"

namespace baton::dynamics {

void validate(const Morse& m) {
  using detail::require;
  const char* who = "baton::dynamics::Morse";
  require(who, "depth", m.depth, m.depth > 0 && std::isfinite(m.depth), "positive and finite");
  require(who, "alpha", m.alpha, m.alpha > 0 && std::isfinite(m.alpha), "positive and finite");
  require(who, "r0", m.r0, m.r0 > 0 && std::isfinite(m.r0), "positive and finite");
  require(who, "cutoff", m.cutoff, std::isfinite(m.cutoff), "finite (<= 0: no cutoff)");
}

Morse::Kernel Morse::kernel() const {
  validate(*this);
  Kernel k;
  k.d0 = depth;
  k.alpha = alpha;
  k.r0 = r0;
  if (cutoff > 0) {
    k.rc2 = cutoff * cutoff;
    const double e1 = std::exp(-alpha * (cutoff - r0));
    k.shift = shift ? depth * (e1 * e1 - 2 * e1) : 0.0;
  } else {
    k.rc2 = std::numeric_limits<double>::infinity();
  }
  return k;
}

}  // namespace baton::dynamics
