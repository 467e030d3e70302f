#include "baton/shm/node_window.hpp"

#include <string>
#include <utility>

#include "baton/collectives/agreement.hpp"
#include "baton/collectives/collectives.hpp"
#include "baton/core/check_mpi.hpp"

namespace baton {

bool shares_one_node(const Communicator& comm) {
  const Communicator node = comm.split_node();
  int smallest = node.size();
  Kokkos::View<int, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> value(&smallest);
  all_reduce(comm, value, ReduceOp::min);
  return smallest == comm.size();
}

NodeWindow::NodeWindow(const Communicator& node, std::size_t bytes, const char* who)
    : comm_(node.raw()), rank_(node.rank()) {
  if (node.is_null())
    throw Error(std::string(who) + ": needs a communicator, got a null one");
  if (!shares_one_node(node)) {
    throw CollectiveError(std::string(who) + ": the " + std::to_string(node.size()) +
                          " ranks of the communicator do not share one node (use "
                          "Communicator::split_node() for node-local shared memory)");
  }
  std::string problem;
  try {
    MPI_Info info = MPI_INFO_NULL;
    check_mpi(MPI_Info_create(&info), "MPI_Info_create", comm_);
    // Each segment on its own pages, placed near the rank that owns it.
    const int set = MPI_Info_set(info, "alloc_shared_noncontig", "true");
    if (set != MPI_SUCCESS)
      MPI_Info_free(&info);
    check_mpi(set, "MPI_Info_set", comm_);
    void* base = nullptr;
    const int rc =
        MPI_Win_allocate_shared(static_cast<MPI_Aint>(bytes), 1, info, comm_, &base, &win_);
    MPI_Info_free(&info);
    check_mpi(rc, "MPI_Win_allocate_shared", comm_);
  } catch (const std::exception& e) {
    problem = e.what();
  }
  // MPI_Win_allocate_shared is collective: a rank that failed it is known to all here.
  try {
    agree_on_failure(node, problem.empty() ? problem : std::string(who) + ": " + problem,
                     problem.empty() ? 0 : 1);
  } catch (...) {
    release();
    throw;
  }
  try {
    check_mpi(MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN), "MPI_Win_set_errhandler", comm_);
    check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), "MPI_Win_lock_all", comm_);
    segments_.resize(static_cast<std::size_t>(node.size()));
    sizes_.resize(static_cast<std::size_t>(node.size()));
    for (int r = 0; r < node.size(); ++r) {
      MPI_Aint size = 0;
      int unit = 0;
      void* base = nullptr;
      check_mpi(MPI_Win_shared_query(win_, r, &size, &unit, &base), "MPI_Win_shared_query", comm_);
      segments_[static_cast<std::size_t>(r)] = static_cast<std::byte*>(base);
      sizes_[static_cast<std::size_t>(r)] = static_cast<std::size_t>(size);
    }
  } catch (...) {
    release();
    throw;
  }
}

NodeWindow::~NodeWindow() {
  release();
}

NodeWindow::NodeWindow(NodeWindow&& other) noexcept
    : win_(std::exchange(other.win_, MPI_WIN_NULL)),
      comm_(std::exchange(other.comm_, MPI_COMM_NULL)),
      segments_(std::move(other.segments_)),
      sizes_(std::move(other.sizes_)),
      rank_(std::exchange(other.rank_, -1)) {}

NodeWindow& NodeWindow::operator=(NodeWindow&& other) noexcept {
  if (this != &other) {
    release();
    win_ = std::exchange(other.win_, MPI_WIN_NULL);
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    segments_ = std::move(other.segments_);
    sizes_ = std::move(other.sizes_);
    rank_ = std::exchange(other.rank_, -1);
  }
  return *this;
}

void NodeWindow::sync() const {
  check_mpi(MPI_Win_sync(win_), "MPI_Win_sync", comm_);
}

void NodeWindow::barrier() const {
  sync();
  check_mpi(MPI_Barrier(comm_), "MPI_Barrier", comm_);
  sync();
}

void NodeWindow::free() {
  if (win_ == MPI_WIN_NULL)
    return;
  MPI_Win win = std::exchange(win_, MPI_WIN_NULL);
  segments_.clear();
  sizes_.clear();
  check_mpi(MPI_Win_unlock_all(win), "MPI_Win_unlock_all", comm_);
  check_mpi(MPI_Win_free(&win), "MPI_Win_free", comm_);
}

void NodeWindow::release() noexcept {
  if (win_ == MPI_WIN_NULL)
    return;
  MPI_Win_unlock_all(win_);  // may fail when never locked: ignored
  MPI_Win_free(&win_);
  win_ = MPI_WIN_NULL;
  segments_.clear();
  sizes_.clear();
}

}  // namespace baton
