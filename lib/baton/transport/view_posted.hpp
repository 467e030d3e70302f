#pragma once
/// \file
/// Posted receives into an existing View (irecv_into): the receiver knows the View's shape, so it
/// bounds the message's size and posts a real MPI_Irecv at once; MPI moves the data while the
/// caller computes, and test()/wait() only finish it.
///
/// Where the message lands when the receive is posted:
/// - a host View in wire form on the direct path, message over 4 KiB: the envelope in the handle,
///   the data in the View itself (one derived datatype, no copy);
/// - a device View on the direct path, over 4 KiB: one device buffer, then a device-side copy;
/// - otherwise: one host buffer, then one copy into the View.
/// A split-form (large) message posts its data receive as soon as its envelope has arrived, into
/// the View itself where the layouts allow. A message larger than the View is an error
/// (MPI_ERR_TRUNCATE, named as such); the message is consumed either way, and after an error the
/// View's contents are unspecified.

#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "baton/core/check_mpi.hpp"
#include "baton/transport/bytes.hpp"
#include "baton/transport/detail/datatype.hpp"
#include "baton/transport/detail/view_receive.hpp"

namespace baton {

/// A posted receive into View v (kept alive by the handle). Move-only. The destructor of a handle
/// that never completed cancels its receive (a message it had already matched is consumed).
template <class V, class Exec = typename V::execution_space,
          bool Device = detail::device_memory_v<V>>
class PostedRecvHandle {
 public:
  /// `operation` names the caller in error messages. `bounded` (rank-1 Views only): any message of
  /// at most v.extent(0) elements is taken, into the front of v, and wait() returns that prefix.
  PostedRecvHandle(const Communicator& comm, const V& v, int source, int tag,
                   const Exec& space = Exec(), const char* operation = "baton::irecv_into",
                   bool bounded = false)
      : s_(std::make_unique<State>(comm, v, source, tag, space, operation, bounded)) {
    s_->post();
  }
  /// A blocking receive into v through the same landings (no handle is kept): recv_into.
  static MessageInfo receive(const Communicator& comm, const V& v, int source, int tag,
                             const Exec& space, const char* operation) {
    State s(comm, v, source, tag, space, operation, false);
    s.receive_now();
    return s.info;
  }
  ~PostedRecvHandle() {
    if (s_)
      s_->abandon();
  }
  PostedRecvHandle(PostedRecvHandle&&) noexcept = default;
  PostedRecvHandle& operator=(PostedRecvHandle&& other) noexcept {
    if (this != &other) {
      if (s_)
        s_->abandon();
      s_ = std::move(other.s_);
    }
    return *this;
  }
  PostedRecvHandle(const PostedRecvHandle&) = delete;
  PostedRecvHandle& operator=(const PostedRecvHandle&) = delete;

  /// Makes progress without blocking; true once the View holds the message.
  bool test() {
    while (!s_->done) {
      int flag = 0;
      MPI_Status status;
      const int code = MPI_Test(&s_->request, &flag, &status);
      if (code == MPI_SUCCESS && !flag)
        return false;
      s_->advance(code, status);
    }
    return true;
  }
  /// Blocks until the View holds the message; returns it.
  V wait() {
    while (!s_->done) {
      MPI_Status status;
      const int code = MPI_Wait(&s_->request, &status);
      s_->advance(code, status);
    }
    return s_->view;
  }
  bool done() const noexcept { return s_->done; }
  /// Source, tag and size of the received message (valid once done()).
  const MessageInfo& info() const noexcept { return s_->info; }

 private:
  using T = detail::value_t<V>;
  using MS = typename V::memory_space;
  enum class Landing { in_place, host, device };

  struct State {
    const Communicator* comm;
    int source;
    int tag;
    V view;
    Exec space;
    const char* operation;
    bool bounded;
    Landing landing = Landing::host;
    detail::Header header{};  // in_place: the envelope
    std::optional<detail::ByteDatatype> bytes_type;
    std::optional<detail::TwoBlockDatatype> two_block;
    MPI_Datatype type = MPI_BYTE;  // what the pending receive was posted with
    std::optional<ByteBuffer> host;
    std::optional<detail::PackedMessage<MS>> device;
    std::optional<Kokkos::View<T*, MS>> landed;                     // split data, device buffer
    std::optional<Kokkos::View<T*, detail::StagingSpace>> staging;  // split data, host buffer
    ViewEnvelope envelope;
    MPI_Request request = MPI_REQUEST_NULL;
    bool split = false;  // the pending receive is a split message's data
    bool done = false;
    MessageInfo info;

    State(const Communicator& c, const V& v, int src, int t, const Exec& e, const char* op, bool b)
        : comm(&c), source(src), tag(t), view(v), space(e), operation(op), bounded(b) {}

    std::size_t data_bytes() const { return view.size() * sizeof(T); }

    void post() {
      const auto [buffer, count] = prepare();
      check_mpi(MPI_Irecv(buffer, count, type, source, tag, comm->raw(), &request), "MPI_Irecv",
                comm->raw());
    }

    /// The same landing, received with a blocking MPI_Recv (which every MPI reports truncation
    /// of on the communicator's handler), then the split data if any.
    void receive_now() {
      const auto [buffer, count] = prepare();
      MPI_Status status;
      const int code = MPI_Recv(buffer, count, type, source, tag, comm->raw(), &status);
      advance(code, status);
      while (!done) {
        const int waited = MPI_Wait(&request, &status);
        advance(waited, status);
      }
    }

    /// Chooses where the message lands: the buffer and count to receive with `type`.
    std::pair<void*, int> prepare() {
      const std::size_t expected = ViewEnvelope::wire_size + data_bytes();
      const bool direct = detail::pass_directly<MS>(*comm);
      void* buffer = nullptr;
      if (!Device && direct && detail::in_wire_form(view) && expected > detail::small_message) {
        landing = Landing::in_place;
        two_block.emplace(header.data(), header.size(), view.data(), data_bytes());
        type = two_block->type();
        buffer = MPI_BOTTOM;
      } else if (Device && direct && expected > detail::small_message) {
        landing = Landing::device;
        device.emplace(capacity());
        bytes_type.emplace(capacity());
        buffer = device->message();
      } else {
        landing = Landing::host;
        host.emplace(capacity() + detail::message_offset);
        bytes_type.emplace(capacity());
        buffer = host->data() + detail::message_offset;
      }
      if (landing != Landing::in_place)
        type = bytes_type->type();
      return {buffer, landing == Landing::in_place ? 1 : bytes_type->count()};
    }

    /// The receive just completed (or failed with `code`): finish it, or post the split data.
    void advance(int code, const MPI_Status& status) {
      if (code != MPI_SUCCESS) {
        done = true;
        request = MPI_REQUEST_NULL;
        if (!split)
          info = MessageInfo{status.MPI_SOURCE, status.MPI_TAG, 0};
        int error_class = 0;
        MPI_Error_class(code, &error_class);
        if (error_class == MPI_ERR_TRUNCATE)
          throw larger();
        check_mpi(code, "MPI_Test", comm->raw());
      }
      MPI_Count count = 0;
      check_mpi(MPI_Get_elements_x(&status, type, &count), "MPI_Get_elements_x", comm->raw());
      if (split) {
        finish_split_data(static_cast<std::size_t>(count));
        return;
      }
      info = MessageInfo{status.MPI_SOURCE, status.MPI_TAG, static_cast<std::size_t>(count)};
      finish_message();
    }

    auto where() const { return detail::context(operation, info, *comm); }

    /// Bytes the first receive accepts: the View's message, or a split-form envelope.
    std::size_t capacity() const {
      return std::max(ViewEnvelope::wire_size + data_bytes(), ViewEnvelope::split_wire_size);
    }

    Error larger() const {
      return Error(detail::error_text(
          where(), std::string("the message") + (split ? "'s data part" : "") +
                       " is larger than the View, " + detail::describe_view(view) +
                       "; the message was consumed"));
    }

    /// The whole message has arrived: a split envelope, or envelope and data.
    void finish_message() {
      std::array<std::byte, ViewEnvelope::split_wire_size> head{};
      const std::byte* message = nullptr;
      const std::size_t size = info.size;
      if (landing == Landing::in_place) {
        std::memcpy(head.data(), header.data(), std::min(size, header.size()));
        if (size == ViewEnvelope::split_wire_size)  // its last 8 bytes landed in the View
          std::memcpy(head.data() + header.size(), view.data(), size - header.size());
        message = head.data();
      } else if (landing == Landing::device) {
        device->envelope_to_host(space, head.data(), std::min(size, head.size()));
        message = head.data();
      } else {
        message = host->data() + detail::message_offset;
      }
      done = true;  // from here on the message is consumed, whatever happens
      try {
        envelope = decode_envelope(message, size);
      } catch (const Error&) {
        // Some MPIs (Open MPI 4.1) truncate a longer message without an error code: a message
        // that filled the buffer and does not decode was longer than the View.
        if (size == capacity())
          throw larger();
        throw;
      }
      if (envelope.sequence >= 0) {
        post_split_data();
        return;
      }
      check_envelope(where());
      if (landing == Landing::in_place) {
        if (!detail::layouts_agree(envelope, detail::natural_layout<V>()))
          reorder();
      } else if (landing == Landing::device) {
        detail::copy_from_wire<MS>(
            space, view, reinterpret_cast<T*>(device->message() + ViewEnvelope::wire_size),
            envelope.layout);
      } else {
        detail::copy_from_host(space, view,
                               reinterpret_cast<const T*>(message + ViewEnvelope::wire_size),
                               envelope.layout);
      }
    }

    /// Throws unless the message fits: the View's shape, or when bounded a rank-1 message of the
    /// View's value type and at most its length, which then narrows `view` to the prefix it fills.
    template <class Where>
    void check_envelope(const Where& context) {
      if constexpr (detail::rank_v<V> == 1) {
        if (bounded) {
          if (envelope.value_type != value_type_of<T>() || envelope.rank != 1 ||
              envelope.extents[0] > view.extent(0)) {
            throw Error(detail::error_text(
                context, "the message is " + envelope.describe() + ", more than the View, " +
                             detail::describe_view(view) + ", holds; the message was consumed"));
          }
          view = Kokkos::subview(
              view, std::make_pair(std::size_t(0), static_cast<std::size_t>(envelope.extents[0])));
          return;
        }
      }
      detail::check_matches(envelope, view, context);
    }

    /// Same shape, other element order: reorder through a copy.
    void reorder() {
      Kokkos::View<T*, Kokkos::HostSpace> copy(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "baton::reorder"), view.size());
      std::memcpy(copy.data(), view.data(), data_bytes());
      detail::copy_from_host(space, view, copy.data(), envelope.layout);
    }

    void post_split_data() {
      const auto context = where();
      if (comm->payload() == MPI_COMM_NULL) {
        throw Error(
            detail::error_text(context,
                               "a split View message arrived on a communicator without a payload "
                               "communicator"));
      }
      try {
        check_envelope(context);
      } catch (...) {
        detail::Matched data = detail::match_split_data(*comm, info.source, envelope, context);
        detail::drain(*comm, data);
        throw;
      }
      void* buffer = view.data();
      if (!detail::split_data_in_place(*comm, envelope, view)) {
        if (Device && detail::pass_directly<MS>(*comm)) {
          landed.emplace(Kokkos::view_alloc(Kokkos::WithoutInitializing, "baton::landed"),
                         view.size());
          buffer = landed->data();
        } else {
          staging.emplace(detail::staging_buffer<T>(view.size()));
          buffer = staging->data();
        }
      }
      bytes_type.emplace(data_bytes());
      type = bytes_type->type();
      split = true;
      done = false;
      check_mpi(MPI_Irecv(buffer, bytes_type->count(), type, info.source,
                          static_cast<int>(envelope.sequence), comm->payload(), &request),
                "MPI_Irecv", comm->raw());
    }

    void finish_split_data(std::size_t size) {
      done = true;
      if (size != data_bytes()) {
        throw Error(detail::error_text(where(), "the data of " + envelope.describe() + " is " +
                                                    std::to_string(size) + " bytes, expected " +
                                                    std::to_string(data_bytes())));
      }
      if (landed)
        detail::copy_from_wire<MS>(space, view, landed->data(), envelope.layout);
      else if (staging)
        detail::copy_from_host(space, view, staging->data(), envelope.layout);
    }

    /// The handle goes away before its receive completed: cancel it; a message already matched is
    /// consumed (with a split message's data). Errors go to stderr (destructors do not throw).
    void abandon() noexcept {
      if (done || request == MPI_REQUEST_NULL)
        return;
      try {
        MPI_Status status;
        if (!split) {
          check_mpi(MPI_Cancel(&request), "MPI_Cancel", comm->raw());
          check_mpi(MPI_Wait(&request, &status), "MPI_Wait", comm->raw());
          int cancelled = 0;
          check_mpi(MPI_Test_cancelled(&status, &cancelled), "MPI_Test_cancelled", comm->raw());
          if (cancelled)
            return;
          advance(MPI_SUCCESS, status);  // matched before the cancel: consume it whole
          if (done)
            return;
        }
        check_mpi(MPI_Wait(&request, &status), "MPI_Wait", comm->raw());
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: an abandoned receive: %s\n", operation, e.what());
      }
    }
  };

  std::unique_ptr<State> s_;
};

}  // namespace baton
