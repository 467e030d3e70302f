#pragma once
/// \file
/// A batch of atomic systems as structure-of-arrays Kokkos Views of fixed capacity. Systems occupy
/// slots [0, num_systems()) and their atoms the contiguous rows [offset(s), offset(s) + count(s))
/// of the per-atom Views, in slot order, with no gaps. Adding and removing systems runs as kernels;
/// the host keeps the counts and, per slot, what it needs to know without reading the device
/// (HostSlot).

#include <Kokkos_Core.hpp>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace baton::systems {

/// What a system slot holds. Stages step Active systems only and mark them Finished when they are
/// done (converged, or out of step budget); the pipeline then moves them on.
enum class SystemStatus : int {
  active = 0,    ///< being stepped by the stage
  finished = 1,  ///< done with this stage (set by the stage)
  held = 2       ///< finished and counted by the driver, waiting for room further down
};

/// Why a system failed (SystemsBatch::failed holds the code; 0: it did not). Set by the stages when
/// a system's numbers break; never cleared.
enum class Failure : int {
  none = 0,
  energy = 1,       ///< its energy is not finite
  forces = 2,       ///< some force is not finite (e.g. two atoms on top of each other)
  exploded = 3,     ///< an atom is further than max_coordinate from the origin
  positions = 4,    ///< some position or velocity is not finite
  input = 5,        ///< it arrived failed (an earlier run or stage)
  dissociated = 6,  ///< no two atoms interact any more, where some did when it entered the stage
  edges = 7,        ///< more edges on its own than a model call may have (dynamics::Model)
  cell = 8,         ///< its cell, relaxing, became too small for the cutoff, or degenerate
  /// a minimisation (FIRE) used its whole step budget without converging: its result is not a
  /// relaxed structure (dynamics::FireOptions::fail_unconverged)
  not_converged = 9
};
/// The largest Failure code.
inline constexpr int last_failure = static_cast<int>(Failure::not_converged);

/// A coordinate larger than this (in the run's length unit) means the system exploded: no atom of
/// a system that dynamics can handle gets anywhere near it.
inline constexpr double max_coordinate = 1e8;

/// "non-finite energy", "non-finite forces", ... for a Failure code ("" for none).
const char* failure_text(int code);
/// The code whose failure_text() is `text`; Failure::input for any other text (a reason written by
/// something else).
int failure_code(const std::string& text);

/// What a device-to-host read copies: the batch's bookkeeping (statuses, steps, atom counts,
/// message headers, the neighbour-list overflow flag) or systems' data (finished systems copied out
/// for the results, hooks or the overflow chain's host buffer).
enum class SyncKind { bookkeeping, payload };

/// Device-to-host reads made by Baton's own code in this process so far, by kind: each is a copy
/// that the host waits for (on a GPU, a synchronisation with the device). Counted where the copies
/// are made (SystemsBatch::status_on_host(), read_packed_header(), to_host(), ...), so that a
/// caller can tell how many a piece of work took (the pipeline driver reports them per step).
struct HostSyncs {
  long bookkeeping = 0;
  long payload = 0;
  long total() const noexcept { return bookkeeping + payload; }
};
/// The counts so far (process-wide; thread-safe).
HostSyncs host_syncs() noexcept;
/// Counts one device-to-host read (called by the code that makes it).
void count_host_sync(SyncKind kind = SyncKind::bookkeeping) noexcept;

/// Capacity of a batch, in systems and in atoms.
struct BatchCapacity {
  int systems = 0;
  int atoms = 0;
};

/// What the host knows of a system slot without reading the device. `count`, `pbc` and `cell` are
/// exact: they change only when systems are appended (unpack_systems(), wire.hpp) or slots are
/// compacted (SystemsBatch::remove()), both driven by the host. `status` and `steps` are what the
/// batch's owner last read or set: stages change them on the device without the host knowing (the
/// pipeline driver reads them back once a step, docs/pipeline.md).
struct HostSlot {
  int count = 0;                 ///< atoms
  int pbc = 0;                   ///< periodic axes as bits
  std::array<double, 9> cell{};  ///< cell vectors as rows
  int status = 0;                ///< SystemStatus as int (Active when appended)
  std::int64_t steps = 0;        ///< steps taken in the current stage (0 when appended)
};

/// Number of per-system scratch values a stage may use (see SystemsBatch::scratch): columns [0, 15)
/// are the stage's own; column `bound_column` belongs to the built-in stages' shared steps.
inline constexpr int batch_scratch_size = 16;
/// The scratch column where the built-in stages (StageViews, forces.hpp) keep whether the system
/// had an interacting pair when it entered the stage (0: not known yet, 1: no, 2: yes), for the
/// dissociation check (Failure::dissociated). enter_forces() zeroes it.
inline constexpr int bound_column = 15;

/// Fixed-capacity batch of systems in the default execution space's memory.
class SystemsBatch {
 public:
  using execution_space = Kokkos::DefaultExecutionSpace;
  using memory_space = execution_space::memory_space;
  template <class T>
  using view = Kokkos::View<T, Kokkos::LayoutRight, memory_space>;

  /// An empty batch (no capacity). User-provided on purpose, not `= default`: see
  /// docs/building.md, "Default-constructed Views and GCC 12" (with Kokkos 4.6.99+ and GCC 12 in
  /// C++20, a defaulted constructor lets `SystemsBatch b;` be constant-initialised to all-zero
  /// bytes, whose Views then crash when assigned or destroyed).
  SystemsBatch() {}  // NOLINT(modernize-use-equals-default)
  /// Allocates room for `capacity` and `num_stages` per-stage step counters per system.
  SystemsBatch(BatchCapacity capacity, int num_stages);

  int num_systems() const noexcept { return num_systems_; }
  int num_atoms() const noexcept { return num_atoms_; }
  int num_stages() const noexcept { return num_stages_; }
  BatchCapacity capacity() const noexcept { return capacity_; }
  BatchCapacity free() const noexcept {
    return {capacity_.systems - num_systems_, capacity_.atoms - num_atoms_};
  }
  bool empty() const noexcept { return num_systems_ == 0; }

  // Per atom (rows [0, num_atoms()) are in use).
  view<double* [3]> positions;
  view<double* [3]> velocities;
  view<double* [3]> forces;
  view<double*> masses;
  view<int*> movable;         ///< 1: the atom moves; 0: it is fixed (HostSystem::move_mask false)
  view<int*> species;         ///< index into the caller's species-name table
  view<int*> system_of_atom;  ///< slot of the atom's system
  /// Two values per atom a many-body potential may use within one force evaluation (EAM: the
  /// density, then F'(density)). Not moved when slots are compacted, never sent.
  view<double* [2]> atom_scratch;
  /// The positions a stage's neighbour list was last built from (neighbours.hpp), valid where
  /// `list_built` is 1. Moved with the system when slots are compacted, never sent: a system keeps
  /// the same list through slot moves, so its results do not depend on the systems around it.
  view<double* [3]> list_origin;

  // Per system slot (rows [0, num_systems()) are in use).
  view<int*> offset;       ///< first atom row
  view<int*> count;        ///< number of atoms
  view<std::int64_t*> id;  ///< system id
  view<double*> energy;    ///< potential energy (set by the force call)
  view<double*> fmax;      ///< largest atom force norm (set by the force call)
  /// Pair virial sum r_ij (x) F_ij: xx, yy, zz, xy, xz, yz (energy units), set when forces are
  /// computed on entry to a stage and when the stage finishes the system (not every step).
  view<double* [6]> virial;
  /// The conserved quantity of the stage that ran the system last (energy units), where that
  /// stage has one (NVE: E_pot + E_kin; Nose-Hoover: with the thermostats' energy), set at the end
  /// of each of its calls; NaN where it has none (the built-in stages set NaN on entry).
  view<double*> conserved;
  view<std::int64_t*> steps;         ///< steps taken in the current stage
  view<std::int64_t**> stage_steps;  ///< [slot][stage]: steps each finished stage took
  view<int*> status;                 ///< SystemStatus as int
  /// Cell vectors a, b, c as rows; all zero: no cell (cell.hpp). The host keeps a copy
  /// (host_slots()): a caller that changes `cell` or `pbc` on the device calls cells_changed().
  view<double* [9]> cell;
  view<int*> pbc;  ///< periodic axes as bits (bit k: axis k)
  /// A Failure code, not 0 when the system's numbers broke (non-finite energy, forces or
  /// positions, an atom past max_coordinate) or it dissociated: set by the stage, which finishes
  /// it at once; later stages finish it without steps. Travels with the system.
  view<int*> failed;
  /// Per-system state private to the stage running the system (FIRE's dt, alpha, ...). Zeroed when
  /// a system enters a batch; moved with the system when slots are compacted; never sent.
  view<double* [batch_scratch_size]> scratch;
  /// The cell (rows a, b, c) the system was in when list_origin was taken: a list is built for the
  /// two together, and stays usable while the cell deforms a little (neighbours.hpp). Valid where
  /// `list_built` is 1; moved with the system when slots are compacted, never sent.
  view<double* [9]> list_cell;
  /// 1 when list_origin holds the system's list origin; 0 when it enters a batch. Moved with the
  /// system when slots are compacted; never sent.
  view<int*> list_built;
  /// 1 when the system's forces, energy, fmax and virial came from an enter() force call whose
  /// neighbour list did not fit (only where the owner reads the list overflow, below): the stage's
  /// next call computes them again, once its lists grew, before it takes a step. 0 when it enters
  /// a batch; moved with the system when slots are compacted; never sent.
  view<int*> forces_stale;
  /// The largest neighbour list a force kernel on this batch needed that did not fit its stage's
  /// lists (0: every list fit). Written by the kernels, cleared when the lists grow
  /// (neighbours.hpp).
  view<int> list_overflow;

  /// Who reads list_overflow back. false (the default): each stage reads it after its calls, and
  /// when a list did not fit grows its lists and goes on with the call at once. true (the
  /// pipeline driver): a stage's advance() reads nothing back; the batch's owner reads
  /// list_overflow with the rest of its bookkeeping and hands it over with
  /// note_list_overflow(); the stage grows its lists at its next call, where the systems that
  /// stopped early go on (their results do not change: a system's steps do not depend on how
  /// they are split into calls). Nor does enter() (enter_forces()): a system whose entry forces
  /// came from a list that did not fit is marked forces_stale, and the stage's next call computes
  /// them again before stepping it, as enter() would have at once.
  void defer_list_overflow(bool on) noexcept { defer_overflow_ = on; }
  bool list_overflow_deferred() const noexcept { return defer_overflow_; }
  /// The owner's last read of list_overflow (deferred mode), for the stage's next call.
  void note_list_overflow(int needed) noexcept { noted_overflow_ = needed; }
  int noted_list_overflow() const noexcept { return noted_overflow_; }

  /// The host's view of the slots in use, [0, num_systems()).
  const std::vector<HostSlot>& host_slots() const noexcept { return host_; }
  /// Slot `s` of host_slots(), for its owner to record what it read back or set (status, steps).
  HostSlot& host_slot(int s) { return host_.at(static_cast<std::size_t>(s)); }

  /// Reads `cell` and `pbc` back into host_slots(), after the caller changed them on the device.
  void cells_changed();

  /// Records `added` as the systems the caller wrote into slots [num_systems(), num_systems() +
  /// added.size()) and their atoms into the rows that follow num_atoms() (offset, count,
  /// system_of_atom and the rest, on the device). Checked against capacity.
  void append_slots(const std::vector<HostSlot>& added);

  /// Removes the systems in `slots` (ascending, distinct) and moves the rest down, keeping their
  /// order, with kernels.
  void remove(const std::vector<int>& slots);

  /// Host copy of status, read from the device (one small copy, counted by host_syncs()).
  std::vector<int> status_on_host() const;
  /// Atoms per slot, from host_slots() (no read: the host knows them).
  std::vector<int> count_on_host() const;

 private:
  BatchCapacity capacity_{};
  int num_stages_ = 0;
  int num_systems_ = 0;
  int num_atoms_ = 0;
  std::vector<HostSlot> host_;
  bool defer_overflow_ = false;
  int noted_overflow_ = 0;
  /// remove()'s device scratch (systems_batch.cpp), kept from call to call and grown as needed:
  /// on a GPU every allocation costs a synchronisation. Shared by copies, as the Views are.
  struct CompactScratch;
  std::shared_ptr<CompactScratch> compact_;
};

}  // namespace baton::systems
