#include <doctest/doctest.h>

#include <baton/core/error.hpp>
#include <baton/transport/envelope.hpp>
#include <cstring>
#include <vector>

namespace {
std::vector<std::byte> message_for(const baton::ViewEnvelope& e) {
  auto head = baton::encode_envelope(e);
  std::vector<std::byte> message(head.begin(), head.end());
  message.resize(message.size() + e.data_bytes());
  return message;
}
}  // namespace

TEST_CASE("value type codes follow the C++ type") {
  CHECK(baton::value_type_of<double>() == baton::ValueType::float64);
  CHECK(baton::value_type_of<const float>() == baton::ValueType::float32);
  CHECK(baton::value_type_of<int>() == baton::ValueType::int32);
  CHECK(baton::value_type_of<unsigned long long>() == baton::ValueType::uint64);
  CHECK(baton::value_type_of<bool>() == baton::ValueType::boolean);
  CHECK(baton::value_type_of<std::int16_t>() == baton::ValueType::int16);
  CHECK(baton::size_of(baton::ValueType::float64) == 8);
  CHECK(std::string(baton::to_string(baton::ValueType::uint8)) == "uint8");
}

TEST_CASE("an envelope round-trips through its wire form") {
  baton::ViewEnvelope e;
  e.value_type = baton::ValueType::int16;
  e.rank = 3;
  e.layout = baton::WireLayout::left;
  e.extents = {2, 3, 5, 0, 0, 0, 0, 0};
  const auto message = message_for(e);
  CHECK(message.size() == 72 + 2 * 3 * 5 * 2);
  const baton::ViewEnvelope d = baton::decode_envelope(message.data(), message.size());
  CHECK(d.value_type == e.value_type);
  CHECK(d.rank == 3);
  CHECK(d.layout == baton::WireLayout::left);
  CHECK(d.extents == e.extents);
  CHECK(d.describe() == "int16[2,3,5] (left)");
}

TEST_CASE("rank 0 carries one element; zero extents carry none") {
  baton::ViewEnvelope scalar;
  scalar.value_type = baton::ValueType::float32;
  CHECK(scalar.element_count() == 1);
  CHECK(baton::decode_envelope(message_for(scalar).data(), 76).rank == 0);
  baton::ViewEnvelope empty;
  empty.rank = 2;
  empty.extents[0] = 0;
  empty.extents[1] = 1000;
  CHECK(empty.data_bytes() == 0);
  CHECK(baton::decode_envelope(message_for(empty).data(), 72).extents[1] == 1000);
}

TEST_CASE("the decoder names what is wrong with untrusted bytes") {
  baton::ViewEnvelope e;
  e.rank = 1;
  e.extents[0] = 4;
  auto good = message_for(e);
  const auto expect = [](std::vector<std::byte> m, const char* text) {
    CHECK_THROWS_WITH_AS(baton::decode_envelope(m.data(), m.size()), doctest::Contains(text),
                         baton::Error);
  };
  expect(std::vector<std::byte>(10),
         "baton::decode_envelope: bad View message: 10 bytes, shorter than the 72-byte envelope");
  auto m = good;
  m[0] = std::byte{'X'};
  expect(m, "no BTNV magic");
  m = good;
  m[4] = std::byte{9};
  expect(m, "envelope version 9");
  m = good;
  m[5] = std::byte{200};
  expect(m, "unknown value type code 200");
  m = good;
  m[6] = std::byte{9};
  expect(m, "rank 9 over 8");
  m = good;
  m[7] = std::byte{2};
  expect(m, "layout code 2");
  m = good;
  m[8 + 8 * 3] = std::byte{1};
  expect(m, "extent 3 is set beyond rank 1");
  m = good;
  m.pop_back();
  expect(m, "float64[4] (right) needs 32 data bytes, the message carries 31");
  baton::ViewEnvelope huge;
  huge.rank = 2;
  huge.extents[0] = std::uint64_t(1) << 40;
  huge.extents[1] = std::uint64_t(1) << 30;
  auto head = baton::encode_envelope(huge);
  expect(std::vector<std::byte>(head.begin(), head.end()), "overflows");
}
