#include "baton/core/device.hpp"

#include <Kokkos_Core.hpp>

#include "baton/core/config.hpp"
#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime_api.h>
#elif defined(KOKKOS_ENABLE_HIP)
#include <hip/hip_runtime_api.h>
#endif

namespace baton {

int visible_device_count() {
  int count = 0;
#if defined(KOKKOS_ENABLE_CUDA)
  if (cudaGetDeviceCount(&count) != cudaSuccess)
    count = 0;
#elif defined(KOKKOS_ENABLE_HIP)
  if (hipGetDeviceCount(&count) != hipSuccess)
    count = 0;
#endif
  return count;
}

int select_device_id(int node_rank, int device_count) noexcept {
  if (device_count <= 0 || node_rank < 0)
    return -1;
  return node_rank % device_count;
}

}  // namespace baton
