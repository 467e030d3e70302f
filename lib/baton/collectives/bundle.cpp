#include "baton/collectives/bundle.hpp"

#include <cstdint>
#include <cstring>
#include <set>

#include "baton/core/check_mpi.hpp"
#include "baton/transport/detail/datatype.hpp"

namespace baton {

namespace {
constexpr std::uint8_t magic[4] = {'B', 'T', 'N', 'B'};
constexpr std::uint8_t version = 1;
constexpr std::size_t header_size = 12;
constexpr std::size_t max_name = 1024;

void put_uint(std::vector<std::byte>& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(static_cast<std::byte>((value >> (8 * i)) & 0xffu));
}

std::uint64_t get_uint(const std::byte* in, int bytes) {
  std::uint64_t value = 0;
  for (int i = 0; i < bytes; ++i)
    value |= std::uint64_t(std::to_integer<std::uint8_t>(in[i])) << (8 * i);
  return value;
}

[[noreturn]] void fail(const std::string& what) {
  throw Error("baton::decode_bundle: bad View bundle message: " + what);
}
}  // namespace

bool ViewBundle::contains(const std::string& name) const noexcept {
  for (const Entry& e : entries_) {
    if (e.name == name)
      return true;
  }
  return false;
}

std::vector<std::string> ViewBundle::names() const {
  std::vector<std::string> out;
  for (const Entry& e : entries_)
    out.push_back(e.name);
  return out;
}

const ViewBundle::Entry& ViewBundle::at(const std::string& name) const {
  for (const Entry& e : entries_) {
    if (e.name == name)
      return e;
  }
  std::string have;
  for (const Entry& e : entries_)
    have += (have.empty() ? "'" : ", '") + e.name + "'";
  throw Error("baton::ViewBundle: no entry named '" + name +
              "' (entries: " + (have.empty() ? "none" : have) + ")");
}

void ViewBundle::put(Entry entry) {
  if (entry.name.empty() || entry.name.size() > max_name) {
    throw Error("baton::ViewBundle: entry names have 1 to 1024 bytes, not " +
                std::to_string(entry.name.size()));
  }
  if (entry.data.size() != entry.envelope.data_bytes()) {
    throw Error("baton::ViewBundle: entry '" + entry.name + "' holds " +
                std::to_string(entry.data.size()) + " bytes, its envelope " +
                entry.envelope.describe() + " needs " +
                std::to_string(entry.envelope.data_bytes()));
  }
  for (Entry& e : entries_) {
    if (e.name == entry.name) {
      e = std::move(entry);
      return;
    }
  }
  entries_.push_back(std::move(entry));
}

namespace {
/// The directory part of the wire form (header and one name + envelope per entry).
std::vector<std::byte> encode_directory(const ViewBundle& bundle) {
  std::vector<std::byte> directory;
  directory.insert(directory.end(), reinterpret_cast<const std::byte*>(magic),
                   reinterpret_cast<const std::byte*>(magic) + 4);
  put_uint(directory, version, 1);
  put_uint(directory, 0, 3);
  put_uint(directory, bundle.size(), 4);
  for (const auto& entry : bundle.entries()) {
    put_uint(directory, entry.name.size(), 2);
    directory.insert(directory.end(), reinterpret_cast<const std::byte*>(entry.name.data()),
                     reinterpret_cast<const std::byte*>(entry.name.data()) + entry.name.size());
    const auto envelope = encode_envelope(entry.envelope);
    directory.insert(directory.end(), envelope.begin(), envelope.end());
  }
  return directory;
}
}  // namespace

std::size_t encoded_size(const ViewBundle& bundle) noexcept {
  std::size_t bytes = header_size;
  for (const auto& entry : bundle.entries())
    bytes += 2 + entry.name.size() + ViewEnvelope::wire_size + entry.data.size();
  return bytes;
}

void encode_bundle_into(const ViewBundle& bundle, std::byte* out, std::size_t size) {
  if (size != encoded_size(bundle)) {
    throw Error("baton::encode_bundle_into: the bundle encodes to " +
                std::to_string(encoded_size(bundle)) + " bytes, the buffer has " +
                std::to_string(size));
  }
  const std::vector<std::byte> directory = encode_directory(bundle);
  std::memcpy(out, directory.data(), directory.size());
  std::size_t offset = directory.size();
  for (const auto& entry : bundle.entries()) {
    if (entry.data.size())
      std::memcpy(out + offset, entry.data.data(), entry.data.size());
    offset += entry.data.size();
  }
}

ByteBuffer encode_bundle(const ViewBundle& bundle) {
  ByteBuffer out(encoded_size(bundle));
  encode_bundle_into(bundle, out.data(), out.size());
  return out;
}

ViewBundle decode_bundle(const std::byte* data, std::size_t size) {
  if (size < header_size)
    fail(std::to_string(size) + " bytes, shorter than the 12-byte header");
  if (std::memcmp(data, magic, 4) != 0)
    fail("no BTNB magic (not a bundle message)");
  if (std::to_integer<std::uint8_t>(data[4]) != version) {
    fail("version " + std::to_string(std::to_integer<std::uint8_t>(data[4])) + ", expected 1");
  }
  if (get_uint(data + 5, 3) != 0)
    fail("reserved bytes are not zero");
  const std::uint64_t count = get_uint(data + 8, 4);
  // Every entry takes at least 2 + 1 + 72 bytes of directory: bound the count before reserving.
  if (count > (size - header_size) / (2 + 1 + ViewEnvelope::wire_size)) {
    fail(std::to_string(count) + " entries cannot fit in " + std::to_string(size) + " bytes");
  }
  struct Pending {
    std::string name;
    ViewEnvelope envelope;
  };
  std::vector<Pending> pending;
  pending.reserve(static_cast<std::size_t>(count));
  std::set<std::string> seen;
  std::size_t offset = header_size;
  std::uint64_t data_total = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (size - offset < 2)
      fail("directory truncated at entry " + std::to_string(i));
    const std::size_t length = static_cast<std::size_t>(get_uint(data + offset, 2));
    offset += 2;
    if (length == 0 || length > max_name)
      fail("entry " + std::to_string(i) + " has a name of " + std::to_string(length) + " bytes");
    if (size - offset < length + ViewEnvelope::wire_size)
      fail("directory truncated at entry " + std::to_string(i));
    std::string name(reinterpret_cast<const char*>(data + offset), length);
    offset += length;
    if (!seen.insert(name).second)
      fail("entry name '" + name + "' appears twice");
    const ViewEnvelope envelope = decode_envelope_header(data + offset);
    offset += ViewEnvelope::wire_size;
    const std::uint64_t bytes = envelope.data_bytes();
    if (bytes > size || data_total > size - bytes)
      fail("entry '" + name + "' " + envelope.describe() + " is larger than the message");
    data_total += bytes;
    pending.push_back({std::move(name), envelope});
  }
  if (data_total != size - offset) {
    fail("the entries need " + std::to_string(data_total) + " data bytes, the message carries " +
         std::to_string(size - offset));
  }
  ViewBundle bundle;
  for (Pending& p : pending) {
    const std::size_t bytes = static_cast<std::size_t>(p.envelope.data_bytes());
    bundle.put({std::move(p.name), p.envelope, ByteBuffer(data + offset, bytes)});
    offset += bytes;
  }
  return bundle;
}

void send_bundle(const Communicator& comm, const ViewBundle& bundle, int dest, int tag) {
  check_rank(comm, dest, "baton::send_bundle");
  check_tag(comm, tag, "baton::send_bundle");
  send(comm, encode_bundle(bundle), dest, tag);
}

ViewBundle recv_bundle(const Communicator& comm, int source, int tag, MessageInfo* info) {
  Message message = recv(comm, source, tag);
  if (info != nullptr)
    *info = MessageInfo{message.source, message.tag, message.bytes.size()};
  try {
    return decode_bundle(message.bytes.data(), message.bytes.size());
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " (from source " + std::to_string(message.source) +
                " with tag " + std::to_string(message.tag) + ", on rank " +
                std::to_string(comm.rank()) + "; the message was consumed)");
  }
}

ViewBundle broadcast_bundle(const Communicator& comm, const ViewBundle& bundle, int root) {
  check_rank(comm, root, "baton::broadcast_bundle");
  const bool is_root = comm.rank() == root;
  ByteBuffer bytes = is_root ? encode_bundle(bundle) : ByteBuffer();
  std::uint64_t size = bytes.size();
  check_mpi(MPI_Bcast(&size, 1, MPI_UINT64_T, root, comm.raw()), "MPI_Bcast", comm.raw());
  if (!is_root)
    bytes = ByteBuffer(static_cast<std::size_t>(size));
  detail::ByteDatatype type(static_cast<std::size_t>(size));
  check_mpi(MPI_Bcast(bytes.data(), type.count(), type.type(), root, comm.raw()), "MPI_Bcast",
            comm.raw());
  return decode_bundle(bytes.data(), bytes.size());  // root too: every rank holds the same copy
}

}  // namespace baton
