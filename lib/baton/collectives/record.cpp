#include "baton/collectives/record.hpp"

#include <cstdint>
#include <cstring>

#include "baton/core/error.hpp"

namespace baton {

namespace {
constexpr std::uint8_t magic[4] = {'B', 'T', 'N', 'R'};
constexpr std::uint8_t version = 1;
constexpr std::size_t header_size = 16;

[[noreturn]] void fail(const std::string& what) {
  throw Error("baton::decode_record: bad record: " + what);
}
}  // namespace

std::size_t encoded_size(const Record& record) noexcept {
  return header_size + record.config.size() + encoded_size(record.views);
}

void encode_record_into(const Record& record, std::byte* out, std::size_t size) {
  if (size != encoded_size(record)) {
    throw Error("baton::encode_record_into: the record encodes to " +
                std::to_string(encoded_size(record)) + " bytes, the buffer has " +
                std::to_string(size));
  }
  std::memcpy(out, magic, 4);
  out[4] = std::byte{version};
  out[5] = out[6] = out[7] = std::byte{0};
  const std::uint64_t length = record.config.size();
  for (int i = 0; i < 8; ++i)
    out[8 + i] = static_cast<std::byte>((length >> (8 * i)) & 0xffu);
  if (length)
    std::memcpy(out + header_size, record.config.data(), record.config.size());
  const std::size_t offset = header_size + record.config.size();
  encode_bundle_into(record.views, out + offset, size - offset);
}

ByteBuffer encode_record(const Record& record) {
  ByteBuffer out(encoded_size(record));
  encode_record_into(record, out.data(), out.size());
  return out;
}

Record decode_record(const std::byte* data, std::size_t size) {
  if (size < header_size)
    fail(std::to_string(size) + " bytes, shorter than the 16-byte header");
  if (std::memcmp(data, magic, 4) != 0)
    fail("no BTNR magic (not a record)");
  if (std::to_integer<std::uint8_t>(data[4]) != version)
    fail("version " + std::to_string(std::to_integer<std::uint8_t>(data[4])) + ", expected 1");
  if (data[5] != std::byte{0} || data[6] != std::byte{0} || data[7] != std::byte{0})
    fail("reserved bytes are not zero");
  std::uint64_t length = 0;
  for (int i = 0; i < 8; ++i)
    length |= std::uint64_t(std::to_integer<std::uint8_t>(data[8 + i])) << (8 * i);
  if (length > size - header_size) {
    fail("a config of " + std::to_string(length) + " bytes cannot fit in " + std::to_string(size) +
         " bytes");
  }
  Record record;
  record.config.assign(reinterpret_cast<const char*>(data + header_size),
                       static_cast<std::size_t>(length));
  const std::size_t offset = header_size + static_cast<std::size_t>(length);
  try {
    record.views = decode_bundle(data + offset, size - offset);
  } catch (const Error& e) {
    fail(std::string("its Views: ") + e.what());
  }
  return record;
}

}  // namespace baton
