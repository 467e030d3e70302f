#include <doctest/doctest.h>

#include <baton/collectives/object_collectives.hpp>
#include <baton/core/error.hpp>
#include <string>
#include <utility>
#include <vector>

#include "mpi_doctest.hpp"
#include "particle.hpp"

namespace {

using baton::test::Particle;

// A type whose serializer refuses negative values (to fail on one rank).
struct Picky {
  int value = 0;
};

Particle particle_of(int rank) {
  Particle p{"rank-" + std::to_string(rank), {}};
  for (int i = 0; i < rank; ++i)  // rank 0's is empty
    p.position.push_back(rank + 0.5 * i);
  return p;
}

}  // namespace

template <>
struct baton::Serializer<Picky> {
  static void write(baton::ByteWriter& out, const Picky& p) {
    if (p.value < 0)
      throw baton::Error("Picky: negative value");
    out.write(p.value);
  }
  static Picky read(baton::ByteReader& in) { return Picky{in.read<int>()}; }
};

TEST_CASE("gather_object, all_gather_object and scatter_object move values of any size") {
  baton::Communicator comm = baton::test::world().duplicate();
  const int n = comm.size();
  const int me = comm.rank();
  const int root = n - 1;
  const auto gathered = baton::gather_object(comm, particle_of(me), root);
  if (me == root) {
    REQUIRE(gathered.size() == std::size_t(n));
    for (int r = 0; r < n; ++r)
      CHECK(gathered[r] == particle_of(r));
  } else {
    CHECK(gathered.empty());
  }
  const auto everyone = baton::all_gather_object(comm, std::string(me * 3, 'x'));
  REQUIRE(everyone.size() == std::size_t(n));
  for (int r = 0; r < n; ++r)
    CHECK(everyone[r] == std::string(r * 3, 'x'));
  const auto pairs = baton::all_gather_object(comm, std::make_pair(me, 0.5 * me));
  CHECK(pairs.back() == std::make_pair(n - 1, 0.5 * (n - 1)));

  std::vector<Particle> parts;
  if (me == 0)
    for (int r = 0; r < n; ++r)
      parts.push_back(particle_of(n - r));
  CHECK(baton::scatter_object(comm, parts, 0) == particle_of(n - me));
}

TEST_CASE("a failure on one rank is a baton::Error on every rank, and nothing hangs") {
  baton::Communicator comm = baton::test::world().duplicate();
  const int n = comm.size();
  const int me = comm.rank();
  const int last = n - 1;
  // The last rank's value cannot be encoded: it rethrows its own error, the others name it.
  const Picky mine{me == last ? -1 : me};
  const std::string expected =
      me == last ? "Picky: negative value"
                 : "could not encode its value (on rank " + std::to_string(me) + ")";
  CHECK_THROWS_WITH_AS(baton::all_gather_object(comm, mine), doctest::Contains(expected.c_str()),
                       baton::Error);
  CHECK_THROWS_WITH_AS(baton::gather_object(comm, mine, 0), doctest::Contains(expected.c_str()),
                       baton::Error);
  // A root with the wrong number of values, or a value it cannot encode.
  std::vector<int> too_few(me == 0 ? n + 1 : 0, 7);
  CHECK_THROWS_WITH_AS(baton::scatter_object(comm, too_few, 0),
                       doctest::Contains("baton::scatter_object: root 0 could not send its values"),
                       baton::Error);
  std::vector<Picky> bad(me == 0 ? n : 0, Picky{-1});
  CHECK_THROWS_WITH_AS(baton::scatter_object(comm, bad, 0),
                       doctest::Contains(me == 0 ? "Picky: negative value" : "could not send"),
                       baton::Error);
  // A bad root on every rank.
  CHECK_THROWS_WITH_AS(baton::gather_object(comm, 1, n), doctest::Contains("baton::gather_object"),
                       baton::Error);
  // Still in step.
  CHECK(baton::all_gather_object(comm, me).size() == std::size_t(n));
}
