// queue_tour: rank 0 of each node streams control messages to the other ranks of its node through
// a baton::BroadcastQueue: small ones through node shared memory, a large one through MPI, then
// the end of the stream. Every reader counts what it got; rank 0 prints a reader's tally.
//   mpiexec -n 4 ./queue_tour          srun -n 4 --mpi=pmix ./queue_tour
#include <baton/baton.hpp>
#include <baton/shm/broadcast_queue.hpp>

#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

int main(int argc, char** argv) {
  baton::Runtime runtime(argc, argv);
  const baton::Communicator node = runtime.world().split_node();  // the queue is node-local

  baton::QueueOptions options;
  options.chunk_bytes = 1024;  // messages up to 1 KiB travel in shared memory
  options.deadline = std::chrono::seconds(30);
  baton::BroadcastQueue queue(node, /*writer=*/0, options);

  long long bytes = 0, messages = 0;
  if (queue.is_writer()) {
    for (int step = 0; step < 100; ++step)
      queue.push("step " + std::to_string(step));               // small: one chunk each
    queue.push(std::vector<std::byte>(1 << 20, std::byte{7}));  // 1 MiB: through MPI, in order
    queue.close();  // readers' pop() returns false after the last message
  } else {
    std::vector<std::byte> message;
    while (queue.pop(message)) {
      ++messages;
      bytes += static_cast<long long>(message.size());
    }
  }

  // One reader's tally (node rank 1, when there is one) goes to rank 0 of the node.
  std::pair<long long, long long> tally{messages, bytes};
  if (node.size() > 1)
    baton::broadcast_object(node, tally, 1);
  if (runtime.world().rank() == 0) {
    std::printf("node of %d ranks: %d readers got %lld messages, %lld bytes each\n", node.size(),
                queue.readers(), tally.first, tally.second);
  }
  return 0;
}
