// collectives_tour: collectives on Views, an average over a subgroup, and a View bundle.
//   mpiexec -n 4 collectives_tour
#include <Kokkos_Core.hpp>
#include <baton/baton.hpp>
#include <cstdio>

int main(int argc, char** argv) {
  try {
    baton::Runtime runtime(argc, argv);
    const baton::Communicator& world = runtime.world();
    const int me = world.rank();

    // Sum of a View over all ranks, in place.
    Kokkos::View<double*> x("x", 3);
    Kokkos::deep_copy(x, 1.0 + me);
    baton::all_reduce(world, x, baton::ReduceOp::sum);

    // Rank r contributes r + 1 rows; every rank gets all rows, concatenated by rank.
    Kokkos::View<int**> rows("rows", me + 1, 2);
    Kokkos::deep_copy(rows, me);
    auto all_rows = baton::all_gatherv(world, rows);

    // average() divides by the size of the communicator it is given: here, the ranks of my parity.
    baton::Communicator parity = world.split(me % 2, me);
    Kokkos::View<double*> mean("mean", 1);
    Kokkos::deep_copy(mean, double(me));
    baton::average(parity, mean);

    // A bundle of named Views from the last rank to everyone; the receivers allocate.
    baton::ViewBundle bundle;
    if (me == world.size() - 1) {
      Kokkos::View<float**> weights("weights", 2, 2);
      Kokkos::deep_copy(weights, 0.5f);
      bundle.add("weights", weights);
      bundle.add("step", Kokkos::View<long>("step"));
    }
    baton::ViewBundle got = baton::broadcast_bundle(world, bundle, world.size() - 1);
    auto weights = got.get<Kokkos::View<float**>>("weights");

    auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
    auto hm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), mean);
    if (me == 0) {
      std::printf("sum of x: %.1f, rows gathered: %zu, mean over even ranks: %.1f\n", hx(0),
                  all_rows.extent(0), hm(0));
      std::printf("bundle entries: %zu, weights is %zux%zu\n", got.size(), weights.extent(0),
                  weights.extent(1));
    }
    return 0;
  } catch (const baton::Error& e) {
    std::fprintf(stderr, "collectives_tour: %s\n", e.what());
    return 1;
  }
}
