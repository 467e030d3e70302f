#pragma once
/// \file
/// baton::NodeWindow: node-local shared memory through MPI (MPI_Win_allocate_shared on a
/// communicator whose ranks share one node). No POSIX names: two jobs on one node cannot collide,
/// and nothing outlives the job.
///
/// The window stays in one passive-target epoch (MPI_Win_lock_all with MPI_MODE_NOCHECK) from
/// construction to free(), so that MPI_Win_sync (sync()) may be called at any time: MPI's unified
/// memory model then makes a rank's stores, followed by sync(), visible to another rank's loads
/// that follow its own sync() and some synchronisation between the two (a barrier, or an atomic
/// flag).

#include <mpi.h>

#include <cstddef>
#include <vector>

#include "baton/comm/communicator.hpp"

namespace baton {

class NodeWindow {
 public:
  /// No window.
  NodeWindow() noexcept = default;
  /// Collective over `node`: every rank contributes a segment of `bytes` (0 allowed) that every
  /// rank can address (segment()). Throws the same baton::Error on every rank when the ranks of
  /// `node` do not share one node (`who` names the caller in it), or when any rank's allocation
  /// fails.
  NodeWindow(const Communicator& node, std::size_t bytes, const char* who = "baton::NodeWindow");
  /// free(), errors ignored.
  ~NodeWindow();
  NodeWindow(NodeWindow&& other) noexcept;
  NodeWindow& operator=(NodeWindow&& other) noexcept;
  NodeWindow(const NodeWindow&) = delete;
  NodeWindow& operator=(const NodeWindow&) = delete;

  explicit operator bool() const noexcept { return win_ != MPI_WIN_NULL; }
  /// The number of ranks (segments).
  int size() const noexcept { return static_cast<int>(segments_.size()); }
  /// Node rank `rank`'s segment, addressable by this process.
  std::byte* segment(int rank) const noexcept { return segments_[static_cast<std::size_t>(rank)]; }
  /// At least the bytes node rank `rank` asked for (MPI may round a segment up to whole pages).
  std::size_t segment_size(int rank) const noexcept {
    return sizes_[static_cast<std::size_t>(rank)];
  }
  /// This rank's own segment.
  std::byte* local() const noexcept { return segment(rank_); }
  int rank() const noexcept { return rank_; }
  /// MPI_Win_sync: orders this process's loads and stores to the window against the other ranks'.
  void sync() const;
  /// sync(), a barrier over the window's ranks, sync(): after it every rank sees every store made
  /// before it.
  void barrier() const;
  /// Collective: ends the epoch and frees the memory (MPI_Win_unlock_all, MPI_Win_free).
  void free();
  MPI_Win raw() const noexcept { return win_; }

 private:
  void release() noexcept;

  MPI_Win win_ = MPI_WIN_NULL;
  MPI_Comm comm_ = MPI_COMM_NULL;  // the caller's node communicator (borrowed) for barriers
  std::vector<std::byte*> segments_;
  std::vector<std::size_t> sizes_;
  int rank_ = -1;
};

/// True when every rank of `comm` runs on one node (collective: one MPI_Comm_split_type and an
/// agreement on its size).
bool shares_one_node(const Communicator& comm);

}  // namespace baton
