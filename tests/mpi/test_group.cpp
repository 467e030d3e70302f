#include <doctest/doctest.h>

#include <baton/comm/group.hpp>
#include <baton/core/check_mpi.hpp>
#include <cstddef>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "mpi_doctest.hpp"

namespace {

// The parent rank of every member, gathered over the group communicator in group-rank order: equal
// to group.ranks() exactly when the communicator holds those ranks in that order.
std::vector<int> gather_parent_ranks(const baton::Group& group, int my_parent_rank) {
  const baton::Communicator& comm = group.comm();
  std::vector<int> gathered(static_cast<std::size_t>(comm.size()), -1);
  baton::check_mpi(
      MPI_Allgather(&my_parent_rank, 1, MPI_INT, gathered.data(), 1, MPI_INT, comm.raw()),
      "MPI_Allgather", comm.raw());
  return gathered;
}

int sum_over_group(const baton::Group& group, int value) {
  int sum = 0;
  baton::check_mpi(MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, group.comm().raw()),
                   "MPI_Allreduce", group.comm().raw());
  return sum;
}

// Each member sends its parent rank to the member after it on the group communicator and receives
// from the member before it: returns the parent rank of the member that really precedes this one.
int received_from_predecessor(const baton::Group& group, int my_parent_rank) {
  const baton::Communicator& comm = group.comm();
  const int to = (comm.rank() + 1) % comm.size();
  const int from = (comm.rank() + comm.size() - 1) % comm.size();
  int received = -1;
  baton::check_mpi(MPI_Sendrecv(&my_parent_rank, 1, MPI_INT, to, 7, &received, 1, MPI_INT, from, 7,
                                comm.raw(), MPI_STATUS_IGNORE),
                   "MPI_Sendrecv", comm.raw());
  return received;
}

int compare(MPI_Comm a, MPI_Comm b) {
  int result = MPI_UNEQUAL;
  baton::check_mpi(MPI_Comm_compare(a, b, &result), "MPI_Comm_compare");
  return result;
}

// doctest::Contains takes a C string; it copies it.
doctest::Contains contains(const std::string& text) {
  return doctest::Contains(text.c_str());
}

std::vector<int> iota(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

}  // namespace

TEST_CASE("whole-world group in natural order") {
  const auto& world = baton::test::world();
  const int n = world.size();
  const int me = world.rank();
  baton::Group group(world, iota(n));

  REQUIRE(group.is_member());
  CHECK(group.size() == n);
  CHECK(group.rank() == me);
  CHECK(group.ranks() == iota(n));
  CHECK(group.first() == 0);
  CHECK(group.last() == n - 1);
  CHECK(group.next() == (me + 1) % n);
  CHECK(group.prev() == (me + n - 1) % n);
  CHECK(group.is_first() == (me == 0));
  CHECK(group.is_last() == (me == n - 1));

  const baton::Communicator& comm = group.comm();
  REQUIRE(comm);
  CHECK(comm.owns_handle());
  CHECK(comm.raw() != world.raw());
  CHECK(comm.rank() == group.rank());
  CHECK(comm.size() == n);
  CHECK(compare(comm.raw(), world.raw()) == MPI_CONGRUENT);
  CHECK(gather_parent_ranks(group, me) == group.ranks());
  CHECK(received_from_predecessor(group, me) == group.prev());
}

TEST_CASE("reversed group: group rank i is parent rank size-1-i") {
  const auto& world = baton::test::world();
  const int n = world.size();
  const int me = world.rank();
  std::vector<int> ranks;
  for (int i = 0; i < n; ++i)
    ranks.push_back(n - 1 - i);
  baton::Group group(world, ranks);

  REQUIRE(group.is_member());
  CHECK(group.ranks() == ranks);
  CHECK(group.rank() == n - 1 - me);
  CHECK(group.first() == n - 1);
  CHECK(group.last() == 0);
  // The member after parent rank me is me - 1; after parent rank 0 (the last) comes the first, n
  // - 1.
  CHECK(group.next() == (me == 0 ? n - 1 : me - 1));
  CHECK(group.prev() == (me == n - 1 ? 0 : me + 1));
  CHECK(group.is_first() == (me == n - 1));
  CHECK(group.is_last() == (me == 0));
  for (int i = 0; i < n; ++i) {
    CHECK(group.parent_rank_of(i) == n - 1 - i);
    CHECK(group.group_rank_of(i) == n - 1 - i);
  }
  CHECK(group.group_rank_of(n) == -1);
  CHECK(group.group_rank_of(-1) == -1);
  CHECK_THROWS_WITH_AS(group.parent_rank_of(n),
                       contains("group rank " + std::to_string(n) +
                                " is out of range for a group of " + std::to_string(n)),
                       baton::Error);
  CHECK_THROWS_WITH_AS(group.parent_rank_of(-1), contains("group rank -1"), baton::Error);

  REQUIRE(group.comm());
  CHECK(group.comm().rank() == group.rank());
  CHECK(group.comm().size() == n);
  CHECK(gather_parent_ranks(group, me) == ranks);
  CHECK(received_from_predecessor(group, me) == group.prev());
}

TEST_CASE("even-ranks group: odd ranks are non-members") {
  const auto& world = baton::test::world();
  const int n = world.size();
  const int me = world.rank();
  std::vector<int> evens;
  for (int r = 0; r < n; r += 2)
    evens.push_back(r);
  const int members = static_cast<int>(evens.size());
  baton::Group group(world, evens);

  CHECK(group.size() == members);
  CHECK(group.ranks() == evens);
  CHECK(group.first() == 0);
  CHECK(group.last() == evens.back());
  for (int r = 0; r < n; ++r)
    CHECK(group.group_rank_of(r) == (r % 2 == 0 ? r / 2 : -1));
  if (me % 2 == 0) {
    REQUIRE(group.is_member());
    CHECK(group.rank() == me / 2);
    CHECK(group.next() == (me + 2 < n ? me + 2 : 0));
    CHECK(group.prev() == (me == 0 ? evens.back() : me - 2));
    REQUIRE(group.comm());
    CHECK(group.comm().rank() == group.rank());
    CHECK(group.comm().size() == members);
    CHECK(gather_parent_ranks(group, me) == evens);
    CHECK(received_from_predecessor(group, me) == group.prev());
  } else {
    CHECK_FALSE(group.is_member());
    CHECK(group.rank() == -1);
    CHECK(group.comm().is_null());
    CHECK_FALSE(group.is_first());
    CHECK_FALSE(group.is_last());
    const std::string not_member = "the calling rank is not a member of the group (it is rank " +
                                   std::to_string(me) + " of the parent)";
    CHECK_THROWS_WITH_AS(group.next(), contains("baton::Group::next: " + not_member), baton::Error);
    CHECK_THROWS_WITH_AS(group.prev(), contains("baton::Group::prev: " + not_member), baton::Error);
  }
}

TEST_CASE("non-members make no collective call") {
  const auto& world = baton::test::world();
  const int me = world.rank();
  std::vector<int> evens;
  for (int r = 0; r < world.size(); r += 2) {
    evens.push_back(r);
  }
  // The group is made from its own parent, so that no collective call a constructor might make on
  // it could match the barrier on world below.
  baton::Communicator parent = world.duplicate();

  // Odd ranks construct the group before a barrier on world, even ranks only after it. If a
  // non-member's constructor waited for the members, the odd ranks would never reach the barrier:
  // deadlock, and the test fails on its timeout.
  baton::Group group;
  if (me % 2 == 1) {
    group = baton::Group(parent, evens);
  }
  baton::check_mpi(MPI_Barrier(world.raw()), "MPI_Barrier", world.raw());
  if (me % 2 == 0) {
    group = baton::Group(parent, evens);
  }
  CHECK(group.is_member() == (me % 2 == 0));
  CHECK(group.comm().is_null() == (me % 2 == 1));

  // Members alone can construct it, too: the odd ranks skip the constructor here.
  if (me % 2 == 0) {
    baton::Group only_members(parent, evens);
    REQUIRE(only_members.comm());
    CHECK(sum_over_group(only_members, me) == std::accumulate(evens.begin(), evens.end(), 0));
  }
}

TEST_CASE("the group communicator works: allreduce of parent ranks") {
  const auto& world = baton::test::world();
  const int n = world.size();
  const int me = world.rank();
  // Natural order, reversed, evens, and the upper half in reverse (a subset in its own order).
  std::vector<std::vector<int>> lists = {iota(n), {}, {}, {}};
  for (int i = 0; i < n; ++i)
    lists[1].push_back(n - 1 - i);
  for (int r = 0; r < n; r += 2)
    lists[2].push_back(r);
  for (int r = n - 1; r >= n / 2; --r)
    lists[3].push_back(r);
  for (const auto& ranks : lists) {
    CAPTURE(ranks.size());
    baton::Group group(world, ranks);
    if (!group.is_member())
      continue;
    CHECK(sum_over_group(group, me) == std::accumulate(ranks.begin(), ranks.end(), 0));
    CHECK(gather_parent_ranks(group, me) == ranks);
  }
}

TEST_CASE("ranks are ranks of the parent, not of the world") {
  const auto& world = baton::test::world();
  const int me = world.rank();
  // Parent: the world ranks of my parity, ranked in world order. Group: that parent, reversed.
  baton::Communicator parent = world.split(me % 2, me);
  REQUIRE(parent);
  std::vector<int> reversed;
  for (int r = parent.size() - 1; r >= 0; --r)
    reversed.push_back(r);
  baton::Group group(parent, reversed);
  REQUIRE(group.is_member());
  CHECK(group.size() == parent.size());
  CHECK(group.rank() == parent.size() - 1 - parent.rank());
  CHECK(group.comm().rank() == group.rank());
  // The world ranks of the members, gathered in group order: my parity, descending.
  std::vector<int> world_ranks = gather_parent_ranks(group, me);
  for (std::size_t i = 0; i < world_ranks.size(); ++i) {
    CHECK(world_ranks[i] % 2 == me % 2);
    if (i > 0)
      CHECK(world_ranks[i] == world_ranks[i - 1] - 2);
  }
}

TEST_CASE("bad rank lists throw baton::Error on every rank, naming the value") {
  const auto& world = baton::test::world();
  const int n = world.size();
  const std::string size = std::to_string(n);
  CHECK_THROWS_WITH_AS(baton::Group(world, {}), contains("baton::Group: the rank list is empty"),
                       baton::Error);
  CHECK_THROWS_WITH_AS(
      baton::Group(world, {0, n}),
      contains("baton::Group: rank " + size +
               " at position 1 is out of range for a communicator of " + size + " ranks"),
      baton::Error);
  CHECK_THROWS_WITH_AS(baton::Group(world, {-1}), contains("rank -1 at position 0 is out of range"),
                       baton::Error);
  CHECK_THROWS_WITH_AS(
      baton::Group(world, {0, 0}),
      contains("baton::Group: rank 0 at position 1 is a duplicate (also at position 0)"),
      baton::Error);
  // The first repeat in list order is reported: position n (rank 0), not position n + 1 (rank n -
  // 1).
  std::vector<int> twice = iota(n);
  twice.push_back(0);
  twice.push_back(n - 1);
  if (n == 1)
    twice = {0, 0, 0};
  CHECK_THROWS_WITH_AS(
      baton::Group(world, twice),
      contains("rank 0 at position " + size + " is a duplicate (also at position 0)"),
      baton::Error);
  // The range is checked before duplicates, and a rank out of range is named even after a repeat.
  CHECK_THROWS_WITH_AS(baton::Group(world, {0, 0, n + 6}),
                       contains("rank " + std::to_string(n + 6) + " at position 2"), baton::Error);
  CHECK_THROWS_WITH_AS(baton::Group(baton::Communicator(), {0}),
                       contains("the parent communicator is null"), baton::Error);
  // Every rank threw and none is stuck in MPI: the world still works.
  baton::check_mpi(MPI_Barrier(world.raw()), "MPI_Barrier", world.raw());
}

TEST_CASE("one-member groups") {
  const auto& world = baton::test::world();
  const int n = world.size();
  const int me = world.rank();

  SUBCASE("the last rank alone") {
    baton::Group group(world, {n - 1});
    CHECK(group.size() == 1);
    CHECK(group.first() == n - 1);
    CHECK(group.last() == n - 1);
    if (me == n - 1) {
      REQUIRE(group.is_member());
      CHECK(group.rank() == 0);
      CHECK(group.next() == n - 1);
      CHECK(group.prev() == n - 1);
      CHECK(group.is_first());
      CHECK(group.is_last());
      REQUIRE(group.comm());
      CHECK(group.comm().size() == 1);
      CHECK(sum_over_group(group, me) == me);
    } else {
      CHECK_FALSE(group.is_member());
      CHECK(group.comm().is_null());
    }
  }

  SUBCASE("every rank its own group") {
    baton::Group group(world, {me});
    REQUIRE(group.is_member());
    CHECK(group.rank() == 0);
    CHECK(group.next() == me);
    CHECK(group.prev() == me);
    CHECK(group.first() == me);
    CHECK(group.last() == me);
    CHECK(group.is_first());
    CHECK(group.is_last());
    CHECK(group.comm().size() == 1);
    CHECK(received_from_predecessor(group, me) == me);
  }
}

TEST_CASE("moving a group moves its communicator; an empty group is no member") {
  const auto& world = baton::test::world();
  baton::Group a(world, iota(world.size()));
  const MPI_Comm raw = a.comm().raw();
  baton::Group b = std::move(a);
  CHECK(b.comm().raw() == raw);
  CHECK(b.size() == world.size());
  CHECK(b.rank() == world.rank());
  // NOLINTBEGIN(bugprone-use-after-move): the moved-from state is specified
  CHECK(a.size() == 0);
  CHECK_FALSE(a.is_member());
  CHECK(a.comm().is_null());
  CHECK_THROWS_WITH_AS(a.first(), contains("baton::Group::first: the group is empty"),
                       baton::Error);
  CHECK_THROWS_WITH_AS(a.next(), contains("baton::Group::next: the calling rank is not a member"),
                       baton::Error);
  // NOLINTEND(bugprone-use-after-move)
  baton::Group c;
  c = std::move(b);
  CHECK(c.comm().raw() == raw);
  CHECK(c.rank() == world.rank());
  CHECK(sum_over_group(c, world.rank()) == world.size() * (world.size() - 1) / 2);
}
