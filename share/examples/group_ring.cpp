// group_ring: the even world ranks form a baton::Group and pass a token around it, once forwards
// (next()) and once backwards (prev()). The token is the list of world ranks it has visited.
//   mpiexec -n 4 ./group_ring          srun -n 4 --mpi=pmix ./group_ring
#include <baton/baton.hpp>
#include <baton/comm/group.hpp>
#include <baton/transport/bytes.hpp>

#include <cstdio>
#include <cstring>
#include <numeric>
#include <vector>

namespace {

constexpr int token_tag = 1;

std::vector<int> recv_token(const baton::Communicator& comm, int source) {
  const baton::Message message = baton::recv(comm, source, token_tag);  // any size
  std::vector<int> token(message.bytes.size() / sizeof(int));
  std::memcpy(token.data(), message.bytes.data(), message.bytes.size());
  return token;
}

// Sends the token once around the group, from the first member back to it; each member appends
// its world rank. next() and prev() are ranks of the parent communicator (here the world);
// group_rank_of() turns them into ranks of group.comm(), on which the token travels.
std::vector<int> pass_token(const baton::Group& group, int world_rank, bool forwards) {
  const baton::Communicator& comm = group.comm();
  const int to = group.group_rank_of(forwards ? group.next() : group.prev());
  const int from = group.group_rank_of(forwards ? group.prev() : group.next());
  if (group.is_first()) {
    // A non-blocking send, so that a one-member group (mpiexec -n 1) can send to itself.
    baton::SendHandle sending =
        baton::isend(comm, baton::ByteBuffer(&world_rank, sizeof world_rank), to, token_tag);
    std::vector<int> token = recv_token(comm, from);
    sending.wait();
    token.push_back(world_rank);
    return token;
  }
  std::vector<int> token = recv_token(comm, from);
  token.push_back(world_rank);
  baton::send(comm, token.data(), token.size() * sizeof(int), to, token_tag);
  return token;
}

void print_path(const char* direction, const std::vector<int>& token) {
  std::printf("%s:", direction);
  for (int rank : token) {
    std::printf(" %d", rank);
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    baton::Runtime runtime(argc, argv);  // MPI, then Kokkos; finalized in reverse at the end
    const baton::Communicator& world = runtime.world();

    std::vector<int> evens;
    for (int r = 0; r < world.size(); r += 2) {
      evens.push_back(r);
    }
    // Collective over the even ranks only. The odd ranks could skip this line; here they get a
    // Group that says they are not members, without waiting for anyone.
    const baton::Group group(world, evens);

    if (!group.is_member()) {
      std::printf("world rank %d: not in the group\n", world.rank());
      return 0;
    }
    std::printf("world rank %d: group rank %d of %d, prev %d, next %d\n", world.rank(),
                group.rank(), group.size(), group.prev(), group.next());
    const std::vector<int> forwards = pass_token(group, world.rank(), true);
    const std::vector<int> backwards = pass_token(group, world.rank(), false);

    // A collective on the group communicator: the sum of the members' world ranks.
    int mine = world.rank();
    int sum = 0;
    baton::check_mpi(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, group.comm().raw()),
                     "MPI_Allreduce", group.comm().raw());

    if (group.is_first()) {
      print_path("forwards", forwards);
      print_path("backwards", backwards);
      const int expected = std::accumulate(group.ranks().begin(), group.ranks().end(), 0);
      std::printf("sum of the members' world ranks: %d (expected %d)\n", sum, expected);
    }
    return 0;
  } catch (const baton::Error& e) {
    std::fprintf(stderr, "group_ring: %s\n", e.what());
    return 1;
  }
}
