#pragma once
/// \file
/// The receiving side of a View message once MPI has matched it (internal; see view_message.hpp).
/// Where the bytes land, for a View in device memory (docs/transport.md has the table):
///
/// - up to 4 KiB (envelope included): a host stack buffer, then one host-to-device copy, on either
///   path (cheaper than a device allocation for a message this small);
/// - direct path, larger: the whole message lands in a device buffer; the 72-byte envelope is
///   copied to the host and the data copied on the device into the View (receive into) or into the
///   new View (allocating receive); the data of a split-form (large) message lands in the View
///   itself when its layout matches, else in a device buffer;
/// - staged path: a host buffer, then one host-to-device copy.
///
/// Host Views on the direct path receive in place where the layout allows. Copies run on the
/// execution space instance given (the default instance otherwise), fenced before returning.
///
/// The `Device` template parameter says whether the View's memory is treated as device memory; it
/// defaults to "not host-accessible", and the tests set it to run the device code on host memory.

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "baton/core/check_mpi.hpp"
#include "baton/transport/bytes.hpp"
#include "baton/transport/detail/datatype.hpp"
#include "baton/transport/detail/view_send.hpp"
#include "baton/transport/detail/view_wire.hpp"

namespace baton::detail {

template <class V>
inline constexpr bool device_memory_v = !host_view_v<V>;

/// A stack buffer for one small message; the message starts 8 bytes in, so that its data (after the
/// 72-byte envelope) is 16-byte aligned.
struct SmallMessage {
  alignas(16) std::byte storage[small_message + 8];
  std::byte* message() noexcept { return storage + 8; }
  const std::byte* payload() const noexcept { return storage + 8 + ViewEnvelope::wire_size; }
};

/// The error context of a receive, as a callable for error_text(): the text is only built when an
/// error is thrown ("<operation>: <what> (message from source S with tag T, on rank R)").
inline auto context(const char* operation, const MessageInfo& info, const Communicator& comm) {
  return [operation, info, &comm] {
    return std::pair<std::string, std::string>(
        operation, "message from source " + std::to_string(info.source) + " with tag " +
                       std::to_string(info.tag) + ", on rank " + std::to_string(comm.rank()));
  };
}

/// Where a whole message starts in a buffer so that its data (after the 72-byte envelope) is
/// 16-byte aligned (long double included) when the buffer is.
inline constexpr std::size_t message_offset = 56;

/// A host copy of a whole message.
struct HostMessage {
  ByteBuffer storage;
  std::byte* message = nullptr;
  std::size_t size = 0;
  const std::byte* payload() const { return message + ViewEnvelope::wire_size; }
};

inline HostMessage receive_to_host(const Communicator& comm, Matched& matched) {
  HostMessage m{ByteBuffer(matched.info.size + message_offset), nullptr, matched.info.size};
  m.message = m.storage.data() + message_offset;
  mrecv_bytes(comm, matched, m.message);
  return m;
}

/// A whole message in memory space MS (the direct device path), starting at message_offset.
template <class MS>
struct PackedMessage {
  Kokkos::View<unsigned char*, MS> storage;
  explicit PackedMessage(std::size_t capacity)
      : storage(Kokkos::view_alloc(Kokkos::WithoutInitializing, "baton::packed"),
                capacity + message_offset) {}
  unsigned char* message() const { return storage.data() + message_offset; }
  /// Copies the first `size` bytes (at most the envelope) to `out` on the host.
  template <class Exec>
  void envelope_to_host(const Exec& space, std::byte* out, std::size_t size) const {
    Kokkos::View<unsigned char*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host(
        reinterpret_cast<unsigned char*>(out), size);
    deep_copy_on(space, host,
                 Kokkos::subview(storage, std::make_pair(message_offset, message_offset + size)));
    space.fence();
  }
};

/// Matches the data message of a split-form View message (envelope `e` from `source`).
template <class Where>
Matched match_split_data(const Communicator& comm, int source, const ViewEnvelope& e,
                         const Where& where) {
  if (comm.payload() == MPI_COMM_NULL) {
    throw Error(error_text(
        where, "a split View message arrived on a communicator without a payload communicator"));
  }
  Matched m;
  MPI_Status status;
  check_mpi(MPI_Mprobe(source, static_cast<int>(e.sequence), comm.payload(), &m.handle, &status),
            "MPI_Mprobe", comm.raw());
  MPI_Count count = 0;
  check_mpi(MPI_Get_elements_x(&status, MPI_BYTE, &count), "MPI_Get_elements_x", comm.raw());
  m.info = MessageInfo{status.MPI_SOURCE, status.MPI_TAG, static_cast<std::size_t>(count)};
  return m;
}

/// Receives a matched message into scratch memory and drops it (after an error: nothing is left
/// behind).
inline void drain(const Communicator& comm, Matched& m) {
  ByteBuffer scratch(m.info.size);
  mrecv_bytes(comm, m, scratch.data());
}

/// Where the data of a split-form message for View v lands: in v itself when MPI may write v's
/// memory in the envelope's element order.
template <class V>
bool split_data_in_place(const Communicator& comm, const ViewEnvelope& e, const V& v) {
  return pass_directly<typename V::memory_space>(comm) && in_wire_form(v) &&
         layouts_agree(e, natural_layout<V>());
}

/// Receives the data message of a split-form View message (envelope `e` from `source`) into v.
/// On a size or shape mismatch the data message is drained before the error is thrown.
template <bool Device, class Exec, class V, class Where>
void receive_split_data(const Exec& space, const Communicator& comm, int source,
                        const ViewEnvelope& e, const V& v, const Where& where) {
  using T = value_t<V>;
  using MS = typename V::memory_space;
  Matched data = match_split_data(comm, source, e, where);
  try {
    if (data.info.size != e.data_bytes()) {
      throw Error(error_text(where, "the data of " + e.describe() + " is " +
                                        std::to_string(data.info.size) + " bytes, expected " +
                                        std::to_string(e.data_bytes())));
    }
    check_matches(e, v, where);
  } catch (...) {
    drain(comm, data);
    throw;
  }
  if (split_data_in_place(comm, e, v)) {
    mrecv_bytes(comm, data, v.data());
    return;
  }
  if (Device && pass_directly<MS>(comm)) {
    Kokkos::View<T*, MS> landed(Kokkos::view_alloc(Kokkos::WithoutInitializing, "baton::landed"),
                                v.size());
    mrecv_bytes(comm, data, landed.data());
    copy_from_wire<MS>(space, v, landed.data(), e.layout);
    return;
  }
  auto staging = staging_buffer<T>(v.size());
  mrecv_bytes(comm, data, staging.data());
  copy_from_host(space, v, staging.data(), e.layout);
}

/// Direct device path of a receive: the whole message lands in a buffer in v's memory space, the
/// envelope is copied to the host. Returns the envelope (checked against the message size).
template <class MS, class Exec>
ViewEnvelope receive_packed_message(const Exec& space, const Communicator& comm, Matched& matched,
                                    const PackedMessage<MS>& packed) {
  mrecv_bytes(comm, matched, packed.message());
  Header header{};
  const std::size_t head = std::min(matched.info.size, header.size());
  packed.envelope_to_host(space, header.data(), head);
  return decode_envelope(header.data(), matched.info.size);
}

/// GPU-aware path of a receive into v (whose shape must match).
template <class Exec, class V>
void receive_packed(const Exec& space, const Communicator& comm, Matched& matched, const V& v,
                    const char* operation) {
  using MS = typename V::memory_space;
  PackedMessage<MS> packed(matched.info.size);
  const ViewEnvelope e = receive_packed_message(space, comm, matched, packed);
  check_matches(e, v, context(operation, matched.info, comm));
  copy_from_wire<MS>(space, v,
                     reinterpret_cast<value_t<V>*>(packed.message() + ViewEnvelope::wire_size),
                     e.layout);
}

template <class V>
void receive_packed(const Communicator& comm, Matched& matched, const V& v, const char* operation) {
  receive_packed(typename V::execution_space(), comm, matched, v, operation);
}

/// Fills v from a small message received into `m` (`e` its envelope, from `source`): the data of a
/// split-form message follows on the payload communicator, else it is in `m`.
template <bool Device, class Exec, class V, class Where>
void fill_from_small(const Exec& space, const Communicator& comm, const SmallMessage& m,
                     const ViewEnvelope& e, int source, const V& v, const Where& where) {
  if (e.sequence >= 0) {
    receive_split_data<Device>(space, comm, source, e, v, where);
    return;
  }
  check_matches(e, v, where);
  copy_from_host(space, v, reinterpret_cast<const value_t<V>*>(m.payload()), e.layout);
}

/// Receives a matched View message into v (whose shape must match), any memory space.
template <bool Device, class Exec, class V>
void receive_into(const Exec& space, const Communicator& comm, Matched& matched, const V& v,
                  const char* operation) {
  static_assert(Device || host_view_v<V>, "host code for a View in device memory");
  using T = value_t<V>;
  using MS = typename V::memory_space;
  if (matched.info.size <= small_message) {
    // Small: through a stack buffer. Every split-form envelope is small.
    SmallMessage m;
    mrecv_bytes(comm, matched, m.message());
    const ViewEnvelope e = decode_envelope(m.message(), matched.info.size);
    fill_from_small<Device>(space, comm, m, e, matched.info.source, v,
                            context(operation, matched.info, comm));
    return;
  }
  const std::size_t expected = ViewEnvelope::wire_size + v.size() * sizeof(T);
  const bool direct = pass_directly<MS>(comm);
  if constexpr (!Device) {
    if (direct && in_wire_form(v) && matched.info.size == expected) {
      // In place: the data lands in v itself.
      Header header{};
      TwoBlockDatatype type(header.data(), header.size(), v.data(), v.size() * sizeof(T));
      check_mpi(MPI_Mrecv(MPI_BOTTOM, 1, type.type(), &matched.handle, MPI_STATUS_IGNORE),
                "MPI_Mrecv", comm.raw());
      const ViewEnvelope e = decode_envelope(header.data(), matched.info.size);
      check_matches(e, v, context(operation, matched.info, comm));
      if (!layouts_agree(e, natural_layout<V>())) {
        // Same shape, other element order: reorder through a copy.
        Kokkos::View<T*, Kokkos::HostSpace> copy(
            Kokkos::view_alloc(Kokkos::WithoutInitializing, "baton::reorder"), v.size());
        std::memcpy(copy.data(), v.data(), v.size() * sizeof(T));
        copy_from_host(space, v, copy.data(), e.layout);
      }
      return;
    }
  } else {
    if (direct) {
      receive_packed(space, comm, matched, v, operation);
      return;
    }
  }
  HostMessage m = receive_to_host(comm, matched);
  const ViewEnvelope e = decode_envelope(m.message, m.size);
  check_matches(e, v, context(operation, matched.info, comm));
  copy_from_host(space, v, reinterpret_cast<const T*>(m.payload()), e.layout);
}

/// Blocking receive into v of a message no longer than small_message, or a split-form envelope:
/// a plain MPI_Recv into a stack buffer, no matched probe (the View bounds the size). A longer
/// message is an error that says so. Returns the message's source, tag and size.
template <bool Device, class Exec, class V>
MessageInfo receive_small_into(const Exec& space, const Communicator& comm, const V& v, int source,
                               int tag, const char* operation) {
  SmallMessage m;
  MPI_Status status;
  const int code = MPI_Recv(m.message(), static_cast<int>(small_message), MPI_BYTE, source, tag,
                            comm.raw(), &status);
  int count = 0;
  if (code == MPI_SUCCESS)
    check_mpi(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count", comm.raw());
  const MessageInfo info{status.MPI_SOURCE, status.MPI_TAG, static_cast<std::size_t>(count)};
  const auto where = context(operation, info, comm);
  const auto larger = [&] {
    return Error(error_text(where, "the message is larger than " + std::to_string(small_message) +
                                       " bytes, the View is " + describe_view(v) +
                                       "; the message was consumed"));
  };
  if (code != MPI_SUCCESS) {
    int error_class = 0;
    MPI_Error_class(code, &error_class);
    if (error_class == MPI_ERR_TRUNCATE)
      throw larger();
    check_mpi(code, "MPI_Recv", comm.raw());
  }
  ViewEnvelope e;
  try {
    e = decode_envelope(m.message(), info.size);
  } catch (const Error&) {
    if (info.size == small_message)  // Open MPI 4.1 truncates without an error code
      throw larger();
    throw;
  }
  fill_from_small<Device>(space, comm, m, e, info.source, v, where);
  return info;
}

/// Receives a matched View message into a newly allocated View of type V.
template <class V, bool Device, class Exec>
V receive_new(const Exec& space, const Communicator& comm, Matched& matched,
              const std::string& label, const char* operation) {
  static_assert(Device || host_view_v<V>, "host code for a View in device memory");
  using T = value_t<V>;
  using MS = typename V::memory_space;
  const std::size_t size = matched.info.size;
  const auto where = context(operation, matched.info, comm);
  if (size <= small_message) {
    SmallMessage m;
    mrecv_bytes(comm, matched, m.message());
    const ViewEnvelope e = decode_envelope(m.message(), size);
    if (e.sequence >= 0) {
      // Allocate from the envelope, then the data lands in place. (Initialised by a call, never
      // `V v;` then assigned: see "Default-constructed Views and GCC 12" in docs/building.md.)
      V v = [&] {
        try {
          check_allocatable<V>(e, where);
          return allocate_like<V>(e, label);
        } catch (...) {
          Matched data = match_split_data(comm, matched.info.source, e, where);
          drain(comm, data);
          throw;
        }
      }();
      receive_split_data<Device>(space, comm, matched.info.source, e, v, where);
      return v;
    }
    check_allocatable<V>(e, where);
    V v = allocate_like<V>(e, label);
    copy_from_host(space, v, reinterpret_cast<const T*>(m.payload()), e.layout);
    return v;
  }
  const bool direct = pass_directly<MS>(comm);
  if constexpr (Device) {
    if (direct) {
      // The whole message in device memory; the new View is filled by a device-side copy.
      PackedMessage<MS> packed(size);
      const ViewEnvelope e = receive_packed_message(space, comm, matched, packed);
      check_allocatable<V>(e, where);
      V v = allocate_like<V>(e, label);
      copy_from_wire<MS>(space, v, reinterpret_cast<T*>(packed.message() + ViewEnvelope::wire_size),
                         e.layout);
      return v;
    }
  } else if constexpr (rank_v<V> <= 1 && V::rank_dynamic == rank_v<V>) {
    // Rank 0 and 1: the shape follows from the size, so the data can land in place.
    if (direct && size >= ViewEnvelope::wire_size &&
        (size - ViewEnvelope::wire_size) % sizeof(T) == 0) {
      const std::size_t n = (size - ViewEnvelope::wire_size) / sizeof(T);
      if (rank_v<V> == 1 || n == 1) {
        ViewEnvelope shape;
        shape.rank = static_cast<std::uint8_t>(rank_v<V>);
        shape.extents[0] = n;
        V v = allocate_like<V>(shape, label);
        receive_into<false>(space, comm, matched, v, operation);
        return v;
      }
    }
  }
  HostMessage m = receive_to_host(comm, matched);
  const ViewEnvelope e = decode_envelope(m.message, m.size);
  check_allocatable<V>(e, where);
  V v = allocate_like<V>(e, label);
  copy_from_host(space, v, reinterpret_cast<const T*>(m.payload()), e.layout);
  return v;
}

}  // namespace baton::detail
