#include "baton/pipeline/detail/snapshot.hpp"

#include <string>
#include <utility>

#include "baton/core/error.hpp"

namespace baton::pipeline::detail {

using systems::SystemsBatch;

Snapshot::Snapshot(std::size_t capacity)
    : device_("baton::pipeline::snapshot", capacity),
      host_("baton::pipeline::snapshot_host", capacity) {}

std::size_t Snapshot::reserve(std::size_t n) {
  if (used_ + n > device_.extent(0))
    throw Error("baton::pipeline: the step's snapshot needs " + std::to_string(used_ + n) +
                " values, it was sized for " + std::to_string(device_.extent(0)) +
                " (an internal error)");
  const std::size_t at = used_;
  used_ += n;
  return at;
}

std::size_t Snapshot::add(const systems::SystemsBatch& batch) {
  const int n = batch.num_systems();
  const std::size_t at = reserve(batch_size({n, 0}));
  const auto out = device_;
  const auto overflow = batch.list_overflow;
  const auto status = batch.status;
  const auto steps = batch.steps;
  const auto failed = batch.failed;
  // [overflow][status of each slot][steps of each slot][failed code of each slot]
  Kokkos::parallel_for(
      "baton::pipeline::snapshot_batch",
      Kokkos::RangePolicy<systems::SystemsBatch::execution_space>(0, n + 1), KOKKOS_LAMBDA(int i) {
        if (i == 0) {
          out(at) = overflow();
        } else {
          out(at + i) = status(i - 1);
          out(at + n + i) = steps(i - 1);
          out(at + 2 * n + i) = failed(i - 1);
        }
      });
  return at;
}

std::size_t Snapshot::add(const systems::PackedSystems& wire, int max_systems) {
  const std::size_t at = reserve(systems::packed_index_size(max_systems));
  systems::gather_packed_index(wire, max_systems, device_, at);
  return at;
}

void Snapshot::take() {
  if (used_ == 0)
    return;
  const auto part = std::make_pair(std::size_t(0), used_);
  Kokkos::deep_copy(Kokkos::subview(host_, part), Kokkos::subview(device_, part));
  systems::count_host_sync();
}

void Snapshot::apply(systems::SystemsBatch& batch, std::size_t at,
                     std::vector<char>& failed) const {
  const auto n = static_cast<std::size_t>(batch.num_systems());
  batch.note_list_overflow(static_cast<int>(host_(at)));
  failed.assign(n, 0);
  for (std::size_t s = 0; s < n; ++s) {
    systems::HostSlot& slot = batch.host_slot(static_cast<int>(s));
    slot.status = static_cast<int>(host_(at + 1 + s));
    slot.steps = host_(at + 1 + n + s);
    failed[s] = host_(at + 1 + 2 * n + s) != 0 ? 1 : 0;
  }
}

systems::PackedIndex Snapshot::index(const systems::PackedSystems& wire, int max_systems,
                                     std::size_t at) const {
  return systems::decode_packed_index(host_.data() + at, max_systems, wire.ints.extent(0),
                                      wire.reals.extent(0));
}

}  // namespace baton::pipeline::detail
