#pragma once
/// \file
/// Deciding, per communicator and memory space, whether a View goes to MPI as is or through host
/// memory (internal).

#include <Kokkos_Core.hpp>

#include "baton/comm/communicator.hpp"

namespace baton::detail {

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
