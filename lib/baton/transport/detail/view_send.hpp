#pragma once
/// \file
/// The sending side of a View message (internal; see view_message.hpp and docs/transport.md).
/// Direct path: a contiguous LayoutLeft/LayoutRight host View goes to MPI as is (envelope and View
/// memory in one message); a device View is packed with its envelope into one device buffer (one
/// device-side copy). Staged path, and host Views of other layouts: copied into a host buffer.
/// Up to 4 KiB (envelope included) a host message is copied into one contiguous buffer; from the
/// split threshold (64 KiB) up, envelope and data travel as two messages (split form).

#include <Kokkos_Core.hpp>
#include <array>
#include <cstring>
#include <memory>
#include <utility>

#include "baton/core/check_mpi.hpp"
#include "baton/transport/bytes.hpp"
#include "baton/transport/detail/datatype.hpp"
#include "baton/transport/detail/view_wire.hpp"

namespace baton::detail {

using Header = std::array<std::byte, ViewEnvelope::wire_size>;

/// Views of at least this many bytes travel in split form (envelope, then the data alone on the
/// communicator's payload()). Measured, see docs/performance.md; BATON_VIEW_SPLIT_BYTES overrides.
std::size_t split_threshold() noexcept;
inline constexpr std::size_t default_split_threshold = std::size_t(64) << 10;

/// Messages up to this size (envelope included) are packed into one contiguous buffer by the sender
/// and received into a stack buffer first, then copied: cheaper than a derived datatype for small
/// Views (measured, see docs/performance.md). Every split-form envelope is small.
inline constexpr std::size_t small_message = 4096;

/// Everything an outgoing View message needs alive until MPI is done with it. Kernels Baton runs
/// (packing, copies to the host) run on the instance `space`, which is fenced first (the kernels
/// that wrote v on it are done) and again before MPI reads the data.
template <class V, class Exec = typename V::execution_space>
struct OutgoingView {
  using T = value_t<V>;
  using MS = typename V::memory_space;
  Header header{};
  V view;
  Exec space;
  Kokkos::View<T*, StagingSpace> staging;   // host copy, when staged
  Kokkos::View<unsigned char*, MS> packed;  // envelope + data in device memory (direct device path)
  const void* data = nullptr;               // the data block (host, or the View's memory)
  std::size_t bytes = 0;
  std::array<std::byte, ViewEnvelope::split_wire_size> split_header{};
  int sequence = -1;               // >= 0: split form, data on comm.payload()
  std::size_t small_size = 0;      // > 0: envelope + data packed in `small`
  std::byte small[small_message];  // left uninitialised: only small_size bytes are used

  OutgoingView(const Communicator& comm, const V& v, int dest, const Exec& exec = Exec())
      : view(v), space(exec), bytes(v.size() * sizeof(T)) {
    space.fence();  // kernels that wrote v on this instance are done
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
    copy_to_host(space, v, staging.data(), layout);
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
    deep_copy_on(space, Kokkos::subview(packed, std::make_pair(std::size_t(0), header.size())),
                 host_header);
    T* out = reinterpret_cast<T*>(packed.data() + ViewEnvelope::wire_size);
    if (layout == WireLayout::left) {
      copy_view(space, unmanaged_like<V, Kokkos::LayoutLeft, MS>(out, view), view);
    } else {
      copy_view(space, unmanaged_like<V, Kokkos::LayoutRight, MS>(out, view), view);
    }
    space.fence();  // the header copy too, on host memory where copy_view does not fence
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

}  // namespace baton::detail
