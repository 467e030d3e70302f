// Moves one message of more than 2 GiB (2^31 + 4099 bytes) from rank 0 to rank 1. Label "large".
#include <doctest/doctest.h>

#include <algorithm>
#include <baton/transport/bytes.hpp>
#include <cstdint>
#include <cstring>
#include <vector>

#include "mpi_doctest.hpp"

namespace {

// Byte i of the message: value(i). Within a block of 2^13 bytes that starts at a multiple of 2^13,
// i >> 13 and i >> 29 are the same for every byte, and i & 0xff runs through the block's offsets:
// block b holds (offset & 0xff) ^ (b ^ (b >> 16)) & 0xff. So the message is made of 256 possible
// blocks, copied (memcpy) and compared (memcmp) whole instead of computed byte by byte: the same
// bytes, written and checked a few times faster (the byte loops took most of the test's time).
constexpr std::size_t block = std::size_t(1) << 13;

std::byte value(std::size_t i) { return static_cast<std::byte>((i ^ (i >> 13) ^ (i >> 29)) & 0xff); }

struct Blocks {
  std::vector<std::byte> bytes = std::vector<std::byte>(256 * block);  // the 256 possible blocks
  Blocks() {
    for (std::size_t c = 0; c < 256; ++c)
      for (std::size_t j = 0; j < block; ++j)
        bytes[c * block + j] = static_cast<std::byte>((j ^ c) & 0xff);
  }
  const std::byte* of(std::size_t b) const { return bytes.data() + ((b ^ (b >> 16)) & 0xff) * block; }
};

}  // namespace

TEST_CASE("a message past 2^31-1 bytes arrives whole") {
  const baton::Communicator& comm = baton::test::world();
  REQUIRE(comm.size() >= 2);
  const std::size_t size = (std::size_t(1) << 31) + 4099;
  const Blocks blocks;
  if (comm.rank() == 0) {
    baton::ByteBuffer bytes(size);
    for (std::size_t at = 0; at < size; at += block)
      std::memcpy(bytes.data() + at, blocks.of(at / block), std::min(block, size - at));
    // The blocks are value(i): every 262147th byte (8193 bytes, at offsets within their blocks
    // that move by 3 each time) and the last.
    std::size_t differ = bytes[size - 1] != value(size - 1);
    for (std::size_t i = 0; i < size; i += 262147)
      differ += bytes[i] != value(i);
    CHECK(differ == 0);  // the test itself is wrong otherwise; rank 1 still gets the message
    baton::send(comm, bytes, 1, 1);
  } else if (comm.rank() == 1) {
    baton::MessageInfo info = baton::probe(comm, 0, 1);
    CHECK(info.size == size);
    baton::Message message = baton::recv(comm, 0, 1);
    REQUIRE(message.bytes.size() == size);
    std::size_t wrong = 0;  // blocks that differ from what was sent
    for (std::size_t at = 0; at < size; at += block)
      wrong += std::memcmp(message.bytes.data() + at, blocks.of(at / block),
                           std::min(block, size - at)) != 0;
    CHECK(wrong == 0);
  }
}
