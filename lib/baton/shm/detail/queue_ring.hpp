#pragma once
/// \file
/// The ordering logic of baton::BroadcastQueue (broadcast_queue.hpp), apart from MPI so that it
/// also runs with threads standing in for ranks (a ThreadSanitizer test does exactly that).
///
/// ## Layout (in the writer's shared segment; every field below on its own 64-byte line)
///   header: magic, reader count, chunk count, chunk payload bytes
///   consumed[r] (one per reader): how many messages reader r has finished with
///   chunk[c] (c = 0 .. chunks-1): a line {published, kind, size}, then `chunk_bytes` of payload
/// Message s (counted from 0) goes to chunk s % chunks; chunk.published == s + 1 says it is there.
///
/// ## Why it is correct
/// - Writer, message s: it may reuse chunk s % chunks only when message s - chunks, which last used
///   it, is finished by every reader: it waits until consumed[r] >= s + 1 - chunks for every r,
///   loading consumed[r] with *acquire*. Each reader stored consumed[r] with *release* after its
///   last read of that chunk, so those reads happen before the writer's new stores (no reader can
///   see a half-overwritten payload).
/// - The writer then stores the payload, kind and size with plain stores and publishes with a
///   *release* store of chunk.published = s + 1; a reader *acquire*-loads published and, seeing
///   s + 1, sees every store made before it (the whole payload).
/// - published only grows through s + 1 - chunks, s + 1, s + 1 + chunks, ... and the writer cannot
///   publish s + chunks before every reader finished s, so a reader waiting for s + 1 never
///   mistakes a later message for its own.
/// - 64-bit counters: no wrap-around within any run.
/// - Across processes the shared segment is ordinary memory mapped twice; lock-free 8-byte atomics
///   are address-free, so acquire/release pair across processes exactly as across threads.
///   MPI's unified memory model additionally asks for MPI_Win_sync between a process's stores and
///   another's loads of window memory; BroadcastQueue passes it as the `sync` hook, called after
///   the acquire that precedes reads of the chunk and before the release that follows writes to it
///   (on common hardware MPI_Win_sync is a full memory barrier: redundant with the atomics, but it
///   keeps the code correct by MPI's rules as well as by C++'s).
/// - Every field a process writes is written by it alone (header and chunks: the writer;
///   consumed[r]: reader r); no read-modify-write is needed.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

namespace baton::detail {

class QueueRing {
 public:
  enum class Kind : std::uint32_t { message = 1, overflow = 2, closed = 3, abandoned = 4 };
  using Clock = std::chrono::steady_clock;
  /// The memory barrier MPI asks for (MPI_Win_sync); nullptr for none.
  using SyncHook = void (*)(void* context);

  struct Slot {
    Kind kind;
    std::size_t size;
    const std::byte* payload;
  };

  static constexpr std::size_t line = 64;
  /// The bytes a ring needs.
  static std::size_t bytes_needed(int readers, std::size_t chunks, std::size_t chunk_bytes);

  QueueRing() = default;
  /// A ring over [base, base + bytes_needed(...)), aligned to 64 bytes.
  QueueRing(std::byte* base, int readers, std::size_t chunks, std::size_t chunk_bytes,
            SyncHook sync = nullptr, void* sync_context = nullptr);

  /// Writer, before any reader looks: writes the header and zeroes every counter.
  void initialise();
  /// Reader: true when the header matches this ring's parameters.
  bool header_matches() const noexcept;

  int readers() const noexcept { return readers_; }
  std::size_t chunks() const noexcept { return chunks_; }
  std::size_t chunk_bytes() const noexcept { return chunk_bytes_; }

  // Writer side.
  /// True when message `seq`'s chunk is free (every reader finished message seq - chunks).
  bool has_room(std::uint64_t seq) const noexcept;
  /// Waits (spin, then yield) until has_room(seq), at most `patience`; false if it ran out.
  bool wait_for_room(std::uint64_t seq, Clock::duration patience) const;
  /// The readers that have not finished message seq - chunks (those holding chunk seq % chunks).
  std::vector<int> readers_behind(std::uint64_t seq) const;
  /// True when every reader has finished `count` messages.
  bool all_consumed(std::uint64_t count) const noexcept;
  /// Readers whose consumed count is below `count`.
  std::vector<int> readers_below(std::uint64_t count) const;
  /// Publishes message `seq` (has_room(seq) must hold): copies `size` bytes of `data` into the
  /// chunk for Kind::message (size <= chunk_bytes()); for the other kinds only `size` is recorded.
  void publish(std::uint64_t seq, Kind kind, std::size_t size, const void* data);

  // Reader side.
  /// True when message `seq` is published.
  bool is_published(std::uint64_t seq) const noexcept;
  /// Waits (spin, then yield) until is_published(seq), at most `patience`; false if it ran out.
  bool wait_published(std::uint64_t seq, Clock::duration patience) const;
  /// Message `seq` (is_published(seq) must hold); payload valid until finish(reader, seq).
  Slot read(std::uint64_t seq) const;
  /// Reader `reader` is done with message `seq` (its chunk may be reused).
  void finish(int reader, std::uint64_t seq);
  /// How many messages reader `reader` has finished.
  std::uint64_t consumed(int reader) const noexcept;

 private:
  std::atomic<std::uint64_t>& consumed_counter(int reader) const noexcept;
  std::byte* chunk(std::uint64_t seq) const noexcept;
  std::atomic<std::uint64_t>& published(std::uint64_t seq) const noexcept;
  void sync() const;

  std::byte* base_ = nullptr;
  int readers_ = 0;
  std::size_t chunks_ = 0;
  std::size_t chunk_bytes_ = 0;
  std::size_t chunk_stride_ = 0;
  SyncHook sync_ = nullptr;
  void* sync_context_ = nullptr;
};

/// Spin, then yield: the wait of both sides of the queue. Polls `ready()`: first in a tight loop
/// (a message on its way arrives within microseconds), then giving the core away between polls
/// (ranks may outnumber cores). Returns false when `patience` has passed since the tight loop ended
/// (the clock is read only once the tight loop is over).
template <class Ready>
bool spin_then_yield(Ready&& ready, std::chrono::steady_clock::duration patience) {
  constexpr int spins = 2000;
  for (int i = 0; i < spins; ++i) {
    if (ready())
      return true;
  }
  const auto deadline = std::chrono::steady_clock::now() + patience;
  for (unsigned i = 0;; ++i) {
    if (ready())
      return true;
    if (i % 16 == 0 && std::chrono::steady_clock::now() >= deadline)
      return ready();
    std::this_thread::yield();
  }
}

}  // namespace baton::detail
