// The broadcast queue (one writer, every other rank of the node a reader) beside MPI_Bcast of the
// same bytes on the same ranks, in the same run.
//
// queue_stream:    the writer pushes one message per iteration, each reader pops it; the time per
//                  message of a long stream (max over ranks) beside back-to-back MPI_Bcast calls.
// queue_delivered: the same, then an MPI_Barrier on both sides: the time until every rank knows
//                  that every reader has the message.
#include <mpi.h>

#include <algorithm>
#include <baton/core/check_mpi.hpp>
#include <baton/shm/broadcast_queue.hpp>
#include <baton/shm/node_window.hpp>
#include <cstdio>
#include <vector>

#include "measure.hpp"

namespace bench {

void run_queue(const baton::Communicator& comm, const Settings& settings) {
  if (!baton::shares_one_node(comm)) {
    if (comm.rank() == 0)
      std::printf("# queue: skipped (the ranks span several nodes; the queue is node-local)\n");
    return;
  }
  baton::BroadcastQueue queue(comm, 0);  // default: 64 chunks of 64 KiB
  const MPI_Comm raw = comm.raw();
  const std::size_t largest = std::min<std::size_t>(settings.max_bytes, std::size_t(1) << 20);
  for (std::size_t bytes : sizes(settings)) {
    if (bytes > largest)
      break;
    std::vector<std::byte> buffer(bytes, std::byte{1});
    std::vector<std::byte> received;
    received.reserve(bytes);
    const int count = static_cast<int>(bytes);
    auto one_message = [&] {
      if (queue.is_writer())
        queue.push(buffer.data(), bytes);
      else if (!queue.pop(received))
        throw baton::Error("baton-bench: the queue ended early");
    };
    auto bcast = [&] {
      baton::check_mpi(MPI_Bcast(buffer.data(), count, MPI_BYTE, 0, raw), "MPI_Bcast", raw);
    };
    auto barrier = [&] { baton::check_mpi(MPI_Barrier(raw), "MPI_Barrier", raw); };
    print(comm, settings, compare(comm, settings, "queue_stream", bytes, one_message, bcast));
    print(comm, settings,
          compare(
              comm, settings, "queue_delivered", bytes,
              [&] {
                one_message();
                barrier();
              },
              [&] {
                bcast();
                barrier();
              }));
  }
  if (queue.is_writer()) {
    queue.close();
  } else {
    std::vector<std::byte> rest;
    while (queue.pop(rest)) {
    }
  }
}

}  // namespace bench
