// comm_tour: a non-blocking all-reduce, all-to-all with discovered counts, a sparse exchange with
// unknown partners, and a gather of objects.
//   mpiexec -n 4 comm_tour
#include <Kokkos_Core.hpp>
#include <baton/baton.hpp>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  try {
    baton::Runtime runtime(argc, argv);
    const baton::Communicator& world = runtime.world();
    const int me = world.rank();
    const int n = world.size();

    // Post a sum, compute while it travels, then wait. The request keeps x alive until then.
    Kokkos::View<double*> x("x", 1000);
    Kokkos::deep_copy(x, 1.0);
    baton::Request sum = baton::iall_reduce(world, x, baton::ReduceOp::sum);
    long work = 0;
    Kokkos::parallel_reduce(
        "work", 1000, KOKKOS_LAMBDA(int i, long& s) { s += i; }, work);
    sum.wait();

    // Rank r sends `to + 1` rows of 2 values to each rank `to`; the receivers learn their counts.
    std::vector<std::size_t> rows_to(n);
    std::size_t total = 0;
    for (int to = 0; to < n; ++to)
      total += rows_to[to] = to + 1;
    Kokkos::View<int**> rows("rows", total, 2);
    Kokkos::deep_copy(rows, me);
    auto got = baton::all_to_allv(world, rows, rows_to);

    // Each rank sends me + 1 values to the next rank only; nobody tells the receiver who sends.
    std::map<int, Kokkos::View<int*>> outgoing;
    outgoing[(me + 1) % n] = Kokkos::View<int*>("hello", me + 1);
    auto heard = baton::sparse_exchange(world, outgoing);

    // Any serializable value, of a different size on every rank.
    auto names = baton::all_gather_object(world, "rank-" + std::to_string(me));

    auto hx = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
    if (me == 0) {
      std::printf("sum of x(0) over %d ranks: %.1f (work meanwhile: %ld)\n", n, hx(0), work);
      std::printf("all_to_allv: rank 0 got %zu rows, %zu from rank %d\n", got.rows.extent(0),
                  got.rows_from[n - 1], n - 1);
      for (const auto& [source, view] : heard)
        std::printf("sparse_exchange: rank 0 heard from rank %d: %zu values\n", source,
                    view.extent(0));
      std::printf("all_gather_object:");
      for (const std::string& name : names)
        std::printf(" %s", name.c_str());
      std::printf("\n");
    }
    return 0;
  } catch (const baton::Error& e) {
    std::fprintf(stderr, "comm_tour: %s\n", e.what());
    return 1;
  }
}
