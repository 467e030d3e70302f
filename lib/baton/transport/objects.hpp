#pragma once
/// \file
/// Object messages: send, receive and broadcast values of any type baton::Serializer knows
/// (trivially copyable values, std::string, std::vector, std::pair, and user types that specialize
/// the hook; see serialize.hpp), over Baton's byte transport (bytes.hpp).
///
/// - A trivially copyable value travels raw: sizeof(T) bytes, no header, no copy on send. A receive
///   checks the message's size against sizeof(T) and throws baton::Error naming the source, the
///   tag and both sizes when they differ.
/// - Any other type travels as its Serializer encoding; a receive decodes it and then requires that
///   nothing is left over.
/// - A message that fails either check has been received (consumed): the next message on that
///   channel is received normally.

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "baton/comm/communicator.hpp"
#include "baton/core/error.hpp"
#include "baton/transport/byte_buffer.hpp"
#include "baton/transport/bytes.hpp"
#include "baton/transport/serialize.hpp"

namespace baton {

namespace detail {

/// check_rank + check_tag with the caller's name, before anything is encoded.
void check_object_destination(const Communicator& comm, int dest, int tag, const char* operation);

/// Receives the next matching message into [data, data + size) if it has exactly `size` bytes;
/// otherwise receives it anyway (so it is consumed) and throws baton::Error naming source, tag and
/// both sizes.
MessageInfo recv_raw_object(const Communicator& comm, int source, int tag, void* data,
                            std::size_t size);

/// Receives the next matching message, whatever its size (checks named "baton::recv_object").
Message recv_object_bytes(const Communicator& comm, int source, int tag);

/// The error thrown when received bytes do not decode: names `operation`, the message (from
/// `source` with `tag`, or for tag < 0 the broadcast from root `source`), its size, and the cause.
Error object_decode_error(const Communicator& comm, const char* operation, int source, int tag,
                          std::size_t size, const char* cause);

/// Broadcast of raw bytes whose size every rank knows (one MPI_Bcast).
void broadcast_raw_object(const Communicator& comm, void* data, std::size_t size, int root);

/// Broadcast of an encoding: the root passes its bytes (`root_bytes`), the others nullptr and get
/// the bytes back. `root_failed` (root only) tells the other ranks that the root could not encode
/// its value: they throw baton::Error instead of waiting.
ByteBuffer broadcast_object_bytes(const Communicator& comm,
                                  const std::vector<std::byte>* root_bytes, int root,
                                  bool root_failed = false);

template <class T>
constexpr void require_serializable() {
  static_assert(is_serializable_v<T>,
                "no baton::Serializer for this type: specialize baton::Serializer<T> (see "
                "baton/transport/serialize.hpp)");
}

/// For raw types: `fill(bytes)` puts sizeof(T) bytes into a staging area (on the stack when
/// small) and returns where they came from; they are then decoded through the serializer (which
/// checks e.g. that a bool is 0 or 1). Decode errors name the message.
template <class T, class Fill>
T receive_raw(const Communicator& comm, const char* operation, Fill&& fill) {
  static_assert(min_size_v<T> == sizeof(T), "a raw serializer encodes exactly sizeof(T) bytes");
  constexpr bool small = sizeof(T) <= 256;
  alignas(T) std::byte local[small ? sizeof(T) : 1];
  ByteBuffer heap(small ? 0 : sizeof(T));
  std::byte* bytes = small ? local : heap.data();
  const MessageInfo from = fill(bytes);
  try {
    return decode_object<T>(bytes, sizeof(T));
  } catch (const Error& e) {
    throw object_decode_error(comm, operation, from.source, from.tag, sizeof(T), e.what());
  }
}

}  // namespace detail

/// Blocking send of `value` to `dest` on channel `tag`. Trivially copyable values are sent in
/// place (sizeof(T) bytes); others are encoded first. Bad dest/tag throw before encoding.
template <class T>
void send_object(const Communicator& comm, const T& value, int dest, int tag) {
  detail::require_serializable<T>();
  detail::check_object_destination(comm, dest, tag, "baton::send_object");
  if constexpr (detail::travels_raw_v<T>) {
    send(comm, &value, sizeof(T), dest, tag);
  } else {
    const std::vector<std::byte> bytes = encode_object(value);
    send(comm, bytes, dest, tag);
  }
}

/// Non-blocking send of `value`: the handle owns a copy of its bytes (the encoding, or the
/// sizeof(T) bytes of a trivially copyable value), so `value` may change or go away at once.
template <class T>
SendHandle isend_object(const Communicator& comm, const T& value, int dest, int tag) {
  detail::require_serializable<T>();
  detail::check_object_destination(comm, dest, tag, "baton::isend_object");
  return isend(comm, encode_object(value), dest, tag);
}

/// Receives the next message from `source` (or any_source) on `tag` (or any_tag) and decodes it as
/// a T. When `info` is not null, a successful receive stores the message's source, tag and size
/// there (useful with any_source). Throws baton::Error when the message does not hold exactly one
/// T; the message is consumed either way.
template <class T>
T recv_object(const Communicator& comm, int source, int tag, MessageInfo* info = nullptr) {
  detail::require_serializable<T>();
  if constexpr (detail::travels_raw_v<T>) {
    return detail::receive_raw<T>(comm, "baton::recv_object", [&](std::byte* bytes) {
      const MessageInfo got = detail::recv_raw_object(comm, source, tag, bytes, sizeof(T));
      if (info) {
        *info = got;
      }
      return got;
    });
  } else {
    const Message message = detail::recv_object_bytes(comm, source, tag);
    if (info) {
      *info = MessageInfo{message.source, message.tag, message.bytes.size()};
    }
    try {
      return decode_object<T>(message.bytes.data(), message.bytes.size());
    } catch (const Error& e) {
      throw detail::object_decode_error(comm, "baton::recv_object", message.source, message.tag,
                                        message.bytes.size(), e.what());
    }
  }
}

/// Collective over `comm`: every rank's `value` becomes the root's. Trivially copyable values are
/// one MPI_Bcast of sizeof(T) bytes in place; others are encoded at the root, their size broadcast
/// as a u64, then the bytes (any size, also past 2 GiB), and decoded on the other ranks.
/// A bad root throws on every rank (before any MPI call). If the root cannot encode its value, it
/// rethrows that error and the other ranks throw baton::Error too (nobody is left waiting). A
/// decode failure throws on the ranks where it happens (the broadcast itself is complete).
template <class T>
void broadcast_object(const Communicator& comm, T& value, int root) {
  detail::require_serializable<T>();
  check_rank(comm, root, "baton::broadcast_object");
  if constexpr (detail::travels_raw_v<T>) {
    if (comm.rank() == root) {
      detail::broadcast_raw_object(comm, &value, sizeof(T), root);
    } else {
      value = detail::receive_raw<T>(comm, "baton::broadcast_object", [&](std::byte* bytes) {
        detail::broadcast_raw_object(comm, bytes, sizeof(T), root);
        return MessageInfo{root, -1, sizeof(T)};
      });
    }
  } else if (comm.rank() == root) {
    std::vector<std::byte> bytes;
    try {
      bytes = encode_object(value);
    } catch (...) {
      detail::broadcast_object_bytes(comm, nullptr, root, true);  // the others throw too
      throw;
    }
    detail::broadcast_object_bytes(comm, &bytes, root);
  } else {
    const ByteBuffer bytes = detail::broadcast_object_bytes(comm, nullptr, root);
    try {
      value = decode_object<T>(bytes.data(), bytes.size());
    } catch (const Error& e) {
      throw detail::object_decode_error(comm, "baton::broadcast_object", root, -1, bytes.size(),
                                        e.what());
    }
  }
}

}  // namespace baton
