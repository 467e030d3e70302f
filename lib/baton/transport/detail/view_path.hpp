#pragma once
/// \file
/// Deciding, per communicator and memory space, whether a View goes to MPI as is or through host
/// memory (internal).

#include <Kokkos_Core.hpp>
#include <cstddef>

#include "baton/comm/communicator.hpp"

namespace baton::detail {

/// Where host staging buffers live: page-locked (pinned) host memory when Kokkos has CUDA or HIP,
/// so that copies between the device and the staging buffer run at full speed; plain host memory
/// otherwise.
#if defined(KOKKOS_ENABLE_CUDA)
using StagingSpace = Kokkos::CudaHostPinnedSpace;
#elif defined(KOKKOS_ENABLE_HIP) && KOKKOS_VERSION >= 40000
using StagingSpace = Kokkos::HIPHostPinnedSpace;  // Kokkos 4 moved it out of Experimental
#elif defined(KOKKOS_ENABLE_HIP)
using StagingSpace = Kokkos::Experimental::HIPHostPinnedSpace;
#else
using StagingSpace = Kokkos::HostSpace;
#endif

/// A host buffer of n elements in StagingSpace, not initialised.
template <class T>
Kokkos::View<T*, StagingSpace> staging_buffer(std::size_t n) {
  return Kokkos::View<T*, StagingSpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "baton::staging"), n);
}

/// gpu_aware_mpi().aware, decided once per process (thread-safe).
bool process_gpu_aware();

template <class MemorySpace>
inline constexpr bool host_accessible_v =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;

/// True when a View in MemorySpace is handed to MPI without a host copy on `comm`.
template <class MemorySpace>
bool pass_directly(const Communicator& comm) {
  switch (comm.view_path()) {
    case ViewPath::staged:
      return false;
    case ViewPath::direct:
      return true;
    case ViewPath::automatic:
      break;
  }
  if constexpr (host_accessible_v<MemorySpace>) {
    return true;
  } else {
    return process_gpu_aware();
  }
}

}  // namespace baton::detail
