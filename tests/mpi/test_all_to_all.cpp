#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <baton/collectives/all_to_all.hpp>
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

// The value rank `from` puts in column j of row i of the block it sends to rank `to`.
double value(int from, int to, std::size_t i, std::size_t j) {
  return from * 1000.0 + to * 100.0 + i * 10.0 + j;
}

}  // namespace

TEST_CASE("all_to_all: block j of send goes to rank j") {
  for (int mode = 0; mode < 4; ++mode) {
    const baton::ViewPath path = view_paths[mode / 2];
    const bool checks = check_modes[mode % 2];
    CAPTURE(static_cast<int>(path));
    CAPTURE(checks);
    baton::Communicator comm = comm_with(path, checks);
    const int n = comm.size();
    const int me = comm.rank();
    Kokkos::View<double**, Kokkos::LayoutLeft> send("send", 2 * n, 3);
    fill(send, [&](std::size_t i, std::size_t j) { return value(me, int(i / 2), i % 2, j); });
    Kokkos::View<double**> recv("recv", 2 * n, 3);
    baton::all_to_all(comm, send, recv);
    CHECK(count_wrong(recv, [&](std::size_t i, std::size_t j) {
            return value(int(i / 2), me, i % 2, j);
          }) == 0);
    // With an execution space instance, and zero rows.
    Kokkos::View<double**> none("none", 0, 3), none_out("none_out", 0, 3);
    baton::all_to_all(Kokkos::DefaultExecutionSpace(), comm, none, none_out);
  }
}

TEST_CASE("all_to_allv: rows to each rank as asked, counts discovered, zero counts") {
  for (int mode = 0; mode < 4; ++mode) {
    const baton::ViewPath path = view_paths[mode / 2];
    const bool checks = check_modes[mode % 2];
    CAPTURE(static_cast<int>(path));
    CAPTURE(checks);
    baton::Communicator comm = comm_with(path, checks);
    const int n = comm.size();
    const int me = comm.rank();
    // Rank `from` sends (from + to) % 3 rows to rank `to`: zero counts included.
    auto rows_to = [](int from, int to) { return std::size_t((from + to) % 3); };
    std::vector<std::size_t> counts(n);
    std::vector<std::pair<int, std::size_t>> row_of;  // (destination, row in block) per send row
    for (int to = 0; to < n; ++to) {
      counts[to] = rows_to(me, to);
      for (std::size_t i = 0; i < counts[to]; ++i)
        row_of.push_back({to, i});
    }
    Kokkos::View<double**, Kokkos::LayoutLeft> send("send", row_of.size(), 2);
    fill(send, [&](std::size_t i, std::size_t j) {
      return value(me, row_of[i].first, row_of[i].second, j);
    });
    auto got = baton::all_to_allv(comm, send, counts);
    std::vector<std::pair<int, std::size_t>> expected;  // (source, row in block) per result row
    for (int from = 0; from < n; ++from) {
      CHECK(got.rows_from[from] == rows_to(from, me));
      CHECK(got.offset(from) == expected.size());
      for (std::size_t i = 0; i < rows_to(from, me); ++i)
        expected.push_back({from, i});
    }
    REQUIRE(got.rows.extent(0) == expected.size());
    REQUIRE(got.rows.extent(1) == 2);
    CHECK(count_wrong(got.rows, [&](std::size_t i, std::size_t j) {
            return value(expected[i].first, me, expected[i].second, j);
          }) == 0);
    // Nothing at all to anyone.
    Kokkos::View<int*> empty("empty", 0);
    auto nothing = baton::all_to_allv(Kokkos::DefaultExecutionSpace(), comm, empty,
                                      std::vector<std::size_t>(n, 0));
    CHECK(nothing.rows.extent(0) == 0);
  }
}

TEST_CASE("mismatched arguments are a baton::Error on every rank, and nothing hangs") {
  baton::Communicator comm = comm_with(baton::ViewPath::automatic, true);
  baton::Communicator unchecked = comm_with(baton::ViewPath::automatic, false);
  const int n = comm.size();
  const int me = comm.rank();
  // all_to_all, checked: one rank's recv is too small; rows that do not split evenly.
  Kokkos::View<double*> send("send", 2 * n), recv("recv", me == 0 ? 1 : 2 * n);
  CHECK_THROWS_WITH_AS(
      baton::all_to_all(comm, send, recv),
      doctest::Contains("baton::all_to_all: ranks passed different or unusable arguments"),
      baton::Error);
  if (n > 1) {
    Kokkos::View<double*> odd("odd", n + 1), odd_out("odd_out", n + 1);
    CHECK_THROWS_WITH_AS(baton::all_to_all(comm, odd, odd_out),
                         doctest::Contains("do not split evenly"), baton::Error);
  }
  // all_to_allv checks in both modes: other columns on one rank, counts that do not add up.
  for (const baton::Communicator* c : {&comm, &unchecked}) {
    Kokkos::View<int**> rows("rows", n, me == n - 1 ? 3 : 2);
    std::vector<std::size_t> ones(n, 1);
    if (n > 1) {
      CHECK_THROWS_WITH_AS(baton::all_to_allv(*c, rows, ones),
                           doctest::Contains("baton::all_to_allv: ranks passed different or "
                                             "unusable arguments"),
                           baton::Error);
    }
    Kokkos::View<int**> good("good", n, 2);
    std::vector<std::size_t> wrong = ones;
    if (me == 0)
      wrong[0] = 2;  // adds up to n + 1
    CHECK_THROWS_WITH_AS(baton::all_to_allv(*c, good, wrong),
                         doctest::Contains("unusable arguments"), baton::Error);
    std::vector<std::size_t> short_list(me == 0 ? n + 1 : n, 1);
    if (me == 0)
      short_list[n] = 0;
    const std::string why = "rank 0 int32[" + std::to_string(n) + ",2] (" + std::to_string(n + 1) +
                            " row counts adding up to";
    CHECK_THROWS_WITH_AS(baton::all_to_allv(*c, good, short_list), doctest::Contains(why.c_str()),
                         baton::Error);
    // Still in step.
    auto fine = baton::all_to_allv(*c, good, ones);
    CHECK(fine.rows.extent(0) == std::size_t(n));
  }
  baton::barrier(comm);
}
