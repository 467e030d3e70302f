#pragma once
/// \file
/// baton::BroadcastQueue: one writer, every other rank of a node communicator a reader; a stream
/// of messages that every reader receives whole and in order.
///
/// Messages up to QueueOptions::chunk_bytes travel through a ring of chunks in node shared memory
/// (NodeWindow, so no POSIX names and nothing outlives the job); larger ones go through MPI (the
/// ring carries a marker in their place, so the order is kept). The ordering logic and why it is
/// correct: queue_ring.hpp. Waiting on both sides is spin-then-yield with a deadline:
/// - the writer, when the ring is full, throws a baton::Error naming the reader rank(s) that did
///   not consume the oldest message;
/// - a reader throws a baton::Error naming the writer when nothing arrives in time.
/// close() ends the stream cleanly: every reader's pop() then returns false. A writer destroyed
/// without close() (an exception unwinding) leaves an "abandoned" marker when the ring has room,
/// and readers throw instead of mistaking the cut stream for a complete one.
///
/// Construction and destruction are collective over the communicator (the window is freed
/// collectively). Not thread-safe: one thread per rank uses the queue.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "baton/comm/communicator.hpp"
#include "baton/shm/detail/queue_ring.hpp"
#include "baton/shm/node_window.hpp"
#include "baton/transport/bytes.hpp"

namespace baton {

struct QueueOptions {
  /// Chunks in the ring: how many messages the writer may be ahead of the slowest reader.
  std::size_t chunks = 64;
  /// The largest message carried in shared memory; larger ones go through MPI.
  std::size_t chunk_bytes = 64 * 1024;
  /// How long this rank waits (the writer for room in the ring, a reader for a message) before it
  /// throws. May differ between ranks.
  std::chrono::duration<double> deadline = std::chrono::seconds(60);
};

class BroadcastQueue {
 public:
  /// Collective over `comm`, whose ranks must share one node (else the same baton::Error on every
  /// rank); rank `writer` writes, the others read. Every rank passes the same writer, chunks and
  /// chunk_bytes (checked: else the same baton::Error on every rank). The communicator is
  /// duplicated.
  BroadcastQueue(const Communicator& comm, int writer = 0, QueueOptions options = {});
  /// Collective (frees the shared window). A writer that did not close() leaves an "abandoned"
  /// marker first, when the ring has room.
  ~BroadcastQueue();
  BroadcastQueue(const BroadcastQueue&) = delete;
  BroadcastQueue& operator=(const BroadcastQueue&) = delete;

  bool is_writer() const noexcept { return comm_.rank() == writer_; }
  int writer() const noexcept { return writer_; }
  /// The number of readers (ranks other than the writer).
  int readers() const noexcept { return comm_.size() - 1; }
  const QueueOptions& options() const noexcept { return options_; }
  /// Messages pushed (writer) or popped (reader) so far.
  std::uint64_t count() const noexcept { return next_; }

  /// Writer: appends a message of `size` bytes (0 allowed). Returns once the message is in the ring
  /// (copied, or its MPI sends posted); waits while the ring is full, up to the deadline, then
  /// throws a baton::Error naming the readers that have not consumed the oldest message.
  void push(const void* data, std::size_t size);
  void push(const std::vector<std::byte>& message) { push(message.data(), message.size()); }
  void push(const std::string& message) { push(message.data(), message.size()); }

  /// Reader: the next message into `message` (resized); false once the writer has closed the
  /// stream. Throws baton::Error naming the writer when nothing arrives within the deadline, or
  /// when the writer abandoned the stream.
  bool pop(std::vector<std::byte>& message);
  /// Reader: the next message, or std::nullopt once the stream is closed.
  std::optional<std::vector<std::byte>> pop();

  /// Writer: waits until every reader has consumed every message pushed so far (deadline as for
  /// push()).
  void drain();
  /// Writer: ends the stream (readers' pop() returns false after the last message) and waits until
  /// every reader has seen the end and every MPI send is complete. Idempotent. Readers: no-op.
  void close();

 private:
  void require_writer(const char* operation) const;
  void require_reader(const char* operation) const;
  std::chrono::steady_clock::duration patience() const;
  [[noreturn]] void throw_readers_behind(const char* operation, std::uint64_t count) const;
  template <class Ready>
  bool wait_writer(Ready&& ready);
  void wait_for_room(const char* operation);
  void complete_sends(bool all);
  int comm_rank_of_reader(int reader) const noexcept {
    return reader < writer_ ? reader : reader + 1;
  }

  Communicator comm_;
  int writer_ = 0;
  QueueOptions options_;
  NodeWindow window_;
  detail::QueueRing ring_;
  std::uint64_t next_ = 0;  // the next message to push or pop
  bool closed_ = false;
  std::deque<SendHandle> pending_;  // writer: overflow sends in flight, oldest first
};

}  // namespace baton
