#include "baton/systems/codec.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "baton/core/error.hpp"
#include "baton/systems/cell.hpp"

namespace baton::systems {

namespace {

using exec = SystemsBatch::execution_space;
using team_policy = Kokkos::TeamPolicy<exec>;
using host_ints = Kokkos::View<std::int64_t*, Kokkos::HostSpace>;

[[noreturn]] void malformed(const std::string& what) {
  throw Error("baton::systems: malformed systems message: " + what);
}

// Device copy of a host vector of ints.
Kokkos::View<int*, SystemsBatch::memory_space> upload(const std::vector<int>& v,
                                                      const char* label) {
  Kokkos::View<int*, SystemsBatch::memory_space> d(std::string(label), v.size());
  Kokkos::View<const int*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(v.data(),
                                                                                         v.size());
  Kokkos::deep_copy(d, h);
  return d;
}

// The bits of a double as an integer, so that cells travel in an index of integers.
KOKKOS_INLINE_FUNCTION std::int64_t bits_of(double x) {
#if KOKKOS_VERSION >= 40100
  return Kokkos::bit_cast<std::int64_t>(x);
#else
  std::int64_t i = 0;
  memcpy(&i, &x, sizeof i);
  return i;
#endif
}

// The message View a field travels in.
template <class F, class Ints, class Reals>
KOKKOS_INLINE_FUNCTION auto& wire_of(Ints& ints, Reals& reals) {
  if constexpr (F::wire == fields::Wire::ints)
    return ints;
  else
    return reals;
}

// One field's part of the pack kernel for a row of kind P: its values at `batch_row` of the batch
// go to `wire_row` of the message. (A function, not code in the kernel's lambda: nvcc does not let
// an extended lambda first capture a variable inside `if constexpr`.)
template <fields::Per P, class F, class Ints, class Reals>
KOKKOS_INLINE_FUNCTION void pack_field(const fields::BatchViews& views, const PackedLayout& L,
                                       Ints& ints, Reals& reals, int stages, std::int64_t wire_row,
                                       int batch_row) {
  if constexpr (F::per == P && F::wire != fields::Wire::none) {
    const auto& v = views.template get<F>();
    const int wd = F::width(stages);
    const std::int64_t at = L.template at<F>() + wire_row * wd;
    for (int j = 0; j < wd; ++j)
      wire_of<F>(ints, reals)(at + j) = F::at(v, batch_row, j);
  }
}

// One field's part of the unpack kernel: `wire_row` of the message to `batch_row` of the batch, or
// 0 there for a field that does not travel and arrives as 0 (Arrival::zero).
template <fields::Per P, class F, class Ints, class Reals>
KOKKOS_INLINE_FUNCTION void unpack_field(const fields::BatchViews& views, const PackedLayout& L,
                                         Ints& ints, Reals& reals, int stages,
                                         std::int64_t wire_row, int batch_row) {
  if constexpr (F::per == P) {
    using T = typename F::value_type;
    const auto& v = views.template get<F>();
    const int wd = F::width(stages);
    if constexpr (F::wire != fields::Wire::none) {
      const std::int64_t at = L.template at<F>() + wire_row * wd;
      for (int j = 0; j < wd; ++j)
        F::at(v, batch_row, j) = static_cast<T>(wire_of<F>(ints, reals)(at + j));
    } else if constexpr (F::arrival == fields::Arrival::zero) {
      for (int j = 0; j < wd; ++j)
        F::at(v, batch_row, j) = T(0);
    }
  }
}

double double_of(std::int64_t bits) {
  double x = 0;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

// The status a system arrives in, from its failed code: a system that failed before is not
// stepped (Finished at once: it passes through the stage); others are Active.
int arrival_status(std::int64_t failed) {
  return static_cast<int>(failed != 0 ? SystemStatus::finished : SystemStatus::active);
}

// Checks the atom counts of a message whose header says `h` (`count(k)`: system k's).
template <class Count>
void check_counts(const PackedHeader& h, const Count& count) {
  std::int64_t total = 0;
  for (std::int64_t k = 0; k < h.systems; ++k) {
    const std::int64_t c = count(k);
    if (c < 1 || c > h.atoms)
      malformed("system " + std::to_string(k) + " has " + std::to_string(c) + " atoms");
    total += c;
  }
  if (total != h.atoms)
    malformed("atom counts add up to " + std::to_string(total) + ", the header says " +
              std::to_string(h.atoms));
}

}  // namespace

PackedHeader decode_packed_header(const std::int64_t* h, std::size_t int_count,
                                  std::size_t real_count) {
  if (int_count < static_cast<std::size_t>(packed_header_size))
    malformed(std::to_string(int_count) + " integers, fewer than the " +
              std::to_string(packed_header_size) + "-value header");
  if (h[0] != packed_magic)
    malformed("bad magic " + std::to_string(h[0]));
  if (h[1] != packed_version)
    malformed("format version " + std::to_string(h[1]) + ", this build reads " +
              std::to_string(packed_version));
  PackedHeader w{h[2], h[3], h[4], h[5]};
  constexpr std::int64_t limit = std::int64_t(1) << 40;
  if (w.systems < 0 || w.atoms < w.systems || w.stages < 0 || w.systems > limit ||
      w.atoms > limit || w.stages > 4096)
    malformed("impossible counts: " + std::to_string(w.systems) + " systems, " +
              std::to_string(w.atoms) + " atoms, " + std::to_string(w.stages) + " stages");
  if ((w.flags & ~(packed_end_of_stream | packed_abort | packed_species)) != 0)
    malformed("unknown flags " + std::to_string(w.flags));
  if (int_count != packed_int_count(w.systems, w.atoms, w.stages) ||
      real_count != packed_real_count(w.systems, w.atoms))
    malformed(std::to_string(w.systems) + " systems of " + std::to_string(w.atoms) +
              " atoms need " + std::to_string(packed_int_count(w.systems, w.atoms, w.stages)) +
              " integers and " + std::to_string(packed_real_count(w.systems, w.atoms)) +
              " doubles, the message has " + std::to_string(int_count) + " and " +
              std::to_string(real_count));
  return w;
}

namespace {

// Where the atoms of the systems in `slots` start in the batch (src) and in the message (dst), and
// how many atoms the message holds; throws for a slot not in use.
struct PackPlan {
  std::vector<int> src, dst;
  std::int64_t atoms = 0;
};

PackPlan plan_pack(const SystemsBatch& batch, const std::vector<int>& slots) {
  const std::vector<int> counts = batch.count_on_host();
  std::vector<int> offset_of_slot(counts.size());
  int o = 0;
  for (std::size_t s = 0; s < counts.size(); ++s) {
    offset_of_slot[s] = o;
    o += counts[s];
  }
  PackPlan plan;
  for (int s : slots) {
    if (s < 0 || s >= batch.num_systems())
      throw Error("baton::systems::pack_systems: slot " + std::to_string(s) + " is not in use (" +
                  std::to_string(batch.num_systems()) + " systems)");
    plan.src.push_back(offset_of_slot[static_cast<std::size_t>(s)]);
    plan.dst.push_back(static_cast<int>(plan.atoms));
    plan.atoms += counts[static_cast<std::size_t>(s)];
  }
  return plan;
}

}  // namespace

PackedSystems pack_systems(const SystemsBatch& batch, const std::vector<int>& slots,
                           std::int64_t flags) {
  const int n = static_cast<int>(slots.size());
  const int stages = batch.num_stages();
  const PackPlan plan = plan_pack(batch, slots);
  const std::vector<int>& src_offset = plan.src;
  const std::vector<int>& dst_offset = plan.dst;
  const std::int64_t m = plan.atoms;
  PackedSystems w;
  w.ints = decltype(w.ints)("baton::wire::ints", packed_int_count(n, m, stages));
  w.reals = decltype(w.reals)("baton::wire::reals", packed_real_count(n, m));
  {
    auto index = std::make_shared<PackedIndex>();
    index->header = PackedHeader{n, m, stages, flags};
    for (int s : slots) {
      HostSlot h = batch.host_slots()[static_cast<std::size_t>(s)];
      h.status = static_cast<int>(SystemStatus::active);
      h.steps = 0;
      index->systems.push_back(h);
    }
    w.index = std::move(index);
  }
  const std::int64_t head[packed_header_size] = {packed_magic, packed_version, n, m, stages, flags};
  if (n == 0) {
    Kokkos::deep_copy(
        Kokkos::subview(w.ints, std::make_pair(0, packed_header_size)),
        Kokkos::View<const std::int64_t*, Kokkos::HostSpace,
                     Kokkos::MemoryTraits<Kokkos::Unmanaged>>(head, packed_header_size));
    return w;
  }
  // Per system k: its slot (k), first atom in the batch (n + k) and in the message (2n + k), in one
  // upload (on a GPU each allocation and copy costs a synchronisation); the header is written by
  // the kernel.
  std::vector<int> plan_rows(slots);
  plan_rows.insert(plan_rows.end(), src_offset.begin(), src_offset.end());
  plan_rows.insert(plan_rows.end(), dst_offset.begin(), dst_offset.end());
  const auto d_plan = upload(plan_rows, "baton::wire::plan");
  const std::int64_t h0 = head[0], h1 = head[1], h2 = head[2], h3 = head[3], h4 = head[4],
                     h5 = head[5];
  auto ints = w.ints;
  auto reals = w.reals;
  const auto count = batch.count;
  const fields::BatchViews views(batch);
  const PackedLayout L{n, m, stages};
  Kokkos::parallel_for(
      "baton::wire::pack", team_policy(n, Kokkos::AUTO),
      KOKKOS_LAMBDA(const team_policy::member_type& team) {
        const int k = team.league_rank();
        const int s = d_plan(k);
        const int c = count(s);
        const int src = d_plan(n + k);
        const std::int64_t dst = d_plan(2 * n + k);
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          if (k == 0) {
            ints(0) = h0;
            ints(1) = h1;
            ints(2) = h2;
            ints(3) = h3;
            ints(4) = h4;
            ints(5) = h5;
          }
          fields::batch_fields::for_each([&](auto f) {
            pack_field<fields::Per::system, decltype(f)>(views, L, ints, reals, stages, k, s);
          });
        });
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, c), [&](int i) {
          fields::batch_fields::for_each([&](auto f) {
            pack_field<fields::Per::atom, decltype(f)>(views, L, ints, reals, stages, dst + i,
                                                       src + i);
          });
        });
      });
  Kokkos::fence();
  return w;
}

PackedHeader read_packed_header(const PackedSystems& wire) {
  if (wire.index)
    return wire.index->header;
  host_ints head("head", packed_header_size);
  if (wire.ints.extent(0) >= static_cast<std::size_t>(packed_header_size)) {
    Kokkos::deep_copy(head, Kokkos::subview(wire.ints, std::make_pair(0, packed_header_size)));
    count_host_sync();
  }
  return decode_packed_header(head.data(), wire.ints.extent(0), wire.reals.extent(0));
}

void gather_packed_index(const PackedSystems& wire, int max_systems,
                         const Kokkos::View<std::int64_t*, SystemsBatch::memory_space>& out,
                         std::size_t at) {
  const auto ints = wire.ints;
  const auto reals = wire.reals;
  const auto n_ints = static_cast<std::int64_t>(ints.extent(0));
  const auto n_reals = static_cast<std::int64_t>(reals.extent(0));
  Kokkos::parallel_for(
      "baton::wire::gather_index", Kokkos::RangePolicy<exec>(0, max_systems + 1),
      KOKKOS_LAMBDA(int i) {
        if (i == 0) {
          for (int j = 0; j < packed_header_size; ++j)
            out(at + j) = j < n_ints ? ints(j) : 0;
          return;
        }
        const int k = i - 1;
        std::int64_t* o =
            &out(at + packed_header_size + packed_index_per_system * static_cast<std::size_t>(k));
        for (int j = 0; j < packed_index_per_system; ++j)
          o[j] = 0;
        if (n_ints < packed_header_size)
          return;
        const std::int64_t n = ints(2), m = ints(3), stages = ints(4);
        constexpr std::int64_t limit = std::int64_t(1) << 40;
        if (n < 0 || m < 0 || stages < 0 || n > limit || m > limit || stages > 4096 || k >= n)
          return;
        const PackedLayout L{n, m, stages};
        if (L.count() + k < n_ints)
          o[0] = ints(L.count() + k);
        if (L.pbc() + k < n_ints)
          o[1] = ints(L.pbc() + k);
        for (int j = 0; j < 9; ++j)
          if (L.cell() + 9 * k + j < n_reals)
            o[2 + j] = bits_of(reals(L.cell() + 9 * k + j));
        if (L.failed() + k < n_ints)
          o[11] = ints(L.failed() + k);
      });
}

PackedIndex decode_packed_index(const std::int64_t* gathered, int max_systems,
                                std::size_t int_count, std::size_t real_count) {
  PackedIndex out;
  out.header = decode_packed_header(gathered, int_count, real_count);
  if (out.header.systems > max_systems)
    return out;
  const std::int64_t* per = gathered + packed_header_size;
  constexpr std::int64_t w = packed_index_per_system;
  check_counts(out.header, [&](std::int64_t k) { return per[w * k]; });
  for (std::int64_t k = 0; k < out.header.systems; ++k) {
    HostSlot s;
    s.count = static_cast<int>(per[w * k]);
    s.pbc = static_cast<int>(per[w * k + 1]);
    for (std::size_t j = 0; j < 9; ++j)
      s.cell[j] = double_of(per[w * k + 2 + static_cast<std::int64_t>(j)]);
    s.status = arrival_status(per[w * k + 11]);
    out.systems.push_back(s);
  }
  return out;
}

PackedIndex read_packed_index(const PackedSystems& wire, int max_systems) {
  if (wire.index)
    return *wire.index;
  Kokkos::View<std::int64_t*, SystemsBatch::memory_space> d("baton::wire::index",
                                                            packed_index_size(max_systems));
  gather_packed_index(wire, max_systems, d, 0);
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d);
  count_host_sync();
  return decode_packed_index(h.data(), max_systems, wire.ints.extent(0), wire.reals.extent(0));
}

PackedIndex index_of(const HostPacked& w) {
  PackedIndex out;
  out.header = decode_packed_header(w.ints.data(), w.ints.size(), w.reals.size());
  const PackedLayout L{out.header.systems, out.header.atoms, out.header.stages};
  const auto at = [](std::int64_t i) { return static_cast<std::size_t>(i); };
  check_counts(out.header, [&](std::int64_t k) { return w.ints[at(L.count() + k)]; });
  for (std::int64_t k = 0; k < out.header.systems; ++k) {
    HostSlot s;
    s.count = static_cast<int>(w.ints[at(L.count() + k)]);
    s.pbc = static_cast<int>(w.ints[at(L.pbc() + k)]);
    for (std::size_t j = 0; j < 9; ++j)
      s.cell[j] = w.reals[at(L.cell() + 9 * k) + j];
    s.status = arrival_status(w.ints[at(L.failed() + k)]);
    out.systems.push_back(s);
  }
  return out;
}

void mark_failed_in_index(PackedSystems& wire, const std::vector<char>& failed) {
  // As arrival_status(): a system that failed before arrives Finished.
  if (!wire.index || std::none_of(failed.begin(), failed.end(), [](char f) { return f != 0; }))
    return;
  auto index = std::make_shared<PackedIndex>(*wire.index);
  for (std::size_t k = 0; k < failed.size() && k < index->systems.size(); ++k)
    if (failed[k] != 0)
      index->systems[k].status = static_cast<int>(SystemStatus::finished);
  wire.index = std::move(index);
}

PackedSystems to_device(const HostPacked& w, const std::string& label) {
  PackedSystems wire(
      Kokkos::View<std::int64_t*, SystemsBatch::memory_space>(label + "_ints", w.ints.size()),
      Kokkos::View<double*, SystemsBatch::memory_space>(label + "_reals", w.reals.size()));
  wire.index = std::make_shared<const PackedIndex>(index_of(w));
  Kokkos::deep_copy(wire.ints, host_ints_view(w));
  Kokkos::deep_copy(wire.reals, host_reals_view(w));
  return wire;
}

namespace {

// The message's header, checked against the batch it goes into.
void check_fits(const SystemsBatch& batch, const PackedHeader& h) {
  if (h.stages != batch.num_stages())
    malformed("it carries " + std::to_string(h.stages) + " stage counters, this pipeline has " +
              std::to_string(batch.num_stages()));
  const systems::BatchCapacity room = batch.free();
  if (h.systems > room.systems || h.atoms > room.atoms)
    throw Error("baton::systems::unpack_systems: " + std::to_string(h.systems) + " systems of " +
                std::to_string(h.atoms) + " atoms do not fit the " + std::to_string(room.systems) +
                " free system slots and " + std::to_string(room.atoms) + " free atom rows");
}

}  // namespace

int unpack_systems(SystemsBatch& batch, const PackedSystems& wire) {
  const PackedIndex index = read_packed_index(wire, batch.free().systems);
  const PackedHeader& h = index.header;
  check_fits(batch, h);
  const int s0 = batch.num_systems();
  const int a0 = batch.num_atoms();
  const int n = static_cast<int>(h.systems);
  const int m = static_cast<int>(h.atoms);
  if (n == 0)
    return s0;
  // Each system's first atom in the message, then its status: as its index says, so that the
  // host's view of the batch (append_slots()) and the device agree.
  std::vector<int> offsets;
  int total = 0;
  for (const HostSlot& s : index.systems) {
    offsets.push_back(total);
    total += s.count;
  }
  for (const HostSlot& s : index.systems)
    offsets.push_back(s.status);
  auto d_off = upload(offsets, "baton::wire::offsets");
  const int stages = batch.num_stages();
  auto ints = wire.ints;
  auto reals = wire.reals;
  auto offset = batch.offset;
  auto status = batch.status;
  auto system_of_atom = batch.system_of_atom;
  const fields::BatchViews views(batch);
  const PackedLayout L{n, m, stages};
  Kokkos::parallel_for(
      "baton::wire::unpack", team_policy(n, Kokkos::AUTO),
      KOKKOS_LAMBDA(const team_policy::member_type& team) {
        const int k = team.league_rank();
        const int s = s0 + k;
        const std::int64_t src = d_off(k);
        const int c = static_cast<int>(ints(L.count() + k));
        const int dst = a0 + d_off(k);
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          offset(s) = dst;
          status(s) = d_off(n + k);
          fields::batch_fields::for_each([&](auto f) {
            unpack_field<fields::Per::system, decltype(f)>(views, L, ints, reals, stages, k, s);
          });
        });
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, c), [&](int i) {
          system_of_atom(dst + i) = s;
          fields::batch_fields::for_each([&](auto f) {
            unpack_field<fields::Per::atom, decltype(f)>(views, L, ints, reals, stages, src + i,
                                                         dst + i);
          });
        });
      });
  Kokkos::fence();
  batch.append_slots(index.systems);
  return s0;
}

HostPacked to_host(const PackedSystems& wire) {
  HostPacked h;
  h.ints.resize(wire.ints.extent(0));
  h.reals.resize(wire.reals.extent(0));
  Kokkos::deep_copy(
      Kokkos::View<std::int64_t*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
          h.ints.data(), h.ints.size()),
      wire.ints);
  count_host_sync(SyncKind::payload);
  Kokkos::deep_copy(
      Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
          h.reals.data(), h.reals.size()),
      wire.reals);
  count_host_sync(SyncKind::payload);
  return h;
}

HostPacked empty_host_packed(int stages, std::int64_t flags) {
  HostPacked w;
  w.ints = {packed_magic, packed_version, 0, 0, stages, flags};
  return w;
}

Kokkos::View<const std::int64_t*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>
host_ints_view(const HostPacked& w) {
  using V =
      Kokkos::View<const std::int64_t*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  return V(w.ints.data(), w.ints.size());
}

Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>
host_reals_view(const HostPacked& w) {
  using V = Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  return V(w.reals.data(), w.reals.size());
}

HostPacked encode_host_systems(const std::vector<HostSystem>& systems, SpeciesTable& species,
                               int stages) {
  const auto n = static_cast<std::int64_t>(systems.size());
  std::int64_t m = 0;
  for (const HostSystem& s : systems)
    m += static_cast<std::int64_t>(s.size());
  HostPacked w;
  w.ints.assign(packed_int_count(n, m, stages), 0);
  w.reals.assign(packed_real_count(n, m), 0.0);
  const std::int64_t head[packed_header_size] = {packed_magic, packed_version, n, m, stages, 0};
  std::copy(head, head + packed_header_size, w.ints.begin());
  const PackedLayout L{n, m, stages};
  fields::batch_fields::for_each_host([&](auto f) {
    using F = decltype(f);
    if constexpr (F::wire != fields::Wire::none) {
      auto& out = wire_of<F>(w.ints, w.reals);
      const auto wd = static_cast<std::size_t>(F::width(stages));
      std::size_t at = static_cast<std::size_t>(L.template at<F>());
      for (const HostSystem& s : systems) {
        if constexpr (F::per == fields::Per::system) {
          for (std::size_t j = 0; j < wd; ++j)
            out[at++] = F::encode(s, static_cast<int>(j), species);
        } else {
          for (std::size_t i = 0; i < s.size(); ++i)
            for (std::size_t j = 0; j < wd; ++j)
              out[at++] = F::encode(s, i, static_cast<int>(j), species);
        }
      }
    }
  });
  return w;
}

std::vector<HostSystem> decode_host_systems(const std::int64_t* ints, std::size_t n_ints,
                                            const double* reals, std::size_t n_reals,
                                            const SpeciesTable& species) {
  std::vector<HostSystem> out;
  std::size_t ip = 0;
  std::size_t rp = 0;
  while (ip < n_ints) {
    if (n_ints - ip < static_cast<std::size_t>(packed_header_size))
      malformed("trailing " + std::to_string(n_ints - ip) + " integers");
    const std::int64_t* h = ints + ip;
    // The message's own sizes follow from its header; check them against what is left.
    const std::int64_t n = h[2], m = h[3], k = h[4];
    if (n < 0 || m < 0 || k < 0 || k > 4096 || n > (std::int64_t(1) << 40) ||
        m > (std::int64_t(1) << 40))
      malformed("impossible counts in a gathered header");
    const std::size_t ni = packed_int_count(n, m, k);
    const std::size_t nr = packed_real_count(n, m);
    if (ni > n_ints - ip || nr > n_reals - rp)
      malformed("a message runs past the end of the gathered data");
    decode_packed_header(h, ni, nr);
    const PackedLayout L{n, m, k};
    const std::int64_t* cnt = h + L.count();
    const double* r = reals + rp;
    std::int64_t a = 0;
    for (std::int64_t s = 0; s < n; ++s) {
      if (cnt[s] < 1 || cnt[s] > m - a)  // not a + cnt[s] > m: that can overflow
        malformed("system " + std::to_string(s) + " has " + std::to_string(cnt[s]) + " atoms");
      HostSystem sys;
      fields::batch_fields::for_each_host([&](auto f) {
        using F = decltype(f);
        if constexpr (F::wire != fields::Wire::none) {
          const auto& values = wire_of<F>(h, r);  // the message's integers or doubles
          const std::int64_t wd = F::width(k);
          const std::int64_t at = L.template at<F>();
          if constexpr (F::per == fields::Per::system) {
            for (std::int64_t j = 0; j < wd; ++j)
              F::decode(sys, static_cast<int>(j), values[at + s * wd + j]);
          } else {
            for (std::int64_t i = a; i < a + cnt[s]; ++i)
              for (std::int64_t j = 0; j < wd; ++j)
                F::decode(sys, values[at + i * wd + j], species);
          }
        }
      });
      a += cnt[s];
      out.push_back(std::move(sys));
    }
    if (a != m)
      malformed("atom counts add up to " + std::to_string(a) + ", the header says " +
                std::to_string(m));
    ip += ni;
    rp += nr;
  }
  if (rp != n_reals)
    malformed("trailing " + std::to_string(n_reals - rp) + " doubles");
  return out;
}

}  // namespace baton::systems
