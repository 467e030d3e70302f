#include "baton/pipeline/detail/capture.hpp"

#include <Kokkos_Core.hpp>
#include <cstring>
#include <string>
#include <type_traits>

#include "baton/core/error.hpp"
#include "baton/systems/fields.hpp"

namespace baton::pipeline::detail {

namespace fields = systems::fields;

namespace {

/// Whether field F is part of a checkpoint.
template <class F>
inline constexpr bool kept =
    F::compacted && !std::is_same_v<F, fields::species> && !std::is_same_v<F, fields::status>;

template <class V>
auto on_host(const V& v) {
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
}

}  // namespace

std::size_t state_size(int atoms, int stages) {
  std::size_t n = 0;
  fields::batch_fields::for_each_host([&](auto f) {
    using F = decltype(f);
    if constexpr (kept<F>)
      n += static_cast<std::size_t>(F::per == fields::Per::atom ? atoms : 1) *
           static_cast<std::size_t>(F::width(stages)) * sizeof(typename F::value_type);
  });
  return n;
}

std::string state_layout() {
  std::string out;
  fields::batch_fields::for_each_host([&](auto f) {
    using F = decltype(f);
    if constexpr (kept<F>)
      out += std::string(F::name) + (F::per == fields::Per::atom ? ":atom:" : ":system:") +
             (F::components == fields::stage_components ? std::string("stages")
                                                        : std::to_string(F::components)) +
             ":" + std::to_string(sizeof(typename F::value_type)) + ";";
  });
  return out;
}

std::vector<SystemCheckpoint> capture(const systems::SystemsBatch& batch, int stage) {
  const int n = batch.num_systems();
  if (n == 0)
    return {};
  const auto status = on_host(batch.status);
  const auto failed = on_host(batch.failed);
  const auto id = on_host(batch.id);
  const auto count = on_host(batch.count);
  const auto offset = on_host(batch.offset);
  const auto steps = on_host(batch.steps);
  systems::count_host_sync(systems::SyncKind::payload);
  std::vector<int> chosen;
  std::vector<SystemCheckpoint> out;
  for (int s = 0; s < n; ++s) {
    const bool active = status(s) == static_cast<int>(systems::SystemStatus::active);
    const bool waiting = status(s) == static_cast<int>(systems::SystemStatus::held) &&
                         stage + 1 < batch.num_stages();
    if ((active || waiting) && failed(s) == 0) {
      chosen.push_back(s);
      SystemCheckpoint c;
      c.id = id(s);
      c.stage = active ? stage : stage + 1;
      c.steps = active ? steps(s) : 0;
      c.entering = !active;
      c.atoms = count(s);
      c.state.reserve(state_size(c.atoms, batch.num_stages()));
      out.push_back(std::move(c));
    }
  }
  if (chosen.empty())
    return out;
  const int k = batch.num_stages();
  fields::batch_fields::for_each_host([&](auto f) {
    using F = decltype(f);
    if constexpr (kept<F>) {
      using T = typename F::value_type;
      const auto h = on_host(F::view(batch));
      const int w = F::width(k);
      for (std::size_t c = 0; c < chosen.size(); ++c) {
        const int s = chosen[c];
        const std::int64_t first = F::per == fields::Per::atom ? offset(s) : s;
        const std::int64_t rows = F::per == fields::Per::atom ? count(s) : 1;
        for (std::int64_t r = 0; r < rows; ++r)
          for (int j = 0; j < w; ++j) {
            const T v = F::at(h, first + r, j);
            char b[sizeof(T)];
            std::memcpy(b, &v, sizeof(T));
            out[c].state.append(b, sizeof(T));
          }
      }
    }
  });
  return out;
}

void restore(systems::SystemsBatch& batch,
             const std::vector<std::pair<int, const SystemCheckpoint*>>& slots) {
  if (slots.empty())
    return;
  const int k = batch.num_stages();
  const std::vector<systems::HostSlot>& host = batch.host_slots();
  std::vector<std::int64_t> first_atom(host.size() + 1, 0);
  for (std::size_t s = 0; s < host.size(); ++s)
    first_atom[s + 1] = first_atom[s] + host[s].count;
  for (const auto& [s, c] : slots) {
    const int atoms = host.at(static_cast<std::size_t>(s)).count;
    if (c->atoms != atoms || c->state.size() != state_size(atoms, k))
      throw Error("baton::pipeline: the checkpoint of system " + std::to_string(c->id) + " (" +
                  std::to_string(c->atoms) + " atoms, " + std::to_string(c->state.size()) +
                  " bytes) does not fit the system that arrived (" + std::to_string(atoms) +
                  " atoms, " + std::to_string(state_size(atoms, k)) + " bytes)");
  }
  std::vector<std::size_t> at(slots.size(), 0);
  fields::batch_fields::for_each_host([&](auto f) {
    using F = decltype(f);
    if constexpr (kept<F>) {
      using T = typename F::value_type;
      auto& view = F::view(batch);
      auto h = on_host(view);
      const int w = F::width(k);
      for (std::size_t c = 0; c < slots.size(); ++c) {
        const int s = slots[c].first;
        const std::string& state = slots[c].second->state;
        // An entering system: what unpack gives an arrival (fields.hpp, move_field).
        const bool arrives = slots[c].second->entering && F::wire == fields::Wire::none;
        const std::int64_t first = F::per == fields::Per::atom ? first_atom[s] : s;
        const std::int64_t rows = F::per == fields::Per::atom ? host[s].count : 1;
        for (std::int64_t r = 0; r < rows; ++r)
          for (int j = 0; j < w; ++j) {
            T v;
            std::memcpy(&v, state.data() + at[c], sizeof(T));
            at[c] += sizeof(T);
            if (!arrives)
              F::at(h, first + r, j) = v;
            else if (F::arrival == fields::Arrival::zero)
              F::at(h, first + r, j) = T(0);
          }
      }
      Kokkos::deep_copy(view, h);
    }
  });
  auto status = on_host(batch.status);
  for (const auto& [s, c] : slots)
    status(s) = static_cast<int>(systems::SystemStatus::active);
  Kokkos::deep_copy(batch.status, status);
  batch.cells_changed();  // the host's copy of the restored cells
  for (const auto& [s, c] : slots) {
    systems::HostSlot& slot = batch.host_slot(s);
    slot.status = static_cast<int>(systems::SystemStatus::active);
    slot.steps = c->steps;
  }
}

std::vector<std::int64_t> slot_ids(const systems::SystemsBatch& batch, int first, int n) {
  const auto ids = on_host(Kokkos::subview(batch.id, Kokkos::make_pair(first, first + n)));
  systems::count_host_sync(systems::SyncKind::bookkeeping);
  return std::vector<std::int64_t>(ids.data(), ids.data() + n);
}

}  // namespace baton::pipeline::detail
