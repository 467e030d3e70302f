#pragma once
/// \file
/// The fields of a SystemsBatch, described once. Each field is a tag type with `static constexpr`
/// members and accessors; `batch_fields` lists them. Allocation (SystemsBatch's constructor),
/// compaction (SystemsBatch::remove), the codec's pack and unpack kernels, its host encode and
/// decode and the offsets of its wire format (PackedLayout, codec.hpp) iterate this list, and so do
/// the extended-XYZ reader and writer (xyz.cpp: the Properties columns, the atom lines, the
/// writer's checks), through `xyz_fields`. So a new field is one descriptor here (with its `xyz`
/// column when it has an XYZ form), its member in SystemsBatch (and in HostSystem when it travels),
/// and its tests (docs/pipeline.md, "Adding a field").
///
/// A descriptor has:
///   name          the View's label (baton::batch::<name>)
///   per           Per::atom (rows are atoms) or Per::system (rows are system slots)
///   value_type    the element type
///   components    values per row (a View of rank 2 when not 1); stage_components: one per stage
///   wire          Wire::ints or Wire::reals: it travels in the codec, in that View, in the order
///                 of batch_fields; Wire::none: never sent
///   compacted     moved with its system by SystemsBatch::remove()
///   arrival       what unpack gives a field that does not travel: Arrival::zero (0) or
///                 Arrival::keep (left as it is; the batch's own bookkeeping, or scratch that is
///                 rewritten before it is read)
///   view(b)       the batch's View
///   encode(...)   (travelling fields) the wire value of a HostSystem's component
///   decode(...)   (travelling fields) sets a HostSystem's component from its wire value, in
///                 order: atom by atom, component by component
///   xyz           (per-atom fields with an extended-XYZ column) a nested `struct xyz : XyzColumn`:
///                 the column's name, aliases, HostSystem member, whether it is required, its
///                 value rule and when it is written; a field that travels without a column says
///                 `using xyz = NoXyzColumn;` (below, "Extended XYZ")
/// A field's wire position follows its place in batch_fields among the fields of its Wire: the
/// order below is format version 4's (codec.hpp). The extended-XYZ reader and writer (xyz.cpp)
/// iterate `xyz_fields`, the fields of batch_fields with a column, in that order too: it is the
/// order of the columns Baton writes.

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "baton/systems/cell.hpp"
#include "baton/systems/host_system.hpp"
#include "baton/systems/systems_batch.hpp"

namespace baton::systems::fields {

enum class Per { atom, system };
enum class Wire { none, ints, reals };
enum class Arrival { zero, keep };

/// `components` of a field with one value per pipeline stage (stage_steps).
inline constexpr int stage_components = -1;

/// A list of field descriptors, iterated at compile time (also inside kernels: for_each calls a
/// generic KOKKOS_LAMBDA with a default-constructed tag of each field in turn).
template <class... F>
struct FieldList {
  template <class Fn>
  KOKKOS_INLINE_FUNCTION static void for_each(Fn&& fn) {
    (fn(F{}), ...);
  }
  /// Number of fields in the list.
  static constexpr std::size_t size = sizeof...(F);
  /// The place of field G in the list (size when it is not there).
  template <class G>
  static constexpr std::size_t index_of() {
    std::size_t i = 0;
    bool found = false;
    ((found = found || std::is_same_v<F, G>, i += found ? 0 : 1), ...);
    return i;
  }
  /// for_each for host code (allocation, encode, decode, extended XYZ).
  template <class Fn>
  static void for_each_host(Fn&& fn) {
    (fn(F{}), ...);
  }
  /// Number of values the fields of `wire` before field G take in a message of n systems, m atoms
  /// and k stages: where G starts.
  template <class G>
  KOKKOS_INLINE_FUNCTION static std::int64_t offset(std::int64_t n, std::int64_t m,
                                                    std::int64_t k) {
    std::int64_t at = 0;
    bool before = true;
    ((before = before && !std::is_same_v<F, G>,
      at += (before && F::wire == G::wire) ? F::size(n, m, k) : 0),
     ...);
    return at;
  }
  /// Values all the fields of `wire` take in a message of n systems, m atoms and k stages.
  KOKKOS_INLINE_FUNCTION static std::int64_t total(Wire wire, std::int64_t n, std::int64_t m,
                                                   std::int64_t k) {
    return ((F::wire == wire ? F::size(n, m, k) : std::int64_t(0)) + ... + std::int64_t(0));
  }
};

/// Common parts of a descriptor: `Self` gives name, per, value_type, components, wire.
template <class T, Per P, int Components, Wire W, bool Compacted = true, Arrival A = Arrival::zero>
struct Field {
  using value_type = T;
  static constexpr Per per = P;
  static constexpr int components = Components;
  static constexpr Wire wire = W;
  static constexpr bool compacted = Compacted;
  static constexpr Arrival arrival = A;
  /// A View of rank 2 (rows, components), else of rank 1.
  static constexpr bool rank2 = Components != 1;
  /// Components of a row in a batch or message of k stages.
  KOKKOS_INLINE_FUNCTION static int width(std::int64_t k) {
    return Components == stage_components ? static_cast<int>(k) : Components;
  }
  /// Values the field takes in a message of n systems, m atoms and k stages.
  KOKKOS_INLINE_FUNCTION static std::int64_t size(std::int64_t n, std::int64_t m, std::int64_t k) {
    return (P == Per::atom ? m : n) * width(k);
  }
  /// Element (row, j) of the field's View `v`.
  template <class V>
  KOKKOS_INLINE_FUNCTION static auto& at(const V& v, std::int64_t row, int j) {
    if constexpr (rank2)
      return v(row, j);
    else
      return v(row);
  }
};

/// What encode() gets besides the system: the species table (labels to indices).
using Species = SpeciesTable;

// ---- extended XYZ -------------------------------------------------------------------------------

/// The extended-XYZ column of a per-atom field (systems/xyz.cpp reads and writes it, docs/xyz.md).
/// A descriptor with a column has a nested `struct xyz : XyzColumn` that sets `column`, `host` and
/// `what` and overrides any other default here. The column has the field's `components` values per
/// atom; its type letter follows the HostSystem member's elements (xyz_type: strings S, reals R,
/// integers I).
struct XyzColumn {
  // static constexpr const char* column: the name Baton writes (lower case; read in any case)
  // static constexpr auto host: the HostSystem member, a std::vector of components * size() values
  // static constexpr const char* what: the values in messages ("expected 3 numbers for <what>")
  /// Other names the reader accepts (lower case; read in any case).
  static constexpr std::array<const char*, 0> aliases{};
  /// Properties must declare it; plain XYZ (no Properties) is the required columns, in table
  /// order. Else it is read when declared and written when written() says so.
  static constexpr bool required = false;
  /// The writer's count message: "system 9 has 4 <values> for 2 atoms".
  static constexpr const char* values = "values";
  /// A value's rule beyond its type (read and written): "<what> must be <must_be>, got 'x'"
  /// (reader), "system 9 has a <what> that is not <must_be>" (writer).
  static constexpr const char* must_be = "";
  template <class T>
  static bool valid(const T&) {
    return true;
  }
  /// Whether the writer writes an optional column for a system with these values: when it has
  /// some.
  template <class V>
  static bool written(const V& v) {
    return !v.empty();
  }
};

/// The `xyz` of a field that travels but has no extended-XYZ column (says so, so that a column is
/// not forgotten: tests/unit/test_xyz.cpp checks every travelling per-atom field has one or this).
struct NoXyzColumn {};

// ---- per atom -----------------------------------------------------------------------------------

struct species : Field<int, Per::atom, 1, Wire::ints> {
  static constexpr const char* name = "species";
  template <class B>
  static auto& view(B& b) {
    return b.species;
  }
  static std::int64_t encode(const HostSystem& s, std::size_t i, int, Species& table) {
    return table.index(s.species[i]);
  }
  static void decode(HostSystem& s, std::int64_t v, const Species& table) {
    s.species.push_back(table.name(static_cast<int>(v)));
  }
  struct xyz : XyzColumn {
    static constexpr const char* column = "species";
    static constexpr auto host = &HostSystem::species;
    static constexpr const char* what = "species label";
    static constexpr bool required = true;
    static constexpr const char* values = "species labels";
  };
};

struct positions : Field<double, Per::atom, 3, Wire::reals> {
  static constexpr const char* name = "positions";
  template <class B>
  static auto& view(B& b) {
    return b.positions;
  }
  static double encode(const HostSystem& s, std::size_t i, int d, Species&) {
    return s.positions.size() == 3 * s.size() ? s.positions[3 * i + static_cast<std::size_t>(d)]
                                              : 0.0;
  }
  static void decode(HostSystem& s, double v, const Species&) { s.positions.push_back(v); }
  struct xyz : XyzColumn {
    static constexpr const char* column = "pos";
    static constexpr auto host = &HostSystem::positions;
    static constexpr const char* what = "pos";
    static constexpr bool required = true;
    static constexpr const char* values = "position values";
  };
};

struct velocities : Field<double, Per::atom, 3, Wire::reals> {
  static constexpr const char* name = "velocities";
  template <class B>
  static auto& view(B& b) {
    return b.velocities;
  }
  /// 0 where the system has none.
  static double encode(const HostSystem& s, std::size_t i, int d, Species&) {
    return s.velocities.size() == 3 * s.size() ? s.velocities[3 * i + static_cast<std::size_t>(d)]
                                               : 0.0;
  }
  static void decode(HostSystem& s, double v, const Species&) { s.velocities.push_back(v); }
  /// `velo` as QUIP and OVITO write it; `vel` and `velocities` are read too.
  struct xyz : XyzColumn {
    static constexpr const char* column = "velo";
    static constexpr std::array<const char*, 2> aliases{"vel", "velocities"};
    static constexpr auto host = &HostSystem::velocities;
    static constexpr const char* what = "velocities";
    static constexpr const char* values = "velocity values";
  };
};

struct masses : Field<double, Per::atom, 1, Wire::reals> {
  static constexpr const char* name = "masses";
  template <class B>
  static auto& view(B& b) {
    return b.masses;
  }
  /// 1 where the system has none.
  static double encode(const HostSystem& s, std::size_t i, int, Species&) {
    return s.masses.size() == s.size() ? s.masses[i] : 1.0;
  }
  static void decode(HostSystem& s, double v, const Species&) { s.masses.push_back(v); }
  /// `masses` as ASE writes it (`mass`, QUIP's and OVITO's, is read too): written only when some
  /// mass is not 1 (no masses means all 1).
  struct xyz : XyzColumn {
    static constexpr const char* column = "masses";
    static constexpr std::array<const char*, 1> aliases{"mass"};
    static constexpr auto host = &HostSystem::masses;
    static constexpr const char* what = "mass";
    static constexpr const char* values = "masses";
    static constexpr const char* must_be = "positive and finite";
    static bool valid(double m) { return m > 0 && std::isfinite(m); }
    static bool written(const std::vector<double>& m) {
      return std::any_of(m.begin(), m.end(), [](double v) { return v != 1.0; });
    }
  };
};

/// Whether an atom moves (1) or is fixed (0): ASE's FixAtoms, read and written as its logical
/// `move_mask` column (T: moves).
struct movable : Field<int, Per::atom, 1, Wire::ints> {
  static constexpr const char* name = "movable";
  template <class B>
  static auto& view(B& b) {
    return b.movable;
  }
  /// 1 where the system has no move_mask.
  static std::int64_t encode(const HostSystem& s, std::size_t i, int, Species&) {
    return s.move_mask.size() == s.size() ? (s.move_mask[i] ? 1 : 0) : 1;
  }
  static void decode(HostSystem& s, std::int64_t v, const Species&) {
    s.move_mask.push_back(v != 0);
  }
  /// Written only when some atom is fixed (no move_mask means every atom moves).
  struct xyz : XyzColumn {
    static constexpr const char* column = "move_mask";
    static constexpr auto host = &HostSystem::move_mask;
    static constexpr const char* what = "move_mask";
    static constexpr const char* values = "move_mask values";
    static bool written(const std::vector<bool>& m) {
      return std::any_of(m.begin(), m.end(), [](bool moves) { return !moves; });
    }
  };
};

/// Zero on arrival; moved with the system; never sent.
struct forces : Field<double, Per::atom, 3, Wire::none> {
  static constexpr const char* name = "forces";
  template <class B>
  static auto& view(B& b) {
    return b.forces;
  }
};

/// The slot of the atom's system: written by unpack and remove themselves (bookkeeping).
struct system_of_atom : Field<int, Per::atom, 1, Wire::none, false, Arrival::keep> {
  static constexpr const char* name = "system_of_atom";
  template <class B>
  static auto& view(B& b) {
    return b.system_of_atom;
  }
};

/// A many-body potential's per-atom values within one force call: not moved, not cleared.
struct atom_scratch : Field<double, Per::atom, 2, Wire::none, false, Arrival::keep> {
  static constexpr const char* name = "atom_scratch";
  template <class B>
  static auto& view(B& b) {
    return b.atom_scratch;
  }
};

/// Valid only where list_built is 1 (0 on arrival): moved, not cleared.
struct list_origin : Field<double, Per::atom, 3, Wire::none, true, Arrival::keep> {
  static constexpr const char* name = "list_origin";
  template <class B>
  static auto& view(B& b) {
    return b.list_origin;
  }
};

// ---- per system ---------------------------------------------------------------------------------

/// The first atom row: written by unpack and remove themselves (bookkeeping).
struct offset : Field<int, Per::system, 1, Wire::none, false, Arrival::keep> {
  static constexpr const char* name = "offset";
  template <class B>
  static auto& view(B& b) {
    return b.offset;
  }
};

struct id : Field<std::int64_t, Per::system, 1, Wire::ints> {
  static constexpr const char* name = "id";
  template <class B>
  static auto& view(B& b) {
    return b.id;
  }
  static std::int64_t encode(const HostSystem& s, int, Species&) { return s.id; }
  static void decode(HostSystem& s, int, std::int64_t v) { s.id = v; }
};

/// The atom count: on the host, HostSystem::size() (decode reads the atoms by it).
struct count : Field<int, Per::system, 1, Wire::ints> {
  static constexpr const char* name = "count";
  template <class B>
  static auto& view(B& b) {
    return b.count;
  }
  static std::int64_t encode(const HostSystem& s, int, Species&) {
    return static_cast<std::int64_t>(s.size());
  }
  static void decode(HostSystem&, int, std::int64_t) {}
};

/// Padded with 0 or cut to the message's stages.
struct stage_steps : Field<std::int64_t, Per::system, stage_components, Wire::ints> {
  static constexpr const char* name = "stage_steps";
  template <class B>
  static auto& view(B& b) {
    return b.stage_steps;
  }
  static std::int64_t encode(const HostSystem& s, int j, Species&) {
    const auto u = static_cast<std::size_t>(j);
    return u < s.stage_steps.size() ? s.stage_steps[u] : 0;
  }
  static void decode(HostSystem& s, int, std::int64_t v) { s.stage_steps.push_back(v); }
};

/// Periodic axes as bits (bit k: axis k).
struct pbc : Field<int, Per::system, 1, Wire::ints> {
  static constexpr const char* name = "pbc";
  template <class B>
  static auto& view(B& b) {
    return b.pbc;
  }
  static std::int64_t encode(const HostSystem& s, int, Species&) { return pbc_bits(s.pbc); }
  static void decode(HostSystem& s, int, std::int64_t v) {
    for (std::size_t d = 0; d < 3; ++d)
      s.pbc[d] = (v >> d) & 1;
  }
};

/// A Failure code (0: it did not fail); on the host HostSystem::failed and ::failure.
struct failed : Field<int, Per::system, 1, Wire::ints> {
  static constexpr const char* name = "failed";
  template <class B>
  static auto& view(B& b) {
    return b.failed;
  }
  static std::int64_t encode(const HostSystem& s, int, Species&) {
    return s.failed ? failure_code(s.failure) : 0;
  }
  static void decode(HostSystem& s, int, std::int64_t v) {
    s.failed = v != 0;
    s.failure = failure_text(static_cast<int>(v));
  }
};

struct energy : Field<double, Per::system, 1, Wire::reals> {
  static constexpr const char* name = "energy";
  template <class B>
  static auto& view(B& b) {
    return b.energy;
  }
  static double encode(const HostSystem& s, int, Species&) { return s.energy; }
  static void decode(HostSystem& s, int, double v) { s.energy = v; }
};

struct fmax : Field<double, Per::system, 1, Wire::reals> {
  static constexpr const char* name = "fmax";
  template <class B>
  static auto& view(B& b) {
    return b.fmax;
  }
  static double encode(const HostSystem& s, int, Species&) { return s.fmax; }
  static void decode(HostSystem& s, int, double v) { s.fmax = v; }
};

/// Cell vectors as rows (all zero: no cell).
struct cell : Field<double, Per::system, 9, Wire::reals> {
  static constexpr const char* name = "cell";
  template <class B>
  static auto& view(B& b) {
    return b.cell;
  }
  static double encode(const HostSystem& s, int j, Species&) {
    return s.cell[static_cast<std::size_t>(j)];
  }
  static void decode(HostSystem& s, int j, double v) { s.cell[static_cast<std::size_t>(j)] = v; }
};

struct virial : Field<double, Per::system, 6, Wire::reals> {
  static constexpr const char* name = "virial";
  template <class B>
  static auto& view(B& b) {
    return b.virial;
  }
  static double encode(const HostSystem& s, int j, Species&) {
    return s.virial[static_cast<std::size_t>(j)];
  }
  static void decode(HostSystem& s, int j, double v) { s.virial[static_cast<std::size_t>(j)] = v; }
};

/// The last stage's conserved quantity (NaN: none).
struct conserved : Field<double, Per::system, 1, Wire::reals> {
  static constexpr const char* name = "conserved";
  template <class B>
  static auto& view(B& b) {
    return b.conserved;
  }
  static double encode(const HostSystem& s, int, Species&) { return s.conserved; }
  static void decode(HostSystem& s, int, double v) { s.conserved = v; }
};

/// Steps in the current stage: 0 on arrival.
struct steps : Field<std::int64_t, Per::system, 1, Wire::none> {
  static constexpr const char* name = "steps";
  template <class B>
  static auto& view(B& b) {
    return b.steps;
  }
};

/// SystemStatus: unpack sets it from the message's index (bookkeeping).
struct status : Field<int, Per::system, 1, Wire::none, true, Arrival::keep> {
  static constexpr const char* name = "status";
  template <class B>
  static auto& view(B& b) {
    return b.status;
  }
};

struct scratch : Field<double, Per::system, batch_scratch_size, Wire::none> {
  static constexpr const char* name = "scratch";
  template <class B>
  static auto& view(B& b) {
    return b.scratch;
  }
};

/// The cell list_origin's list was built in: valid only where list_built is 1 (0 on arrival):
/// moved, not cleared.
struct list_cell : Field<double, Per::system, 9, Wire::none, true, Arrival::keep> {
  static constexpr const char* name = "list_cell";
  template <class B>
  static auto& view(B& b) {
    return b.list_cell;
  }
};

struct list_built : Field<int, Per::system, 1, Wire::none> {
  static constexpr const char* name = "list_built";
  template <class B>
  static auto& view(B& b) {
    return b.list_built;
  }
};

struct forces_stale : Field<int, Per::system, 1, Wire::none> {
  static constexpr const char* name = "forces_stale";
  template <class B>
  static auto& view(B& b) {
    return b.forces_stale;
  }
};

/// Every field of a batch. Among the fields of one Wire, this order is the wire format's.
using batch_fields =
    FieldList<id, count, energy, fmax, stage_steps, species, positions, velocities, masses, movable,
              pbc, failed, cell, virial, conserved, forces, system_of_atom, atom_scratch,
              list_origin, offset, steps, status, scratch, list_cell, list_built, forces_stale>;

namespace detail {
template <class F, class = void>
struct declares_xyz : std::false_type {};
template <class F>
struct declares_xyz<F, std::void_t<typename F::xyz>> : std::true_type {};
template <class F, bool = declares_xyz<F>::value>
struct xyz_column_of : std::false_type {};
template <class F>
struct xyz_column_of<F, true> : std::bool_constant<!std::is_same_v<typename F::xyz, NoXyzColumn>> {
};
template <class H, class List>
struct Prepend;
template <class H, class... T>
struct Prepend<H, FieldList<T...>> {
  using type = FieldList<H, T...>;
};
template <class List>
struct XyzOf;
template <>
struct XyzOf<FieldList<>> {
  using type = FieldList<>;
};
template <class H, class... T>
struct XyzOf<FieldList<H, T...>> {
  using rest = typename XyzOf<FieldList<T...>>::type;
  using type = std::conditional_t<xyz_column_of<H>::value, typename Prepend<H, rest>::type, rest>;
};
}  // namespace detail

/// True when field F has an extended-XYZ column (an `xyz` that is not NoXyzColumn).
template <class F>
inline constexpr bool has_xyz_column = detail::xyz_column_of<F>::value;
/// True when field F says it has no extended-XYZ column (`using xyz = NoXyzColumn;`).
template <class F>
inline constexpr bool no_xyz_column = detail::declares_xyz<F>::value && !has_xyz_column<F>;

/// The fields with an extended-XYZ column, in batch_fields order (the order Baton writes them).
using xyz_fields = detail::XyzOf<batch_fields>::type;

/// The element type of field F's HostSystem member (F has an XYZ column).
template <class F>
using xyz_value_t = typename std::remove_reference_t<decltype(std::declval<HostSystem&>().*
                                                              F::xyz::host)>::value_type;

/// The extended-XYZ type letter of field F's column: S (strings), L (logicals), R (reals) or I
/// (integers).
template <class F>
constexpr char xyz_type() {
  using T = xyz_value_t<F>;
  if constexpr (std::is_same_v<T, std::string>)
    return 'S';
  else if constexpr (std::is_same_v<T, bool>)
    return 'L';
  else if constexpr (std::is_floating_point_v<T>)
    return 'R';
  else {
    static_assert(std::is_integral_v<T>,
                  "an XYZ column holds strings, logicals, reals or integers");
    return 'I';
  }
}

/// Copies of a batch's Views of the fields `List` names, for a kernel to capture (a SystemsBatch
/// holds host containers, which a kernel must not).
template <class F>
struct Holder {
  typename std::remove_reference_t<decltype(F::view(std::declval<SystemsBatch&>()))> v;
};
template <class List>
struct ViewsOf;
template <class... F>
struct ViewsOf<FieldList<F...>> : Holder<F>... {
  ViewsOf() = default;
  explicit ViewsOf(const SystemsBatch& b) : Holder<F>{F::view(b)}... {}
  template <class G>
  KOKKOS_INLINE_FUNCTION const auto& get() const {
    return static_cast<const Holder<G>&>(*this).v;
  }
  template <class G>
  auto& ref() {
    return static_cast<Holder<G>&>(*this).v;
  }
};
using BatchViews = ViewsOf<batch_fields>;

/// Field F's part of moving a system from one batch to another, for rows of kind P (a system slot,
/// or an atom): a travelling field's values are copied from `from_row` of `from` to `to_row` of
/// `to`, a field that arrives as 0 (Arrival::zero) is 0 there, and the bookkeeping and kept fields
/// (Arrival::keep) are left to the caller, as unpack leaves them (its message came from `from`).
/// A function, not code in a kernel's lambda: nvcc does not let an extended lambda first capture a
/// variable inside `if constexpr`.
template <Per P, class F>
KOKKOS_INLINE_FUNCTION void move_field(const BatchViews& from, const BatchViews& to, int stages,
                                       std::int64_t from_row, std::int64_t to_row) {
  if constexpr (F::per == P) {
    using T = typename F::value_type;
    const auto& d = to.template get<F>();
    const int wd = F::width(stages);
    if constexpr (F::wire != Wire::none) {
      const auto& v = from.template get<F>();
      for (int j = 0; j < wd; ++j)
        F::at(d, to_row, j) = F::at(v, from_row, j);
    } else if constexpr (F::arrival == Arrival::zero) {
      for (int j = 0; j < wd; ++j)
        F::at(d, to_row, j) = T(0);
    }
  }
}

}  // namespace baton::systems::fields
