// symmetric_tour: a SymmetricView of 4 x 3 doubles on every rank. Each rank writes one row into
// its right neighbour's part (fence epoch), then every rank adds into rank 0's last row and reads
// its left neighbour's first row back (lock_all epoch), and the View is freed collectively.
//   mpiexec -n 3 ./symmetric_tour          srun -n 3 --mpi=pmix ./symmetric_tour
#include <baton/baton.hpp>
#include <baton/rma/symmetric_view.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  try {
    baton::Runtime runtime(argc, argv);
    const baton::Communicator& world = runtime.world();
    const int me = world.rank();
    const int right = (me + 1) % world.size();
    const int left = (me + world.size() - 1) % world.size();

    // Collective: the same extents on every rank (different ones throw on every rank).
    baton::SymmetricView<double**> grid(world, "grid", 4, 3);

    // A run of whole rows: 1 x 3, written into row 1 of the right neighbour.
    Kokkos::View<double**, Kokkos::HostSpace> row("row", 1, 3);
    for (int j = 0; j < 3; ++j)
      row(0, j) = 10.0 * me + j;
    grid.fence();  // opens a fence epoch on every rank
    grid.put(right, 1, row);
    grid.fence();                     // every put is complete, everywhere
    const auto local = grid.local();  // this rank's part: LayoutRight, 4 x 3
    std::printf("rank %d: row 1 = %.1f %.1f %.1f (from rank %d)\n", me, local(1, 0), local(1, 1),
                local(1, 2), left);
    grid.close_fence();  // a fence epoch ends before a lock_all epoch begins

    {
      auto epoch = grid.lock_all_scope();  // passive target: no other rank has to take part
      Kokkos::View<double**, Kokkos::HostSpace> ones("ones", 1, 3);
      Kokkos::deep_copy(ones, 1.0);
      grid.accumulate(0, 3, ones);  // sum, element by element, atomic against other sums
      Kokkos::View<double**, Kokkos::HostSpace> back("back", 1, 3);
      grid.get(left, 1, back);  // left's row 1: what left's own left neighbour put there
      grid.flush_all();         // the accumulate is done at rank 0, and `back` is filled
      baton::barrier(world);    // every rank's accumulate is done
      grid.sync();              // rank 0 sees them in local()
      if (me == 0)
        std::printf("rank 0: row 3 = %.1f %.1f %.1f (one per rank)\n", local(3, 0), local(3, 1),
                    local(3, 2));
      std::printf("rank %d: rank %d's row 1 starts with %.1f\n", me, left, back(0, 0));
      baton::barrier(world);
    }  // unlock_all

    grid.free();  // collective; the destructor would do it too
    return 0;
  } catch (const baton::Error& e) {
    std::fprintf(stderr, "symmetric_tour: %s\n", e.what());
    return 1;
  }
}
