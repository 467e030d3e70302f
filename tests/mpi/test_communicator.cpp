#include <doctest/doctest.h>

#include <baton/comm/communicator.hpp>
#include <baton/core/check_mpi.hpp>
#include <cstdlib>
#include <string>

#include "mpi_doctest.hpp"

namespace {
int compare(MPI_Comm a, MPI_Comm b) {
  int result = MPI_UNEQUAL;
  baton::check_mpi(MPI_Comm_compare(a, b, &result), "MPI_Comm_compare");
  return result;
}

bool has_errors_return(MPI_Comm comm) {
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  baton::check_mpi(MPI_Comm_get_errhandler(comm, &handler), "MPI_Comm_get_errhandler");
  const bool same = handler == MPI_ERRORS_RETURN;
  MPI_Errhandler_free(&handler);
  return same;
}
}  // namespace

TEST_CASE("duplicate owns a congruent copy with MPI_ERRORS_RETURN") {
  const auto& world = baton::test::world();
  baton::Communicator copy = world.duplicate();
  CHECK(copy.owns_handle());
  CHECK(copy.raw() != world.raw());
  CHECK(compare(copy.raw(), world.raw()) == MPI_CONGRUENT);
  CHECK(copy.rank() == world.rank());
  CHECK(copy.size() == world.size());
  CHECK(has_errors_return(copy.raw()));
}

TEST_CASE("borrow neither frees the handle nor changes its error handler") {
  MPI_Comm raw = MPI_COMM_NULL;
  baton::check_mpi(MPI_Comm_dup(baton::test::world().raw(), &raw), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(raw, MPI_ERRORS_ARE_FATAL);
  {
    baton::Communicator view = baton::Communicator::borrow(raw);
    CHECK_FALSE(view.owns_handle());
    CHECK(view.raw() == raw);
    CHECK(view.size() == baton::test::world().size());
  }
  int size = 0;
  CHECK(MPI_Comm_size(raw, &size) == MPI_SUCCESS);  // still alive
  CHECK(size == baton::test::world().size());
  CHECK_FALSE(has_errors_return(raw));
  MPI_Comm_free(&raw);
}

TEST_CASE("split by parity gives the expected sizes and ranks") {
  const auto& world = baton::test::world();
  const int color = world.rank() % 2;
  baton::Communicator part = world.split(color, world.rank());
  REQUIRE(part);
  CHECK(part.owns_handle());
  const int evens = (world.size() + 1) / 2;
  CHECK(part.size() == (color == 0 ? evens : world.size() - evens));
  CHECK(part.rank() == world.rank() / 2);
}

TEST_CASE("split with Communicator::undefined gives a null communicator on those ranks") {
  const auto& world = baton::test::world();
  const bool keep = world.rank() == 0;
  baton::Communicator part = world.split(keep ? 0 : baton::Communicator::undefined, 0);
  CHECK(static_cast<bool>(part) == keep);
  if (!keep) {
    CHECK(part.is_null());
    CHECK(part.rank() == -1);
    CHECK(part.size() == 0);
    CHECK_THROWS_WITH_AS(part.split(0, 0), doctest::Contains("communicator is null"), baton::Error);
  } else {
    CHECK(part.size() == 1);
  }
}

TEST_CASE("split rejects a negative colour before calling MPI") {
  CHECK_THROWS_WITH_AS(baton::test::world().split(-3, 0), doctest::Contains("colour -3"),
                       baton::Error);
}

TEST_CASE("split_node groups the ranks of this node") {
  const auto& world = baton::test::world();
  baton::Communicator node = world.split_node();
  REQUIRE(node);
  CHECK(node.size() >= 1);
  CHECK(node.size() <= world.size());
  // Every rank is on exactly one node: node sizes over node leaders add up to the world size.
  int leader_sizes = node.rank() == 0 ? node.size() : 0;
  int total = 0;
  baton::check_mpi(MPI_Allreduce(&leader_sizes, &total, 1, MPI_INT, MPI_SUM, world.raw()),
                   "MPI_Allreduce");
  CHECK(total == world.size());
}

TEST_CASE("moving a communicator transfers ownership") {
  baton::Communicator a = baton::test::world().duplicate();
  MPI_Comm raw = a.raw();
  baton::Communicator b = std::move(a);
  CHECK(a.is_null());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  CHECK(b.raw() == raw);
  CHECK(b.owns_handle());
  baton::Communicator c;
  c = std::move(b);
  CHECK(c.raw() == raw);
  CHECK(b.is_null());  // NOLINT(bugprone-use-after-move)
}

TEST_CASE("the collective checks default follows BATON_CHECK_COLLECTIVES, then the build type") {
  // This test is compiled with the library's flags: NDEBUG here is NDEBUG there.
#ifdef NDEBUG
  const bool debug_build = false;
#else
  const bool debug_build = true;
#endif
  CHECK(baton::library_debug_build() == debug_build);
  const char* env = std::getenv("BATON_CHECK_COLLECTIVES");
  const baton::CollectiveChecksDefault expected = baton::decide_collective_checks(env, debug_build);
  CHECK(baton::collective_checks_default().on == expected.on);
  CHECK(std::string(baton::collective_checks_default().decided_by) == expected.decided_by);
  baton::Communicator copy = baton::test::world().duplicate();
  CHECK(copy.collective_checks() == expected.on);
  copy.set_collective_checks(!expected.on);
  CHECK(copy.collective_checks() == !expected.on);
  // Per communicator: a duplicate starts from the process default, not from its parent.
  CHECK(copy.duplicate().collective_checks() == expected.on);
}
