// overlap_instances: a View travels on one execution space instance while a kernel runs on another.
//   mpiexec -n 2 overlap_instances
#include <Kokkos_Core.hpp>
#include <baton/baton.hpp>
#include <cstdio>
#include <vector>

namespace {

using Space = Kokkos::DefaultExecutionSpace;

// Two instances of the default execution space: two streams on a GPU; on the host, instances
// that Kokkos may or may not run apart. partition_space() shares out what the instance has: on
// OpenMP its threads, at least one per part (Kokkos 4 aborts otherwise), so with one thread per
// rank both are the one instance, whose kernels run in order (all one thread can do anyway).
std::vector<Space> two_instances() {
#if KOKKOS_VERSION >= 30600
  const Space space;
  if (space.concurrency() >= 2) {
    const auto parts = Kokkos::Experimental::partition_space(space, 1, 1);
    return {parts[0], parts[1]};
  }
#endif
  return {Space(), Space()};
}

}  // namespace

int main(int argc, char** argv) {
  try {
    baton::Runtime runtime(argc, argv);
    const baton::Communicator& world = runtime.world();
    if (world.size() < 2) {
      std::printf("overlap_instances: run with at least 2 ranks\n");
      return 0;
    }
    const std::vector<Space> spaces = two_instances();
    const Space& comm_space = spaces[0];
    const Space& compute_space = spaces[1];
    const int n = 1 << 16;
    Kokkos::View<double*> message("message", n);
    Kokkos::View<double*> work("work", n);
    if (world.rank() == 0) {
      Kokkos::parallel_for(
          "fill", Kokkos::RangePolicy<Space>(comm_space, 0, n),
          KOKKOS_LAMBDA(int i) { message(i) = 0.5 * i; });
      // Fences comm_space only: the fill is done; nothing on compute_space is waited for.
      baton::SendHandle sent = baton::isend_view(comm_space, world, message, 1, /*tag=*/1);
      Kokkos::parallel_for(
          "work", Kokkos::RangePolicy<Space>(compute_space, 0, n),
          KOKKOS_LAMBDA(int i) { work(i) = 2.0 * i; });
      sent.wait();
      compute_space.fence();
    } else if (world.rank() == 1) {
      // Posted before the kernel starts: MPI moves the data while the kernel runs.
      auto posted = baton::irecv_into(comm_space, world, message, 0, /*tag=*/1);
      Kokkos::parallel_for(
          "work", Kokkos::RangePolicy<Space>(compute_space, 0, n),
          KOKKOS_LAMBDA(int i) { work(i) = 2.0 * i; });
      posted.wait();  // the data is in `message`; Baton's copies on comm_space are fenced
      double sum = 0;
      Kokkos::parallel_reduce(
          "sum", Kokkos::RangePolicy<Space>(comm_space, 0, n),
          KOKKOS_LAMBDA(int i, double& s) { s += message(i); }, sum);
      compute_space.fence();
      std::printf("rank 1 received %d values (sum %.1f) while a kernel ran on another instance\n",
                  n, sum);
    }
    return 0;
  } catch (const baton::Error& e) {
    std::fprintf(stderr, "overlap_instances: %s\n", e.what());
    return 1;
  }
}
