#include "baton/transport/view_path.hpp"

#include "baton/runtime/gpu_aware.hpp"

namespace baton::detail {

bool process_gpu_aware() {
  static const bool aware = gpu_aware_mpi().aware;  // MPI must be running at the first call
  return aware;
}

}  // namespace baton::detail
