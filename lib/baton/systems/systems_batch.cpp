#include "baton/systems/systems_batch.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "baton/core/error.hpp"
#include "baton/systems/fields.hpp"

namespace baton::systems {

namespace {

// Copies row `from` of `src` to row `to` of `dst` for every field of `per` that moves with its
// system (fields.hpp: compacted).
template <fields::Per per>
KOKKOS_INLINE_FUNCTION void copy_row(const fields::BatchViews& src, int from,
                                     const fields::BatchViews& dst, int to, int stages) {
  fields::batch_fields::for_each([&](auto f) {
    using F = decltype(f);
    if constexpr (F::per == per && F::compacted) {
      const auto& s = src.template get<F>();
      const auto& d = dst.template get<F>();
      for (int j = 0; j < F::width(stages); ++j)
        F::at(d, to, j) = F::at(s, from, j);
    }
  });
}

std::atomic<long> bookkeeping_syncs{0};
std::atomic<long> payload_syncs{0};

}  // namespace

HostSyncs host_syncs() noexcept {
  return {bookkeeping_syncs.load(std::memory_order_relaxed),
          payload_syncs.load(std::memory_order_relaxed)};
}

void count_host_sync(SyncKind kind) noexcept {
  (kind == SyncKind::payload ? payload_syncs : bookkeeping_syncs)
      .fetch_add(1, std::memory_order_relaxed);
}

SystemsBatch::SystemsBatch(BatchCapacity capacity, int num_stages)
    : capacity_(capacity), num_stages_(num_stages) {
  if (capacity.systems < 1 || capacity.atoms < 1 || num_stages < 0)
    throw Error("baton::SystemsBatch: capacity must be at least 1 system and 1 atom (got " +
                std::to_string(capacity.systems) + " systems, " + std::to_string(capacity.atoms) +
                " atoms, " + std::to_string(num_stages) + " stages)");
  const int na = capacity.atoms;
  const int ns = capacity.systems;
  fields::batch_fields::for_each_host([&](auto f) {
    using F = decltype(f);
    auto& v = F::view(*this);
    using V = std::remove_reference_t<decltype(v)>;
    const auto label = Kokkos::view_alloc(std::string("baton::batch::") + F::name);
    const int rows = F::per == fields::Per::atom ? na : ns;
    if constexpr (F::components == fields::stage_components)
      v = V(label, rows, num_stages > 0 ? num_stages : 1);
    else
      v = V(label, rows);
  });
  list_overflow = view<int>(Kokkos::view_alloc(std::string("baton::batch::list_overflow")));
}

const char* failure_text(int code) {
  switch (static_cast<Failure>(code)) {
    case Failure::none:
      return "";
    case Failure::energy:
      return "non-finite energy";
    case Failure::forces:
      return "non-finite forces";
    case Failure::exploded:
      return "exploded: an atom beyond 1e8 length units";
    case Failure::positions:
      return "non-finite positions or velocities";
    case Failure::input:
      return "failed before";
    case Failure::dissociated:
      return "dissociated: no two atoms within the cutoff";
    case Failure::edges:
      return "more edges than a model call may have";
    case Failure::cell:
      return "cell too small for the cutoff, or degenerate";
    case Failure::not_converged:
      return "not converged within its step budget";
  }
  return "failed";
}

int failure_code(const std::string& text) {
  for (int code = 1; code <= last_failure; ++code)
    if (text == failure_text(code))
      return code;
  return static_cast<int>(Failure::input);
}

void SystemsBatch::append_slots(const std::vector<HostSlot>& added) {
  long atoms = num_atoms_;
  for (const HostSlot& s : added)
    atoms += s.count;
  const long systems = num_systems_ + static_cast<long>(added.size());
  if (systems > capacity_.systems || atoms > capacity_.atoms)
    throw Error("baton::SystemsBatch::append_slots: " + std::to_string(systems) + " systems and " +
                std::to_string(atoms) + " atoms do not fit a capacity of " +
                std::to_string(capacity_.systems) + " systems and " +
                std::to_string(capacity_.atoms) + " atoms");
  host_.insert(host_.end(), added.begin(), added.end());
  num_systems_ = static_cast<int>(systems);
  num_atoms_ = static_cast<int>(atoms);
}

std::vector<int> SystemsBatch::status_on_host() const {
  std::vector<int> out(static_cast<std::size_t>(num_systems_));
  Kokkos::View<int*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(out.data(),
                                                                                   out.size());
  Kokkos::deep_copy(h, Kokkos::subview(status, std::make_pair(0, num_systems_)));
  count_host_sync();
  return out;
}

void SystemsBatch::cells_changed() {
  const auto slots = std::make_pair(0, num_systems_);
  const auto h_cell = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace(), Kokkos::subview(cell, slots, Kokkos::ALL));
  const auto h_pbc =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Kokkos::subview(pbc, slots));
  count_host_sync();
  count_host_sync();
  for (int s = 0; s < num_systems_; ++s) {
    HostSlot& h = host_[static_cast<std::size_t>(s)];
    h.pbc = h_pbc(s);
    for (std::size_t j = 0; j < 9; ++j)
      h.cell[j] = h_cell(s, static_cast<int>(j));
  }
}

std::vector<int> SystemsBatch::count_on_host() const {
  std::vector<int> out;
  out.reserve(host_.size());
  for (const HostSlot& s : host_)
    out.push_back(s.count);
  return out;
}

// remove()'s scratch: the moved tail's fields (fields.hpp: compacted), its atoms' new slots, and
// per moved system its old slot and new first atom. Grown (at least doubled, at most to the batch's
// capacity) when a call needs more rows; never shrunk. Allocated without initialising: every row a
// call reads, it wrote first.
struct SystemsBatch::CompactScratch {
  fields::BatchViews moved;
  view<int*> system_of_atom;
  view<int* [2]> map;
  view<int* [2]>::HostMirror host_map;
  int atom_rows = 0;
  int system_rows = 0;

  void reserve(int atoms, int systems, int stages, BatchCapacity capacity) {
    const auto grown = [](int need, int have, int most) {
      return std::max(need, std::min(2 * have, most));
    };
    if (atoms > atom_rows) {
      atom_rows = grown(atoms, atom_rows, capacity.atoms);
      allocate<fields::Per::atom>(atom_rows, stages);
      system_of_atom = view<int*>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "baton::batch::moved_system_of_atom"),
          atom_rows);
    }
    if (systems > system_rows) {
      system_rows = grown(systems, system_rows, capacity.systems);
      allocate<fields::Per::system>(system_rows, stages);
      map = view<int* [2]>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "baton::batch::moved_map"), system_rows);
      host_map = Kokkos::create_mirror_view(map);
    }
  }

  template <fields::Per P>
  void allocate(int rows, int stages) {
    fields::batch_fields::for_each_host([&](auto f) {
      using F = decltype(f);
      if constexpr (F::compacted && F::per == P) {
        auto& v = moved.template ref<F>();
        using V = std::remove_reference_t<decltype(v)>;
        const auto label = Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                              std::string("baton::batch::moved_") + F::name);
        if constexpr (F::components == fields::stage_components)
          v = V(label, rows, stages);
        else
          v = V(label, rows);
      }
    });
  }
};

void SystemsBatch::remove(const std::vector<int>& slots) {
  if (slots.empty())
    return;
  // The host decides where every kept system goes (a few ints per system); kernels move the rows.
  const std::vector<int> counts = count_on_host();
  std::vector<char> gone(static_cast<std::size_t>(num_systems_), 0);
  int previous = -1;
  for (int s : slots) {
    if (s <= previous || s >= num_systems_)
      throw Error("baton::SystemsBatch::remove: slot " + std::to_string(s) +
                  " is out of order or not in use (" + std::to_string(num_systems_) + " systems)");
    gone[static_cast<std::size_t>(s)] = 1;
    previous = s;
  }
  std::vector<int> from;  // new slot -> old slot
  std::vector<int> new_offset;
  int atoms = 0;
  for (int s = 0; s < num_systems_; ++s) {
    if (gone[static_cast<std::size_t>(s)])
      continue;
    from.push_back(s);
    new_offset.push_back(atoms);
    atoms += counts[static_cast<std::size_t>(s)];
  }
  const int kept = static_cast<int>(from.size());
  std::vector<HostSlot> host_kept;
  host_kept.reserve(from.size());
  for (int s : from)
    host_kept.push_back(host_[static_cast<std::size_t>(s)]);
  const auto set_host = [&] {
    host_ = std::move(host_kept);
    num_systems_ = kept;
    num_atoms_ = atoms;
  };
  // Nothing moves below the first removed slot.
  const int first = slots.front();
  if (first == kept) {  // only trailing systems removed
    set_host();
    return;
  }
  // Moving down in place is safe only in order; copy the moved tail to scratch Views first.
  const int atom_begin = new_offset[static_cast<std::size_t>(first)];
  const int n_move_atoms = atoms - atom_begin;
  const int n_move = kept - first;
  const int stages = static_cast<int>(stage_steps.extent(1));
  if (!compact_)
    compact_ = std::make_shared<CompactScratch>();
  CompactScratch& scratch = *compact_;
  scratch.reserve(n_move_atoms, n_move, stages, capacity_);
  {
    const auto rows = std::make_pair(0, n_move);
    const auto h_map = Kokkos::subview(scratch.host_map, rows, Kokkos::ALL);
    for (int i = first; i < kept; ++i) {
      h_map(i - first, 0) = from[static_cast<std::size_t>(i)];
      h_map(i - first, 1) = new_offset[static_cast<std::size_t>(i)];
    }
    Kokkos::deep_copy(Kokkos::subview(scratch.map, rows, Kokkos::ALL), h_map);
  }
  // Per moved system k: its old slot and its new first atom; the moved tail's fields
  // (fields.hpp: compacted) and system_of_atom.
  const auto map = scratch.map;
  const fields::BatchViews moved = scratch.moved;
  const auto t_sys = scratch.system_of_atom;
  const fields::BatchViews views(*this);
  using policy = Kokkos::TeamPolicy<execution_space>;
  const auto off = offset;
  const auto cnt = count;
  const auto sys = system_of_atom;
  // Copies row `from` of every field F of `Per` that moves from `src` to row `to` of `dst`.
  Kokkos::parallel_for(
      "baton::batch::gather_moved", policy(n_move, Kokkos::AUTO),
      KOKKOS_LAMBDA(const policy::member_type& team) {
        const int k = team.league_rank();
        const int src = map(k, 0);
        const int src_off = off(src);
        const int dst = map(k, 1) - atom_begin;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, cnt(src)), [&](int a) {
          copy_row<fields::Per::atom>(views, src_off + a, moved, dst + a, stages);
          t_sys(dst + a) = first + k;
        });
      });
  Kokkos::parallel_for(
      "baton::batch::gather_systems", Kokkos::RangePolicy<execution_space>(0, n_move),
      KOKKOS_LAMBDA(int k) { copy_row<fields::Per::system>(views, map(k, 0), moved, k, stages); });
  Kokkos::parallel_for(
      "baton::batch::scatter_systems", Kokkos::RangePolicy<execution_space>(0, n_move),
      KOKKOS_LAMBDA(int k) {
        const int dst = first + k;
        off(dst) = map(k, 1);
        copy_row<fields::Per::system>(moved, k, views, dst, stages);
      });
  Kokkos::parallel_for(
      "baton::batch::scatter_atoms", Kokkos::RangePolicy<execution_space>(0, n_move_atoms),
      KOKKOS_LAMBDA(int a) {
        const int dst = atom_begin + a;
        copy_row<fields::Per::atom>(moved, a, views, dst, stages);
        sys(dst) = t_sys(a);
      });
  Kokkos::fence();
  set_host();
}

}  // namespace baton::systems
