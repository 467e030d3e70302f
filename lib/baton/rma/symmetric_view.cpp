#include "baton/rma/symmetric_view.hpp"
#include "baton/core/check_mpi.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <thread>

#include "baton/collectives/collectives.hpp"

namespace baton {

std::string symmetric_space_problem(const std::string& space_name, bool host_accessible,
                                    const GpuAwareness& aware) {
  if (host_accessible || aware.aware)
    return std::string();
  return "baton::SymmetricView: memory space " + space_name +
         " is device memory and MPI is not GPU-aware here (decided by " + aware.decided_by +
         "), so MPI cannot reach it through a window; use Kokkos::HostSpace (the default), or "
         "GPU-aware MPI (set BATON_GPU_AWARE=1 only if the MPI library is)";
}

const char* to_string(RmaEpoch epoch) noexcept {
  switch (epoch) {
    case RmaEpoch::none:
      return "none";
    case RmaEpoch::fence:
      return "fence";
    case RmaEpoch::lock_all:
      return "lock_all";
  }
  return "?";
}

namespace detail {

std::string describe_extents(const std::vector<std::size_t>& extents) {
  std::string out = "(";
  for (std::size_t d = 0; d < extents.size(); ++d)
    out += (d ? ", " : "") + std::to_string(extents[d]);
  return out + ")";
}

namespace {

// "rank 3" or "ranks 0,2".
std::string name_ranks(const std::vector<int>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i)
    out += (i ? "," : "") + std::to_string(ranks[i]);
  return out;
}

// Every rank's extents, in the same order on every rank.
std::vector<std::vector<std::size_t>> gather_extents(const Communicator& comm,
                                                     const std::vector<std::size_t>& extents) {
  const std::size_t r = extents.size();
  Kokkos::View<std::int64_t*, Kokkos::HostSpace> mine("baton::SymmetricView extents", r);
  Kokkos::View<std::int64_t*, Kokkos::HostSpace> all("baton::SymmetricView all extents",
                                                     r * static_cast<std::size_t>(comm.size()));
  for (std::size_t d = 0; d < r; ++d)
    mine(d) = static_cast<std::int64_t>(extents[d]);
  all_gather(Kokkos::DefaultHostExecutionSpace(), comm, mine, all);
  std::vector<std::vector<std::size_t>> out(static_cast<std::size_t>(comm.size()),
                                            std::vector<std::size_t>(r));
  for (std::size_t p = 0; p < out.size(); ++p) {
    for (std::size_t d = 0; d < r; ++d)
      out[p][d] = static_cast<std::size_t>(all(p * r + d));
  }
  return out;
}

}  // namespace

SymmetricWindow::SymmetricWindow(Communicator comm, std::vector<std::size_t> extents,
                                 std::size_t element_size, void* base,
                                 const std::string& space_problem)
    : comm_(std::move(comm)), extents_(std::move(extents)) {
  // The same shape everywhere: decided from the same gathered data, so every rank throws alike.
  const auto every = gather_extents(comm_, extents_);
  std::map<std::vector<std::size_t>, std::vector<int>> by_shape;
  for (std::size_t p = 0; p < every.size(); ++p)
    by_shape[every[p]].push_back(static_cast<int>(p));
  if (by_shape.size() > 1) {
    std::string text = "baton::SymmetricView: the ranks passed different extents:";
    for (const auto& [shape, ranks] : by_shape)
      text += " " + name_ranks(ranks) + " " + describe_extents(shape) + ";";
    text += " every rank of the communicator must pass the same extents";
    throw CollectiveError(text);
  }
  agree_on_failure(comm_, space_problem, space_problem.empty() ? 0 : 1);

  std::size_t elements = 1;
  for (std::size_t d = 0; d < extents_.size(); ++d) {
    if (d > 0)
      row_elements_ *= extents_[d];
    if (extents_[d] != 0 &&
        elements > std::numeric_limits<std::size_t>::max() / element_size / extents_[d])
      throw CollectiveError("baton::SymmetricView: extents " + describe_extents(extents_) +
                            " are too large to address");
    elements *= extents_[d];
  }
  const std::size_t bytes = elements * element_size;
  if (bytes > static_cast<std::size_t>(std::numeric_limits<MPI_Aint>::max() - 63))
    throw CollectiveError("baton::SymmetricView: " + std::to_string(bytes) +
                          " bytes per rank exceed MPI_Aint");
  const MPI_Aint size = static_cast<MPI_Aint>(bytes);
  const int unit = static_cast<int>(element_size);
  if (base == nullptr) {
    // Rounded up to whole 64-byte blocks: MPICH 4.0.2's shared-memory windows put a target rank's
    // part at the wrong address for some per-rank sizes (20 and 24 bytes wrong, 32 and 64 right;
    // reproduced in plain C: 5 ints per rank, a put at displacement 4 lands at 3 on rank 1, at 2
    // on rank 2). Padded, every size tried was right (docs/shared-memory.md).
    const MPI_Aint padded = (size + 63) / 64 * 64;
    check_mpi(MPI_Win_allocate(padded, unit, MPI_INFO_NULL, comm_.raw(), &base_, &win_),
              "MPI_Win_allocate", comm_.raw());
    if (bytes > 0)
      std::memset(base_, 0, bytes);
  } else {
    base_ = base;
    check_mpi(MPI_Win_create(base_, size, unit, MPI_INFO_NULL, comm_.raw(), &win_),
              "MPI_Win_create", comm_.raw());
  }
  // A window's default handler is MPI_ERRORS_ARE_FATAL, whatever the communicator's.
  check_mpi(MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN), "MPI_Win_set_errhandler", comm_.raw());
  unflushed_.assign(static_cast<std::size_t>(comm_.size()), 0);
  // The emulation gives MPI_Win_fence's guarantees only in the unified memory model (public and
  // private copies are one); a separate-model window keeps MPI_Win_fence.
  if (fence_is_emulated()) {
    int* model = nullptr;
    int found = 0;
    check_mpi(MPI_Win_get_attr(win_, MPI_WIN_MODEL, &model, &found), "MPI_Win_get_attr",
              comm_.raw());
    emulate_fence_ = found != 0 && model != nullptr && *model == MPI_WIN_UNIFIED;
  }
  barrier(comm_);  // every part is zeroed before any rank can reach it
}

SymmetricWindow::~SymmetricWindow() {
  if (win_ == MPI_WIN_NULL)
    return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) {
    std::fprintf(stderr,
                 "baton::SymmetricView: destroyed after MPI_Finalize; its window was never "
                 "freed (call free() before MPI ends)\n");
    return;
  }
  try {
    if (epoch_ == RmaEpoch::lock_all)
      unlock_all();  // local: needs no other rank
    free();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "baton::SymmetricView destructor: the window stays allocated: %s\n",
                 e.what());
  }
}

void SymmetricWindow::fail(const char* operation, const std::string& what) const {
  throw Error(std::string(operation) + ": " + what + " (on rank " + std::to_string(comm_.rank()) +
              ")");
}

void SymmetricWindow::require_live(const char* operation) const {
  if (win_ == MPI_WIN_NULL)
    fail(operation, "the SymmetricView was freed");
}

// MPICH 4.0.2 (Debian 12, ch4:ucx) lets MPI_Win_fence and MPI_Win_flush_all return before the data
// of a large MPI_Get (hundreds of KiB, a few times in a hundred with 4 ranks on 2 cores) has
// arrived in the origin buffer; later MPI progress delivers it. MPI_Win_flush to the target,
// MPI_Rget with MPI_Wait, and MPI_Win_unlock_all complete it (reproduced in plain C, without
// Baton). So flush_all() flushes target by target everywhere, and under MPICH-derived MPIs fence()
// is emulated in a lock_all epoch: flush each target reached, MPI_Win_sync (this rank's stores are
// visible to the others), a barrier (every rank's operations are complete at their targets),
// MPI_Win_sync (theirs are visible to this rank's loads): what MPI_Win_fence guarantees in the
// unified memory model.

void SymmetricWindow::flush_unflushed() {
  for (std::size_t target = 0; target < unflushed_.size(); ++target) {
    if (unflushed_[target] != 0) {
      check_mpi(MPI_Win_flush(static_cast<int>(target), win_), "MPI_Win_flush", comm_.raw());
      unflushed_[target] = 0;
    }
  }
}

void SymmetricWindow::forget_unflushed() {
  std::fill(unflushed_.begin(), unflushed_.end(), 0);
}

void SymmetricWindow::emulated_fence_sync() {
  flush_unflushed();
  check_mpi(MPI_Win_sync(win_), "MPI_Win_sync", comm_.raw());
  barrier(comm_);
  check_mpi(MPI_Win_sync(win_), "MPI_Win_sync", comm_.raw());
}

void SymmetricWindow::fence() {
  constexpr const char* op = "baton::SymmetricView::fence";
  require_live(op);
  if (epoch_ == RmaEpoch::lock_all)
    fail(op, "inside a lock_all epoch: call unlock_all() first");
  if (emulate_fence_) {
    if (epoch_ == RmaEpoch::none) {
      check_mpi(MPI_Win_lock_all(0, win_), "MPI_Win_lock_all", comm_.raw());
      epoch_ = RmaEpoch::fence;
    }
    emulated_fence_sync();
  } else {
    check_mpi(MPI_Win_fence(0, win_), "MPI_Win_fence", comm_.raw());
    forget_unflushed();  // MPI_Win_fence completed them
  }
  epoch_ = RmaEpoch::fence;
  operations_since_fence_ = 0;
}

void SymmetricWindow::close_fence() {
  constexpr const char* op = "baton::SymmetricView::close_fence";
  require_live(op);
  if (epoch_ == RmaEpoch::lock_all)
    fail(op, "inside a lock_all epoch: call unlock_all() first");
  if (emulate_fence_) {
    if (epoch_ == RmaEpoch::fence) {
      emulated_fence_sync();
      epoch_ = RmaEpoch::none;  // even if MPI fails: the epoch cannot be used any more
      check_mpi(MPI_Win_unlock_all(win_), "MPI_Win_unlock_all", comm_.raw());
    } else {
      barrier(comm_);  // collective like MPI_Win_fence, with nothing to complete
    }
  } else {
    check_mpi(MPI_Win_fence(MPI_MODE_NOSUCCEED, win_), "MPI_Win_fence", comm_.raw());
    forget_unflushed();  // MPI_Win_fence completed them
  }
  epoch_ = RmaEpoch::none;
  operations_since_fence_ = 0;
}

void SymmetricWindow::lock_all() {
  constexpr const char* op = "baton::SymmetricView::lock_all";
  require_live(op);
  if (epoch_ == RmaEpoch::lock_all)
    fail(op, "already inside a lock_all epoch");
  if (epoch_ == RmaEpoch::fence)
    fail(op, "inside a fence epoch: call close_fence() first");
  check_mpi(MPI_Win_lock_all(0, win_), "MPI_Win_lock_all", comm_.raw());
  epoch_ = RmaEpoch::lock_all;
}

void SymmetricWindow::unlock_all() {
  constexpr const char* op = "baton::SymmetricView::unlock_all";
  require_live(op);
  if (epoch_ != RmaEpoch::lock_all)
    fail(op, "no lock_all epoch is open: call lock_all() first");
  epoch_ = RmaEpoch::none;  // even if MPI fails: the epoch cannot be used any more
  forget_unflushed();       // MPI_Win_unlock_all completes every operation
  check_mpi(MPI_Win_unlock_all(win_), "MPI_Win_unlock_all", comm_.raw());
}

void SymmetricWindow::flush(int target) {
  constexpr const char* op = "baton::SymmetricView::flush";
  require_live(op);
  if (epoch_ != RmaEpoch::lock_all)
    fail(op,
         "flush needs a lock_all epoch: call lock_all() first (a fence epoch completes "
         "operations with fence())");
  if (target < 0 || target >= comm_.size())
    fail(op, "target " + std::to_string(target) + " is not a rank of the window's communicator " +
                 "(size " + std::to_string(comm_.size()) + ")");
  check_mpi(MPI_Win_flush(target, win_), "MPI_Win_flush", comm_.raw());
  unflushed_[static_cast<std::size_t>(target)] = 0;
}

void SymmetricWindow::flush_all() {
  constexpr const char* op = "baton::SymmetricView::flush_all";
  require_live(op);
  if (epoch_ != RmaEpoch::lock_all)
    fail(op,
         "flush_all needs a lock_all epoch: call lock_all() first (a fence epoch completes "
         "operations with fence())");
  flush_unflushed();
}

void SymmetricWindow::sync() {
  constexpr const char* op = "baton::SymmetricView::sync";
  require_live(op);
  if (epoch_ != RmaEpoch::lock_all)
    fail(op, "sync needs a lock_all epoch: call lock_all() first (fence() synchronises by itself)");
  check_mpi(MPI_Win_sync(win_), "MPI_Win_sync", comm_.raw());
}

void SymmetricWindow::begin_operation(const char* operation, int target) {
  require_live(operation);
  if (epoch_ == RmaEpoch::none)
    fail(operation, "outside an access epoch: call fence() or lock_all() first");
  if (target < 0 || target >= comm_.size())
    fail(operation, "target " + std::to_string(target) +
                        " is not a rank of the window's communicator (size " +
                        std::to_string(comm_.size()) + ")");
  ++operations_since_fence_;
  unflushed_[static_cast<std::size_t>(target)] = 1;
}

void SymmetricWindow::check_rows(const char* operation, const char* what, std::size_t first_row,
                                 const std::vector<std::size_t>& shape, bool contiguous) const {
  bool fits = shape.size() == extents_.size() && !shape.empty();
  for (std::size_t d = 1; fits && d < shape.size(); ++d)
    fits = shape[d] == extents_[d];
  if (fits)
    fits = first_row <= extents_[0] && shape[0] <= extents_[0] - first_row;
  if (!fits) {
    std::string need = "(rows";
    for (std::size_t d = 1; d < extents_.size(); ++d)
      need += ", " + std::to_string(extents_[d]);
    need += ")";
    fail(operation, std::string(what) + " View " + describe_extents(shape) +
                        " does not fit at row " + std::to_string(first_row) +
                        " of the symmetric View " + describe_extents(extents_) + ": it must be " +
                        need + " with " + std::to_string(first_row) +
                        " + rows <= " + std::to_string(extents_[0]));
  }
  if (!contiguous)
    fail(operation, std::string(what) + " View " + describe_extents(shape) +
                        " is not contiguous and row-major: pass a LayoutRight View (or a "
                        "contiguous subview of whole rows)");
}

int SymmetricWindow::count(const char* operation, std::size_t n) const {
  if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    fail(operation, std::to_string(n) +
                        " elements exceed INT_MAX, the most one MPI 3.1 RMA "
                        "call moves: split the rows");
  return static_cast<int>(n);
}

void SymmetricWindow::set_free_timeout(double seconds) {
  free_timeout_ = seconds;
}

bool SymmetricWindow::wait_for_free_agreement(std::vector<int>& states) {
  constexpr double warn_after = 60;
  const auto start = std::chrono::steady_clock::now();
  bool warned = false;
  auto pause = std::chrono::microseconds(1);
  for (;;) {
    int done = 0;
    check_mpi(MPI_Test(&free_request_, &done, MPI_STATUS_IGNORE), "MPI_Test", comm_.raw());
    if (done) {
      states = free_states_;
      return true;
    }
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (free_timeout_ >= 0 && waited > free_timeout_)
      return false;
    if (free_timeout_ < 0 && !warned && waited > warn_after) {
      std::fprintf(stderr,
                   "baton::SymmetricView::free: rank %d has waited %.0f s for the other ranks of "
                   "the window's communicator to call free() (collective); still waiting\n",
                   comm_.rank(), waited);
      warned = true;
    }
    std::this_thread::sleep_for(pause);
    if (pause < std::chrono::microseconds(1000))
      pause *= 2;
  }
}

void SymmetricWindow::free() {
  constexpr const char* op = "baton::SymmetricView::free";
  if (win_ == MPI_WIN_NULL)
    return;
  if (free_request_ == MPI_REQUEST_NULL) {
    free_state_ = epoch_ == RmaEpoch::lock_all                               ? 1
                  : epoch_ == RmaEpoch::fence && operations_since_fence_ > 0 ? 2
                                                                             : 0;
    free_states_.assign(static_cast<std::size_t>(comm_.size()), 0);
    check_mpi(MPI_Iallgather(&free_state_, 1, MPI_INT, free_states_.data(), 1, MPI_INT, comm_.raw(),
                             &free_request_),
              "MPI_Iallgather", comm_.raw());
  }
  std::vector<int> states;
  if (!wait_for_free_agreement(states))
    fail(op, "not every rank of the window's communicator called free() within " +
                 std::to_string(free_timeout_) +
                 " s (free() is collective); the window stays allocated: call free() again once "
                 "the others do, or end the job");
  std::vector<int> locked, pending;
  for (std::size_t p = 0; p < states.size(); ++p) {
    if (states[p] == 1)
      locked.push_back(static_cast<int>(p));
    if (states[p] == 2)
      pending.push_back(static_cast<int>(p));
  }
  if (!locked.empty() || !pending.empty()) {
    std::string text = "baton::SymmetricView::free: the window stays allocated:";
    if (!locked.empty())
      text +=
          " " + name_ranks(locked) + " still inside a lock_all epoch (call unlock_all() first);";
    if (!pending.empty())
      text += " " + name_ranks(pending) +
              " issued operations since the last fence() (call fence() first to complete them);";
    throw CollectiveError(text + " then call free() again on every rank");
  }
  if (emulate_fence_ && epoch_ == RmaEpoch::fence) {
    epoch_ = RmaEpoch::none;  // the emulated fence epoch's lock_all ends here
    check_mpi(MPI_Win_unlock_all(win_), "MPI_Win_unlock_all", comm_.raw());
  }
  base_ = nullptr;
  epoch_ = RmaEpoch::none;
  check_mpi(MPI_Win_free(&win_), "MPI_Win_free", comm_.raw());
}

}  // namespace detail
}  // namespace baton
