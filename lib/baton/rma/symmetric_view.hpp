#pragma once
/// \file
/// baton::SymmetricView: a Kokkos View of the same shape on every rank of a communicator, in one
/// MPI window, that any rank reads and writes on any other with one-sided operations (MPI RMA).
///
/// What a "symmetric heap" gives other libraries (NVSHMEM, OpenSHMEM), in MPI only:
///
///     baton::SymmetricView<double**> grid(comm, "grid", 8, 3);  // collective; 8x3 on every rank
///     grid.lock_all();                                          // passive-target epoch
///     grid.put(right, 2, rows);        // rows 2.. of rank `right`'s part := rows (a View n x 3)
///     grid.flush(right);               // the put is complete at `right`
///     grid.unlock_all();
///     grid.free();                     // collective (the destructor frees too)
///
/// Sub-ranges: an operation reaches a run of whole rows of the target's part (rows = the first
/// index; for a 1-D View a row is one element). In LayoutRight those rows are contiguous, so every
/// operation is one MPI call on a contiguous block. The rows start at `first_row`; how many is the
/// first extent of the caller's View, whose other extents must equal the symmetric View's.
///
/// Epochs are tracked per object (on the calling rank): an operation outside an access epoch, a
/// flush outside lock_all, a fence inside lock_all and the like are a baton::Error on the calling
/// rank instead of MPI's undefined behaviour. Checks on one operation's arguments (target rank,
/// rows, extents, contiguity) happen on the calling rank only: the operation is one-sided and no
/// other rank takes part. Allocation (extents that differ between ranks, a memory space MPI cannot
/// read) and free() (an epoch still open on some rank) agree, and throw the same error on every
/// rank. See docs/shared-memory.md for what is and is not detected.

#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "baton/collectives/agreement.hpp"
#include "baton/collectives/mpi_type.hpp"
#include "baton/comm/communicator.hpp"
#include "baton/core/check_mpi.hpp"
#include "baton/core/gpu_aware.hpp"

namespace baton {

/// Why a SymmetricView cannot live in a memory space, or "" when it can (pure, for tests).
/// Host-accessible memory always can; device-only memory only when MPI is GPU-aware (`aware`, as
/// baton::gpu_aware_mpi() decides it). `space_name` names the space in the text (e.g. "Cuda").
std::string symmetric_space_problem(const std::string& space_name, bool host_accessible,
                                    const GpuAwareness& aware);

/// True where SymmetricView::fence() is emulated with a lock_all epoch, per-target flushes,
/// MPI_Win_sync and a barrier instead of MPI_Win_fence: under MPICH and the MPIs derived from it
/// (MPICH_VERSION defined), because MPICH 4.0.2's MPI_Win_fence can return before a large get's
/// data has arrived (docs/shared-memory.md, "MPICH"). Only for windows in MPI's unified memory
/// model (MPI_WIN_MODEL); a separate-model window keeps MPI_Win_fence.
constexpr bool fence_is_emulated() noexcept {
#ifdef MPICH_VERSION
  return true;
#else
  return false;
#endif
}

/// The access epoch a SymmetricView is in, on this rank.
enum class RmaEpoch : std::uint8_t {
  none,      ///< no epoch: operations throw
  fence,     ///< after fence(), until close_fence()
  lock_all,  ///< between lock_all() and unlock_all()
};

/// "none", "fence" or "lock_all".
const char* to_string(RmaEpoch epoch) noexcept;

namespace detail {

/// The part of a SymmetricView that does not depend on its type: the communicator (Baton's own
/// duplicate), the MPI window, the epoch state and the shape. Not for direct use.
class SymmetricWindow {
 public:
  /// Collective over `comm` (already duplicated): agrees on `extents` (all ranks must pass the same
  /// ones) and on `space_problem` (empty on every rank, or the same error everywhere), then makes
  /// the window: MPI_Win_allocate when `base` is null, else MPI_Win_create over `base` (which must
  /// hold the product of `extents` elements of `element_size` bytes and outlive the window).
  SymmetricWindow(Communicator comm, std::vector<std::size_t> extents, std::size_t element_size,
                  void* base, const std::string& space_problem);
  /// Frees the window if free() was not called (collective; see free()). Errors are printed to
  /// stderr and the window is left allocated rather than thrown from a destructor.
  ~SymmetricWindow();
  SymmetricWindow(const SymmetricWindow&) = delete;
  SymmetricWindow& operator=(const SymmetricWindow&) = delete;

  const Communicator& comm() const noexcept { return comm_; }
  MPI_Win raw() const noexcept { return win_; }
  void* base() const noexcept { return base_; }
  const std::vector<std::size_t>& extents() const noexcept { return extents_; }
  /// Elements in one row (the product of the extents after the first).
  std::size_t row_elements() const noexcept { return row_elements_; }
  RmaEpoch epoch() const noexcept { return epoch_; }
  bool freed() const noexcept { return win_ == MPI_WIN_NULL; }

  void fence();
  void close_fence();
  void lock_all();
  void unlock_all();
  void flush(int target);
  void flush_all();
  void sync();
  void free();
  double free_timeout() const noexcept { return free_timeout_; }
  void set_free_timeout(double seconds);

  /// Throws unless an access epoch is open and `target` is a rank of the communicator; counts the
  /// operation (free() checks that a fence completed it).
  void begin_operation(const char* operation, int target);
  /// Throws unless `rows` rows at `first_row` fit the target's part and `shape` (the caller's
  /// View's extents) matches the symmetric shape in every extent but the first, and `contiguous`.
  /// `what` names the caller's View ("source", "destination").
  void check_rows(const char* operation, const char* what, std::size_t first_row,
                  const std::vector<std::size_t>& shape, bool contiguous) const;
  /// Throws "<operation>: ... (on rank r)" for a freed window.
  void require_live(const char* operation) const;
  /// n as an MPI count (throws past INT_MAX).
  int count(const char* operation, std::size_t n) const;

 private:
  [[noreturn]] void fail(const char* operation, const std::string& what) const;
  bool wait_for_free_agreement(std::vector<int>& states);
  // MPI_Win_flush to every target with operations not yet flushed.
  void flush_unflushed();
  // Marks every target flushed (after a call that completed every operation).
  void forget_unflushed();
  // The emulated fence's synchronisation: flush, MPI_Win_sync, barrier, MPI_Win_sync.
  void emulated_fence_sync();

  Communicator comm_;
  MPI_Win win_ = MPI_WIN_NULL;
  void* base_ = nullptr;
  std::vector<std::size_t> extents_;
  std::size_t row_elements_ = 1;
  RmaEpoch epoch_ = RmaEpoch::none;
  std::uint64_t operations_since_fence_ = 0;
  // Per target: 1 while it has operations since its last flush; flush_all() and the emulated
  // fence flush exactly these.
  std::vector<unsigned char> unflushed_;
  bool emulate_fence_ = false;  // fence_is_emulated() and the window's memory model is unified
  double free_timeout_ = -1;    // < 0: no limit (a warning on stderr after 60 s)
  MPI_Request free_request_ = MPI_REQUEST_NULL;
  int free_state_ = 0;
  std::vector<int> free_states_;
};

/// "(4, 3)": extents as text.
std::string describe_extents(const std::vector<std::size_t>& extents);

}  // namespace detail

/// Unlocks a SymmetricView's lock_all epoch when it goes out of scope (see SymmetricView::
/// lock_all_scope()). Errors from the unlock in the destructor are ignored: call unlock() to see
/// them.
class LockAllScope {
 public:
  explicit LockAllScope(detail::SymmetricWindow& window) : window_(&window) { window.lock_all(); }
  ~LockAllScope() {
    if (window_ != nullptr && window_->epoch() == RmaEpoch::lock_all && !window_->freed()) {
      try {
        window_->unlock_all();
      } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw
      }
    }
  }
  LockAllScope(LockAllScope&& other) noexcept : window_(other.window_) { other.window_ = nullptr; }
  LockAllScope(const LockAllScope&) = delete;
  LockAllScope& operator=(const LockAllScope&) = delete;
  LockAllScope& operator=(LockAllScope&&) = delete;
  /// Ends the epoch now (MPI_Win_unlock_all), throwing on failure.
  void unlock() {
    detail::SymmetricWindow* w = window_;
    window_ = nullptr;
    if (w != nullptr)
      w->unlock_all();
  }

 private:
  detail::SymmetricWindow* window_;
};

/// A View of the same shape on every rank of a communicator, in one MPI window.
///
/// `DataType` is a Kokkos data type with only run-time extents (`double*`, `int**`, up to 8) of an
/// arithmetic value type. `MemorySpace` defaults to Kokkos::HostSpace (memory from
/// MPI_Win_allocate); any other space is a Kokkos allocation exposed with MPI_Win_create, allowed
/// when the host can reach it (pinned, UVM) or, for device-only memory, where MPI is GPU-aware
/// (baton::gpu_aware_mpi()); otherwise allocation throws the same baton::Error on every rank.
/// This rank's part is local(), LayoutRight. Move-only.
template <class DataType, class MemorySpace = Kokkos::HostSpace>
class SymmetricView {
  using Shape = Kokkos::View<DataType, Kokkos::LayoutRight, Kokkos::HostSpace>;  // a type only

 public:
  using value_type = typename Shape::non_const_value_type;
  using memory_space = MemorySpace;
  using local_view_type = Kokkos::View<typename Shape::non_const_data_type, Kokkos::LayoutRight,
                                       MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static constexpr int rank = static_cast<int>(Shape::rank);

  static_assert(rank >= 1, "a SymmetricView has at least one extent");
  static_assert(static_cast<int>(Shape::rank_dynamic) == static_cast<int>(Shape::rank),
                "a SymmetricView's extents are all run-time extents (double**, not double*[3])");
  static_assert(std::is_arithmetic_v<value_type>,
                "a SymmetricView holds an arithmetic type (it has a predefined MPI datatype)");

  /// Collective over `comm` (duplicated inside): every rank passes the same `extents`. Extents
  /// that differ, or a memory space MPI cannot use, throw the same baton::Error on every rank.
  /// Contents start at zero.
  template <class... Extents,
            std::enable_if_t<sizeof...(Extents) == static_cast<std::size_t>(rank) &&
                                 (std::is_integral_v<Extents> && ...),
                             int> = 0>
  SymmetricView(const Communicator& comm, const std::string& label, Extents... extents)
      : SymmetricView(comm, label,
                      std::array<std::size_t, rank>{static_cast<std::size_t>(extents)...}) {}

  SymmetricView(const Communicator& comm, std::string label,
                const std::array<std::size_t, rank>& extents)
      : label_(std::move(label)), device_memory_(allocate_device(comm, extents)) {
    Communicator own = comm.duplicate();
    void* base = nullptr;
    if constexpr (!window_allocates)
      base = device_memory_.data();
    window_ = std::make_unique<detail::SymmetricWindow>(
        std::move(own), std::vector<std::size_t>(extents.begin(), extents.end()),
        sizeof(value_type), base, space_problem());
    if constexpr (!window_allocates) {
      Kokkos::fence();  // the zeroing kernel is done before the window is used
    }
  }

  SymmetricView(SymmetricView&&) noexcept = default;
  SymmetricView& operator=(SymmetricView&&) noexcept = default;
  SymmetricView(const SymmetricView&) = delete;
  SymmetricView& operator=(const SymmetricView&) = delete;

  const std::string& label() const noexcept { return label_; }
  /// The communicator of the window (Baton's duplicate of the one given).
  const Communicator& comm() const noexcept { return window_->comm(); }
  /// The MPI window, for calls Baton does not wrap. Open and close epochs through this object only
  /// (it tracks them; under an emulated fence a fence epoch is an MPI lock_all epoch).
  MPI_Win raw_window() const noexcept { return window_->raw(); }
  std::size_t extent(int d) const noexcept {
    return window_->extents()[static_cast<std::size_t>(d)];
  }
  RmaEpoch epoch() const noexcept { return window_->epoch(); }

  /// This rank's part (unmanaged: valid until free()). Other ranks change it through the window:
  /// read it after a fence() or, in a lock_all epoch, only what no other rank writes meanwhile.
  local_view_type local() const {
    window_->require_live("baton::SymmetricView::local");
    return local_of(static_cast<value_type*>(window_->base()),
                    std::make_index_sequence<static_cast<std::size_t>(rank)>());
  }

  /// Writes `source` into rows [first_row, first_row + source.extent(0)) of rank `target`'s part
  /// (MPI_Put). `source` has the symmetric View's extents after the first and is contiguous and
  /// row-major; it must not change until the put completes (flush(), flush_all(), unlock_all() or
  /// fence()).
  template <class V>
  void put(int target, std::size_t first_row, const V& source) {
    constexpr const char* op = "baton::SymmetricView::put";
    const int n = prepare(op, "source", target, first_row, source);
    check_mpi(MPI_Put(source.data(), n, type(), target, displacement(first_row), n, type(),
                      window_->raw()),
              "MPI_Put", comm().raw());
  }

  /// Reads rows [first_row, first_row + destination.extent(0)) of rank `target`'s part into
  /// `destination` (MPI_Get). The values are there once the get completes (flush(), flush_all(),
  /// unlock_all() or fence()), not before.
  template <class V>
  void get(int target, std::size_t first_row, const V& destination) {
    static_assert(!std::is_const_v<typename V::value_type>, "get writes into its destination");
    constexpr const char* op = "baton::SymmetricView::get";
    const int n = prepare(op, "destination", target, first_row, destination);
    check_mpi(MPI_Get(destination.data(), n, type(), target, displacement(first_row), n, type(),
                      window_->raw()),
              "MPI_Get", comm().raw());
  }

  /// Combines `source` into rows [first_row, ...) of rank `target`'s part element by element with
  /// `op` (MPI_Accumulate: atomic per element against other accumulates with the same op).
  template <class V>
  void accumulate(int target, std::size_t first_row, const V& source, ReduceOp op = ReduceOp::sum) {
    constexpr const char* name = "baton::SymmetricView::accumulate";
    const int n = prepare(name, "source", target, first_row, source);
    check_mpi(MPI_Accumulate(source.data(), n, type(), target, displacement(first_row), n, type(),
                             to_mpi(op), window_->raw()),
              "MPI_Accumulate", comm().raw());
  }

  /// A fence (collective): completes every operation since the last fence on every rank, makes
  /// them visible to local() and opens (or continues) a fence epoch. Throws inside a lock_all
  /// epoch. MPI_Win_fence, except under MPICH-derived MPIs (fence_is_emulated()), where it is a
  /// lock_all epoch held by Baton, with MPI_Win_flush to each target, MPI_Win_sync and a barrier.
  void fence() { window_->fence(); }
  /// The last fence of a fence epoch (collective; MPI_Win_fence with MPI_MODE_NOSUCCEED, or the
  /// emulated fence and MPI_Win_unlock_all): needed before lock_all().
  void close_fence() { window_->close_fence(); }
  /// Opens a passive-target epoch on every rank of the window (MPI_Win_lock_all, shared; not
  /// collective). Throws inside another epoch.
  void lock_all() { window_->lock_all(); }
  /// Ends the passive-target epoch (MPI_Win_unlock_all): every operation this rank issued is
  /// complete at its target.
  void unlock_all() { window_->unlock_all(); }
  /// lock_all() now, unlock_all() when the returned scope ends.
  [[nodiscard]] LockAllScope lock_all_scope() { return LockAllScope(*window_); }
  /// Completes this rank's operations to `target` at the target (MPI_Win_flush; lock_all only).
  void flush(int target) { window_->flush(target); }
  /// Completes this rank's operations to every rank (lock_all only): MPI_Win_flush to each rank
  /// this rank reached since its last flush, not MPI_Win_flush_all, which MPICH 4.0.2 lets return
  /// before a large get's data has arrived.
  void flush_all() { window_->flush_all(); }

  /// Makes what other ranks wrote into this rank's part visible to local() reads, and local()
  /// writes visible to them (MPI_Win_sync; lock_all only). The idiom: writers put and flush, then
  /// every rank meets (a barrier or a message), then readers sync() and read local().
  void sync() { window_->sync(); }

  /// Frees the window (collective over the window's communicator). Every rank must have left its
  /// lock_all epoch and completed its operations with a fence; otherwise the same baton::Error on
  /// every rank and the window stays. The ranks first agree (MPI_Iallgather); with a
  /// free_timeout(), a rank whose peers do not reach free() in time throws instead of waiting
  /// (the window stays; calling free() again resumes the wait). Without one, it waits, and prints
  /// a warning to stderr after 60 s. Calling free() again after success does nothing.
  void free() { window_->free(); }
  /// Seconds free() (and the destructor) wait for the other ranks; < 0 (the default): no limit.
  void set_free_timeout(double seconds) { window_->set_free_timeout(seconds); }
  bool freed() const noexcept { return !window_ || window_->freed(); }

 private:
  // Kokkos::HostSpace: MPI_Win_allocate's memory. Any other space (device, UVM, pinned): a Kokkos
  // allocation in that space, exposed with MPI_Win_create, allowed when the host can reach it or
  // MPI is GPU-aware.
  static constexpr bool window_allocates = std::is_same_v<MemorySpace, Kokkos::HostSpace>;
  static constexpr bool host_accessible =
      Kokkos::SpaceAccessibility<Kokkos::DefaultHostExecutionSpace, MemorySpace>::accessible;
  using DeviceView = Kokkos::View<value_type*, MemorySpace>;

  static std::string space_problem() {
    if constexpr (host_accessible) {
      return std::string();
    } else {
      return symmetric_space_problem(MemorySpace::name(), false, gpu_aware_mpi());
    }
  }

  // Other spaces: a Kokkos allocation, zeroed; agreed so that a failure on one rank is seen by
  // all.
  static DeviceView allocate_device(const Communicator& comm,
                                    const std::array<std::size_t, rank>& extents) {
    if constexpr (window_allocates) {
      (void)comm;
      (void)extents;
      return DeviceView();
    } else {
      std::size_t n = 1;
      for (std::size_t e : extents)
        n *= e;
      if (!space_problem().empty())
        n = 0;  // the window's constructor reports it, on every rank
      std::string problem;
      DeviceView out = [&] {
        try {
          return DeviceView("baton::SymmetricView", n);
        } catch (const std::exception& e) {
          problem = std::string("baton::SymmetricView: allocating ") + std::to_string(n) +
                    " elements in " + MemorySpace::name() + " failed on rank " +
                    std::to_string(comm.rank()) + ": " + e.what();
          return DeviceView("baton::SymmetricView", 0);
        }
      }();
      agree_on_failure(comm, problem, problem.empty() ? 0 : 1);
      return out;
    }
  }

  template <std::size_t... D>
  local_view_type local_of(value_type* data, std::index_sequence<D...>) const {
    return local_view_type(data, window_->extents()[D]...);
  }

  static MPI_Datatype type() { return mpi_datatype<value_type>(); }
  MPI_Aint displacement(std::size_t first_row) const {
    return static_cast<MPI_Aint>(first_row * window_->row_elements());
  }

  template <class V>
  int prepare(const char* op, const char* what, int target, std::size_t first_row, const V& v) {
    static_assert(Kokkos::is_view<V>::value, "pass a Kokkos::View");
    static_assert(static_cast<int>(V::rank) == rank,
                  "the View has the SymmetricView's rank (a run of rows)");
    static_assert(std::is_same_v<typename V::non_const_value_type, value_type>,
                  "the View has the SymmetricView's value type");
    static_assert(Kokkos::SpaceAccessibility<Kokkos::DefaultHostExecutionSpace,
                                             typename V::memory_space>::accessible ||
                      std::is_same_v<typename V::memory_space, MemorySpace>,
                  "the View is in host memory or in the SymmetricView's memory space");
    window_->begin_operation(op, target);
    std::vector<std::size_t> shape(static_cast<std::size_t>(rank));
    for (int d = 0; d < rank; ++d)
      shape[static_cast<std::size_t>(d)] = v.extent(static_cast<unsigned>(d));
    window_->check_rows(op, what, first_row, shape, row_major_contiguous(v));
    return window_->count(op, v.size());
  }

  template <class V>
  static bool row_major_contiguous(const V& v) {
    if (!v.span_is_contiguous())
      return false;
    if constexpr (rank == 1 || std::is_same_v<typename V::array_layout, Kokkos::LayoutRight>) {
      return true;
    } else {
      // Another layout is row-major only when all but one extent are 1.
      int big = 0;
      for (int d = 0; d < rank; ++d)
        big += v.extent(static_cast<unsigned>(d)) > 1 ? 1 : 0;
      return big <= 1;
    }
  }

  std::string label_;
  DeviceView device_memory_;  // device spaces only; empty for host memory
  std::unique_ptr<detail::SymmetricWindow> window_;
};

}  // namespace baton
