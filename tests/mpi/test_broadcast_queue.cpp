#include <doctest/doctest.h>

#include <baton/collectives/agreement.hpp>
#include <baton/shm/broadcast_queue.hpp>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "error_of.hpp"
#include "mpi_doctest.hpp"

using baton::test::error_of;

namespace {

using namespace std::chrono_literals;

// Message i of a stream: its size and bytes follow from i alone, so every reader can check both.
std::size_t size_of(std::uint64_t i, std::size_t chunk_bytes) {
  const std::uint64_t h = (i * 2654435761u) >> 7;
  if (h % 50 == 0)
    return chunk_bytes + 1 + h % (4 * chunk_bytes);  // 2 %: through MPI
  return static_cast<std::size_t>(h % (chunk_bytes + 1));
}

std::byte byte_of(std::uint64_t i, std::size_t k) {
  return static_cast<std::byte>((i * 131 + k * 7 + 3) & 0xffu);
}

std::vector<std::byte> message_of(std::uint64_t i, std::size_t chunk_bytes) {
  std::vector<std::byte> m(size_of(i, chunk_bytes));
  for (std::size_t k = 0; k < m.size(); ++k)
    m[k] = byte_of(i, k);
  return m;
}

}  // namespace

TEST_CASE("broadcast queue: 10^5 messages of random sizes reach every reader whole and in order") {
  const baton::Communicator& world = baton::test::world();
  baton::QueueOptions options;
  options.chunks = 32;
  options.chunk_bytes = 256;
  options.deadline = 60s;
  constexpr std::uint64_t messages = 100000;
  const int writer = world.size() - 1;  // not rank 0, to exercise the rank mapping
  baton::BroadcastQueue queue(world, writer, options);
  CHECK(queue.readers() == world.size() - 1);
  std::uint64_t mismatches = 0, received = 0, through_mpi = 0;
  if (queue.is_writer()) {
    for (std::uint64_t i = 0; i < messages; ++i)
      queue.push(message_of(i, options.chunk_bytes));
    queue.close();
    CHECK(queue.count() == messages + 1);  // the end of the stream is a message too
  } else {
    std::vector<std::byte> m;
    while (queue.pop(m)) {
      mismatches += m != message_of(received, options.chunk_bytes);
      through_mpi += m.size() > options.chunk_bytes;
      ++received;
    }
    CHECK(received == messages);
    CHECK(through_mpi > 1000);
    CHECK_FALSE(queue.pop(m));  // still the end
  }
  CHECK(mismatches == 0);
}

TEST_CASE("broadcast queue: a message far larger than a chunk, and empty messages") {
  const baton::Communicator& world = baton::test::world();
  baton::BroadcastQueue queue(world, 0, baton::QueueOptions{4, 64, 60s});
  const std::size_t big = std::size_t(8) << 20;
  if (queue.is_writer()) {
    std::vector<std::byte> m(big);
    for (std::size_t k = 0; k < big; ++k)
      m[k] = byte_of(7, k);
    queue.push(std::string());
    queue.push(m);
    queue.push(std::string("last"));
    queue.close();
  } else {
    auto first = queue.pop();
    REQUIRE(first.has_value());
    CHECK(first->empty());
    auto second = queue.pop();
    REQUIRE(second.has_value());
    REQUIRE(second->size() == big);
    bool same = true;
    for (std::size_t k = 0; k < big && same; ++k)
      same = (*second)[k] == byte_of(7, k);
    CHECK(same);
    auto third = queue.pop();
    REQUIRE(third.has_value());
    CHECK(std::string(reinterpret_cast<const char*>(third->data()), third->size()) == "last");
    CHECK_FALSE(queue.pop().has_value());
  }
}

TEST_CASE("broadcast queue: a reader that stops consuming is named by the writer's deadline") {
  const baton::Communicator& world = baton::test::world();
  if (world.size() < 2)
    return;
  const int stuck = world.size() - 1;
  baton::QueueOptions options{4, 16, 1s};
  if (world.rank() != 0)
    options.deadline = 3s;  // readers wait longer than the writer
  baton::BroadcastQueue queue(world, 0, options);
  if (queue.is_writer()) {
    int pushed = 0;
    const std::string error = error_of([&] {
      for (; pushed < 100; ++pushed)
        queue.push(std::string("x"));
    });
    // Chunks 0-3 hold messages 0-3; the stuck reader finished messages 0 and 1, so messages 4
    // and 5 reuse their chunks and message 6 waits for message 2.
    CHECK(pushed == 6);
    CAPTURE(error);
    CHECK(error.find("push: reader rank " + std::to_string(stuck) + " ") != std::string::npos);
    CHECK(error.find("did not consume message 2 within 1") != std::string::npos);
    CHECK(error.find("full ring of 4") != std::string::npos);
  } else if (world.rank() == stuck) {
    CHECK(queue.pop().has_value());
    CHECK(queue.pop().has_value());
    // ... and stops: this rank goes on to free the queue (collective) without reading more.
  } else {
    int got = 0;
    const std::string error = error_of([&] {
      while (queue.pop())
        ++got;
    });
    CHECK(got == 6);
    CAPTURE(error);
    CHECK(error.find("received nothing from the writer (rank 0") != std::string::npos);
    CHECK(error.find("waiting for message 6") != std::string::npos);
  }
}

TEST_CASE("broadcast queue: a writer destroyed without close() is reported, not taken for an end") {
  const baton::Communicator& world = baton::test::world();
  std::string error;
  int got = 0;
  {
    baton::BroadcastQueue queue(world, 0, baton::QueueOptions{8, 64, 30s});
    if (queue.is_writer()) {
      queue.push(std::string("one"));
      queue.push(std::string("two"));
    } else {
      error = error_of([&] {
        while (queue.pop())
          ++got;
      });
    }
  }
  if (world.rank() != 0) {
    CHECK(got == 2);
    CHECK(error.find("abandoned the stream after 2 messages") != std::string::npos);
  }
}

TEST_CASE("broadcast queue: misuse is a clear error") {
  const baton::Communicator& world = baton::test::world();
  {
    baton::BroadcastQueue queue(world, 0, baton::QueueOptions{2, 8, 30s});
    if (queue.is_writer()) {
      CHECK(error_of([&] { queue.pop(); }).find("is the writer; only readers") !=
            std::string::npos);
      CHECK(error_of([&] { queue.push(nullptr, 3); }).find("data is null") != std::string::npos);
      queue.drain();
      queue.close();
      queue.close();  // idempotent
      CHECK(error_of([&] { queue.push(std::string("late")); }).find("the queue is closed") !=
            std::string::npos);
    } else {
      CHECK(error_of([&] { queue.push(std::string("x")); }).find("is a reader; only the writer") !=
            std::string::npos);
      CHECK_FALSE(queue.pop().has_value());
    }
  }
  // Arguments that differ between ranks, or a writer outside the communicator: the same error on
  // every rank, and nobody waits.
  const std::string different = error_of([&] {
    baton::BroadcastQueue q(world, 0, baton::QueueOptions{world.rank() == 0 ? 4u : 8u, 8, 30s});
  });
  if (world.size() > 1)
    CHECK(different.find("the ranks passed different chunks") != std::string::npos);
  else
    CHECK(different.empty());
  const std::string outside =
      error_of([&] { baton::BroadcastQueue q(world, world.size(), baton::QueueOptions{}); });
  CHECK(outside.find("writer " + std::to_string(world.size()) + " is not a rank") !=
        std::string::npos);
}

TEST_CASE("broadcast queue: drain() returns once every reader has taken every message") {
  const baton::Communicator& world = baton::test::world();
  baton::BroadcastQueue queue(world, 0, baton::QueueOptions{16, 64, 30s});
  if (queue.is_writer()) {
    for (int i = 0; i < 10; ++i)
      queue.push(std::to_string(i));
    queue.drain();  // would time out (and throw) if a reader were behind
    queue.close();
  } else {
    std::this_thread::sleep_for(50ms);
    int got = 0;
    while (queue.pop())
      ++got;
    CHECK(got == 10);
  }
}
