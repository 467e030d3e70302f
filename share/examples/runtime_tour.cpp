// runtime_tour: start Baton, show where every rank runs, split the world by parity, and see how a
// failed MPI call becomes a baton::Error.
//   mpiexec -n 4 ./runtime_tour          srun -n 4 --mpi=pmix ./runtime_tour
#include <Kokkos_Core.hpp>
#include <baton/baton.hpp>

#include <cstddef>
#include <cstdio>
#include <vector>

// Not in an unnamed namespace: nvcc rejects device lambdas (KOKKOS_LAMBDA) in functions with
// internal linkage.
namespace tour {

// Some work on Kokkos' default execution space (the GPU for a CUDA or HIP build): 0 + 1 + ... +
// n-1.
long kokkos_sum(int n) {
  long sum = 0;
  Kokkos::parallel_reduce(
      "runtime_tour_sum", Kokkos::RangePolicy<>(0, n),
      KOKKOS_LAMBDA(const int i, long& s) { s += i; }, sum);
  return sum;
}

}  // namespace tour

int main(int argc, char** argv) {
  try {
    // MPI_Init_thread (MPI_THREAD_FUNNELED by default), then Kokkos::initialize(argc, argv).
    // Destroyed last: frees its communicators, then Kokkos::finalize(), then MPI_Finalize().
    baton::Runtime runtime(argc, argv);
    const baton::Communicator& world = runtime.world();  // owned duplicate of MPI_COMM_WORLD
    const baton::Communicator& node = runtime.node();    // the ranks of world on this node

    // Even and odd world ranks each get a new owned communicator, ranked in world order.
    const int parity = world.rank() % 2;
    const baton::Communicator half = world.split(parity, world.rank());

    // The sum of the world ranks in my half, through the raw handle.
    int my_rank = world.rank();
    int half_sum = 0;
    baton::check_mpi(MPI_Allreduce(&my_rank, &half_sum, 1, MPI_INT, MPI_SUM, half.raw()),
                     "MPI_Allreduce", half.raw());

    // Rank 0 gathers one row per rank and prints them in rank order.
    constexpr int fields = 7;
    const int row[fields] = {world.rank(), node.rank(), node.size(), runtime.selected_device_id(),
                             half.rank(),  half.size(), half_sum};
    std::vector<int> rows(world.rank() == 0 ? static_cast<std::size_t>(fields) * world.size() : 0);
    baton::check_mpi(MPI_Gather(row, fields, MPI_INT, rows.data(), fields, MPI_INT, 0, world.raw()),
                     "MPI_Gather", world.raw());
    const long kokkos_check = tour::kokkos_sum(1000);

    if (world.rank() == 0) {
      const baton::GpuAwareness gpu = baton::gpu_aware_mpi();
      std::printf("Baton %s on %d ranks, MPI thread level %s, Kokkos sum %ld\n",
                  BATON_VERSION_STRING, world.size(), baton::to_string(runtime.thread_level()),
                  kokkos_check);
      std::printf("GPU-aware MPI: %s (decided by %s)\n", gpu.aware ? "yes" : "no",
                  gpu.decided_by.c_str());
      for (int r = 0; r < world.size(); ++r) {
        const int* p = &rows[static_cast<std::size_t>(r) * fields];
        std::printf(
            "rank %d: node rank %d of %d, device %d, %s rank %d of %d (world ranks sum to %d)\n",
            p[0], p[1], p[2], p[3], p[0] % 2 == 0 ? "even" : "odd", p[4], p[5], p[6]);
      }

      // A failed MPI call: world is owned, so it has MPI_ERRORS_RETURN and the bad destination
      // comes back as a return code, which check_mpi turns into baton::Error. Nothing is sent.
      int value = 0;
      try {
        baton::check_mpi(MPI_Send(&value, 1, MPI_INT, world.size(), 0, world.raw()), "MPI_Send",
                         world.raw());
      } catch (const baton::Error& e) {
        std::printf("caught (%s): %s\n",
                    e.mpi_error_class() == MPI_ERR_RANK ? "MPI_ERR_RANK" : "other class", e.what());
      }
    }
    return 0;
  } catch (const baton::Error& e) {
    // Runtime has already been destroyed here: MPI and Kokkos are finalized.
    std::fprintf(stderr, "runtime_tour: %s\n", e.what());
    return 1;
  }
}
