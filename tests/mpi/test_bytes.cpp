#include <doctest/doctest.h>

#include <baton/core/check_mpi.hpp>
#include <baton/transport/bytes.hpp>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "mpi_doctest.hpp"

namespace {

std::vector<std::byte> pattern(std::size_t size, unsigned seed) {
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i)
    bytes[i] = static_cast<std::byte>((i * 131u + seed * 17u) & 0xffu);
  return bytes;
}

bool same(const baton::ByteBuffer& got, const std::vector<std::byte>& want) {
  return got.size() == want.size() && std::equal(want.begin(), want.end(), got.begin());
}

}  // namespace

TEST_CASE("ring: any-source receive learns source, tag and size") {
  baton::Communicator comm = baton::test::world().duplicate();
  const int next = (comm.rank() + 1) % comm.size();
  const int prev = (comm.rank() + comm.size() - 1) % comm.size();
  auto handle = baton::isend(comm, pattern(100 + comm.rank() * 1000, comm.rank()), next, 5);
  baton::Message message = baton::recv(comm, baton::any_source, 5);
  handle.wait();
  CHECK(message.source == prev);
  CHECK(message.tag == 5);
  CHECK(same(message.bytes, pattern(100 + prev * 1000, prev)));
}

TEST_CASE("zero-length messages and self-sends arrive") {
  baton::Communicator comm = baton::test::world().duplicate();
  auto empty = baton::isend(comm, std::vector<std::byte>{}, comm.rank(), 1);
  auto full = baton::isend(comm, pattern(70000, 3), comm.rank(), 2);  // past the eager limit
  baton::Message zero = baton::recv(comm, comm.rank(), 1);
  baton::Message big = baton::recv(comm, comm.rank(), 2);
  CHECK(zero.bytes.size() == 0);
  CHECK(zero.source == comm.rank());
  CHECK(same(big.bytes, pattern(70000, 3)));
  CHECK(empty.test());
  full.wait();
  CHECK_FALSE(full.active());
}

TEST_CASE("tags are channels: messages are received by tag, not by arrival") {
  baton::Communicator comm = baton::test::world().duplicate();
  auto a = baton::isend(comm, pattern(10, 1), comm.rank(), 11);
  auto b = baton::isend(comm, pattern(20, 2), comm.rank(), 22);
  baton::Message second = baton::recv(comm, baton::any_source, 22);
  baton::Message first = baton::recv(comm, baton::any_source, 11);
  CHECK(same(second.bytes, pattern(20, 2)));
  CHECK(same(first.bytes, pattern(10, 1)));
}

TEST_CASE("bad ranks and tags are errors that name them, before any MPI call") {
  baton::Communicator comm = baton::test::world().duplicate();
  const std::vector<std::byte> bytes(4);
  const std::string size = std::to_string(comm.size());
  CHECK_THROWS_WITH_AS(
      baton::send(comm, bytes, comm.size(), 0),
      doctest::Contains(
          ("rank " + size + " is out of range for a communicator of " + size).c_str()),
      baton::Error);
  CHECK_THROWS_WITH_AS(baton::send(comm, bytes, 0, -1), doctest::Contains("tag -1 is outside 0.."),
                       baton::Error);
  CHECK_THROWS_WITH_AS(baton::send(comm, bytes, 0, comm.tag_ub() + 1 < 0 ? -2 : comm.tag_ub() + 1),
                       doctest::Contains("(MPI_TAG_UB)"), baton::Error);
  CHECK_THROWS_WITH_AS(baton::recv(comm, -7, 0), doctest::Contains("rank -7 is out of range"),
                       baton::Error);
  CHECK_THROWS_AS(baton::isend(comm, std::vector<std::byte>(3), -1, 0), baton::Error);
  CHECK_THROWS_AS(baton::probe(comm, 0, -3), baton::Error);
  // A rejected call leaves nothing behind: the channel still works.
  auto ok = baton::isend(comm, pattern(8, 9), comm.rank(), 0);
  CHECK(same(baton::recv(comm, comm.rank(), 0).bytes, pattern(8, 9)));
}

TEST_CASE("a receive with a deadline throws naming source and tag, and loses nothing") {
  baton::Communicator comm = baton::test::world().duplicate();
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(baton::recv(comm, comm.rank(), 77, std::chrono::milliseconds(50)),
                       doctest::Contains(("no message from source " + std::to_string(comm.rank()) +
                                          " with tag 77 within 0.050 s")
                                             .c_str()),
                       baton::Error);
  CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(50));
  CHECK_THROWS_WITH_AS(
      baton::recv(comm, baton::any_source, baton::any_tag, std::chrono::milliseconds(1)),
      doctest::Contains("no message from any source with any tag"), baton::Error);
  // The message that comes later is received normally.
  auto late = baton::isend(comm, pattern(5, 7), comm.rank(), 77);
  baton::Message message = baton::recv(comm, comm.rank(), 77, std::chrono::seconds(10));
  CHECK(same(message.bytes, pattern(5, 7)));
}

TEST_CASE("probe and iprobe describe a message without receiving it") {
  baton::Communicator comm = baton::test::world().duplicate();
  CHECK_FALSE(baton::iprobe(comm, baton::any_source, 9).has_value());
  auto handle = baton::isend(comm, pattern(321, 4), comm.rank(), 9);
  baton::MessageInfo info = baton::probe(comm, baton::any_source, 9);
  CHECK(info.source == comm.rank());
  CHECK(info.tag == 9);
  CHECK(info.size == 321);
  auto again = baton::iprobe(comm, comm.rank(), 9);
  REQUIRE(again.has_value());
  CHECK(again->size == 321);
  CHECK(baton::recv(comm, comm.rank(), 9).bytes.size() == 321);
  CHECK_FALSE(baton::iprobe(comm, baton::any_source, 9).has_value());
}

TEST_CASE("a send handle owns its buffer and its destructor waits") {
  baton::Communicator comm = baton::test::world().duplicate();
  const int next = (comm.rank() + 1) % comm.size();
  {
    std::vector<std::byte> bytes = pattern(200000, 8);
    baton::SendHandle handle = baton::isend(comm, std::move(bytes), next, 3);
    bytes.assign(10, std::byte{0});  // the caller's object is free to reuse
    baton::SendHandle moved = std::move(handle);
    CHECK_FALSE(handle.active());  // NOLINT(bugprone-use-after-move)
    baton::Message message = baton::recv(comm, baton::any_source, 3);
    CHECK(same(message.bytes, pattern(200000, 8)));
  }  // `moved` completes here if it had not yet
}

TEST_CASE("fan-in: 3 senders x 10^4 random-size messages to one any-source receiver") {
  baton::Communicator comm = baton::test::world().duplicate();
  if (comm.size() < 2)
    return;
  const int senders = std::min(comm.size() - 1, 3);
  constexpr int per_sender = 10000;
  const auto size_of = [](int sender, int seq) {
    std::mt19937 rng(static_cast<unsigned>(sender * 1000003 + seq));
    // Mostly small, sometimes past the eager limit.
    return (seq % 500 == 0) ? std::size_t(70000 + rng() % 1000) : std::size_t(rng() % 300);
  };
  const auto body = [](int sender, int seq, std::size_t size) {
    std::vector<std::byte> bytes(size);
    for (std::size_t i = 0; i < size; ++i)
      bytes[i] = static_cast<std::byte>((sender * 7 + seq * 13 + i) & 0xff);
    if (size >= 8) {
      const std::uint32_t s = static_cast<std::uint32_t>(sender),
                          q = static_cast<std::uint32_t>(seq);
      std::memcpy(bytes.data(), &s, 4);
      std::memcpy(bytes.data() + 4, &q, 4);
    }
    return bytes;
  };
  if (comm.rank() == 0) {
    std::vector<int> next_seq(comm.size(), 0);
    int wrong = 0;
    for (int m = 0; m < senders * per_sender; ++m) {
      baton::Message message = baton::recv(comm, baton::any_source, 42);
      const int s = message.source;
      const int seq = next_seq[s]++;
      if (s < 1 || s > senders || !same(message.bytes, body(s, seq, size_of(s, seq))))
        ++wrong;
    }
    CHECK(wrong == 0);
    for (int s = 1; s <= senders; ++s)
      CHECK(next_seq[s] == per_sender);
    CHECK_FALSE(baton::iprobe(comm, baton::any_source, 42).has_value());  // nothing duplicated
  } else if (comm.rank() <= senders) {
    for (int seq = 0; seq < per_sender; ++seq)
      baton::send(comm, body(comm.rank(), seq, size_of(comm.rank(), seq)), 0, 42);
  }
  baton::check_mpi(MPI_Barrier(comm.raw()), "MPI_Barrier", comm.raw());
}
