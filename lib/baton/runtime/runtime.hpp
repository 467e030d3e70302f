#pragma once
/// \file
/// baton::Runtime: RAII start and stop of MPI and Kokkos.

#include <mpi.h>

#include "baton/comm/communicator.hpp"

namespace baton {

/// MPI thread support levels, in increasing order.
enum class ThreadLevel : int {
  single = MPI_THREAD_SINGLE,
  funneled = MPI_THREAD_FUNNELED,
  serialized = MPI_THREAD_SERIALIZED,
  multiple = MPI_THREAD_MULTIPLE,
};
/// "single", "funneled", "serialized" or "multiple".
const char* to_string(ThreadLevel level) noexcept;
/// Parses the names above; throws baton::Error for anything else.
ThreadLevel parse_thread_level(const char* name);

struct RuntimeOptions {
  /// The thread level asked of MPI_Init_thread; the provided level must be at least this.
  ThreadLevel thread_level = ThreadLevel::funneled;
  /// Choose the GPU from the node-local rank (sets KOKKOS_DEVICE_ID) unless the command line or
  /// the environment already chose one. No effect for host-only Kokkos.
  bool select_device = true;
};

/// Starts MPI (MPI_Init_thread) and then Kokkos, unless the caller already did, and stops only what
/// it started, in reverse order, on destruction.
///
/// \code
/// int main(int argc, char** argv) {
///   baton::Runtime runtime(argc, argv);
///   const baton::Communicator& world = runtime.world();  // a duplicate of MPI_COMM_WORLD
///   ...
/// }
/// \endcode
///
/// Kokkos' own flags (--kokkos-...) are honoured and removed from argv by Kokkos::initialize.
/// Throws baton::Error if MPI provides less than the requested thread level (after finalizing
/// what it started) or if MPI was already finalized.
class Runtime {
 public:
  Runtime(int& argc, char**& argv, RuntimeOptions options = {});
  /// Without a command line.
  explicit Runtime(RuntimeOptions options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  Runtime(Runtime&&) = delete;
  Runtime& operator=(Runtime&&) = delete;

  /// An owned duplicate of MPI_COMM_WORLD.
  const Communicator& world() const noexcept { return world_; }
  /// The ranks of world() on this node (MPI_COMM_TYPE_SHARED).
  const Communicator& node() const noexcept { return node_; }
  /// The thread level MPI provides.
  ThreadLevel thread_level() const noexcept { return provided_; }
  /// The device Baton chose for Kokkos, or -1 (host-only Kokkos, chosen by the caller, or
  /// Kokkos already running).
  int selected_device_id() const noexcept { return device_id_; }
  bool started_mpi() const noexcept { return started_mpi_; }
  bool started_kokkos() const noexcept { return started_kokkos_; }

 private:
  void start(int* argc, char*** argv, const RuntimeOptions& options);
  void stop() noexcept;

  Communicator world_;
  Communicator node_;
  ThreadLevel provided_ = ThreadLevel::single;
  int device_id_ = -1;
  bool started_mpi_ = false;
  bool started_kokkos_ = false;
};

}  // namespace baton
