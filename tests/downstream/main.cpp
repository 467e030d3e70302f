// Downstream check: the installed headers and library are enough to start Baton and talk over MPI.
#include <baton/baton.hpp>
#include <cstdio>

int main(int argc, char** argv) {
  try {
    baton::Runtime runtime(argc, argv);
    const baton::Communicator& world = runtime.world();
    int rank = world.rank();
    int sum = 0;
    baton::check_mpi(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, world.raw()), "MPI_Allreduce",
                     world.raw());
    const int expected = world.size() * (world.size() - 1) / 2;
    if (sum != expected) {
      std::fprintf(stderr, "downstream: rank sum %d, expected %d\n", sum, expected);
      return 1;
    }
    if (world.rank() == 0) {
      std::printf("downstream: Baton %s, %d ranks agree\n", BATON_VERSION_STRING, world.size());
    }
    return 0;
  } catch (const baton::Error& e) {
    std::fprintf(stderr, "downstream: %s\n", e.what());
    return 1;
  }
}
