#include "baton/dynamics/units.hpp"

#include <cmath>
#include <utility>

#include "baton/core/error.hpp"
#include "baton/dynamics/detail/checks.hpp"

namespace baton::dynamics {

Units Units::named(const std::string& name) {
  if (name == "lj")
    return lj();
  if (name == "metal")
    return metal();
  throw Error("baton::dynamics::Units: unknown unit system '" + name + "' (choose lj or metal)");
}

void validate(const Units& u) {
  using detail::require;
  const char* who = "baton::dynamics::Units";
  for (const auto& [value, name] : {std::pair{u.ftm2v, "ftm2v"}, std::pair{u.mvv2e, "mvv2e"},
                                    std::pair{u.boltz, "boltz"}, std::pair{u.nktv2p, "nktv2p"}})
    require(who, name, value, value > 0 && std::isfinite(value), "positive and finite");
  require(who, "skin", u.skin, u.skin >= 0 && std::isfinite(u.skin), "finite and >= 0");
}

}  // namespace baton::dynamics
