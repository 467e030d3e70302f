#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <baton/collectives/sparse_exchange.hpp>
#include <baton/core/error.hpp>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "comm_modes.hpp"
#include "mpi_doctest.hpp"

namespace {

using baton::test::check_modes;
using baton::test::comm_with;
using baton::test::view_paths;

// Round `round`: rank `from` sends to the ranks this returns, (from + k * (round + 1)) % n for
// k = 1, 2 without repeats (itself included when that is where the step lands).
std::vector<int> partners(int from, int n, int round) {
  std::vector<int> to;
  for (int k = 1; k <= 2; ++k) {
    const int dest = (from + k * (round + 1)) % n;
    bool seen = false;
    for (int d : to)
      seen = seen || d == dest;
    if (!seen)
      to.push_back(dest);
  }
  return to;
}

std::size_t length(int from, int to, int round) {
  return std::size_t((from + 2 * to + round) % 4);
}

double value(int from, int to, int round, std::size_t i) {
  return from * 1000.0 + to * 100.0 + round * 10.0 + i;
}

}  // namespace

TEST_CASE("sparse_exchange: messages by source from partners the receiver does not know") {
  for (int mode = 0; mode < 4; ++mode) {
    const baton::ViewPath path = view_paths[mode / 2];
    const bool checks = check_modes[mode % 2];
    CAPTURE(static_cast<int>(path));
    CAPTURE(checks);
    baton::Communicator comm = comm_with(path, checks);
    const int n = comm.size();
    const int me = comm.rank();
    // Rounds back to back, so a rank may already be in the next one while another finishes.
    for (int round = 0; round < 6; ++round) {
      CAPTURE(round);
      std::map<int, Kokkos::View<double*>> outgoing;
      for (int to : partners(me, n, round)) {
        Kokkos::View<double*> v("v", length(me, to, round));  // some are empty
        auto h = Kokkos::create_mirror_view(v);
        for (std::size_t i = 0; i < v.extent(0); ++i)
          h(i) = value(me, to, round, i);
        Kokkos::deep_copy(v, h);
        outgoing[to] = v;
      }
      auto got = round % 2 == 0
                     ? baton::sparse_exchange(comm, outgoing)
                     : baton::sparse_exchange(Kokkos::DefaultExecutionSpace(), comm, outgoing);
      std::map<int, std::size_t> expected;  // source -> length
      for (int from = 0; from < n; ++from)
        for (int to : partners(from, n, round))
          if (to == me)
            expected[from] = length(from, me, round);
      REQUIRE(got.size() == expected.size());
      for (const auto& [from, size] : expected) {
        REQUIRE(got.count(from) == 1);
        auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), got.at(from));
        REQUIRE(h.extent(0) == size);
        int wrong = 0;
        for (std::size_t i = 0; i < size; ++i)
          wrong += h(i) != value(from, me, round, i);
        CHECK(wrong == 0);
      }
    }
    // Nobody sends anything; then a vector of pairs, one rank talking to itself only.
    CHECK(baton::sparse_exchange(comm, std::map<int, Kokkos::View<int*>>()).empty());
    Kokkos::View<int*> self("self", 3);
    Kokkos::deep_copy(self, me);
    std::vector<std::pair<int, Kokkos::View<int*>>> to_self;
    if (me == n - 1)
      to_self.push_back({me, self});
    auto mine = baton::sparse_exchange(comm, to_self);
    CHECK(mine.size() == (me == n - 1 ? 1u : 0u));
    if (me == n - 1)
      CHECK(mine.at(me).extent(0) == 3);
  }
}

TEST_CASE(
    "checked mode: a bad destination or another value type on one rank throws on every "
    "rank") {
  baton::Communicator comm = comm_with(baton::ViewPath::automatic, true);
  const int n = comm.size();
  const int me = comm.rank();
  Kokkos::View<double*> v("v", 2);
  std::map<int, Kokkos::View<double*>> bad;
  bad[me == 0 ? n : 0] = v;
  CHECK_THROWS_WITH_AS(baton::sparse_exchange(comm, bad),
                       doctest::Contains("baton::sparse_exchange: ranks passed different or "
                                         "unusable arguments"),
                       baton::Error);
  std::vector<std::pair<int, Kokkos::View<double*>>> twice{{0, v}};
  if (me == 0)
    twice.push_back({0, v});
  CHECK_THROWS_WITH_AS(baton::sparse_exchange(comm, twice), doctest::Contains("unusable arguments"),
                       baton::Error);
  if (n > 1) {
    std::map<int, Kokkos::View<float*>> floats;
    std::map<int, Kokkos::View<double*>> doubles;
    if (me == 0) {
      floats[1] = Kokkos::View<float*>("f", 1);
      CHECK_THROWS_WITH_AS(baton::sparse_exchange(comm, floats),
                           doctest::Contains("rank 0 float32[0]; rank 1 float64[0]"), baton::Error);
    } else {
      CHECK_THROWS_WITH_AS(baton::sparse_exchange(comm, doubles),
                           doctest::Contains("rank 0 float32[0]; rank 1 float64[0]"), baton::Error);
    }
  }
  // Still in step.
  std::map<int, Kokkos::View<double*>> ring{{(me + 1) % n, v}};
  CHECK(baton::sparse_exchange(comm, ring).size() == 1);
}

TEST_CASE("unchecked: a message of another value type is dropped, and only its receiver throws") {
  baton::Communicator comm = comm_with(baton::ViewPath::automatic, false);
  const int n = comm.size();
  const int me = comm.rank();
  if (n > 1) {
    if (me == 0) {
      std::map<int, Kokkos::View<char*>> three{{1, Kokkos::View<char*>("c", 3)}};
      CHECK(baton::sparse_exchange(comm, three).empty());
    } else if (me == 1) {
      CHECK_THROWS_WITH_AS(baton::sparse_exchange(comm, std::map<int, Kokkos::View<double*>>()),
                           doctest::Contains("the message from rank 0 has 3 bytes, not a whole "
                                             "number of 8-byte values (on rank 1)"),
                           baton::Error);
    } else {
      CHECK(baton::sparse_exchange(comm, std::map<int, Kokkos::View<double*>>()).empty());
    }
  }
  baton::barrier(comm);
  Kokkos::View<long*> one("one", 1);
  std::map<int, Kokkos::View<long*>> ring{{(me + 1) % n, one}};
  CHECK(baton::sparse_exchange(comm, ring).count((me + n - 1) % n) == 1);
}
