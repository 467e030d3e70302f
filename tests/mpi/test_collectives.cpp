#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <baton/collectives/collectives.hpp>
#include <baton/core/error.hpp>
#include <climits>
#include <string>
#include <utility>
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

TEST_CASE("all_reduce: sum, prod, max, min, in place and out of place, any layout") {
  for (auto path : view_paths) {
    for (bool checks : check_modes) {
      CAPTURE(static_cast<int>(path));
      CAPTURE(checks);
      baton::Communicator comm = comm_with(path, checks);
      const int n = comm.size();
      const double r = comm.rank();
      Kokkos::View<double**, Kokkos::LayoutLeft> v("v", 3, 4);
      fill(v, [&](std::size_t i, std::size_t j) { return r + 1 + i * 4 + j; });
      Kokkos::View<double**> out("out", 3, 4);
      baton::all_reduce(comm, v, out, baton::ReduceOp::sum);
      // sum over ranks of (r + 1 + k) = n(n+1)/2 + n k
      CHECK(count_wrong(out, [&](std::size_t i, std::size_t j) {
              return n * (n + 1) / 2.0 + n * double(i * 4 + j);
            }) == 0);
      Kokkos::View<double**> m("m", 3, 4);
      Kokkos::deep_copy(m, v);
      baton::all_reduce(comm, m, baton::ReduceOp::max);
      CHECK(count_wrong(m, [&](std::size_t i, std::size_t j) { return double(n + i * 4 + j); }) ==
            0);
      Kokkos::deep_copy(m, v);
      baton::all_reduce(comm, m, baton::ReduceOp::min);
      CHECK(count_wrong(m, [&](std::size_t i, std::size_t j) { return double(1 + i * 4 + j); }) ==
            0);
      Kokkos::View<long*> p("p", 2);
      Kokkos::deep_copy(p, long(comm.rank() + 1));
      baton::all_reduce(comm, p, baton::ReduceOp::prod);
      long factorial = 1;
      for (int k = 2; k <= n; ++k)
        factorial *= k;
      auto hp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p);
      CHECK(hp(1) == factorial);
    }
  }
}

TEST_CASE("average divides by the size of the communicator it is given") {
  baton::Communicator world = baton::test::world().duplicate();
  baton::Communicator half = world.split(world.rank() % 2, world.rank());
  Kokkos::View<double*> v("v", 3);
  Kokkos::deep_copy(v, double(world.rank()));
  baton::average(half, v);
  // Mean of the world ranks with my parity.
  double sum = 0;
  int count = 0;
  for (int r = world.rank() % 2; r < world.size(); r += 2, ++count)
    sum += r;
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  CHECK(h(2) == doctest::Approx(sum / count));
  Kokkos::View<float*> f("f", 1);
  Kokkos::deep_copy(f, 2.0f * world.rank());
  baton::average(world, f);
  auto hf = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f);
  CHECK(hf(0) == doctest::Approx(world.size() - 1.0));
}

TEST_CASE("all_gather, all_gatherv, gather and gatherv concatenate rows by rank") {
  for (int mode = 0; mode < 4; ++mode) {  // both paths, checked and unchecked
    const baton::ViewPath path = view_paths[mode / 2];
    const bool checks = check_modes[mode % 2];
    CAPTURE(static_cast<int>(path));
    CAPTURE(checks);
    baton::Communicator comm = comm_with(path, checks);
    const int n = comm.size();
    const int me = comm.rank();
    auto value = [](int rank, std::size_t i, std::size_t j) { return rank * 100.0 + i * 10.0 + j; };

    Kokkos::View<double**> two("two", 2, 3);
    fill(two, [&](std::size_t i, std::size_t j) { return value(me, i, j); });
    Kokkos::View<double**> all("all", 2 * n, 3);
    baton::all_gather(comm, two, all);
    CHECK(count_wrong(
              all, [&](std::size_t i, std::size_t j) { return value(int(i / 2), i % 2, j); }) == 0);

    // Rank r has r + 1 rows.
    Kokkos::View<double**, Kokkos::LayoutLeft> mine("mine", me + 1, 2);
    fill(mine, [&](std::size_t i, std::size_t j) { return value(me, i, j); });
    auto every = baton::all_gatherv(comm, mine);
    REQUIRE(every.extent(0) == std::size_t(n * (n + 1) / 2));
    REQUIRE(every.extent(1) == 2);
    std::vector<std::pair<int, int>> owner;  // (rank, row) of each result row
    for (int r = 0; r < n; ++r)
      for (int i = 0; i <= r; ++i)
        owner.push_back({r, i});
    CHECK(count_wrong(every, [&](std::size_t i, std::size_t j) {
            return value(owner[i].first, owner[i].second, j);
          }) == 0);

    const int root = n - 1;
    auto at_root = baton::gatherv(comm, mine, root);
    if (me == root) {
      REQUIRE(at_root.extent(0) == every.extent(0));
      CHECK(count_wrong(at_root, [&](std::size_t i, std::size_t j) {
              return value(owner[i].first, owner[i].second, j);
            }) == 0);
    } else {
      CHECK(at_root.extent(0) == 0);
    }
    auto fixed = baton::gather(comm, two, 0);
    if (me == 0)
      CHECK(count_wrong(fixed, [&](std::size_t i, std::size_t j) {
              return value(int(i / 2), i % 2, j);
            }) == 0);
  }
}

TEST_CASE("reduce_scatter and reduce_scatter_v give each rank its block of the sum") {
  for (bool checks : check_modes) {
    CAPTURE(checks);
    baton::Communicator comm = comm_with(baton::ViewPath::automatic, checks);
    const int n = comm.size();
    const int me = comm.rank();
    Kokkos::View<int**> send("send", 2 * n, 2);
    fill(send, [&](std::size_t i, std::size_t j) { return int(me + i * 2 + j); });
    auto block = baton::reduce_scatter(comm, send, baton::ReduceOp::sum);
    REQUIRE(block.extent(0) == 2);
    const int rank_sum = n * (n - 1) / 2;
    CHECK(count_wrong(block, [&](std::size_t i, std::size_t j) {
            return int(rank_sum + n * ((2 * me + i) * 2 + j));
          }) == 0);

    std::vector<std::size_t> rows(n);
    std::size_t total = 0, before = 0;
    for (int r = 0; r < n; ++r) {
      rows[r] = r + 1;
      total += rows[r];
      if (r < me)
        before += rows[r];
    }
    Kokkos::View<int**> uneven("uneven", total, 2);
    fill(uneven, [&](std::size_t i, std::size_t j) { return int(me + i * 2 + j); });
    auto mine = baton::reduce_scatter_v(comm, uneven, rows, baton::ReduceOp::sum);
    REQUIRE(mine.extent(0) == rows[me]);
    CHECK(count_wrong(mine, [&](std::size_t i, std::size_t j) {
            return int(rank_sum + n * ((before + i) * 2 + j));
          }) == 0);
  }
}

TEST_CASE("broadcast fills every rank's View; broadcast_view allocates root's shape") {
  for (int mode = 0; mode < 4; ++mode) {  // both paths, checked and unchecked
    const baton::ViewPath path = view_paths[mode / 2];
    const bool checks = check_modes[mode % 2];
    CAPTURE(static_cast<int>(path));
    CAPTURE(checks);
    baton::Communicator comm = comm_with(path, checks);
    const int root = comm.size() - 1;
    Kokkos::View<double**> v("v", 2, 5);
    if (comm.rank() == root)
      fill(v, [](std::size_t i, std::size_t j) { return 7.0 * i + j; });
    baton::broadcast(comm, v, root);
    CHECK(count_wrong(v, [](std::size_t i, std::size_t j) { return 7.0 * i + j; }) == 0);

    Kokkos::View<double**> source("source", comm.rank() == root ? 4 : 0, 3);
    if (comm.rank() == root)
      fill(source, [](std::size_t i, std::size_t j) { return 0.5 * i - j; });
    auto got = baton::broadcast_view(comm, source, root);
    REQUIRE(got.extent(0) == 4);
    CHECK(count_wrong(got, [](std::size_t i, std::size_t j) { return 0.5 * i - j; }) == 0);
  }
  baton::barrier(baton::test::world());
}

TEST_CASE("mismatched shapes are the same baton::Error on every rank, and nothing hangs") {
  // Checked mode on purpose: unchecked, these mismatches would be undefined behaviour (hangs).
  baton::Communicator comm = comm_with(baton::ViewPath::automatic, true);
  baton::Communicator unchecked = comm_with(baton::ViewPath::automatic, false);
  const int me = comm.rank();
  // Local problem on one rank: its recv View is too small.
  Kokkos::View<double*> send("send", 4);
  Kokkos::View<double*> recv("recv", me == 0 ? 3 : 4);
  CHECK_THROWS_WITH_AS(
      baton::all_reduce(comm, send, recv, baton::ReduceOp::sum),
      doctest::Contains(
          "rank 0 float64[4] (send float64[4] (right) and recv float64[3] (right) differ)"),
      baton::Error);
  // The communicator is still usable afterwards.
  baton::all_reduce(comm, send, baton::ReduceOp::sum);
  if (comm.size() >= 2) {
    Kokkos::View<double*> uneven("uneven", me == 1 ? 5 : 4);
    CHECK_THROWS_WITH_AS(baton::all_reduce(comm, uneven, baton::ReduceOp::sum),
                         doctest::Contains("rank 1 float64[5]"), baton::Error);
    Kokkos::View<int**> rows("rows", 2, me == 1 ? 3 : 2);
    CHECK_THROWS_WITH_AS(baton::all_gatherv(comm, rows), doctest::Contains("rank 1 int32[2,3]"),
                         baton::Error);
    CHECK_THROWS_WITH_AS(baton::broadcast(comm, uneven, 0), doctest::Contains("rank 1 float64[5]"),
                         baton::Error);
    // Different roots: checked by broadcast in checked mode, by gatherv always.
    const int root = me == 0 ? 0 : 1;
    CHECK_THROWS_WITH_AS(baton::broadcast(comm, send, root),
                         doctest::Contains("rank 0 float64[4] root 0; rank 1 float64[4] root 1"),
                         baton::Error);
    CHECK_THROWS_WITH_AS(baton::gatherv(unchecked, rows, root),
                         doctest::Contains("rank 0 int32[2,2] root 0; rank 1 int32[2,3] root 1"),
                         baton::Error);
    Kokkos::View<int**> same_rows("same_rows", 1 + me, 2);
    CHECK_THROWS_WITH_AS(baton::gatherv(unchecked, same_rows, root),
                         doctest::Contains("baton::gatherv: ranks passed rows of different shapes"),
                         baton::Error);
  }
  // A root out of range on rank 0 only: checked broadcast and gatherv still throw on every rank.
  const int bad_root = me == 0 ? comm.size() : 0;
  const std::string out_of_range = "root " + std::to_string(comm.size()) +
                                   " is out of range for a communicator of " +
                                   std::to_string(comm.size()) + " ranks";
  CHECK_THROWS_WITH_AS(baton::broadcast(comm, send, bad_root),
                       doctest::Contains(out_of_range.c_str()), baton::Error);
  Kokkos::View<int**> one_row("one_row", 1, 2);
  CHECK_THROWS_WITH_AS(baton::gatherv(unchecked, one_row, bad_root),
                       doctest::Contains(comm.size() == 1 ? "out of range" : "different shapes"),
                       baton::Error);
  Kokkos::View<double*> odd("odd", 2 * comm.size() + 1);
  if (comm.size() > 1) {
    CHECK_THROWS_WITH_AS(baton::reduce_scatter(comm, odd, baton::ReduceOp::sum),
                         doctest::Contains("do not split evenly"), baton::Error);
  }
  CHECK_THROWS_WITH_AS(baton::gatherv(comm, odd, comm.size()), doctest::Contains("out of range"),
                       baton::Error);
  baton::barrier(comm);
}

TEST_CASE(
    "unchecked mode: every rank checks its own arguments, and alike ones throw on every rank") {
  for (bool checks : check_modes) {
    CAPTURE(checks);
    baton::Communicator comm = comm_with(baton::ViewPath::automatic, checks);
    // A recv View too small on every rank.
    Kokkos::View<double*> send("send", 4), recv("recv", 3);
    CHECK_THROWS_WITH_AS(baton::all_reduce(comm, send, recv, baton::ReduceOp::sum),
                         doctest::Contains("send float64[4] (right) and recv float64[3] (right) "
                                           "differ"),
                         baton::Error);
    // A root out of range everywhere.
    CHECK_THROWS_WITH_AS(baton::broadcast(comm, send, comm.size()),
                         doctest::Contains("out of range"), baton::Error);
    // More than INT_MAX elements (an unmanaged View: nothing is allocated, nothing is read).
    char byte = 0;
    Kokkos::View<char*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> huge(
        &byte, std::size_t(INT_MAX) + 1);
    CHECK_THROWS_WITH_AS(baton::all_reduce(comm, huge, baton::ReduceOp::max),
                         doctest::Contains("2147483648 elements exceed INT_MAX"), baton::Error);
    CHECK_THROWS_WITH_AS(baton::broadcast(comm, huge, 0),
                         doctest::Contains("2147483648 elements exceed INT_MAX"), baton::Error);
    // The communicator is still in step.
    baton::all_reduce(comm, send, baton::ReduceOp::sum);
    baton::barrier(comm);
  }
}

TEST_CASE("every collective with an execution space instance gives what it gives without one") {
  const Kokkos::DefaultExecutionSpace space;
  for (auto path : view_paths) {
    CAPTURE(static_cast<int>(path));
    baton::Communicator comm = comm_with(path);
    const int n = comm.size();
    const int me = comm.rank();
    // Rows: 1 + rank, 3 columns, LayoutLeft (staged or packed on the way).
    Kokkos::View<double**, Kokkos::LayoutLeft> mine("mine", 1 + me, 3);
    fill(mine, [me](std::size_t i, std::size_t j) { return 100.0 * me + 10.0 * i + j; });
    const auto same = [](const auto& a, const auto& b) {
      auto ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a);
      auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b);
      if (ha.extent(0) != hb.extent(0) || ha.extent(1) != hb.extent(1))
        return false;
      for (std::size_t i = 0; i < ha.extent(0); ++i)
        for (std::size_t j = 0; j < ha.extent(1); ++j)
          if (ha(i, j) != hb(i, j))
            return false;
      return true;
    };
    Kokkos::View<double**, Kokkos::LayoutLeft> x("x", 2, 3), y("y", 2, 3), out("out", 2, 3);
    fill(x, [me](std::size_t i, std::size_t j) { return me + 0.5 * i + j; });
    Kokkos::deep_copy(y, x);
    baton::all_reduce(space, comm, x, baton::ReduceOp::sum);
    baton::all_reduce(comm, y, baton::ReduceOp::sum);
    CHECK(same(x, y));
    baton::all_reduce(space, comm, y, out, baton::ReduceOp::max);
    baton::all_reduce(comm, y, x, baton::ReduceOp::max);
    CHECK(same(out, x));
    baton::average(space, comm, x);
    baton::average(comm, y);
    CHECK(same(x, y));
    Kokkos::View<double**> all("all", 2 * n, 3), all2("all2", 2 * n, 3);
    baton::all_gather(space, comm, x, all);
    baton::all_gather(comm, x, all2);
    CHECK(same(all, all2));
    CHECK(same(baton::all_gatherv(space, comm, mine), baton::all_gatherv(comm, mine)));
    CHECK(same(baton::gatherv(space, comm, mine, 0), baton::gatherv(comm, mine, 0)));
    CHECK(same(baton::gather(space, comm, x, n - 1), baton::gather(comm, x, n - 1)));
    Kokkos::View<double**> blocks("blocks", 2 * n, 3);
    fill(blocks, [me](std::size_t i, std::size_t j) { return me * 1.0 + i + 0.25 * j; });
    CHECK(same(baton::reduce_scatter(space, comm, blocks, baton::ReduceOp::sum),
               baton::reduce_scatter(comm, blocks, baton::ReduceOp::sum)));
    std::vector<std::size_t> rows(static_cast<std::size_t>(n), 2);
    CHECK(same(baton::reduce_scatter_v(space, comm, blocks, rows, baton::ReduceOp::sum),
               baton::reduce_scatter_v(comm, blocks, rows, baton::ReduceOp::sum)));
    Kokkos::View<double**, Kokkos::LayoutLeft> b1("b1", 2, 3), b2("b2", 2, 3);
    fill(b1, [me](std::size_t i, std::size_t j) { return me == 0 ? 7.0 + i + j : -1.0; });
    Kokkos::deep_copy(b2, b1);
    baton::broadcast(space, comm, b1, 0);
    baton::broadcast(comm, b2, 0);
    CHECK(same(b1, b2));
    Kokkos::View<double**> root_view("root_view", me == 0 ? 4 : 1, 3);
    fill(root_view, [](std::size_t i, std::size_t j) { return 3.0 * i + j; });
    CHECK(same(baton::broadcast_view(space, comm, root_view, 0),
               baton::broadcast_view(comm, root_view, 0)));
  }
}
