#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <baton/collectives/axis.hpp>
#include <baton/core/error.hpp>
#include <string>
#include <utility>
#include <vector>

#include "comm_modes.hpp"
#include "mpi_doctest.hpp"

namespace {

using baton::test::check_modes;
using baton::test::comm_with;
using baton::test::view_paths;

template <class V, class F>
void fill3(const V& v, F f) {
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < v.extent(0); ++i)
    for (std::size_t j = 0; j < v.extent(1); ++j)
      for (std::size_t k = 0; k < v.extent(2); ++k)
        h(i, j, k) = f(i, j, k);
  Kokkos::deep_copy(v, h);
}

template <class V, class F>
int count_wrong3(const V& v, F f) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  int wrong = 0;
  for (std::size_t i = 0; i < v.extent(0); ++i)
    for (std::size_t j = 0; j < v.extent(1); ++j)
      for (std::size_t k = 0; k < v.extent(2); ++k)
        wrong += h(i, j, k) != f(i, j, k);
  return wrong;
}

double value(int rank, std::size_t i, std::size_t j, std::size_t k) {
  return rank * 1000.0 + i * 100.0 + j * 10.0 + k;
}

// (rank, index) of each slice of a gather where rank r contributed r + 1 slices.
std::vector<std::pair<int, std::size_t>> owners(int n) {
  std::vector<std::pair<int, std::size_t>> o;
  for (int r = 0; r < n; ++r)
    for (int s = 0; s <= r; ++s)
      o.push_back({r, std::size_t(s)});
  return o;
}

}  // namespace

TEST_CASE("all_gatherv and gatherv along axes 0, 1 and 2 of a rank-3 View, any layout") {
  for (int mode = 0; mode < 4; ++mode) {
    const baton::ViewPath path = view_paths[mode / 2];
    const bool checks = check_modes[mode % 2];
    CAPTURE(static_cast<int>(path));
    CAPTURE(checks);
    baton::Communicator comm = comm_with(path, checks);
    const int n = comm.size();
    const int me = comm.rank();
    const auto o = owners(n);
    // Along axis 1: rank r has r + 1 slices; LayoutLeft goes through the row-major copy.
    Kokkos::View<double***, Kokkos::LayoutLeft> middle("middle", 2, me + 1, 3);
    fill3(middle, [&](std::size_t i, std::size_t j, std::size_t k) { return value(me, i, j, k); });
    auto got = baton::all_gatherv(comm, middle, baton::Axis{1});
    REQUIRE(got.extent(0) == 2);
    REQUIRE(got.extent(1) == o.size());
    REQUIRE(got.extent(2) == 3);
    CHECK(count_wrong3(got, [&](std::size_t i, std::size_t j, std::size_t k) {
            return value(o[j].first, i, o[j].second, k);
          }) == 0);
    // Along the last axis, to a root; along axis 0 as all_gatherv without an Axis.
    Kokkos::View<double***> last("last", 2, 3, me + 1);
    fill3(last, [&](std::size_t i, std::size_t j, std::size_t k) { return value(me, i, j, k); });
    const int root = n - 1;
    auto at_root =
        baton::gatherv(Kokkos::DefaultExecutionSpace(), comm, last, root, baton::Axis{2});
    if (me == root) {
      REQUIRE(at_root.extent(2) == o.size());
      CHECK(count_wrong3(at_root, [&](std::size_t i, std::size_t j, std::size_t k) {
              return value(o[k].first, i, j, o[k].second);
            }) == 0);
    } else {
      CHECK(at_root.extent(2) == 0);
      CHECK(at_root.extent(0) == 2);
    }
    Kokkos::View<double***> first("first", me + 1, 2, 2);
    fill3(first, [&](std::size_t i, std::size_t j, std::size_t k) { return value(me, i, j, k); });
    auto rows = baton::all_gatherv(comm, first, baton::Axis{0});
    CHECK(count_wrong3(rows, [&](std::size_t i, std::size_t j, std::size_t k) {
            return value(o[i].first, o[i].second, j, k);
          }) == 0);
    // Zero slices on odd ranks.
    Kokkos::View<double***> some("some", 2, me % 2 == 0 ? 1 : 0, 3);
    fill3(some, [&](std::size_t i, std::size_t j, std::size_t k) { return value(me, i, j, k); });
    auto even = baton::all_gatherv(comm, some, baton::Axis{1});
    CHECK(even.extent(1) == std::size_t((n + 1) / 2));
    CHECK(count_wrong3(even, [&](std::size_t i, std::size_t j, std::size_t k) {
            return value(int(2 * j), i, 0, k);
          }) == 0);
  }
}

TEST_CASE("reduce_scatter along axis 1 and 2 gives each rank its block of the sum") {
  for (int mode = 0; mode < 4; ++mode) {
    const baton::ViewPath path = view_paths[mode / 2];
    const bool checks = check_modes[mode % 2];
    CAPTURE(static_cast<int>(path));
    CAPTURE(checks);
    baton::Communicator comm = comm_with(path, checks);
    const int n = comm.size();
    const int me = comm.rank();
    const double rank_sum = n * (n - 1) / 2.0;
    Kokkos::View<double***, Kokkos::LayoutLeft> send("send", 3, 2 * n, 2);
    fill3(send, [&](std::size_t i, std::size_t j, std::size_t k) { return value(me, i, j, k); });
    auto mine = baton::reduce_scatter(comm, send, baton::ReduceOp::sum, baton::Axis{1});
    REQUIRE(mine.extent(0) == 3);
    REQUIRE(mine.extent(1) == 2);
    REQUIRE(mine.extent(2) == 2);
    CHECK(count_wrong3(mine, [&](std::size_t i, std::size_t j, std::size_t k) {
            return 1000.0 * rank_sum + n * value(0, i, 2 * me + j, k);
          }) == 0);
    Kokkos::View<double***> wide("wide", 2, 2, n);
    fill3(wide, [&](std::size_t i, std::size_t j, std::size_t k) { return value(me, i, j, k); });
    auto column = baton::reduce_scatter(Kokkos::DefaultExecutionSpace(), comm, wide,
                                        baton::ReduceOp::max, baton::Axis{2});
    REQUIRE(column.extent(2) == 1);
    CHECK(count_wrong3(column, [&](std::size_t i, std::size_t j, std::size_t) {
            return value(n - 1, i, j, me);
          }) == 0);
  }
}

TEST_CASE("mismatched axes and shapes are a baton::Error on every rank") {
  baton::Communicator comm = comm_with(baton::ViewPath::automatic, true);
  baton::Communicator unchecked = comm_with(baton::ViewPath::automatic, false);
  const int n = comm.size();
  const int me = comm.rank();
  Kokkos::View<double***> v("v", 2, 2, 2 * n);
  CHECK_THROWS_WITH_AS(baton::all_gatherv(comm, v, baton::Axis{3}),
                       doctest::Contains("axis 3 is not an axis of a rank-3 View"), baton::Error);
  if (n > 1) {
    // Different axes (in both modes: the gathers exchange shapes anyway).
    CHECK_THROWS_WITH_AS(baton::all_gatherv(unchecked, v, baton::Axis{me == 0 ? 1 : 2}),
                         doctest::Contains("baton::all_gatherv: ranks passed slices along axis"),
                         baton::Error);
    // Another extent differs.
    Kokkos::View<double***> odd("odd", 2, me == 1 ? 3 : 2, 1);
    CHECK_THROWS_WITH_AS(baton::gatherv(unchecked, odd, 0, baton::Axis{2}),
                         doctest::Contains("different shapes"), baton::Error);
    CHECK_THROWS_WITH_AS(
        baton::reduce_scatter(comm, v, baton::ReduceOp::sum, baton::Axis{me == 0 ? 2 : 1}),
        doctest::Contains("baton::reduce_scatter: ranks passed different"), baton::Error);
    Kokkos::View<double***> uneven("uneven", 1, n + 1, 1);
    CHECK_THROWS_WITH_AS(baton::reduce_scatter(comm, uneven, baton::ReduceOp::sum, baton::Axis{1}),
                         doctest::Contains("does not split evenly"), baton::Error);
  }
  // Still in step.
  CHECK(baton::all_gatherv(comm, v, baton::Axis{2}).extent(2) == std::size_t(2 * n * n));
}
