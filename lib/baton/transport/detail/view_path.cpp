#include "baton/transport/detail/view_path.hpp"

#include <cstdlib>
#include <string>

#include "baton/core/gpu_aware.hpp"
#include "baton/transport/view_message.hpp"

namespace baton::detail {

bool process_gpu_aware() {
  static const bool aware = gpu_aware_mpi().aware;  // MPI must be running at the first call
  return aware;
}

std::size_t split_threshold() noexcept {
  static const std::size_t bytes = [] {
    const char* value = std::getenv("BATON_VIEW_SPLIT_BYTES");
    if (value != nullptr && *value != '\0')
      return static_cast<std::size_t>(std::strtoull(value, nullptr, 10));
    return default_split_threshold;
  }();
  return bytes;
}

}  // namespace baton::detail
