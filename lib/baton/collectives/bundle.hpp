#pragma once
/// \file
/// baton::ViewBundle: a named set of Views (like a dictionary of tensors) that travels as one
/// message: a directory of names and envelopes first, then every View's data. The receiver
/// allocates; nothing needs to be known in advance.
///
/// Wire format (version 1, little-endian):
///   "BTNB", version (1 byte), 3 zero bytes, entry count (uint32);
///   per entry: name length (uint16, 1 to 1024), name bytes, 72-byte View envelope (envelope.hpp);
///   then each entry's data in entry order, contiguous in its envelope's layout.

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "baton/comm/communicator.hpp"
#include "baton/transport/byte_buffer.hpp"
#include "baton/transport/bytes.hpp"
#include "baton/transport/detail/view_wire.hpp"
#include "baton/transport/envelope.hpp"

namespace baton {

class ViewBundle {
 public:
  /// One named entry: its envelope and its data as host bytes in the envelope's layout.
  struct Entry {
    std::string name;
    ViewEnvelope envelope;
    ByteBuffer data;
  };

  /// Adds a named View, or replaces the entry of that name. Takes a snapshot of v's contents now
  /// (a host copy), so v may change or go away afterwards. Any memory space, layout, rank 0 to 8.
  template <class V>
  void add(const std::string& name, const V& v) {
    static_assert(Kokkos::is_view<V>::value, "ViewBundle::add needs a Kokkos::View");
    typename V::execution_space().fence();
    const WireLayout layout =
        detail::in_wire_form(v) ? detail::natural_layout<V>() : WireLayout::right;
    Entry entry{name, detail::envelope_of(v, layout),
                ByteBuffer(v.size() * sizeof(detail::value_t<V>))};
    detail::copy_to_host(v, reinterpret_cast<detail::value_t<V>*>(entry.data.data()), layout);
    put(std::move(entry));
  }

  /// A new View of type V (LayoutLeft or LayoutRight, any memory space) holding the entry's
  /// contents. Throws baton::Error when the name is missing or the value type or rank differ.
  template <class V>
  V get(const std::string& name) const {
    static_assert(detail::left_or_right_v<V>,
                  "ViewBundle::get allocates LayoutLeft or LayoutRight Views");
    const Entry& entry = at(name);
    detail::check_allocatable<V>(entry.envelope, [&name] {
      return std::pair<std::string, std::string>("baton::ViewBundle::get", "entry '" + name + "'");
    });
    V v = detail::allocate_like<V>(entry.envelope, name);
    detail::copy_from_host(v, reinterpret_cast<const detail::value_t<V>*>(entry.data.data()),
                           entry.envelope.layout);
    return v;
  }

  bool contains(const std::string& name) const noexcept;
  /// Names in the order they were first added.
  std::vector<std::string> names() const;
  std::size_t size() const noexcept { return entries_.size(); }
  bool empty() const noexcept { return entries_.empty(); }
  /// The entry of that name; throws baton::Error listing the names there are when it is missing.
  const Entry& at(const std::string& name) const;
  const std::vector<Entry>& entries() const noexcept { return entries_; }
  /// Adds a prepared entry (checks that its data size matches its envelope).
  void put(Entry entry);

 private:
  std::vector<Entry> entries_;
};

/// The wire form of a bundle (one buffer).
ByteBuffer encode_bundle(const ViewBundle& bundle);
/// The size of encode_bundle(bundle), without encoding it.
std::size_t encoded_size(const ViewBundle& bundle) noexcept;
/// Writes the wire form into [out, out + size) (e.g. straight into shared memory); `size` must be
/// encoded_size(bundle), else baton::Error.
void encode_bundle_into(const ViewBundle& bundle, std::byte* out, std::size_t size);
/// Reads a bundle from untrusted bytes; throws baton::Error naming the first thing wrong.
ViewBundle decode_bundle(const std::byte* data, std::size_t size);

/// Sends the bundle as one message.
void send_bundle(const Communicator& comm, const ViewBundle& bundle, int dest, int tag);
/// Receives a bundle (matched probe: any size). A malformed message throws baton::Error and is
/// consumed.
ViewBundle recv_bundle(const Communicator& comm, int source = any_source, int tag = any_tag,
                       MessageInfo* info = nullptr);
/// Root's bundle on every rank (only root's `bundle` is read).
ViewBundle broadcast_bundle(const Communicator& comm, const ViewBundle& bundle, int root);

}  // namespace baton
