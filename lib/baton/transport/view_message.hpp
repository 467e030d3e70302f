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
/// Execution space instances: every call has an overload taking an instance first
/// (`send_view(space, comm, v, dest, tag)`). Sends fence that instance, not the whole space, before
/// MPI reads the View (so kernels that wrote it there have finished); the copies Baton makes
/// (packing, staging, unpacking) run on it and are fenced before the call returns (or, for posted
/// receives, before test() returns true / wait() returns). Without an instance, the default
/// instance of the View's execution space is used: work on other instances is yours to fence.

#include <Kokkos_Core.hpp>
#include <array>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "baton/core/check_mpi.hpp"
#include "baton/transport/bytes.hpp"
#include "baton/transport/detail/view_receive.hpp"
#include "baton/transport/detail/view_send.hpp"
#include "baton/transport/detail/view_wire.hpp"
#include "baton/transport/view_posted.hpp"

namespace baton {

/// Sends View v (rank 0 to 8, arithmetic value type, any layout, any memory space) to `dest`,
/// fencing and copying on the instance `space`.
template <class Exec, class V, detail::if_space_t<Exec, V> Enabled = 0>
void send_view(const Exec& space, const Communicator& comm, const V& v, int dest, int tag) {
  static_assert(Kokkos::is_view<V>::value, "baton::send_view needs a Kokkos::View");
  check_rank(comm, dest, "baton::send_view");
  check_tag(comm, tag, "baton::send_view");
  if constexpr (detail::host_view_v<V>) {
    // Small host Views as they are: envelope and data straight into one stack buffer.
    const std::size_t bytes = v.size() * sizeof(detail::value_t<V>);
    if (ViewEnvelope::wire_size + bytes <= detail::small_message &&
        bytes < detail::split_threshold() && detail::in_wire_form(v) &&
        detail::pass_directly<typename V::memory_space>(comm)) {
      space.fence();  // kernels that wrote v on this instance are done
      detail::SmallMessage m;
      const detail::Header header =
          encode_envelope(detail::envelope_of(v, detail::natural_layout<V>()));
      std::memcpy(m.message(), header.data(), header.size());
      if (bytes)
        std::memcpy(m.message() + header.size(), v.data(), bytes);
      check_mpi(MPI_Send(m.message(), static_cast<int>(header.size() + bytes), MPI_BYTE, dest, tag,
                         comm.raw()),
                "MPI_Send", comm.raw());
      return;
    }
  }
  detail::OutgoingView<V, Exec> out(comm, v, dest, space);
  out.send_now(comm, dest, tag);
}

template <class V>
void send_view(const Communicator& comm, const V& v, int dest, int tag) {
  send_view(typename V::execution_space(), comm, v, dest, tag);
}

/// Non-blocking send_view. The handle keeps the View (and any staging buffer) alive until the send
/// completes; do not write to v before then.
template <class Exec, class V, detail::if_space_t<Exec, V> Enabled = 0>
SendHandle isend_view(const Exec& space, const Communicator& comm, const V& v, int dest, int tag) {
  static_assert(Kokkos::is_view<V>::value, "baton::isend_view needs a Kokkos::View");
  check_rank(comm, dest, "baton::isend_view");
  check_tag(comm, tag, "baton::isend_view");
  using Out = detail::OutgoingView<V, Exec>;
  return Out::start(comm, std::make_shared<Out>(comm, v, dest, space), dest, tag);
}

template <class V>
SendHandle isend_view(const Communicator& comm, const V& v, int dest, int tag) {
  return isend_view(typename V::execution_space(), comm, v, dest, tag);
}

/// Receives a View message into v, which must have the sent value type, rank and extents (layout
/// and memory space may differ). Otherwise throws baton::Error naming both shapes; the message is
/// consumed either way, so the next message on the channel is received normally. When the sizes
/// agree but the types do not (int32[4] into float32[4]), v's contents are unspecified after the
/// error.
template <class Exec, class V, detail::if_space_t<Exec, V> Enabled = 0>
MessageInfo recv_into(const Exec& space, const Communicator& comm, const V& v,
                      int source = any_source, int tag = any_tag) {
  static_assert(Kokkos::is_view<V>::value, "baton::recv_into needs a Kokkos::View");
  static_assert(!std::is_const_v<typename V::value_type>, "baton::recv_into needs a writable View");
  constexpr bool device = detail::device_memory_v<V>;
  check_rank(comm, source, "baton::recv_into", true);
  check_tag(comm, tag, "baton::recv_into", true);
  // The View bounds the message: small ones go straight into a stack buffer, larger ones land
  // where a posted receive would (in place where the View's memory allows); MPI_Recv either way,
  // no matched probe.
  if (ViewEnvelope::wire_size + v.size() * sizeof(detail::value_t<V>) <= detail::small_message)
    return detail::receive_small_into<device>(space, comm, v, source, tag, "baton::recv_into");
  return PostedRecvHandle<V, Exec, device>::receive(comm, v, source, tag, space,
                                                    "baton::recv_into");
}

template <class V>
MessageInfo recv_into(const Communicator& comm, const V& v, int source = any_source,
                      int tag = any_tag) {
  return recv_into(typename V::execution_space(), comm, v, source, tag);
}

/// Receives a View message into a new View of type V shaped by the message (V's layout must be
/// LayoutLeft or LayoutRight). A different value type or rank throws baton::Error; the message is
/// consumed either way. `info`, when given, receives the source, tag and size.
template <class V, class Exec, detail::if_space_t<Exec, V> Enabled = 0>
V recv_view(const Exec& space, const Communicator& comm, int source = any_source, int tag = any_tag,
            MessageInfo* info = nullptr, const std::string& label = "baton::received") {
  static_assert(Kokkos::is_view<V>::value, "baton::recv_view needs a Kokkos::View type");
  static_assert(detail::left_or_right_v<V>,
                "baton::recv_view allocates LayoutLeft or LayoutRight Views");
  detail::Matched matched = detail::mprobe(comm, source, tag, "baton::recv_view");
  if (info != nullptr)
    *info = matched.info;
  return detail::receive_new<V, detail::device_memory_v<V>>(space, comm, matched, label,
                                                            "baton::recv_view");
}

template <class V>
V recv_view(const Communicator& comm, int source = any_source, int tag = any_tag,
            MessageInfo* info = nullptr, const std::string& label = "baton::received") {
  return recv_view<V>(typename V::execution_space(), comm, source, tag, info, label);
}

/// A receive of a new View, matched when it arrives: test() completes it if the message is there;
/// wait() blocks until it is. (The size is unknown until the message arrives, so nothing can be
/// posted in advance: irecv_into posts.) Unpacking and copies to device memory happen in test() or
/// wait(). The communicator must outlive the handle.
template <class V, class Exec = typename V::execution_space>
class ViewRecvHandle {
 public:
  ViewRecvHandle(const Communicator& comm, int source, int tag, std::string label,
                 const Exec& space = Exec())
      : comm_(&comm), source_(source), tag_(tag), label_(std::move(label)), space_(space) {
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
  /// Blocks until the message is received; returns the new View.
  V wait() {
    if (!done_) {
      detail::Matched matched = detail::mprobe(*comm_, source_, tag_, "baton::irecv_view");
      finish(matched);
    }
    return *result_;
  }
  bool done() const noexcept { return done_; }
  /// Source, tag and size of the received message (valid once done()).
  const MessageInfo& info() const noexcept { return info_; }

 private:
  void finish(detail::Matched& matched) {
    info_ = matched.info;
    done_ = true;  // the message is consumed even if unpacking throws
    result_.emplace(detail::receive_new<V, detail::device_memory_v<V>>(
        space_, *comm_, matched, label_, "baton::irecv_view"));
  }

  const Communicator* comm_;
  int source_;
  int tag_;
  std::string label_;
  Exec space_;
  std::optional<V> result_;
  MessageInfo info_;
  bool done_ = false;
};

/// Starts a receive of a new View of type V (matched when it arrives, see ViewRecvHandle).
template <class V, class Exec, detail::if_space_t<Exec, V> Enabled = 0>
ViewRecvHandle<V, Exec> irecv_view(const Exec& space, const Communicator& comm,
                                   int source = any_source, int tag = any_tag,
                                   const std::string& label = "baton::received") {
  static_assert(detail::left_or_right_v<V>,
                "baton::irecv_view allocates LayoutLeft or LayoutRight Views");
  return ViewRecvHandle<V, Exec>(comm, source, tag, label, space);
}

template <class V>
ViewRecvHandle<V> irecv_view(const Communicator& comm, int source = any_source, int tag = any_tag,
                             const std::string& label = "baton::received") {
  return irecv_view<V>(typename V::execution_space(), comm, source, tag, label);
}

/// Posts a receive into an existing View (kept alive by the handle): a real MPI_Irecv, started
/// now, bounded by the View's size (see view_posted.hpp). The communicator must outlive the handle.
template <class Exec, class V, detail::if_space_t<Exec, V> Enabled = 0>
PostedRecvHandle<V, Exec> irecv_into(const Exec& space, const Communicator& comm, const V& v,
                                     int source = any_source, int tag = any_tag) {
  static_assert(Kokkos::is_view<V>::value, "baton::irecv_into needs a Kokkos::View");
  static_assert(!std::is_const_v<typename V::value_type>,
                "baton::irecv_into needs a writable View");
  check_rank(comm, source, "baton::irecv_into", true);
  check_tag(comm, tag, "baton::irecv_into", true);
  return PostedRecvHandle<V, Exec>(comm, v, source, tag, space);
}

template <class V>
PostedRecvHandle<V> irecv_into(const Communicator& comm, const V& v, int source = any_source,
                               int tag = any_tag) {
  return irecv_into(typename V::execution_space(), comm, v, source, tag);
}

/// Posts a receive of a rank-1 View message of at most buffer.extent(0) elements (of buffer's value
/// type) into the front of `buffer`: a real MPI_Irecv bounded by the buffer, for messages whose
/// length varies but has a known bound. wait() returns the prefix of `buffer` the message filled.
template <class Exec, class V, detail::if_space_t<Exec, V> Enabled = 0>
PostedRecvHandle<V, Exec> irecv_upto(const Exec& space, const Communicator& comm, const V& buffer,
                                     int source = any_source, int tag = any_tag) {
  static_assert(Kokkos::is_view<V>::value && detail::rank_v<V> == 1,
                "baton::irecv_upto needs a rank-1 Kokkos::View");
  static_assert(!std::is_const_v<typename V::value_type>,
                "baton::irecv_upto needs a writable View");
  check_rank(comm, source, "baton::irecv_upto", true);
  check_tag(comm, tag, "baton::irecv_upto", true);
  return PostedRecvHandle<V, Exec>(comm, buffer, source, tag, space, "baton::irecv_upto", true);
}

template <class V>
PostedRecvHandle<V> irecv_upto(const Communicator& comm, const V& buffer, int source = any_source,
                               int tag = any_tag) {
  return irecv_upto(typename V::execution_space(), comm, buffer, source, tag);
}

}  // namespace baton
