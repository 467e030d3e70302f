// Moves one message of more than 2 GiB (2^31 + 4099 bytes) from rank 0 to rank 1. Label "large".
#include <doctest/doctest.h>

#include <baton/transport/bytes.hpp>
#include <cstdint>

#include "mpi_doctest.hpp"

TEST_CASE("a message past 2^31-1 bytes arrives whole") {
  const baton::Communicator& comm = baton::test::world();
  REQUIRE(comm.size() >= 2);
  const std::size_t size = (std::size_t(1) << 31) + 4099;
  const auto value = [](std::size_t i) {
    return static_cast<std::byte>((i ^ (i >> 13) ^ (i >> 29)) & 0xff);
  };
  if (comm.rank() == 0) {
    baton::ByteBuffer bytes(size);
    for (std::size_t i = 0; i < size; ++i)
      bytes[i] = value(i);
    baton::send(comm, bytes, 1, 1);
  } else if (comm.rank() == 1) {
    baton::MessageInfo info = baton::probe(comm, 0, 1);
    CHECK(info.size == size);
    baton::Message message = baton::recv(comm, 0, 1);
    REQUIRE(message.bytes.size() == size);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < size; ++i)
      wrong += message.bytes[i] != value(i);
    CHECK(wrong == 0);
  }
}
