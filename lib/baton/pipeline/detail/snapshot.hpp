#pragma once
/// \file
/// The pipeline step's one device-to-host read (internal to the driver; docs/pipeline.md, "What a
/// step reads back"). Small kernels gather into one device View what the step's decisions need
/// from the device: per stage batch, its neighbour-list overflow and every slot's status, steps
/// and failed flag;
/// per hand-off received, its index (header; per system: atoms, periodic axes, cell). One copy
/// brings them to the host; the driver works from that copy (systems::SystemsBatch::host_slots(),
/// the messages' systems::PackedIndex) for the rest of the step.

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "baton/systems/codec.hpp"
#include "baton/systems/systems_batch.hpp"

namespace baton::pipeline::detail {

class Snapshot {
 public:
  /// Room for `capacity` 64-bit values (batch_size() and systems::packed_index_size() of what it
  /// may hold).
  explicit Snapshot(std::size_t capacity);

  /// Values one batch of `capacity` takes.
  static std::size_t batch_size(systems::BatchCapacity capacity) {
    return 1 + 3 * static_cast<std::size_t>(capacity.systems);
  }

  /// Starts the next snapshot (forgets what was added).
  void clear() noexcept { used_ = 0; }
  /// Gathers `batch`'s overflow, statuses, steps and failed flags (a kernel; nothing waits).
  /// Returns where they go, for apply().
  std::size_t add(const systems::SystemsBatch& batch);
  /// Gathers the index of `wire`, for up to `max_systems` systems (a kernel; nothing waits).
  /// Returns where it goes, for index().
  std::size_t add(const systems::PackedSystems& wire, int max_systems);
  /// Copies what was added to the host: the step's one read (counted by systems::host_syncs()).
  void take();

  /// After take(): `batch`'s statuses and steps into its host slots, its overflow noted
  /// (systems::SystemsBatch::note_list_overflow()), and whether each slot's system failed into
  /// `failed` (one flag per slot). `batch` must hold what it held at add().
  void apply(systems::SystemsBatch& batch, std::size_t at, std::vector<char>& failed) const;
  /// After take(): the index of the wire added at `at` (checked: throws when it is malformed).
  systems::PackedIndex index(const systems::PackedSystems& wire, int max_systems,
                             std::size_t at) const;

 private:
  std::size_t reserve(std::size_t n);

  Kokkos::View<std::int64_t*, systems::SystemsBatch::memory_space> device_;
  Kokkos::View<std::int64_t*, Kokkos::HostSpace> host_;
  std::size_t used_ = 0;
};

}  // namespace baton::pipeline::detail
