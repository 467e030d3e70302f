#include "baton/transport/envelope.hpp"

#include <cstring>
#include <limits>

#include "baton/core/error.hpp"

namespace baton {

const char* to_string(ValueType type) noexcept {
  switch (type) {
    case ValueType::boolean:
      return "bool";
    case ValueType::int8:
      return "int8";
    case ValueType::uint8:
      return "uint8";
    case ValueType::int16:
      return "int16";
    case ValueType::uint16:
      return "uint16";
    case ValueType::int32:
      return "int32";
    case ValueType::uint32:
      return "uint32";
    case ValueType::int64:
      return "int64";
    case ValueType::uint64:
      return "uint64";
    case ValueType::float32:
      return "float32";
    case ValueType::float64:
      return "float64";
    case ValueType::float128:
      return "float128";
  }
  return "unknown";
}

std::size_t size_of(ValueType type) noexcept {
  switch (type) {
    case ValueType::boolean:
    case ValueType::int8:
    case ValueType::uint8:
      return 1;
    case ValueType::int16:
    case ValueType::uint16:
      return 2;
    case ValueType::int32:
    case ValueType::uint32:
    case ValueType::float32:
      return 4;
    case ValueType::int64:
    case ValueType::uint64:
    case ValueType::float64:
      return 8;
    case ValueType::float128:
      return 16;
  }
  return 0;
}

bool is_known(ValueType type) noexcept {
  return size_of(type) != 0;
}

namespace {

constexpr std::uint8_t magic[4] = {'B', 'T', 'N', 'V'};
constexpr std::uint8_t split_magic[4] = {'B', 'T', 'N', 'S'};

// Multiplies, or returns false on overflow.
bool multiply(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a)
    return false;
  out = a * b;
  return true;
}

void put_u64(std::byte* out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<std::byte>((value >> (8 * i)) & 0xffu);
}

std::uint64_t get_u64(const std::byte* in) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i)
    value |= std::uint64_t(std::to_integer<std::uint8_t>(in[i])) << (8 * i);
  return value;
}

}  // namespace

std::uint64_t ViewEnvelope::element_count() const noexcept {
  std::uint64_t count = 1;
  for (std::size_t d = 0; d < rank && d < max_rank; ++d) {
    if (!multiply(count, extents[d], count))
      return std::numeric_limits<std::uint64_t>::max();
  }
  return count;
}

std::uint64_t ViewEnvelope::data_bytes() const noexcept {
  std::uint64_t bytes = 0;
  if (!multiply(element_count(), size_of(value_type), bytes)) {
    return std::numeric_limits<std::uint64_t>::max();
  }
  return bytes;
}

std::string ViewEnvelope::describe() const {
  std::string text = to_string(value_type);
  text += "[";
  for (std::size_t d = 0; d < rank && d < max_rank; ++d) {
    if (d)
      text += ",";
    text += std::to_string(extents[d]);
  }
  text += layout == WireLayout::left ? "] (left)" : "] (right)";
  return text;
}

std::array<std::byte, ViewEnvelope::wire_size> encode_envelope(const ViewEnvelope& envelope) {
  std::array<std::byte, ViewEnvelope::wire_size> out{};
  std::memcpy(out.data(), magic, 4);
  out[4] = std::byte{ViewEnvelope::version};
  out[5] = static_cast<std::byte>(envelope.value_type);
  out[6] = std::byte{envelope.rank};
  out[7] = static_cast<std::byte>(envelope.layout);
  for (std::size_t d = 0; d < ViewEnvelope::max_rank; ++d) {
    put_u64(out.data() + 8 + 8 * d, d < envelope.rank ? envelope.extents[d] : 0);
  }
  return out;
}

std::array<std::byte, ViewEnvelope::split_wire_size> encode_split_envelope(
    const ViewEnvelope& envelope) {
  std::array<std::byte, ViewEnvelope::split_wire_size> out{};
  const auto head = encode_envelope(envelope);
  std::memcpy(out.data(), head.data(), head.size());
  std::memcpy(out.data(), split_magic, 4);
  put_u64(out.data() + ViewEnvelope::wire_size, static_cast<std::uint64_t>(envelope.sequence));
  return out;
}

namespace {
ViewEnvelope decode(const std::byte* message, std::size_t message_size, bool check_data_size) {
  const auto fail = [](const std::string& what) {
    throw Error("baton::decode_envelope: bad View message: " + what);
  };
  if (message_size < ViewEnvelope::wire_size) {
    fail(std::to_string(message_size) + " bytes, shorter than the " +
         std::to_string(ViewEnvelope::wire_size) + "-byte envelope");
  }
  std::int64_t sequence = -1;
  if (message_size == ViewEnvelope::split_wire_size && std::memcmp(message, split_magic, 4) == 0) {
    const std::uint64_t tag = get_u64(message + ViewEnvelope::wire_size);
    if (tag > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
      fail("sequence tag " + std::to_string(tag) + " over INT_MAX");
    sequence = static_cast<std::int64_t>(tag);
    check_data_size = false;
  } else if (std::memcmp(message, magic, 4) != 0) {
    fail("no BTNV magic (not a View message)");
  }
  const auto byte_at = [&](std::size_t i) { return std::to_integer<std::uint8_t>(message[i]); };
  if (byte_at(4) != ViewEnvelope::version) {
    fail("envelope version " + std::to_string(byte_at(4)) + ", expected " +
         std::to_string(ViewEnvelope::version));
  }
  ViewEnvelope envelope;
  envelope.sequence = sequence;
  envelope.value_type = static_cast<ValueType>(byte_at(5));
  if (!is_known(envelope.value_type))
    fail("unknown value type code " + std::to_string(byte_at(5)));
  envelope.rank = byte_at(6);
  if (envelope.rank > ViewEnvelope::max_rank)
    fail("rank " + std::to_string(envelope.rank) + " over 8");
  if (byte_at(7) > 1)
    fail("layout code " + std::to_string(byte_at(7)));
  envelope.layout = static_cast<WireLayout>(byte_at(7));
  for (std::size_t d = 0; d < ViewEnvelope::max_rank; ++d) {
    envelope.extents[d] = get_u64(message + 8 + 8 * d);
    if (d >= envelope.rank && envelope.extents[d] != 0) {
      fail("extent " + std::to_string(d) + " is set beyond rank " + std::to_string(envelope.rank));
    }
  }
  std::uint64_t count = 1;
  std::uint64_t bytes = 0;
  for (std::size_t d = 0; d < envelope.rank; ++d) {
    if (!multiply(count, envelope.extents[d], count))
      fail("element count overflows");
  }
  if (!multiply(count, size_of(envelope.value_type), bytes))
    fail("data size overflows");
  const std::uint64_t carried = message_size - ViewEnvelope::wire_size;
  if (check_data_size && bytes != carried) {
    fail(envelope.describe() + " needs " + std::to_string(bytes) +
         " data bytes, the message carries " + std::to_string(carried));
  }
  return envelope;
}

}  // namespace

ViewEnvelope decode_envelope(const std::byte* message, std::size_t message_size) {
  return decode(message, message_size, true);
}

ViewEnvelope decode_envelope_header(const std::byte* envelope) {
  return decode(envelope, ViewEnvelope::wire_size, false);
}

}  // namespace baton
