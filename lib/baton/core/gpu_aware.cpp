#include "baton/core/gpu_aware.hpp"

#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#include <Kokkos_Core.hpp>
#include <cstdlib>

#include "baton/core/check_mpi.hpp"
#include "baton/core/config.hpp"

namespace baton {

MpiGpuQuery query_mpi_gpu_support() {
  MpiGpuQuery query;
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  query.cuda = MPIX_Query_cuda_support() != 0;  // Open MPI's CUDA extension
#elif defined(MPIX_GPU_SUPPORT_CUDA)
  int cuda = 0;  // MPICH 4
  check_mpi(MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &cuda), "MPIX_GPU_query_support");
  query.cuda = cuda != 0;
#endif
#if defined(MPIX_ROCM_AWARE_SUPPORT)
  query.rocm = MPIX_Query_rocm_support() != 0;  // Open MPI 5
#elif defined(MPIX_GPU_SUPPORT_HIP)
  int hip = 0;
  check_mpi(MPIX_GPU_query_support(MPIX_GPU_SUPPORT_HIP, &hip), "MPIX_GPU_query_support");
  query.rocm = hip != 0;
#endif
  return query;
}

GpuAwareness decide_gpu_awareness(const char* env_value, const std::string& build_default,
                                  const std::string& device_backend, const MpiGpuQuery& query) {
  if (env_value != nullptr && *env_value != '\0') {
    const std::string value(env_value);
    if (value == "0" || value == "1")
      return {value == "1", "BATON_GPU_AWARE"};
    throw Error("baton::decide_gpu_awareness: BATON_GPU_AWARE must be 0 or 1, not '" + value + "'");
  }
  if (build_default == "ON" || build_default == "OFF") {
    return {build_default == "ON", "BATON_GPU_AWARE_MPI=" + build_default};
  }
  if (build_default != "AUTO") {
    throw Error("baton::decide_gpu_awareness: BATON_GPU_AWARE_MPI must be AUTO, ON or OFF, not '" +
                build_default + "'");
  }
  if (device_backend.empty())
    return {false, "no GPU backend in Kokkos"};
  if (device_backend == "cuda" && query.cuda)
    return {*query.cuda, "MPIX_Query_cuda_support"};
  if (device_backend == "hip" && query.rocm)
    return {*query.rocm, "MPIX_Query_rocm_support"};
  return {false, "no query available"};
}

std::string kokkos_device_backend() {
#if defined(KOKKOS_ENABLE_CUDA)
  return "cuda";
#elif defined(KOKKOS_ENABLE_HIP)
  return "hip";
#else
  return "";
#endif
}

GpuAwareness gpu_aware_mpi() {
  const char* env = std::getenv("BATON_GPU_AWARE");
  const std::string build_default = BATON_GPU_AWARE_MPI_DEFAULT;
  const std::string backend = kokkos_device_backend();
  // Ask the MPI only when the answer depends on it.
  const bool ask = (env == nullptr || *env == '\0') && build_default == "AUTO" && !backend.empty();
  return decide_gpu_awareness(env, build_default, backend,
                              ask ? query_mpi_gpu_support() : MpiGpuQuery{});
}

}  // namespace baton
