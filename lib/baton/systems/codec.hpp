#pragma once
/// \file
/// The systems codec: the one format systems take outside a batch, used for the pipeline's
/// hand-offs (pipeline/) and for HostSystem <-> batch (host_transfer.hpp). The wire format of
/// systems handed from one stage to the next: two Views, one of 64-bit integers and one of doubles,
/// sent with Baton's View transport (device memory as is when MPI is GPU-aware, staged through the
/// host when not).
///
/// Integers: a header of `packed_header_size` values
///   [0] magic 0x42545359 ("BTSY")   [1] format version (4)   [2] systems n   [3] atoms m
///   [4] stages k                     [5] flags (bit 0: end of stream, no more messages follow; bit
///   1: the sender stopped with an error; bit 2: the sender named new species labels, which it
///   sent before this message, on a channel of their own: see the pipeline's links.hpp)
/// then id[n], count[n], stage_steps[n * k] (system by system), species[m], movable[m] (1 or 0;
/// format 3), pbc[n] (bits), failed[n] (0 or 1).
/// Doubles: energy[n], fmax[n], positions[3m], velocities[3m], masses[m] (atoms by system, in the
/// order of the systems), cell[9n], virial[6n], conserved[n] (format 4). A message of 0 systems is
/// valid (ints = header only, doubles empty). The fields, their order and sizes come from one
/// table, fields.hpp (fields::batch_fields), which PackedLayout, the pack and unpack kernels and
/// the host encode and decode iterate.

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "baton/systems/fields.hpp"
#include "baton/systems/host_system.hpp"
#include "baton/systems/systems_batch.hpp"

namespace baton::systems {

inline constexpr std::int64_t packed_magic = 0x42545359;
inline constexpr std::int64_t packed_version = 4;
inline constexpr int packed_header_size = 6;
inline constexpr std::int64_t packed_end_of_stream = 1;
/// Flag of the message a rank sends its neighbours when it stops with an error (0 systems).
inline constexpr std::int64_t packed_abort = 2;
/// Flag of a message that the sender's species labels precede (the pipeline sends them, on their
/// own tag, when its table has grown since its last hand-off to that rank).
inline constexpr std::int64_t packed_species = 4;

/// Where each field of a message of n systems, m atoms and k stage counters starts, in its
/// integers and its doubles: the format, defined here once.
struct PackedLayout {
  std::int64_t n = 0, m = 0, k = 0;
  /// Where field F (fields.hpp, one that travels) starts in the integers or the doubles.
  template <class F>
  KOKKOS_INLINE_FUNCTION std::int64_t at() const {
    return (F::wire == fields::Wire::ints ? packed_header_size : 0) +
           fields::batch_fields::offset<F>(n, m, k);
  }
  // integers
  KOKKOS_INLINE_FUNCTION std::int64_t id() const { return at<fields::id>(); }
  KOKKOS_INLINE_FUNCTION std::int64_t count() const { return at<fields::count>(); }
  KOKKOS_INLINE_FUNCTION std::int64_t stage_steps() const { return at<fields::stage_steps>(); }
  KOKKOS_INLINE_FUNCTION std::int64_t species() const { return at<fields::species>(); }
  KOKKOS_INLINE_FUNCTION std::int64_t pbc() const { return at<fields::pbc>(); }
  KOKKOS_INLINE_FUNCTION std::int64_t failed() const { return at<fields::failed>(); }
  KOKKOS_INLINE_FUNCTION std::int64_t int_count() const {
    return packed_header_size + fields::batch_fields::total(fields::Wire::ints, n, m, k);
  }
  // doubles
  KOKKOS_INLINE_FUNCTION std::int64_t energy() const { return at<fields::energy>(); }
  KOKKOS_INLINE_FUNCTION std::int64_t fmax() const { return at<fields::fmax>(); }
  KOKKOS_INLINE_FUNCTION std::int64_t positions() const { return at<fields::positions>(); }
  KOKKOS_INLINE_FUNCTION std::int64_t velocities() const { return at<fields::velocities>(); }
  KOKKOS_INLINE_FUNCTION std::int64_t masses() const { return at<fields::masses>(); }
  KOKKOS_INLINE_FUNCTION std::int64_t cell() const { return at<fields::cell>(); }
  KOKKOS_INLINE_FUNCTION std::int64_t virial() const { return at<fields::virial>(); }
  KOKKOS_INLINE_FUNCTION std::int64_t real_count() const {
    return fields::batch_fields::total(fields::Wire::reals, n, m, k);
  }
};

/// Sizes of the two Views for n systems of m atoms in total with k stage counters each.
inline std::size_t packed_int_count(std::int64_t n, std::int64_t m, std::int64_t k) {
  return static_cast<std::size_t>(PackedLayout{n, m, k}.int_count());
}
inline std::size_t packed_real_count(std::int64_t n, std::int64_t m) {
  return static_cast<std::size_t>(PackedLayout{n, m, 0}.real_count());
}

/// The header, decoded and checked.
struct PackedHeader {
  std::int64_t systems = 0;
  std::int64_t atoms = 0;
  std::int64_t stages = 0;
  std::int64_t flags = 0;
  bool end_of_stream() const noexcept { return (flags & packed_end_of_stream) != 0; }
  bool abort() const noexcept { return (flags & packed_abort) != 0; }
  bool new_species() const noexcept { return (flags & packed_species) != 0; }
};

/// Decodes the first packed_header_size integers of a message whose Views have `int_count` and
/// `real_count` elements; throws baton::Error naming the field when anything does not add up.
PackedHeader decode_packed_header(const std::int64_t* header, std::size_t int_count,
                                  std::size_t real_count);

/// What the host needs to know of a message to unpack it (unpack_systems()) without reading it
/// from the device: its header and, per system, its atom count, periodic axes, cell and status
/// on arrival (as HostSlot, steps 0): Active, or Finished for a system that failed before.
struct PackedIndex {
  PackedHeader header;
  std::vector<HostSlot> systems;  ///< header.systems entries (fewer only when gathered short)
};

/// One hand-off, in the batch's memory space.
struct PackedSystems {
  using memory_space = SystemsBatch::memory_space;
  /// Empty Views. User-provided on purpose, like SystemsBatch's: an implicit constructor lets GCC
  /// 12 (C++20, Kokkos 4.6.99+) constant-initialise `PackedSystems w;` to zero bytes, which are not
  /// an empty View (docs/building.md, "Default-constructed Views and GCC 12").
  PackedSystems() {}  // NOLINT(modernize-use-equals-default)
  PackedSystems(Kokkos::View<std::int64_t*, memory_space> i, Kokkos::View<double*, memory_space> r)
      : ints(std::move(i)), reals(std::move(r)) {}
  Kokkos::View<std::int64_t*, memory_space> ints;
  Kokkos::View<double*, memory_space> reals;
  /// The message's index when the host knows it (pack_systems(), to_device()); null: it is read
  /// from the device when needed (read_packed_index()).
  std::shared_ptr<const PackedIndex> index;
};

/// Packs the systems in `slots` (any order; they are packed in that order) with kernels. The
/// index it gives the message (PackedSystems::index) says Active for every system: the host does
/// not know which failed. A caller that knows sets their status to Finished there
/// (mark_failed_in_index()) before unpack_systems() reads it.
PackedSystems pack_systems(const SystemsBatch& batch, const std::vector<int>& slots,
                           std::int64_t flags = 0);

/// Reads and checks the header of a received message (one small copy to the host; none when the
/// message's index is known).
PackedHeader read_packed_header(const PackedSystems& wire);

/// Integers per system in what gather_packed_index() writes.
inline constexpr int packed_index_per_system = 12;
/// Integers that gather_packed_index() writes for a message of up to `max_systems` systems.
inline std::size_t packed_index_size(int max_systems) {
  return static_cast<std::size_t>(packed_header_size) +
         static_cast<std::size_t>(packed_index_per_system) * static_cast<std::size_t>(max_systems);
}
/// Launches a kernel that writes the message's index (its header, then per system: atom count,
/// pbc bits, the 9 cell values' bits and the failed code, for up to `max_systems` systems) into
/// out[at, at + packed_index_size(max_systems)), without waiting: the caller copies it to the host
/// with whatever else it reads back, then decodes it with decode_packed_index(). Safe on a
/// malformed message.
void gather_packed_index(const PackedSystems& wire, int max_systems,
                         const Kokkos::View<std::int64_t*, SystemsBatch::memory_space>& out,
                         std::size_t at);
/// Decodes and checks what gather_packed_index() wrote (`gathered`, on the host) for a message of
/// `int_count` integers and `real_count` doubles. Throws baton::Error when the message is
/// malformed; holds no systems when it has more than `max_systems`.
PackedIndex decode_packed_index(const std::int64_t* gathered, int max_systems,
                                std::size_t int_count, std::size_t real_count);
/// The message's index: `wire.index` when known, else gathered and read from the device (one
/// small copy), for up to `max_systems` systems (none when it has more).
PackedIndex read_packed_index(const PackedSystems& wire, int max_systems);

/// Appends the systems of `wire` to `batch` in the status its index gives them (PackedIndex:
/// Active, or Finished for a system that failed before, which no stage steps: it passes through),
/// steps 0, scratch 0; returns the first new slot. Throws baton::Error when they do not fit or the
/// message is malformed. Reads nothing back when the message's index is known (wire.index); else
/// reads it (read_packed_index()).
int unpack_systems(SystemsBatch& batch, const PackedSystems& wire);

/// A hand-off on the host (results kept until the end of a run).
struct HostPacked {
  std::vector<std::int64_t> ints;
  std::vector<double> reals;
};
HostPacked to_host(const PackedSystems& wire);
/// The index of a message on the host (checked: throws baton::Error when malformed).
PackedIndex index_of(const HostPacked& w);
/// Sets the status of the systems `failed` names (one flag per system of the message, in order)
/// to Finished in `wire`'s index (see pack_systems()).
void mark_failed_in_index(PackedSystems& wire, const std::vector<char>& failed);
/// A device copy of `w`, its index known (`label` names the Views).
PackedSystems to_device(const HostPacked& w, const std::string& label);
/// A message of no systems with `flags` (packed_end_of_stream, packed_abort).
HostPacked empty_host_packed(int stages, std::int64_t flags);
/// The vectors of `w` as unmanaged host Views, for sending (`w` must outlive the send).
Kokkos::View<const std::int64_t*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>
host_ints_view(const HostPacked& w);
Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>
host_reals_view(const HostPacked& w);

/// Encodes host systems as one wire message (species named through `species`, which grows as
/// needed; stage_steps padded or cut to `stages`).
HostPacked encode_host_systems(const std::vector<HostSystem>& systems, SpeciesTable& species,
                               int stages);

/// Decodes consecutive wire messages laid end to end (as gathered from several ranks) into systems,
/// naming species from `species`. Throws baton::Error on anything malformed.
std::vector<HostSystem> decode_host_systems(const std::int64_t* ints, std::size_t n_ints,
                                            const double* reals, std::size_t n_reals,
                                            const SpeciesTable& species);

}  // namespace baton::systems
