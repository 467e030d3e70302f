#pragma once
/// \file
/// Kokkos View messages: one MPI message per View, a 72-byte envelope (value type, rank, layout,
/// extents; see envelope.hpp) followed by the elements. The receiver learns the shape from the
/// envelope, so it can allocate (recv_view) or check an existing View (recv_into).
///
/// Memory: host Views that are contiguous in LayoutLeft/LayoutRight (any layout for rank 0 and 1)
/// go to MPI as is, envelope and data in one message through a derived datatype (no packing copy).
/// Other host Views are packed into a host buffer. Device Views go as is when the communicator's
/// ViewPath says so (GPU-aware MPI), else through a host buffer. See docs/transport.md.
///
/// Fences: sends fence the View's execution space first (so kernels that wrote it have finished);
/// receives into device memory end with a deep_copy, which completes before returning.

#include <Kokkos_Core.hpp>
#include <array>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "baton/runtime/error.hpp"
#include "baton/transport/bytes.hpp"
#include "baton/transport/datatype.hpp"
#include "baton/transport/view_wire.hpp"

namespace baton {
namespace detail {

using Header = std::array<std::byte, ViewEnvelope::wire_size>;

/// Views of at least this many bytes travel in split form (envelope, then the data alone on the
/// communicator's payload()). Measured, see docs/performance.md; BATON_VIEW_SPLIT_BYTES overrides.
std::size_t split_threshold() noexcept;
inline constexpr std::size_t default_split_threshold = std::size_t(64) << 10;

/// Messages up to this size (envelope included) are packed into one contiguous buffer by the sender
/// and received into a stack buffer first, then copied: cheaper than a derived datatype for small
/// Views (measured, see docs/performance.md). Every split-form envelope is small.
inline constexpr std::size_t small_message = 4096;

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

/// A host copy of a whole message, its envelope 16-byte aligned + 56, so that the data after the
/// 72-byte envelope starts 16-byte aligned (long double included).
struct HostMessage {
  ByteBuffer storage;
  std::byte* message = nullptr;
  std::size_t size = 0;
  const std::byte* payload() const { return message + ViewEnvelope::wire_size; }
};

inline HostMessage receive_to_host(const Communicator& comm, Matched& matched) {
  constexpr std::size_t offset = 56;
  HostMessage m{ByteBuffer(matched.info.size + offset), nullptr, matched.info.size};
  m.message = m.storage.data() + offset;
  mrecv_bytes(comm, matched, m.message);
  return m;
}

/// Everything an outgoing View message needs alive until MPI is done with it.
template <class V>
struct OutgoingView {
  using T = value_t<V>;
  using MS = typename V::memory_space;
  Header header{};
  V view;
  Kokkos::View<T*, StagingSpace> staging;   // host copy, when staged
  Kokkos::View<unsigned char*, MS> packed;  // envelope + data in device memory (direct device path)
  const void* data = nullptr;               // the data block (host, or the View's memory)
  std::size_t bytes = 0;
  std::array<std::byte, ViewEnvelope::split_wire_size> split_header{};
  int sequence = -1;               // >= 0: split form, data on comm.payload()
  std::size_t small_size = 0;      // > 0: envelope + data packed in `small`
  std::byte small[small_message];  // left uninitialised: only small_size bytes are used

  OutgoingView(const Communicator& comm, const V& v, int dest)
      : view(v), bytes(v.size() * sizeof(T)) {
    typename V::execution_space().fence();  // kernels that wrote v are done
    prepare(comm);
    if (packed.data() == nullptr && comm.payload() != MPI_COMM_NULL && bytes >= split_threshold()) {
      ViewEnvelope e = decode_envelope_header(header.data());
      e.sequence = sequence = comm.next_sequence(dest);
      split_header = encode_split_envelope(e);
    } else if (packed.data() == nullptr && header.size() + bytes <= small_message) {
      small_size = header.size() + bytes;
      std::memcpy(small, header.data(), header.size());
      if (bytes)
        std::memcpy(small + header.size(), data, bytes);
    }
  }

  void prepare(const Communicator& comm) {
    const V& v = view;
    const bool direct = pass_directly<MS>(comm);
    if (direct && in_wire_form(v) && host_view_v<V>) {
      header = encode_envelope(envelope_of(v, natural_layout<V>()));
      data = v.data();
      return;
    }
    if constexpr (!host_view_v<V>) {
      if (direct) {
        pack_on_device();
        return;
      }
    }
    const WireLayout layout = in_wire_form(v) ? natural_layout<V>() : WireLayout::right;
    header = encode_envelope(envelope_of(v, layout));
    staging = staging_buffer<T>(v.size());
    copy_to_host(v, staging.data(), layout);
    data = staging.data();
  }

  /// Envelope and data in one buffer in the View's own memory space (GPU-aware MPI path).
  void pack_on_device() {
    const WireLayout layout = in_wire_form(view) ? natural_layout<V>() : WireLayout::right;
    header = encode_envelope(envelope_of(view, layout));
    packed = Kokkos::View<unsigned char*, MS>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "baton::packed"),
        ViewEnvelope::wire_size + bytes);
    Kokkos::View<unsigned char*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>
        host_header(reinterpret_cast<unsigned char*>(header.data()), header.size());
    Kokkos::deep_copy(Kokkos::subview(packed, std::make_pair(std::size_t(0), header.size())),
                      host_header);
    T* out = reinterpret_cast<T*>(packed.data() + ViewEnvelope::wire_size);
    if (layout == WireLayout::left) {
      copy_view(unmanaged_like<V, Kokkos::LayoutLeft, MS>(out, view), view);
    } else {
      copy_view(unmanaged_like<V, Kokkos::LayoutRight, MS>(out, view), view);
    }
  }

  /// Blocking send of this message.
  void send_now(const Communicator& comm, int dest, int tag) const {
    if (small_size) {
      check_mpi(MPI_Send(small, static_cast<int>(small_size), MPI_BYTE, dest, tag, comm.raw()),
                "MPI_Send", comm.raw());
    } else if (sequence >= 0) {
      check_mpi(MPI_Send(split_header.data(), static_cast<int>(split_header.size()), MPI_BYTE, dest,
                         tag, comm.raw()),
                "MPI_Send", comm.raw());
      ByteDatatype type(bytes);
      check_mpi(MPI_Send(data, type.count(), type.type(), dest, sequence, comm.payload()),
                "MPI_Send", comm.raw());
    } else if (packed.data() != nullptr) {
      ByteDatatype type(packed.size());
      check_mpi(MPI_Send(packed.data(), type.count(), type.type(), dest, tag, comm.raw()),
                "MPI_Send", comm.raw());
    } else {
      TwoBlockDatatype type(header.data(), header.size(), data, bytes);
      check_mpi(MPI_Send(MPI_BOTTOM, 1, type.type(), dest, tag, comm.raw()), "MPI_Send",
                comm.raw());
    }
  }

  /// Non-blocking send of `self`'s message; the handle keeps `self` alive.
  static SendHandle start(const Communicator& comm, std::shared_ptr<OutgoingView> self, int dest,
                          int tag) {
    const OutgoingView& out = *self;
    if (out.small_size) {
      return SendHandle::start(comm, self, out.small, static_cast<int>(out.small_size), MPI_BYTE,
                               dest, tag);
    }
    if (out.sequence >= 0) {
      SendHandle handle =
          SendHandle::start(comm, self, out.split_header.data(),
                            static_cast<int>(out.split_header.size()), MPI_BYTE, dest, tag);
      ByteDatatype type(out.bytes);
      handle.also_send(comm.payload(), out.data, type.count(), type.type(), dest, out.sequence);
      return handle;
    }
    if (out.packed.data() != nullptr) {
      ByteDatatype type(out.packed.size());
      return SendHandle::start(comm, self, out.packed.data(), type.count(), type.type(), dest, tag);
    }
    TwoBlockDatatype type(out.header.data(), out.header.size(), out.data, out.bytes);
    return SendHandle::start(comm, self, MPI_BOTTOM, 1, type.type(), dest, tag);
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

/// Receives the data message of a split-form View message (envelope `e` from `source`) into v.
/// On a size or shape mismatch the data message is drained before the error is thrown.
template <class V, class Where>
void receive_split_data(const Communicator& comm, int source, const ViewEnvelope& e, const V& v,
                        const Where& where) {
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
  if (pass_directly<MS>(comm) && in_wire_form(v) && layouts_agree(e, natural_layout<V>())) {
    mrecv_bytes(comm, data, v.data());
    return;
  }
  auto staging = staging_buffer<T>(v.size());
  mrecv_bytes(comm, data, staging.data());
  copy_from_host(v, staging.data(), e.layout);
}
/// GPU-aware path of a receive: the whole message lands in v's memory space, then the envelope is
/// read and the data copied into v. Written for any memory space (tests run it on host memory).
template <class V>
void receive_packed(const Communicator& comm, Matched& matched, const V& v, const char* operation) {
  using T = value_t<V>;
  using MS = typename V::memory_space;
  Kokkos::View<unsigned char*, MS> packed(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "baton::packed"), matched.info.size);
  mrecv_bytes(comm, matched, packed.data());
  Header header{};
  if (matched.info.size >= header.size()) {
    Kokkos::View<unsigned char*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>
        host_header(reinterpret_cast<unsigned char*>(header.data()), header.size());
    Kokkos::deep_copy(host_header,
                      Kokkos::subview(packed, std::make_pair(std::size_t(0), header.size())));
  }
  const ViewEnvelope e = decode_envelope(header.data(), matched.info.size);
  check_matches(e, v, context(operation, matched.info, comm));
  T* in = reinterpret_cast<T*>(packed.data() + ViewEnvelope::wire_size);
  if (e.layout == WireLayout::left) {
    copy_view(v, unmanaged_like<V, Kokkos::LayoutLeft, MS>(in, v));
  } else {
    copy_view(v, unmanaged_like<V, Kokkos::LayoutRight, MS>(in, v));
  }
}

/// Receives a matched View message into v (whose shape must match), any memory space.
template <class V>
void receive_into(const Communicator& comm, Matched& matched, const V& v, const char* operation) {
  using T = value_t<V>;
  using MS = typename V::memory_space;
  if (matched.info.size <= small_message) {
    // Small: through a stack buffer. Every split-form envelope is small.
    SmallMessage m;
    mrecv_bytes(comm, matched, m.message());
    const ViewEnvelope e = decode_envelope(m.message(), matched.info.size);
    if (e.sequence >= 0) {
      receive_split_data(comm, matched.info.source, e, v, context(operation, matched.info, comm));
      return;
    }
    check_matches(e, v, context(operation, matched.info, comm));
    copy_from_host(v, reinterpret_cast<const T*>(m.payload()), e.layout);
    return;
  }
  const std::size_t expected = ViewEnvelope::wire_size + v.size() * sizeof(T);
  const bool direct = pass_directly<MS>(comm);
  if constexpr (host_view_v<V>) {
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
        copy_from_host(v, copy.data(), e.layout);
      }
      return;
    }
  } else {
    if (direct) {
      receive_packed(comm, matched, v, operation);
      return;
    }
  }
  HostMessage m = receive_to_host(comm, matched);
  const ViewEnvelope e = decode_envelope(m.message, m.size);
  check_matches(e, v, context(operation, matched.info, comm));
  copy_from_host(v, reinterpret_cast<const T*>(m.payload()), e.layout);
}

/// Receives a matched View message into a newly allocated View of type V.
template <class V>
V receive_new(const Communicator& comm, Matched& matched, const std::string& label,
              const char* operation) {
  using T = value_t<V>;
  const std::size_t size = matched.info.size;
  if (size <= small_message) {
    SmallMessage m;
    mrecv_bytes(comm, matched, m.message());
    const ViewEnvelope e = decode_envelope(m.message(), size);
    const auto where = context(operation, matched.info, comm);
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
      receive_split_data(comm, matched.info.source, e, v, where);
      return v;
    }
    check_allocatable<V>(e, where);
    V v = allocate_like<V>(e, label);
    copy_from_host(v, reinterpret_cast<const T*>(m.payload()), e.layout);
    return v;
  }
  if constexpr (host_view_v<V> && rank_v<V> <= 1 && V::rank_dynamic == rank_v<V>) {
    // Rank 0 and 1: the shape follows from the size, so the data can land in place.
    if (pass_directly<typename V::memory_space>(comm) && size >= ViewEnvelope::wire_size &&
        (size - ViewEnvelope::wire_size) % sizeof(T) == 0) {
      const std::size_t n = (size - ViewEnvelope::wire_size) / sizeof(T);
      if (rank_v<V> == 1 || n == 1) {
        ViewEnvelope shape;
        shape.rank = static_cast<std::uint8_t>(rank_v<V>);
        shape.extents[0] = n;
        V v = allocate_like<V>(shape, label);
        receive_into(comm, matched, v, operation);
        return v;
      }
    }
  }
  HostMessage m = receive_to_host(comm, matched);
  const ViewEnvelope e = decode_envelope(m.message, m.size);
  check_allocatable<V>(e, context(operation, matched.info, comm));
  V v = allocate_like<V>(e, label);
  copy_from_host(v, reinterpret_cast<const T*>(m.payload()), e.layout);
  return v;
}

}  // namespace detail

/// Sends View v (rank 0 to 8, arithmetic value type, any layout, any memory space) to `dest`.
template <class V>
void send_view(const Communicator& comm, const V& v, int dest, int tag) {
  static_assert(Kokkos::is_view<V>::value, "baton::send_view needs a Kokkos::View");
  check_rank(comm, dest, "baton::send_view");
  check_tag(comm, tag, "baton::send_view");
  detail::OutgoingView<V> out(comm, v, dest);
  out.send_now(comm, dest, tag);
}

/// Non-blocking send_view. The handle keeps the View (and any staging buffer) alive until the send
/// completes; do not write to v before then.
template <class V>
SendHandle isend_view(const Communicator& comm, const V& v, int dest, int tag) {
  static_assert(Kokkos::is_view<V>::value, "baton::isend_view needs a Kokkos::View");
  check_rank(comm, dest, "baton::isend_view");
  check_tag(comm, tag, "baton::isend_view");
  return detail::OutgoingView<V>::start(
      comm, std::make_shared<detail::OutgoingView<V>>(comm, v, dest), dest, tag);
}

/// Receives a View message into v, which must have the sent value type, rank and extents (layout
/// and memory space may differ). Otherwise throws baton::Error naming both shapes; the message is
/// consumed either way, so the next message on the channel is received normally. When the sizes
/// agree but the types do not (int32[4] into float32[4]), v's contents are unspecified after the
/// error.
template <class V>
MessageInfo recv_into(const Communicator& comm, const V& v, int source = any_source,
                      int tag = any_tag) {
  static_assert(Kokkos::is_view<V>::value, "baton::recv_into needs a Kokkos::View");
  static_assert(!std::is_const_v<typename V::value_type>, "baton::recv_into needs a writable View");
  detail::Matched matched = detail::mprobe(comm, source, tag, "baton::recv_into");
  detail::receive_into(comm, matched, v, "baton::recv_into");
  return matched.info;
}

/// Receives a View message into a new View of type V shaped by the message (V's layout must be
/// LayoutLeft or LayoutRight). A different value type or rank throws baton::Error; the message is
/// consumed either way. `info`, when given, receives the source, tag and size.
template <class V>
V recv_view(const Communicator& comm, int source = any_source, int tag = any_tag,
            MessageInfo* info = nullptr, const std::string& label = "baton::recv_view") {
  static_assert(Kokkos::is_view<V>::value, "baton::recv_view needs a Kokkos::View type");
  static_assert(detail::left_or_right_v<V>,
                "baton::recv_view allocates LayoutLeft or LayoutRight Views");
  detail::Matched matched = detail::mprobe(comm, source, tag, "baton::recv_view");
  if (info != nullptr)
    *info = matched.info;
  return detail::receive_new<V>(comm, matched, label, "baton::recv_view");
}

/// A posted View receive: test() completes it if the message is there; wait() blocks until it is.
/// Unpacking and copies to device memory happen there, in test() or wait(). The communicator must
/// outlive the handle.
template <class V>
class ViewRecvHandle {
 public:
  ViewRecvHandle(const Communicator& comm, int source, int tag, std::optional<V> into,
                 std::string label)
      : comm_(&comm), source_(source), tag_(tag), into_(std::move(into)), label_(std::move(label)) {
    check_rank(comm, source, "baton::irecv_view", true);
    check_tag(comm, tag, "baton::irecv_view", true);
  }
  /// Completes the receive if a matching message has arrived; true once complete.
  bool test() {
    if (done_)
      return true;
    if (auto matched = detail::improbe(*comm_, source_, tag_, "baton::irecv_view"))
      finish(*matched);
    return done_;
  }
  /// Blocks until the message is received; returns the View (the one given to irecv_into, or a new
  /// one).
  V wait() {
    if (!done_) {
      detail::Matched matched = detail::mprobe(*comm_, source_, tag_, "baton::irecv_view");
      finish(matched);
    }
    return result_;
  }
  bool done() const noexcept { return done_; }
  /// Source, tag and size of the received message (valid once done()).
  const MessageInfo& info() const noexcept { return info_; }

 private:
  void finish(detail::Matched& matched) {
    info_ = matched.info;
    done_ = true;  // the message is consumed even if unpacking throws
    if (into_) {
      detail::receive_into(*comm_, matched, *into_, "baton::irecv_into");
      result_ = *into_;
    } else {
      result_ = detail::receive_new<V>(*comm_, matched, label_, "baton::irecv_view");
    }
  }

  const Communicator* comm_;
  int source_;
  int tag_;
  std::optional<V> into_;
  std::string label_;
  V result_;
  MessageInfo info_;
  bool done_ = false;
};

/// Posts a receive of a new View of type V.
template <class V>
ViewRecvHandle<V> irecv_view(const Communicator& comm, int source = any_source, int tag = any_tag,
                             const std::string& label = "baton::recv_view") {
  static_assert(detail::left_or_right_v<V>,
                "baton::irecv_view allocates LayoutLeft or LayoutRight Views");
  return ViewRecvHandle<V>(comm, source, tag, std::nullopt, label);
}

/// Posts a receive into an existing View (kept alive by the handle).
template <class V>
ViewRecvHandle<V> irecv_into(const Communicator& comm, const V& v, int source = any_source,
                             int tag = any_tag) {
  return ViewRecvHandle<V>(comm, source, tag, v, std::string());
}

}  // namespace baton
