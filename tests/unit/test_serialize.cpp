#include <doctest/doctest.h>

#include <array>
#include <baton/core/error.hpp>
#include <baton/transport/serialize.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>
#include "particle.hpp"

namespace {

using baton::test::Particle;

// Trivially copyable, no default constructor.
struct Fixed {
  const int id;
  double weight;
};

enum class Colour : std::uint8_t { red = 1, green = 2 };

// A user type whose encoding is empty (allowed on its own, refused as a vector element).
struct Nothing {};
struct Tagged {
  std::string s;
};

}  // namespace

template <>
struct baton::Serializer<Nothing> {  // encodes to nothing
  static void write(baton::ByteWriter&, const Nothing&) {}
  static Nothing read(baton::ByteReader&) { return Nothing{}; }
};

template <>
struct baton::Serializer<Tagged> {  // no min_size: 1 is assumed
  static void write(baton::ByteWriter& out, const Tagged& t) { out.write_object(t.s); }
  static Tagged read(baton::ByteReader& in) { return Tagged{in.read_object<std::string>()}; }
};

namespace {

template <class T>
T round_trip(const T& value) {
  const std::vector<std::byte> bytes = baton::encode_object(value);
  return baton::decode_object<T>(bytes.data(), bytes.size());
}

// Every proper prefix of a valid encoding is rejected with baton::Error.
template <class T>
void check_every_prefix_throws(const T& value) {
  const std::vector<std::byte> bytes = baton::encode_object(value);
  int rejected = 0;
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    const std::vector<std::byte> prefix(bytes.begin(),
                                        bytes.begin() + static_cast<std::ptrdiff_t>(n));
    try {
      (void)baton::decode_object<T>(prefix.data(), prefix.size());
    } catch (const baton::Error&) {
      ++rejected;
    }
  }
  CHECK(rejected == static_cast<int>(bytes.size()));
}

template <class T>
void check_trailing_byte_throws(const T& value) {
  std::vector<std::byte> bytes = baton::encode_object(value);
  bytes.push_back(std::byte{0x5a});
  CHECK_THROWS_WITH_AS((void)baton::decode_object<T>(bytes.data(), bytes.size()),
                       doctest::Contains("baton::ByteReader: 1 trailing bytes after the object"),
                       baton::Error);
}

std::vector<std::byte> u64(std::uint64_t v) {
  baton::ByteWriter w;
  w.write_size(v);
  return w.take();
}

}  // namespace

static_assert(baton::detail::travels_raw_v<int>);
static_assert(baton::detail::travels_raw_v<std::array<double, 3>>);
static_assert(baton::detail::travels_raw_v<Fixed>);
static_assert(!baton::detail::travels_raw_v<std::string>);
static_assert(!baton::detail::travels_raw_v<Particle>);
static_assert(!baton::is_serializable_v<const char*>, "pointers are not sent raw");
static_assert(!baton::is_serializable_v<int[3]>, "C arrays: use std::array");
static_assert(!baton::is_serializable_v<Nothing*>);
static_assert(!baton::detail::travels_raw_v<Nothing>, "a user specialization replaces the raw one");
static_assert(!baton::is_serializable_v<std::vector<int*>>);
static_assert(baton::is_serializable_v<std::vector<std::vector<std::pair<int, std::string>>>>);
static_assert(baton::detail::min_size_v<std::pair<int, std::string>> == 12);
static_assert(baton::detail::min_size_v<Tagged> == 1);

TEST_CASE("lengths are 8 bytes little-endian") {
  const auto bytes = u64(0x0102030405060708ull);
  REQUIRE(bytes.size() == 8);
  CHECK(bytes[0] == std::byte{0x08});
  CHECK(bytes[7] == std::byte{0x01});
  baton::ByteReader r(bytes.data(), bytes.size());
  CHECK(r.read_size() == 0x0102030405060708ull);
  r.expect_end();
}

TEST_CASE("trivially copyable values are their raw bytes") {
  CHECK(baton::encode_object(42).size() == sizeof(int));
  CHECK(round_trip(42) == 42);
  CHECK(round_trip(-1.5) == -1.5);
  CHECK(std::isnan(round_trip(std::numeric_limits<double>::quiet_NaN())));
  CHECK(round_trip(Colour::green) == Colour::green);
  CHECK(round_trip(true) == true);
  CHECK(round_trip(false) == false);
  CHECK(round_trip(std::array<double, 3>{1, 2, 3}) == std::array<double, 3>{1, 2, 3});
  const Fixed f = round_trip(Fixed{7, 0.25});
  CHECK(f.id == 7);
  CHECK(f.weight == 0.25);
  const std::vector<Fixed> fixed = round_trip(std::vector<Fixed>{Fixed{1, 0.5}, Fixed{2, 1.5}});
  REQUIRE(fixed.size() == 2);
  CHECK(fixed[1].id == 2);
  CHECK(fixed[1].weight == 1.5);
  // Size must match exactly.
  const auto four = baton::encode_object(std::int32_t{5});
  CHECK_THROWS_WITH_AS(
      (void)baton::decode_object<double>(four.data(), four.size()),
      doctest::Contains(
          "baton::ByteReader: object message truncated: need 8 bytes at offset 0, 4 left"),
      baton::Error);
  CHECK_THROWS_WITH_AS((void)baton::decode_object<std::int16_t>(four.data(), four.size()),
                       doctest::Contains("baton::ByteReader: 2 trailing bytes after the object"),
                       baton::Error);
}

TEST_CASE("a bool must be 0 or 1") {
  const std::byte two{2};
  CHECK_THROWS_WITH_AS(
      (void)baton::decode_object<bool>(&two, 1),
      doctest::Contains(
          "baton::Serializer: object message holds a bool that is neither 0 nor 1 (byte 2"),
      baton::Error);
  std::vector<std::byte> bools = baton::encode_object(std::vector<bool>{true, false, true});
  CHECK(bools.size() == 8 + 3);
  bools[9] = std::byte{7};
  CHECK_THROWS_AS((void)baton::decode_object<std::vector<bool>>(bools.data(), bools.size()),
                  baton::Error);
}

TEST_CASE("strings: u64 length, then the characters") {
  const std::string with_nul("a\0b", 3);
  const auto bytes = baton::encode_object(with_nul);
  CHECK(bytes.size() == 8 + 3);
  CHECK(bytes[0] == std::byte{3});
  CHECK(round_trip(with_nul) == with_nul);
  CHECK(round_trip(std::string()).empty());
  CHECK(baton::encode_object(std::string()).size() == 8);
  const std::string long_one(100000, 'x');
  CHECK(round_trip(long_one) == long_one);
}

TEST_CASE("vectors: raw elements in one block, others one by one") {
  const std::vector<double> doubles{1.5, -2.0, 1e300};
  CHECK(baton::encode_object(doubles).size() == 8 + 3 * 8);
  CHECK(round_trip(doubles) == doubles);
  CHECK(round_trip(std::vector<double>{}).empty());
  CHECK(round_trip(std::vector<std::uint8_t>(1000, 9)) == std::vector<std::uint8_t>(1000, 9));
  const std::vector<std::string> strings{"", "one", std::string(300, 'z')};
  CHECK(round_trip(strings) == strings);
  const std::vector<std::vector<int>> nested{{}, {1}, {2, 3, 4}};
  CHECK(round_trip(nested) == nested);
  const std::vector<bool> bools{true, false, false, true, true};
  CHECK(round_trip(bools) == bools);
  const std::vector<std::array<float, 2>> arrays{{1, 2}, {3, 4}};
  CHECK(round_trip(arrays) == arrays);
}

TEST_CASE("pairs: first, then second") {
  const std::pair<int, std::string> p{3, "three"};
  CHECK(baton::encode_object(p).size() == 4 + 8 + 5);
  CHECK(round_trip(p) == p);
  const std::pair<std::string, std::vector<double>> q{"xs", {0.5, 0.25}};
  CHECK(round_trip(q) == q);
  const std::vector<std::pair<std::string, int>> many{{"a", 1}, {"b", 2}};
  CHECK(round_trip(many) == many);
}

TEST_CASE("a user type through the hook") {
  const Particle p{"proton", {0.0, 1.0, -2.5}};
  CHECK(baton::encode_object(p).size() == 8 + 6 + 8 + 24);
  CHECK(round_trip(p) == p);
  const std::vector<Particle> many{p, Particle{}, Particle{"e", {}}};
  CHECK(round_trip(many) == many);
  const std::pair<Particle, int> paired{p, 4};
  CHECK(round_trip(paired) == paired);
  CHECK(round_trip(std::vector<Tagged>{Tagged{"t"}}).at(0).s == "t");
}

TEST_CASE("every prefix of a valid encoding is rejected, never read past") {
  check_every_prefix_throws(12345.0);
  check_every_prefix_throws(std::string("hello"));
  check_every_prefix_throws(std::vector<double>{1, 2, 3});
  check_every_prefix_throws(std::vector<std::string>{"ab", "", "cde"});
  check_every_prefix_throws(std::vector<std::vector<int>>{{1, 2}, {}, {3}});
  check_every_prefix_throws(std::vector<bool>{true, false});
  check_every_prefix_throws(std::pair<int, std::string>{1, "x"});
  check_every_prefix_throws(Particle{"proton", {1.0, 2.0}});
  check_every_prefix_throws(std::vector<Particle>{{"a", {1.0}}, {"", {}}});
}

TEST_CASE("trailing bytes are detected") {
  check_trailing_byte_throws(7);
  check_trailing_byte_throws(std::string("abc"));
  check_trailing_byte_throws(std::vector<double>{1.0});
  check_trailing_byte_throws(std::vector<std::string>{"a"});
  check_trailing_byte_throws(Particle{"p", {2.0}});
  std::vector<std::byte> bytes = baton::encode_object(std::string("abc"));
  bytes.resize(bytes.size() + 5);
  CHECK_THROWS_WITH_AS(
      (void)baton::decode_object<std::string>(bytes.data(), bytes.size()),
      doctest::Contains(
          "baton::ByteReader: 5 trailing bytes after the object (at offset 11 of 16)"),
      baton::Error);
}

TEST_CASE("a hostile length is rejected before anything is allocated") {
  // 2^60 elements: allocating would throw std::length_error or std::bad_alloc, not baton::Error.
  std::vector<std::byte> bytes = u64(std::uint64_t(1) << 60);
  bytes.resize(bytes.size() + 16);
  CHECK_THROWS_WITH_AS((void)baton::decode_object<std::vector<double>>(bytes.data(), bytes.size()),
                       doctest::Contains("baton::ByteReader: object message truncated: "
                                         "1152921504606846976 elements of at least 8 bytes "
                                         "declared at offset 0, 16 bytes left"),
                       baton::Error);
  CHECK_THROWS_AS((void)baton::decode_object<std::string>(bytes.data(), bytes.size()),
                  baton::Error);
  CHECK_THROWS_WITH_AS(
      (void)baton::decode_object<std::vector<std::string>>(bytes.data(), bytes.size()),
      doctest::Contains("elements of at least 8 bytes declared"), baton::Error);
  CHECK_THROWS_AS((void)baton::decode_object<std::vector<Particle>>(bytes.data(), bytes.size()),
                  baton::Error);
  CHECK_THROWS_WITH_AS((void)baton::decode_object<std::vector<Tagged>>(bytes.data(), bytes.size()),
                       doctest::Contains("elements of at least 1 bytes declared"), baton::Error);
  CHECK_THROWS_AS((void)baton::decode_object<std::vector<bool>>(bytes.data(), bytes.size()),
                  baton::Error);
  // The largest count, and one whose byte size overflows 64 bits.
  for (std::uint64_t count : {~std::uint64_t(0), (std::uint64_t(1) << 61) + 1, std::uint64_t(3)}) {
    std::vector<std::byte> b = u64(count);
    b.resize(b.size() + 16);
    CHECK_THROWS_AS((void)baton::decode_object<std::vector<double>>(b.data(), b.size()),
                    baton::Error);
    CHECK_THROWS_AS(
        (void)baton::decode_object<std::vector<std::vector<double>>>(b.data(), b.size()),
        baton::Error);
  }
  // A count that would fit in memory (1 GiB) is still checked against the message first.
  std::vector<std::byte> gib = u64(std::uint64_t(1) << 27);
  CHECK_THROWS_WITH_AS(
      (void)baton::decode_object<std::vector<double>>(gib.data(), gib.size()),
      doctest::Contains(
          "134217728 elements of at least 8 bytes declared at offset 0, 0 bytes left"),
      baton::Error);
}

TEST_CASE("ByteReader reports where it ran out") {
  const std::vector<std::byte> three(3);
  baton::ByteReader r(three.data(), three.size());
  (void)r.read<std::uint16_t>();
  CHECK(r.offset() == 2);
  CHECK(r.remaining() == 1);
  CHECK_THROWS_WITH_AS(
      (void)r.read<std::uint32_t>(),
      doctest::Contains(
          "baton::ByteReader: object message truncated: need 4 bytes at offset 2, 1 left"),
      baton::Error);
  CHECK(r.offset() == 2);  // a failed read consumes nothing
  CHECK_THROWS_AS(r.expect_end(), baton::Error);
  (void)r.read_bytes(1);
  r.expect_end();
  baton::ByteReader empty(nullptr, 0);
  CHECK(empty.read_bytes(0) == nullptr);
  empty.expect_end();
}

TEST_CASE("a vector refuses elements that encode below their min_size") {
  // On its own an empty encoding is fine; in a vector it could not be bounded on decode.
  CHECK(baton::encode_object(Nothing{}).empty());
  (void)baton::decode_object<Nothing>(nullptr, 0);
  CHECK_THROWS_WITH_AS(
      (void)baton::encode_object(std::vector<Nothing>(2)),
      doctest::Contains("baton::Serializer: an element of a std::vector encoded to 0 bytes, fewer "
                        "than its Serializer's min_size (1)"),
      baton::Error);
  CHECK(baton::encode_object(std::vector<Tagged>{Tagged{""}}).size() == 16);
}

TEST_CASE("ByteWriter appends and hands its bytes over") {
  baton::ByteWriter w(std::vector<std::byte>{std::byte{1}});
  w.write(std::uint16_t{0x0302});
  w.write_bytes("xy", 2);
  w.write_object(std::string("z"));
  CHECK(w.size() == 1 + 2 + 2 + 9);
  const std::vector<std::byte> bytes = w.take();
  CHECK(bytes.size() == 14);
  CHECK(w.size() == 0);
  baton::ByteReader r(bytes.data(), bytes.size());
  CHECK(r.read<std::uint8_t>() == 1);
  CHECK(r.read<std::uint16_t>() == 0x0302);
  CHECK(std::memcmp(r.read_bytes(2), "xy", 2) == 0);
  CHECK(r.read_object<std::string>() == "z");
  r.expect_end();
}
