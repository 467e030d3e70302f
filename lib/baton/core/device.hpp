#pragma once
/// \file
/// Choosing a GPU for each rank from its rank on the node.

namespace baton {

/// GPUs visible to this process for Kokkos' device backend (CUDA or HIP); 0 for host-only Kokkos.
int visible_device_count();

/// Round-robin choice: node-local rank modulo the device count; -1 when there is no device.
int select_device_id(int node_rank, int device_count) noexcept;

}  // namespace baton
