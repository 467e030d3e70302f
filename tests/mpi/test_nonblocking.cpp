#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <baton/collectives/nonblocking.hpp>
#include <baton/core/error.hpp>
#include <string>
#include <vector>

#include "comm_modes.hpp"
#include "mpi_doctest.hpp"
#include "view_fill.hpp"

namespace {

using baton::test::check_modes;
using baton::test::comm_with;
using baton::test::view_paths;

using baton::test::count_wrong;
using baton::test::fill;

}  // namespace

TEST_CASE(
    "iall_reduce, ibroadcast, iall_gather, iall_gatherv, ireduce_scatter give the blocking "
    "results") {
  for (int mode = 0; mode < 4; ++mode) {
    const baton::ViewPath path = view_paths[mode / 2];
    const bool checks = check_modes[mode % 2];
    CAPTURE(static_cast<int>(path));
    CAPTURE(checks);
    baton::Communicator comm = comm_with(path, checks);
    const int n = comm.size();
    const int me = comm.rank();

    Kokkos::View<double**, Kokkos::LayoutLeft> v("v", 3, 4);
    fill(v, [&](std::size_t i, std::size_t j) { return me + 1.0 + i * 4 + j; });
    Kokkos::View<double**> sum("sum", 3, 4);
    baton::Request reduce = baton::iall_reduce(comm, v, sum, baton::ReduceOp::sum);
    Kokkos::View<double**> in_place("in_place", 3, 4);
    Kokkos::deep_copy(in_place, v);
    baton::Request reduce_max = baton::iall_reduce(comm, in_place, baton::ReduceOp::max);

    const int root = n - 1;
    Kokkos::View<int**> b("b", 2, 5);
    if (me == root)
      fill(b, [](std::size_t i, std::size_t j) { return int(7 * i + j); });
    baton::Request bcast = baton::ibroadcast(comm, b, root);

    Kokkos::View<double**> two("two", 2, 3);
    fill(two, [&](std::size_t i, std::size_t j) { return me * 100.0 + i * 10.0 + j; });
    Kokkos::View<double**> all("all", 2 * n, 3);
    baton::Request gather = baton::iall_gather(comm, two, all);

    Kokkos::View<double**, Kokkos::LayoutLeft> mine("mine", me + 1, 2);
    fill(mine, [&](std::size_t i, std::size_t j) { return me * 100.0 + i * 10.0 + j; });
    auto gatherv = baton::iall_gatherv(comm, mine);

    Kokkos::View<int**> blocks("blocks", 2 * n, 2);
    fill(blocks, [&](std::size_t i, std::size_t j) { return int(me + i * 2 + j); });
    auto scatter = baton::ireduce_scatter(comm, blocks, baton::ReduceOp::sum);

    // Completed in a mix of ways: test() until done, wait_all over different kinds, wait().
    while (!reduce.test()) {
    }
    CHECK(!reduce.active());
    baton::wait_all(reduce_max, bcast, gather);
    auto every = gatherv.wait();
    auto block = scatter.wait();

    CHECK(count_wrong(sum, [&](std::size_t i, std::size_t j) {
            return n * (n + 1) / 2.0 + n * double(i * 4 + j);
          }) == 0);
    CHECK(count_wrong(in_place,
                      [&](std::size_t i, std::size_t j) { return double(n + i * 4 + j); }) == 0);
    CHECK(count_wrong(b, [](std::size_t i, std::size_t j) { return int(7 * i + j); }) == 0);
    CHECK(count_wrong(all, [](std::size_t i, std::size_t j) {
            return (i / 2) * 100.0 + (i % 2) * 10.0 + j;
          }) == 0);
    REQUIRE(every.extent(0) == std::size_t(n * (n + 1) / 2));
    std::vector<std::pair<int, int>> owner;
    for (int r = 0; r < n; ++r)
      for (int i = 0; i <= r; ++i)
        owner.push_back({r, i});
    CHECK(count_wrong(every, [&](std::size_t i, std::size_t j) {
            return owner[i].first * 100.0 + owner[i].second * 10.0 + j;
          }) == 0);
    REQUIRE(block.extent(0) == 2);
    const int rank_sum = n * (n - 1) / 2;
    CHECK(count_wrong(block, [&](std::size_t i, std::size_t j) {
            return int(rank_sum + n * ((2 * me + i) * 2 + j));
          }) == 0);
  }
}

TEST_CASE("a request keeps its Views alive; staged results land at wait()") {
  for (auto path : view_paths) {
    CAPTURE(static_cast<int>(path));
    baton::Communicator comm = comm_with(path, false);
    Kokkos::View<double*> send("send", 5), recv("recv", 5);
    Kokkos::deep_copy(send, 1.0);
    baton::Request r = baton::iall_reduce(comm, send, recv, baton::ReduceOp::sum);
    CHECK(send.use_count() == 2);  // ours and the request's
    CHECK(recv.use_count() == 2);
    // Staged, the result reaches recv at wait() only, however far MPI has got.
    baton::barrier(comm);
    if (path == baton::ViewPath::staged) {
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), recv);
      CHECK(h(0) == 0.0);
    }
    r.wait();
    CHECK(send.use_count() == 1);
    CHECK(recv.use_count() == 1);
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), recv);
    CHECK(h(4) == double(comm.size()));
    CHECK(r.test());  // finished: test() and wait() do nothing more
    r.wait();
  }
}

TEST_CASE("zero counts: empty Views and ranks with no rows") {
  for (auto path : view_paths) {
    for (bool checks : check_modes) {
      CAPTURE(static_cast<int>(path));
      CAPTURE(checks);
      baton::Communicator comm = comm_with(path, checks);
      const int me = comm.rank();
      Kokkos::View<double*> empty("empty", 0), empty_out("empty_out", 0);
      baton::Request a = baton::iall_reduce(comm, empty, empty_out, baton::ReduceOp::sum);
      baton::Request b = baton::ibroadcast(comm, empty, 0);
      baton::Request c = baton::iall_gather(comm, empty, empty_out);
      // Odd ranks have no rows.
      Kokkos::View<int**> rows("rows", me % 2 == 0 ? 2 : 0, 3);
      fill(rows, [&](std::size_t i, std::size_t j) { return int(me * 10 + i * 3 + j); });
      auto gathered = baton::iall_gatherv(comm, rows);
      Kokkos::View<float**> none("none", 0, 2);
      auto scattered = baton::ireduce_scatter(comm, none, baton::ReduceOp::max);
      baton::wait_all(a, b, c);
      auto got = gathered.wait();
      std::size_t expected = 0;
      for (int r = 0; r < comm.size(); r += 2)
        expected += 2;
      CHECK(got.extent(0) == expected);
      CHECK(scattered.wait().extent(0) == 0);
    }
  }
}

TEST_CASE("checked mode: mismatched arguments are the same baton::Error on every rank") {
  baton::Communicator comm = comm_with(baton::ViewPath::automatic, true);
  const int me = comm.rank();
  Kokkos::View<double*> send("send", 4);
  Kokkos::View<double*> recv("recv", me == 0 ? 3 : 4);
  CHECK_THROWS_WITH_AS(
      baton::iall_reduce(comm, send, recv, baton::ReduceOp::sum),
      doctest::Contains("baton::iall_reduce: ranks passed different or unusable arguments: rank 0 "
                        "float64[4] (send float64[4] (right) and recv float64[3] (right) differ)"),
      baton::Error);
  Kokkos::View<double*> small("small", me == 0 ? 1 : 4 * comm.size());
  CHECK_THROWS_WITH_AS(baton::iall_gather(comm, send, small),
                       doctest::Contains("baton::iall_gather: ranks passed different"),
                       baton::Error);
  const int bad_root = me == 0 ? comm.size() : 0;
  CHECK_THROWS_WITH_AS(baton::ibroadcast(comm, send, bad_root),
                       doctest::Contains("is out of range"), baton::Error);
  if (comm.size() > 1) {
    Kokkos::View<double*> uneven("uneven", me == 1 ? 5 : 4);
    CHECK_THROWS_WITH_AS(baton::iall_reduce(comm, uneven, baton::ReduceOp::sum),
                         doctest::Contains("rank 1 float64[5]"), baton::Error);
    CHECK_THROWS_WITH_AS(baton::ibroadcast(comm, send, me == 0 ? 0 : 1),
                         doctest::Contains("rank 0 float64[4] root 0; rank 1 float64[4] root 1"),
                         baton::Error);
    Kokkos::View<double*> odd("odd", 2 * comm.size() + 1);
    CHECK_THROWS_WITH_AS(baton::ireduce_scatter(comm, odd, baton::ReduceOp::sum),
                         doctest::Contains("do not split evenly"), baton::Error);
    // iall_gatherv checks the shapes in both modes.
    baton::Communicator unchecked = comm_with(baton::ViewPath::automatic, false);
    Kokkos::View<int**> rows("rows", 2, me == 1 ? 3 : 2);
    CHECK_THROWS_WITH_AS(baton::iall_gatherv(unchecked, rows),
                         doctest::Contains("baton::iall_gatherv: ranks passed rows of different "
                                           "shapes"),
                         baton::Error);
  }
  // Still in step afterwards.
  baton::iall_reduce(comm, send, baton::ReduceOp::sum).wait();
  baton::barrier(comm);
}

TEST_CASE("a request dropped before completion waits in its destructor") {
  for (auto path : view_paths) {
    CAPTURE(static_cast<int>(path));
    baton::Communicator comm = comm_with(path, false);
    Kokkos::View<long*> sum("sum", 3), root("root", 3), max("max", 3);
    Kokkos::deep_copy(sum, long(comm.rank() + 1));
    Kokkos::deep_copy(root, long(comm.rank() + 1));
    Kokkos::deep_copy(max, long(comm.rank() + 1));
    {
      baton::Request dropped = baton::iall_reduce(comm, sum, baton::ReduceOp::sum);
      baton::Request replaced = baton::ibroadcast(comm, root, 0);
      replaced = baton::iall_reduce(comm, max, baton::ReduceOp::max);  // waits for the broadcast
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), root);
      CHECK(h(2) == 1);
    }
    // The destructors waited, and copied staged results back.
    auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sum);
    CHECK(hs(2) == long(comm.size()) * (comm.size() + 1) / 2);
    auto hm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), max);
    CHECK(hm(0) == comm.size());
    // The communicator is usable and in step.
    Kokkos::View<long*> one("one", 1);
    Kokkos::deep_copy(one, 1L);
    baton::all_reduce(comm, one, baton::ReduceOp::sum);
    auto ho = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), one);
    CHECK(ho(0) == comm.size());
  }
}

TEST_CASE("execution space instance overloads give what the plain ones give") {
  const Kokkos::DefaultExecutionSpace space;
  for (auto path : view_paths) {
    CAPTURE(static_cast<int>(path));
    baton::Communicator comm = comm_with(path);
    const int n = comm.size();
    const int me = comm.rank();
    Kokkos::View<double**, Kokkos::LayoutLeft> x("x", 2, 3), y("y", 2, 3);
    fill(x, [me](std::size_t i, std::size_t j) { return me + 0.5 * i + j; });
    Kokkos::deep_copy(y, x);
    Kokkos::View<double**> all("all", 2 * n, 3), all2("all2", 2 * n, 3);
    auto g1 = baton::iall_gather(space, comm, x, all);
    auto g2 = baton::iall_gather(comm, y, all2);
    auto r1 = baton::iall_reduce(space, comm, x, baton::ReduceOp::sum);
    auto b1 = baton::ibroadcast(space, comm, y, n - 1);
    baton::wait_all(g1, g2, r1, b1);
    CHECK(count_wrong(
              all, [&](std::size_t i, std::size_t j) { return (i / 2) + 0.5 * (i % 2) + j; }) == 0);
    CHECK(count_wrong(all2, [&](std::size_t i, std::size_t j) {
            return (i / 2) + 0.5 * (i % 2) + j;
          }) == 0);
    CHECK(count_wrong(x, [&](std::size_t i, std::size_t j) {
            return n * (n - 1) / 2.0 + n * (0.5 * i + j);
          }) == 0);
    CHECK(count_wrong(y, [&](std::size_t i, std::size_t j) { return n - 1 + 0.5 * i + j; }) == 0);
    Kokkos::View<double**> rows("rows", 1 + me, 3);
    fill(rows, [me](std::size_t i, std::size_t j) { return 10.0 * me + i + 0.25 * j; });
    auto v1 = baton::iall_gatherv(space, comm, rows).wait();
    auto v2 = baton::all_gatherv(comm, rows);
    CHECK(count_wrong(v1, [&](std::size_t i, std::size_t j) {
            auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v2);
            return h(i, j);
          }) == 0);
    Kokkos::View<double**> blocks("blocks", 2 * n, 3);
    fill(blocks, [me](std::size_t i, std::size_t j) { return me * 1.0 + i + 0.25 * j; });
    auto s1 = baton::ireduce_scatter(space, comm, blocks, baton::ReduceOp::sum).wait();
    auto s2 = baton::reduce_scatter(comm, blocks, baton::ReduceOp::sum);
    auto hs2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s2);
    CHECK(count_wrong(s1, [&](std::size_t i, std::size_t j) { return hs2(i, j); }) == 0);
  }
}
