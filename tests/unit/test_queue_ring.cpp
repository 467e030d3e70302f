// The broadcast queue's ordering logic with threads standing in for ranks: one writer, three
// readers, 10^5 messages of random sizes. Also built with ThreadSanitizer (queue_ring_tsan), where
// a missing acquire/release shows up as a data race report on the payload.
#include <doctest/doctest.h>

#include <atomic>
#include <baton/shm/detail/queue_ring.hpp>
#include <chrono>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

using baton::detail::QueueRing;

namespace {

using Clock = std::chrono::steady_clock;

struct Ring {
  Ring(int readers, std::size_t chunks, std::size_t chunk_bytes)
      : memory((QueueRing::bytes_needed(readers, chunks, chunk_bytes) + 127) / 64),
        ring(reinterpret_cast<std::byte*>(memory.data()), readers, chunks, chunk_bytes) {
    ring.initialise();
  }
  struct alignas(64) Line {
    std::byte b[64];
  };
  std::vector<Line> memory;
  QueueRing ring;
};

std::size_t size_of(std::uint64_t seq, std::size_t largest) {
  return static_cast<std::size_t>((seq * 2654435761u) % (largest + 1));
}

std::byte byte_of(std::uint64_t seq, std::size_t i) {
  return static_cast<std::byte>((seq * 131 + i * 7) & 0xffu);
}

Clock::duration patience(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

}  // namespace

TEST_CASE("queue ring: 10^5 messages of random sizes reach 3 reader threads whole and in order") {
  constexpr int readers = 3;
  constexpr std::uint64_t messages = 100000;
  constexpr std::size_t chunk_bytes = 200;
  Ring r(readers, 16, chunk_bytes);
  std::atomic<int> failures{0};
  std::vector<std::uint64_t> received(readers, 0);
  std::vector<std::thread> threads;
  for (int reader = 0; reader < readers; ++reader) {
    threads.emplace_back([&, reader] {
      for (std::uint64_t seq = 0; seq <= messages; ++seq) {
        if (!r.ring.wait_published(seq, patience(60))) {
          ++failures;
          return;
        }
        const QueueRing::Slot slot = r.ring.read(seq);
        if (seq == messages) {
          if (slot.kind != QueueRing::Kind::closed)
            ++failures;
          r.ring.finish(reader, seq);
          return;
        }
        bool ok = slot.kind == QueueRing::Kind::message && slot.size == size_of(seq, chunk_bytes);
        for (std::size_t i = 0; ok && i < slot.size; ++i)
          ok = slot.payload[i] == byte_of(seq, i);
        if (!ok)
          ++failures;
        r.ring.finish(reader, seq);
        ++received[static_cast<std::size_t>(reader)];
      }
    });
  }
  std::vector<std::byte> message(chunk_bytes);
  bool writer_ok = true;
  for (std::uint64_t seq = 0; seq < messages && writer_ok; ++seq) {
    const std::size_t size = size_of(seq, chunk_bytes);
    for (std::size_t i = 0; i < size; ++i)
      message[i] = byte_of(seq, i);
    writer_ok = r.ring.wait_for_room(seq, patience(60));
    if (writer_ok)
      r.ring.publish(seq, QueueRing::Kind::message, size, message.data());
  }
  writer_ok = writer_ok && r.ring.wait_for_room(messages, patience(60));
  if (writer_ok)
    r.ring.publish(messages, QueueRing::Kind::closed, 0, nullptr);
  for (auto& t : threads)
    t.join();
  CHECK(writer_ok);
  CHECK(failures.load() == 0);
  for (int reader = 0; reader < readers; ++reader) {
    CHECK(received[static_cast<std::size_t>(reader)] == messages);
    CHECK(r.ring.consumed(reader) == messages + 1);
  }
}

TEST_CASE("queue ring: a reader that stops consuming is the one named when the ring is full") {
  Ring r(3, 4, 8);
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int reader = 0; reader < 3; ++reader) {
    threads.emplace_back([&, reader] {
      // Reader 1 finishes two messages and then stops; the others keep up.
      for (std::uint64_t seq = 0; seq < (reader == 1 ? 2u : 1000u); ++seq) {
        while (!r.ring.wait_published(seq, patience(0.01))) {
          if (stop)
            return;
        }
        r.ring.read(seq);
        r.ring.finish(reader, seq);
      }
    });
  }
  std::uint64_t seq = 0;
  for (; seq < 100; ++seq) {
    if (!r.ring.wait_for_room(seq, patience(0.5)))
      break;
    r.ring.publish(seq, QueueRing::Kind::message, 1, "x");
  }
  stop = true;
  for (auto& t : threads)
    t.join();
  CHECK(seq == 6);  // chunks 0-3, then messages 4 and 5 reuse the chunks of 0 and 1
  CHECK(r.ring.readers_behind(seq) == std::vector<int>{1});
  CHECK(r.ring.readers_below(seq) == std::vector<int>{1});
  CHECK(r.ring.consumed(1) == 2);
}

TEST_CASE("queue ring: waits end at their deadline; kinds and sizes read back") {
  Ring r(1, 2, 64);
  const auto start = Clock::now();
  CHECK_FALSE(r.ring.wait_published(0, patience(0.05)));
  CHECK(Clock::now() - start >= std::chrono::milliseconds(50));
  CHECK(r.ring.header_matches());
  r.ring.publish(0, QueueRing::Kind::overflow, 1u << 20, nullptr);
  r.ring.publish(1, QueueRing::Kind::abandoned, 0, nullptr);
  CHECK_FALSE(r.ring.has_room(2));
  CHECK(r.ring.read(0).kind == QueueRing::Kind::overflow);
  CHECK(r.ring.read(0).size == (1u << 20));
  r.ring.finish(0, 0);
  CHECK(r.ring.has_room(2));
  CHECK(r.ring.read(1).kind == QueueRing::Kind::abandoned);
  CHECK_FALSE(r.ring.is_published(2));
}
