#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <baton/collectives/collectives.hpp>
#include <baton/rma/symmetric_view.hpp>
#include <cstdint>
#include <string>
#include <type_traits>

#include "error_of.hpp"
#include "mpi_doctest.hpp"

using baton::test::error_of;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

template <class T>
T value_of(int rank, int row, int col = 0) {
  return static_cast<T>(rank * 100 + row * 10 + col + 1);
}

// Host View (rows x cols, or rows for 1-D) filled with value_of(origin, first_row + i, j).
template <class V>
V rows_from(int origin, std::size_t first_row, std::size_t rows, std::size_t cols = 0) {
  using T = typename V::value_type;
  if constexpr (static_cast<int>(V::rank) == 1) {
    V v("rows", rows);
    for (std::size_t i = 0; i < rows; ++i)
      v(i) = value_of<T>(origin, static_cast<int>(first_row + i));
    return v;
  } else {
    V v("rows", rows, cols);
    for (std::size_t i = 0; i < rows; ++i) {
      for (std::size_t j = 0; j < cols; ++j)
        v(i, j) = value_of<T>(origin, static_cast<int>(first_row + i), static_cast<int>(j));
    }
    return v;
  }
}

// Every rank puts rows [first, first + rows) of its own pattern into its right neighbour's part
// under a fence epoch, then gets them back from the neighbour, and checks both.
template <class T>
void fence_round_trip_1d(std::size_t n, std::size_t first, std::size_t rows) {
  const baton::Communicator& world = baton::test::world();
  const int right = (world.rank() + 1) % world.size();
  const int left = (world.rank() + world.size() - 1) % world.size();
  baton::SymmetricView<T*> sym(world, "sym", n);
  using Host = Kokkos::View<T*, Kokkos::HostSpace>;
  const Host out = rows_from<Host>(world.rank(), first, rows);
  sym.fence();
  sym.put(right, first, out);
  sym.fence();
  const auto local = sym.local();
  REQUIRE(local.extent(0) == n);
  for (std::size_t i = 0; i < n; ++i) {
    const bool written = i >= first && i < first + rows;
    CAPTURE(i);
    CHECK(local(i) == (written ? value_of<T>(left, static_cast<int>(i)) : T(0)));
  }
  // Get back what this rank wrote at its right neighbour.
  Host back("back", rows);
  sym.get(right, first, back);
  sym.fence();
  int wrong = 0;
  for (std::size_t i = 0; i < rows; ++i)
    wrong += back(i) != out(i);
  CHECK(wrong == 0);
  sym.close_fence();
  sym.free();
  CHECK(sym.freed());
}

}  // namespace

TEST_CASE("put and get under fence, 1-D, several types, sub-ranges at both edges") {
  SUBCASE("double, middle") {
    fence_round_trip_1d<double>(8, 2, 3);
  }
  SUBCASE("double, first rows") {
    fence_round_trip_1d<double>(8, 0, 3);
  }
  SUBCASE("double, last rows") {
    fence_round_trip_1d<double>(8, 5, 3);
  }
  SUBCASE("double, everything") {
    fence_round_trip_1d<double>(8, 0, 8);
  }
  SUBCASE("int, last row") {
    fence_round_trip_1d<int>(5, 4, 1);
  }
  SUBCASE("float, nothing") {
    fence_round_trip_1d<float>(5, 5, 0);
  }
  SUBCASE("std::int64_t, big") {
    fence_round_trip_1d<std::int64_t>(100000, 1, 99999);
  }
}

TEST_CASE("put, flush and get in a lock_all epoch, 2-D, the last rows") {
  const baton::Communicator& world = baton::test::world();
  const int right = (world.rank() + 1) % world.size();
  const int left = (world.rank() + world.size() - 1) % world.size();
  baton::SymmetricView<int**> grid(world, "grid", 5, 3);
  static_assert(std::is_same_v<decltype(grid.local())::array_layout, Kokkos::LayoutRight>);
  CHECK(grid.extent(0) == 5);
  CHECK(grid.extent(1) == 3);
  using Host = Kokkos::View<int**, Kokkos::HostSpace>;
  const Host out = rows_from<Host>(world.rank(), 3, 2, 3);
  grid.lock_all();
  CHECK(grid.epoch() == baton::RmaEpoch::lock_all);
  grid.put(right, 3, out);
  grid.flush(right);
  baton::barrier(world);  // every put is complete at its target
  grid.sync();
  const auto local = grid.local();
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 3; ++j) {
      CAPTURE(i);
      CAPTURE(j);
      CHECK(local(i, j) == (i >= 3 ? value_of<int>(left, i, j) : 0));
    }
  }
  // Read rows 2..4 of the right neighbour: one untouched row, then this rank's own two.
  Host back("back", 3, 3);
  grid.get(right, 2, back);
  grid.flush_all();
  for (int j = 0; j < 3; ++j) {
    CHECK(back(0, j) == 0);
    CHECK(back(1, j) == out(0, j));
    CHECK(back(2, j) == out(1, j));
  }
  baton::barrier(world);  // nobody writes local() below before every get above is done
  grid.unlock_all();
  CHECK(grid.epoch() == baton::RmaEpoch::none);
}

// Gets of 1 MiB from the right neighbour, each completed one way, again and again. MPICH 4.0.2
// (Debian 12, ch4:ucx) completes such gets with MPI_Win_flush_all or MPI_Win_fence before all of
// the data has arrived, a few times in a hundred at 4 ranks on 2 cores (reproduced in plain C);
// Baton completes them with per-target flushes (docs/shared-memory.md, "MPICH"), which this checks.
TEST_CASE("large gets are complete after flush_all, flush, unlock_all and fence") {
  const baton::Communicator& world = baton::test::world();
  const int right = (world.rank() + 1) % world.size();
  constexpr std::size_t rows = std::size_t(1) << 17;
  constexpr int rounds = 12;
  auto expected = [](int rank, std::size_t i) {
    return static_cast<std::int64_t>(rank) * 10000000 + static_cast<std::int64_t>(i) + 1;
  };
  baton::SymmetricView<std::int64_t*> sym(world, "big", rows);
  const auto local = sym.local();
  for (std::size_t i = 0; i < rows; ++i)
    local(i) = expected(world.rank(), i);
  Kokkos::View<std::int64_t*, Kokkos::HostSpace> back("back", rows);
  auto wrong = [&] {
    std::size_t n = 0;
    for (std::size_t i = 0; i < rows; ++i)
      n += back(i) != expected(right, i) ? 1 : 0;
    Kokkos::deep_copy(back, 0);
    return n;
  };
  std::size_t after_flush_all = 0, after_flush = 0, after_unlock_all = 0, after_fence = 0;
  sym.lock_all();
  sym.sync();
  baton::barrier(world);  // every rank's local stores above are visible to the gets below
  for (int round = 0; round < rounds; ++round) {
    sym.get(right, 0, back);
    sym.flush_all();
    after_flush_all += wrong();
    sym.get(right, 0, back);
    sym.flush(right);
    after_flush += wrong();
    sym.get(right, 0, back);
    sym.unlock_all();
    after_unlock_all += wrong();
    sym.lock_all();
  }
  sym.unlock_all();
  sym.fence();
  for (int round = 0; round < rounds; ++round) {
    sym.get(right, 0, back);
    sym.fence();
    after_fence += wrong();
  }
  sym.close_fence();
  CHECK(after_flush_all == 0);
  CHECK(after_flush == 0);
  CHECK(after_unlock_all == 0);
  CHECK(after_fence == 0);
}

TEST_CASE("accumulate from every rank into rank 0: sums exact, max, 1-D and 2-D") {
  const baton::Communicator& world = baton::test::world();
  const int p = world.size();
  SUBCASE("double sum under fence") {
    baton::SymmetricView<double*> sum(world, "sum", 6);
    Kokkos::View<double*, Kokkos::HostSpace> mine("mine", 4);
    for (int i = 0; i < 4; ++i)
      mine(i) = (world.rank() + 1) * (i + 0.5);
    sum.fence();
    sum.accumulate(0, 2, mine);
    sum.fence();
    if (world.rank() == 0) {
      const auto local = sum.local();
      CHECK(local(0) == 0.0);
      CHECK(local(1) == 0.0);
      for (int i = 0; i < 4; ++i)  // (1 + ... + p) * (i + 0.5): exact in binary
        CHECK(local(2 + i) == p * (p + 1) / 2 * (i + 0.5));
    }
    sum.close_fence();
  }
  SUBCASE("int sum and max in a lock_all epoch, 2-D") {
    baton::SymmetricView<int**> acc(world, "acc", 3, 2);
    Kokkos::View<int**, Kokkos::HostSpace> row("row", 1, 2);
    row(0, 0) = world.rank() + 1;
    row(0, 1) = 10 * world.rank();
    {
      auto epoch = acc.lock_all_scope();
      acc.accumulate(0, 0, row);
      acc.accumulate(0, 2, row, baton::ReduceOp::max);
      acc.flush(0);
      baton::barrier(world);
      acc.sync();
      if (world.rank() == 0) {
        const auto local = acc.local();
        CHECK(local(0, 0) == p * (p + 1) / 2);
        CHECK(local(0, 1) == 10 * p * (p - 1) / 2);
        CHECK(local(1, 0) == 0);
        CHECK(local(2, 0) == p);
        CHECK(local(2, 1) == 10 * (p - 1));
      }
      baton::barrier(world);
    }
    CHECK(acc.epoch() == baton::RmaEpoch::none);  // the scope unlocked
  }
  SUBCASE("float sum") {
    baton::SymmetricView<float*> f(world, "f", 1);
    Kokkos::View<float*, Kokkos::HostSpace> one("one", 1);
    one(0) = 0.25f;
    f.fence();
    f.accumulate(0, 0, one);
    f.fence();
    if (world.rank() == 0)
      CHECK(f.local()(0) == 0.25f * p);
  }
}

TEST_CASE("operations outside an epoch, and epoch misuse, throw on the caller") {
  const baton::Communicator& world = baton::test::world();
  baton::SymmetricView<double*> sym(world, "sym", 4);
  Kokkos::View<double*, Kokkos::HostSpace> two("two", 2);
  const std::string rank = "(on rank " + std::to_string(world.rank()) + ")";
  std::string e = error_of([&] { sym.put(0, 0, two); });
  CHECK(e ==
        "baton::SymmetricView::put: outside an access epoch: call fence() or lock_all() "
        "first " +
            rank);
  CHECK(contains(error_of([&] { sym.get(0, 0, two); }), "get: outside an access epoch"));
  CHECK(contains(error_of([&] { sym.accumulate(0, 0, two); }),
                 "accumulate: outside an access epoch"));
  CHECK(contains(error_of([&] { sym.flush(0); }), "flush needs a lock_all epoch"));
  CHECK(contains(error_of([&] { sym.flush_all(); }), "flush_all needs a lock_all epoch"));
  CHECK(contains(error_of([&] { sym.sync(); }), "sync needs a lock_all epoch"));
  CHECK(contains(error_of([&] { sym.unlock_all(); }), "no lock_all epoch is open"));
  sym.fence();
  CHECK(contains(error_of([&] { sym.lock_all(); }),
                 "lock_all: inside a fence epoch: call close_fence() first"));
  sym.close_fence();
  sym.lock_all();
  CHECK(contains(error_of([&] { sym.lock_all(); }), "already inside a lock_all epoch"));
  CHECK(contains(error_of([&] { sym.fence(); }),
                 "fence: inside a lock_all epoch: call unlock_all() first"));
  CHECK(contains(error_of([&] { sym.close_fence(); }), "inside a lock_all epoch"));
  sym.unlock_all();
  sym.free();
  CHECK(error_of([&] { sym.lock_all(); }) ==
        "baton::SymmetricView::lock_all: the SymmetricView was freed " + rank);
  CHECK(contains(error_of([&] { sym.local(); }), "local: the SymmetricView was freed"));
  CHECK(contains(error_of([&] { sym.put(0, 0, two); }), "put: the SymmetricView was freed"));
  CHECK(error_of([&] { sym.free(); }).empty());  // a second free does nothing
}

TEST_CASE("wrong target, rows, extents or layout throw on the caller, naming both shapes") {
  const baton::Communicator& world = baton::test::world();
  baton::SymmetricView<double**> grid(world, "grid", 5, 3);
  const std::string rank = "(on rank " + std::to_string(world.rank()) + ")";
  grid.lock_all();
  Kokkos::View<double**, Kokkos::HostSpace> two_rows("two", 2, 3), wide("wide", 2, 4);
  CHECK(error_of([&] { grid.put(0, 4, two_rows); }) ==
        "baton::SymmetricView::put: source View (2, 3) does not fit at row 4 of the symmetric "
        "View (5, 3): it must be (rows, 3) with 4 + rows <= 5 " +
            rank);
  CHECK(error_of([&] { grid.get(0, 0, wide); }) ==
        "baton::SymmetricView::get: destination View (2, 4) does not fit at row 0 of the "
        "symmetric View (5, 3): it must be (rows, 3) with 0 + rows <= 5 " +
            rank);
  CHECK(contains(error_of([&] {
                   grid.put(0, 6, Kokkos::subview(two_rows, std::make_pair(0, 0), Kokkos::ALL));
                 }),
                 "does not fit at row 6"));
  CHECK(error_of([&] { grid.put(world.size(), 0, two_rows); }) ==
        "baton::SymmetricView::put: target " + std::to_string(world.size()) +
            " is not a rank of the window's communicator (size " + std::to_string(world.size()) +
            ") " + rank);
  CHECK(contains(error_of([&] { grid.accumulate(-1, 0, two_rows); }), "target -1 is not a rank"));
  CHECK(contains(error_of([&] { grid.flush(world.size()); }), "is not a rank"));
  // Column-major 2x3: its rows are not contiguous.
  Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> left("left", 2, 3);
  CHECK(error_of([&] { grid.put(0, 0, left); }) ==
        "baton::SymmetricView::put: source View (2, 3) is not contiguous and row-major: pass a "
        "LayoutRight View (or a contiguous subview of whole rows) " +
            rank);
  // A column of a row-major View is strided; a run of whole rows is fine.
  Kokkos::View<double**, Kokkos::HostSpace> five("five", 5, 3);
  CHECK(contains(
      error_of([&] { grid.put(0, 0, Kokkos::subview(five, Kokkos::ALL, std::make_pair(0, 1))); }),
      "does not fit"));  // (5, 1): wrong extent comes first
  CHECK(error_of([&] {
          grid.put(0, 1, Kokkos::subview(five, std::make_pair(1, 3), Kokkos::ALL));
        }).empty());
  // A LayoutLeft View of one row is row-major too.
  Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> one_row("one_row", 1, 3);
  CHECK(error_of([&] { grid.put(0, 0, one_row); }).empty());
  grid.flush_all();
  grid.unlock_all();
}

TEST_CASE("extents that differ between ranks: the same error on every rank, naming them") {
  const baton::Communicator& world = baton::test::world();
  const std::size_t n = world.rank() == 0 ? 5 : 4;
  std::string e = error_of([&] { baton::SymmetricView<double**> bad(world, "bad", n, 2); });
  if (world.size() == 1) {
    CHECK(e.empty());
  } else {
    std::string others = world.size() == 2 ? "rank 1" : "ranks 1";
    for (int r = 2; r < world.size(); ++r)
      others += "," + std::to_string(r);
    CHECK(e == "baton::SymmetricView: the ranks passed different extents: " + others +
                   " (4, 2); rank 0 (5, 2); every rank of the communicator must pass the same "
                   "extents");
  }
  // The communicator is still usable, and a good allocation works afterwards.
  baton::SymmetricView<double**> good(world, "good", 4, 2);
  CHECK(good.local().extent(0) == 4);
}

TEST_CASE("free agrees: an open lock_all epoch or unfenced operations on any rank stop it") {
  const baton::Communicator& world = baton::test::world();
  baton::SymmetricView<int*> sym(world, "sym", 3);
  const int last = world.size() - 1;
  if (world.rank() == last)
    sym.lock_all();
  std::string e = error_of([&] { sym.free(); });
  CHECK(e == "baton::SymmetricView::free: the window stays allocated: rank " +
                 std::to_string(last) +
                 " still inside a lock_all epoch (call unlock_all() first); then call free() "
                 "again on every rank");
  CHECK_FALSE(sym.freed());
  if (world.rank() == last)
    sym.unlock_all();

  Kokkos::View<int*, Kokkos::HostSpace> one("one", 1);
  sym.fence();
  if (world.rank() == 0)
    sym.put(last, 0, one);
  e = error_of([&] { sym.free(); });
  CHECK(contains(e, "rank 0 issued operations since the last fence() (call fence() first"));
  sym.fence();
  CHECK(error_of([&] { sym.free(); }).empty());
  CHECK(sym.freed());
}

TEST_CASE("free on some ranks only: a free timeout ends the wait with an error") {
  const baton::Communicator& world = baton::test::world();
  baton::SymmetricView<double*> sym(world, "sym", 2);
  if (world.size() > 1 && world.rank() == 0) {
    sym.set_free_timeout(0.2);
    const std::string e = error_of([&] { sym.free(); });
    CHECK(e ==
          "baton::SymmetricView::free: not every rank of the window's communicator called "
          "free() within 0.200000 s (free() is collective); the window stays allocated: call "
          "free() again once the others do, or end the job (on rank 0)");
    CHECK_FALSE(sym.freed());
  }
  baton::barrier(world);
  // Now every rank frees: rank 0 resumes the wait it gave up, and the window is freed everywhere.
  sym.set_free_timeout(60);
  CHECK(error_of([&] { sym.free(); }).empty());
  CHECK(sym.freed());
}

TEST_CASE("a moved SymmetricView keeps its window; the destructor frees it") {
  const baton::Communicator& world = baton::test::world();
  baton::SymmetricView<double*> a(world, "a", 3);
  a.local()(1) = 2.5;
  baton::SymmetricView<double*> b(std::move(a));
  CHECK(b.local()(1) == 2.5);
  CHECK(b.label() == "a");
  CHECK(b.comm().size() == world.size());
  CHECK(b.comm().raw() != world.raw());  // Baton's own duplicate
}  // b's destructor frees collectively; a's has nothing to free

TEST_CASE("device memory needs GPU-aware MPI: the decision") {
  const baton::GpuAwareness not_aware{false, "MPIX_Query_cuda_support"};
  const baton::GpuAwareness aware{true, "BATON_GPU_AWARE"};
  CHECK(baton::symmetric_space_problem("HostSpace", true, not_aware).empty());
  CHECK(baton::symmetric_space_problem("Cuda", false, aware).empty());
  CHECK(baton::symmetric_space_problem("Cuda", false, not_aware) ==
        "baton::SymmetricView: memory space Cuda is device memory and MPI is not GPU-aware here "
        "(decided by MPIX_Query_cuda_support), so MPI cannot reach it through a window; use "
        "Kokkos::HostSpace (the default), or GPU-aware MPI (set BATON_GPU_AWARE=1 only if the "
        "MPI library is)");
  // HostSpace never asks: a SymmetricView of the default space works with MPI not GPU-aware.
  baton::SymmetricView<double*, Kokkos::HostSpace> host(baton::test::world(), "host", 1);
  CHECK_FALSE(host.freed());
}

TEST_CASE("the destructor ends a lock_all epoch and frees; a scope's unlock() ends it early") {
  const baton::Communicator& world = baton::test::world();
  {
    baton::SymmetricView<int*> sym(world, "sym", 2);
    auto scope = sym.lock_all_scope();
    scope.unlock();
    CHECK(sym.epoch() == baton::RmaEpoch::none);
    CHECK(contains(error_of([&] { sym.unlock_all(); }), "no lock_all epoch is open"));
    sym.lock_all();
  }  // destroyed inside lock_all on every rank: unlocked, then freed collectively
  // The world is usable afterwards (no rank is left in the free).
  baton::SymmetricView<int*> next(world, "next", 1);
  next.fence();
  Kokkos::View<int*, Kokkos::HostSpace> one("one", 1);
  one(0) = 7;
  next.accumulate(0, 0, one);
  next.fence();
  if (world.rank() == 0)
    CHECK(next.local()(0) == 7 * world.size());
}
