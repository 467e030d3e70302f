#pragma once
/// \file
/// Byte messages: send, matched-probe receive (the receiver learns the size), non-blocking sends
/// that own their buffer, probes, and receives with a deadline. Tags are channels.

#include <mpi.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "baton/comm/communicator.hpp"
#include "baton/transport/byte_buffer.hpp"

namespace baton {

/// Receive from any rank / with any tag.
inline constexpr int any_source = MPI_ANY_SOURCE;
inline constexpr int any_tag = MPI_ANY_TAG;

/// A message waiting to be received: who sent it, on which tag, how many bytes.
struct MessageInfo {
  int source = -1;
  int tag = -1;
  std::size_t size = 0;
};

/// A received byte message.
struct Message {
  int source = -1;
  int tag = -1;
  ByteBuffer bytes;
};

/// Throws baton::Error unless 0 <= dest < comm.size(). `operation` names the caller.
void check_rank(const Communicator& comm, int rank, const char* operation,
                bool allow_any_source = false);
/// Throws baton::Error unless 0 <= tag <= comm.tag_ub() (or any_tag, when allowed).
void check_tag(const Communicator& comm, int tag, const char* operation,
               bool allow_any_tag = false);

/// Blocking send of `size` bytes (any size, also past 2 GiB) to `dest` on channel `tag`.
void send(const Communicator& comm, const void* data, std::size_t size, int dest, int tag);
inline void send(const Communicator& comm, const std::vector<std::byte>& bytes, int dest, int tag) {
  send(comm, bytes.data(), bytes.size(), dest, tag);
}
inline void send(const Communicator& comm, const ByteBuffer& bytes, int dest, int tag) {
  send(comm, bytes.data(), bytes.size(), dest, tag);
}

/// Receives the next message from `source` (or any_source) on `tag` (or any_tag), whatever its
/// size. MPI_Mprobe + MPI_Mrecv: the matched message cannot be taken by another thread in between.
Message recv(const Communicator& comm, int source = any_source, int tag = any_tag);

/// As recv(), but throws baton::Error naming the source and tag if nothing matches within
/// `timeout`. Nothing is consumed then: a message that arrives later is still there for the next
/// receive.
Message recv(const Communicator& comm, int source, int tag, std::chrono::duration<double> timeout);

/// Blocks until a matching message is there; does not receive it.
MessageInfo probe(const Communicator& comm, int source = any_source, int tag = any_tag);
/// Returns the next matching message's description if one is there now; does not receive it.
std::optional<MessageInfo> iprobe(const Communicator& comm, int source = any_source,
                                  int tag = any_tag);

/// A non-blocking send that keeps its data alive until the send completes. Move-only.
/// The destructor waits for completion (a send handle never abandons its buffer); errors there are
/// reported on stderr because destructors do not throw: call wait() to see them as exceptions.
class SendHandle {
 public:
  SendHandle() noexcept = default;
  /// Starts MPI_Isend of [data, data + size), keeping `keep_alive` until completion.
  SendHandle(const Communicator& comm, std::shared_ptr<const void> keep_alive, const void* data,
             std::size_t size, int dest, int tag);
  ~SendHandle();
  SendHandle(SendHandle&& other) noexcept;
  SendHandle& operator=(SendHandle&& other) noexcept;
  SendHandle(const SendHandle&) = delete;
  /// Starts MPI_Isend(buffer, count, type) (a derived type may be freed after this returns),
  /// keeping `keep_alive` until completion. For senders of composite messages.
  static SendHandle start(const Communicator& comm, std::shared_ptr<const void> keep_alive,
                          const void* buffer, int count, MPI_Datatype type, int dest, int tag);
  /// Posts a second send on `comm` (e.g. the data of a split View message) completed with the
  /// first.
  void also_send(MPI_Comm comm, const void* buffer, int count, MPI_Datatype type, int dest,
                 int tag);
  SendHandle& operator=(const SendHandle&) = delete;

  /// True once the send has completed (and then the buffer is released).
  bool test();
  /// Blocks until the send has completed, then releases the buffer.
  void wait();
  /// True while a send is in flight.
  bool active() const noexcept {
    return requests_[0] != MPI_REQUEST_NULL || requests_[1] != MPI_REQUEST_NULL;
  }

 private:
  void finish() noexcept;

  std::array<MPI_Request, 2> requests_{MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::shared_ptr<const void> keep_alive_;
};

/// Non-blocking send that takes ownership of `bytes`.
SendHandle isend(const Communicator& comm, std::vector<std::byte> bytes, int dest, int tag);
SendHandle isend(const Communicator& comm, ByteBuffer bytes, int dest, int tag);

namespace detail {
/// A matched message (MPI_Mprobe/MPI_Improbe), to be received with MPI_Mrecv exactly once.
struct Matched {
  MPI_Message handle = MPI_MESSAGE_NULL;
  MessageInfo info;
};
Matched mprobe(const Communicator& comm, int source, int tag, const char* operation);
std::optional<Matched> improbe(const Communicator& comm, int source, int tag,
                               const char* operation);
/// MPI_Mrecv of a matched message into `size` bytes at `data` (size must equal the message's).
void mrecv_bytes(const Communicator& comm, Matched& matched, void* data);
}  // namespace detail

}  // namespace baton
