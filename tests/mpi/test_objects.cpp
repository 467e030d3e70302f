#include <doctest/doctest.h>

#include <array>
#include <baton/core/check_mpi.hpp>
#include <baton/transport/bytes.hpp>
#include <baton/transport/objects.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "mpi_doctest.hpp"
#include "particle.hpp"

namespace {

using baton::test::Particle;

// A type whose serializer refuses negative values (to fail at the root of a broadcast).
struct Picky {
  int value = 0;
};

struct Pod {
  std::int32_t a;
  double b;
};

Particle particle_of(int rank) {
  Particle p{"rank-" + std::to_string(rank), {}};
  for (int i = 0; i <= rank; ++i) {
    p.position.push_back(rank + 0.5 * i);
  }
  return p;
}

}  // namespace

template <>
struct baton::Serializer<Picky> {
  static void write(baton::ByteWriter& out, const Picky& p) {
    if (p.value < 0) {
      throw baton::Error("Picky: negative value");
    }
    out.write(p.value);
  }
  static Picky read(baton::ByteReader& in) { return Picky{in.read<int>()}; }
};

TEST_CASE("ring of strings and vectors with any_source") {
  baton::Communicator comm = baton::test::world().duplicate();
  const int next = (comm.rank() + 1) % comm.size();
  const int prev = (comm.rank() + comm.size() - 1) % comm.size();
  const std::string text =
      "from " + std::to_string(comm.rank()) + std::string(comm.rank() * 50000, '!');
  const std::vector<double> numbers(10 + comm.rank() * 3, comm.rank() + 0.25);
  const std::vector<std::string> words{"a", "", std::to_string(comm.rank())};
  auto h1 = baton::isend_object(comm, text, next, 1);
  auto h2 = baton::isend_object(comm, numbers, next, 2);
  auto h3 = baton::isend_object(comm, words, next, 3);

  baton::MessageInfo info;
  const auto got_words =
      baton::recv_object<std::vector<std::string>>(comm, baton::any_source, 3, &info);
  CHECK(info.source == prev);
  CHECK(info.tag == 3);
  CHECK(got_words == std::vector<std::string>{"a", "", std::to_string(prev)});
  const auto got_numbers =
      baton::recv_object<std::vector<double>>(comm, baton::any_source, 2, &info);
  CHECK(info.source == prev);
  CHECK(info.size == 8 + got_numbers.size() * 8);
  CHECK(got_numbers == std::vector<double>(10 + prev * 3, prev + 0.25));
  const auto got_text = baton::recv_object<std::string>(comm, baton::any_source, 1);
  CHECK(got_text == "from " + std::to_string(prev) + std::string(prev * 50000, '!'));
  h1.wait();
  h2.wait();
  h3.wait();
}

TEST_CASE("user types, pairs and trivially copyable values") {
  baton::Communicator comm = baton::test::world().duplicate();
  const int next = (comm.rank() + 1) % comm.size();
  const int prev = (comm.rank() + comm.size() - 1) % comm.size();
  auto h1 = baton::isend_object(comm, particle_of(comm.rank()), next, 4);
  auto h2 = baton::isend_object(comm, std::vector<Particle>{particle_of(comm.rank()), Particle{}},
                                next, 5);
  auto h3 = baton::isend_object(comm, Pod{comm.rank(), comm.rank() * 1.5}, next, 6);
  auto h4 = baton::isend_object(comm, std::pair<int, std::string>{comm.rank(), "p"}, next, 7);
  CHECK(baton::recv_object<Particle>(comm, prev, 4) == particle_of(prev));
  const auto many = baton::recv_object<std::vector<Particle>>(comm, prev, 5);
  REQUIRE(many.size() == 2);
  CHECK(many[0] == particle_of(prev));
  CHECK(many[1] == Particle{});
  baton::MessageInfo info;
  const Pod pod = baton::recv_object<Pod>(comm, baton::any_source, 6, &info);
  CHECK(info.size == sizeof(Pod));
  CHECK(pod.a == prev);
  CHECK(pod.b == prev * 1.5);
  CHECK(baton::recv_object<std::pair<int, std::string>>(comm, prev, 7) ==
        std::pair<int, std::string>{prev, "p"});
  h1.wait();
  h2.wait();
  h3.wait();
  h4.wait();
}

TEST_CASE("blocking send_object to self and to the next rank") {
  baton::Communicator comm = baton::test::world().duplicate();
  // A self-send is non-blocking (MPI need not buffer a blocking send to self: MPICH at 1 rank does
  // not); a blocking ring uses even/odd ordering.
  auto self = baton::isend_object(comm, 3.25, comm.rank(), 8);
  CHECK(baton::recv_object<double>(comm, comm.rank(), 8) == 3.25);
  self.wait();
  if (comm.size() < 2) {
    return;
  }
  const int next = (comm.rank() + 1) % comm.size();
  const int prev = (comm.rank() + comm.size() - 1) % comm.size();
  const std::vector<int> mine(100000, comm.rank());  // past the eager limit
  if (comm.rank() % 2 == 0) {
    baton::send_object(comm, mine, next, 9);
    CHECK(baton::recv_object<std::vector<int>>(comm, prev, 9) == std::vector<int>(100000, prev));
  } else {
    const auto theirs = baton::recv_object<std::vector<int>>(comm, prev, 9);
    baton::send_object(comm, mine, next, 9);
    CHECK(theirs == std::vector<int>(100000, prev));
  }
}

TEST_CASE("broadcast of a user type from the last rank") {
  baton::Communicator comm = baton::test::world().duplicate();
  const int root = comm.size() - 1;
  Particle p = comm.rank() == root ? particle_of(root) : Particle{"stale", {9.0}};
  baton::broadcast_object(comm, p, root);
  CHECK(p == particle_of(root));

  std::vector<std::string> words;
  if (comm.rank() == 0) {
    words = {"x", std::string(70000, 'y'), ""};
  }
  baton::broadcast_object(comm, words, 0);
  CHECK(words == std::vector<std::string>{"x", std::string(70000, 'y'), ""});

  Pod pod{comm.rank() == root ? 11 : -1, comm.rank() == root ? 2.5 : -1.0};
  baton::broadcast_object(comm, pod, root);
  CHECK(pod.a == 11);
  CHECK(pod.b == 2.5);

  bool flag = comm.rank() == root;
  baton::broadcast_object(comm, flag, root);
  CHECK(flag);

  std::vector<double> empty = comm.rank() == 0 ? std::vector<double>{} : std::vector<double>{1.0};
  baton::broadcast_object(comm, empty, 0);
  CHECK(empty.empty());
}

TEST_CASE("a root that cannot encode makes every rank throw, nobody waits") {
  baton::Communicator comm = baton::test::world().duplicate();
  const int root = comm.size() - 1;
  Picky value{comm.rank() == root ? -1 : 5};
  if (comm.rank() == root) {
    CHECK_THROWS_WITH_AS(baton::broadcast_object(comm, value, root), "Picky: negative value",
                         baton::Error);
  } else {
    CHECK_THROWS_WITH_AS(
        baton::broadcast_object(comm, value, root),
        doctest::Contains(
            ("the root (rank " + std::to_string(root) + ") could not encode").c_str()),
        baton::Error);
    CHECK(value.value == 5);
  }
  // The communicator is still in step: a good broadcast follows.
  value.value = comm.rank() == root ? 42 : 0;
  baton::broadcast_object(comm, value, root);
  CHECK(value.value == 42);
}

TEST_CASE(
    "a wrong-size raw receive throws, consumes the message, and the next one arrives intact") {
  baton::Communicator comm = baton::test::world().duplicate();
  const int next = (comm.rank() + 1) % comm.size();
  const int prev = (comm.rank() + comm.size() - 1) % comm.size();
  auto wrong = baton::isend_object(comm, std::int32_t{7}, next, 20);
  auto right = baton::isend_object(comm, 1.5 * comm.rank(), next, 20);
  const std::string expected =
      "baton::recv_object: the message from source " + std::to_string(prev) +
      " with tag 20 has 4 bytes, but the trivially copyable type expected takes 8 bytes";
  CHECK_THROWS_WITH_AS((void)baton::recv_object<double>(comm, baton::any_source, 20),
                       doctest::Contains(expected.c_str()), baton::Error);
  CHECK(baton::recv_object<double>(comm, prev, 20) == 1.5 * prev);
  wrong.wait();
  right.wait();
  CHECK_FALSE(baton::iprobe(comm, baton::any_source, 20).has_value());
}

TEST_CASE("a message that does not decode throws, is consumed, and the channel goes on") {
  baton::Communicator comm = baton::test::world().duplicate();
  const int next = (comm.rank() + 1) % comm.size();
  const int prev = (comm.rank() + comm.size() - 1) % comm.size();
  // A string whose declared length exceeds the message, a string with a trailing byte, a bool of 2.
  std::vector<std::byte> lying = baton::encode_object(std::string("abc"));
  lying[0] = std::byte{200};
  std::vector<std::byte> trailing = baton::encode_object(std::string("abc"));
  trailing.push_back(std::byte{0});
  auto h1 = baton::isend(comm, lying, next, 21);
  auto h2 = baton::isend(comm, trailing, next, 21);
  auto h3 = baton::isend(comm, std::vector<std::byte>{std::byte{2}}, next, 21);
  auto h4 = baton::isend_object(comm, std::string("fine"), next, 21);
  CHECK_THROWS_WITH_AS(
      (void)baton::recv_object<std::string>(comm, prev, 21),
      doctest::Contains("does not decode: baton::ByteReader: object message truncated"),
      baton::Error);
  CHECK_THROWS_WITH_AS((void)baton::recv_object<std::string>(comm, prev, 21),
                       doctest::Contains("baton::ByteReader: 1 trailing bytes after the object"),
                       baton::Error);
  CHECK_THROWS_WITH_AS(
      (void)baton::recv_object<bool>(comm, prev, 21),
      doctest::Contains("baton::Serializer: object message holds a bool that is neither 0 nor 1"),
      baton::Error);
  CHECK(baton::recv_object<std::string>(comm, prev, 21) == "fine");
  h1.wait();
  h2.wait();
  h3.wait();
  h4.wait();
}

TEST_CASE("bad ranks, tags and roots throw before any message is sent") {
  baton::Communicator comm = baton::test::world().duplicate();
  const std::string size = std::to_string(comm.size());
  CHECK_THROWS_WITH_AS(
      baton::send_object(comm, std::string("x"), comm.size(), 0),
      doctest::Contains(("baton::send_object: rank " + size + " is out of range").c_str()),
      baton::Error);
  CHECK_THROWS_WITH_AS(baton::send_object(comm, 1, -1, 0),
                       doctest::Contains("baton::send_object: rank -1"), baton::Error);
  CHECK_THROWS_WITH_AS(baton::send_object(comm, 1, 0, -5), doctest::Contains("tag -5 is outside"),
                       baton::Error);
  CHECK_THROWS_WITH_AS((void)baton::isend_object(comm, Particle{}, comm.size(), 0),
                       doctest::Contains("baton::isend_object: rank"), baton::Error);
  CHECK_THROWS_WITH_AS((void)baton::recv_object<int>(comm, comm.size() + 3, 0),
                       doctest::Contains("baton::recv_object: rank"), baton::Error);
  CHECK_THROWS_WITH_AS((void)baton::recv_object<std::string>(comm, 0, -2),
                       doctest::Contains("tag -2"), baton::Error);
  Particle p;
  CHECK_THROWS_WITH_AS(
      baton::broadcast_object(comm, p, comm.size()),
      doctest::Contains(("baton::broadcast_object: rank " + size + " is out of range").c_str()),
      baton::Error);
  int i = 0;
  CHECK_THROWS_AS(baton::broadcast_object(comm, i, -1), baton::Error);
  CHECK_FALSE(baton::iprobe(comm, baton::any_source, baton::any_tag).has_value());
  baton::check_mpi(MPI_Barrier(comm.raw()), "MPI_Barrier", comm.raw());
}

TEST_CASE("a null communicator is an error") {
  baton::Communicator null;
  CHECK_THROWS_WITH_AS(baton::send_object(null, 1, 0, 0),
                       doctest::Contains("the communicator is null"), baton::Error);
  int v = 0;
  CHECK_THROWS_AS(baton::broadcast_object(null, v, 0), baton::Error);
}

TEST_CASE("an isend_object handle owns its bytes") {
  baton::Communicator comm = baton::test::world().duplicate();
  const int next = (comm.rank() + 1) % comm.size();
  baton::SendHandle handle;
  {
    std::vector<std::string> temporary(100, std::string(1000, 'q'));
    handle = baton::isend_object(comm, temporary, next, 30);
    temporary.assign(3, "gone");
  }
  const auto got = baton::recv_object<std::vector<std::string>>(comm, baton::any_source, 30);
  CHECK(got == std::vector<std::string>(100, std::string(1000, 'q')));
  handle.wait();
}
