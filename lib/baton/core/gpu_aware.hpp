#pragma once
/// \file
/// Is the MPI library GPU-aware? Decided at run time, with an environment override.

#include <optional>
#include <string>

namespace baton {

/// The answer and who gave it.
struct GpuAwareness {
  bool aware = false;
  /// What decided: "BATON_GPU_AWARE", "BATON_GPU_AWARE_MPI=ON|OFF" (the build default),
  /// "MPIX_Query_cuda_support" or "MPIX_Query_rocm_support" (MPICH's MPIX_GPU_query_support is
  /// reported under these names too), "no query available", or "no GPU backend in Kokkos".
  std::string decided_by;
};

/// What the MPI library says about itself, when it has a query for it (MPI must be initialized).
struct MpiGpuQuery {
  std::optional<bool> cuda;  ///< MPIX_Query_cuda_support (Open MPI, MPICH 4)
  std::optional<bool>
      rocm;  ///< MPIX_Query_rocm_support (Open MPI 5), MPIX_GPU_query_support (MPICH)
};
MpiGpuQuery query_mpi_gpu_support();

/// Pure decision, kept apart for testing. Order: the environment value (BATON_GPU_AWARE, "0" or
/// "1"; anything else throws baton::Error), then the build default ("ON"/"OFF"; "AUTO" defers),
/// then the query for Kokkos' device backend (`device_backend` is "cuda", "hip" or "" for none).
GpuAwareness decide_gpu_awareness(const char* env_value, const std::string& build_default,
                                  const std::string& device_backend, const MpiGpuQuery& query);

/// The decision for this process: BATON_GPU_AWARE, the build's BATON_GPU_AWARE_MPI, the MPI query.
/// MPI must be initialized.
GpuAwareness gpu_aware_mpi();

/// "cuda", "hip" or "" (host-only Kokkos): the device backend Baton stages for.
std::string kokkos_device_backend();

}  // namespace baton
