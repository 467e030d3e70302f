#include "baton/dynamics/detail/checks.hpp"

#include <sstream>
#include <string>

#include "baton/core/error.hpp"
#include "baton/systems/systems_batch.hpp"

namespace baton::dynamics::detail {

void require(const char* who, const char* parameter, double value, bool ok,
             const char* requirement) {
  if (ok)
    return;
  std::ostringstream text;
  text.precision(17);
  text << who << ": " << parameter << " = " << value << ", but it must be " << requirement;
  throw Error(text.str());
}

void check_slots(const char* who, const systems::SystemsBatch& batch, int first, int n) {
  if (first < 0 || n < 0 || first + n > batch.num_systems())
    throw Error(std::string("baton::dynamics::") + who + ": slots [" + std::to_string(first) +
                ", " + std::to_string(first + n) + ") are not all in the batch of " +
                std::to_string(batch.num_systems()) + " systems");
}

void check_max_steps(const char* who, int max_steps) {
  require((std::string("baton::dynamics::") + who).c_str(), "max_steps", max_steps, max_steps >= 0,
          ">= 0");
}

}  // namespace baton::dynamics::detail
