#pragma once
/// \file
/// The envelope that travels in front of every View message: value type, rank, layout, extents.
///
/// Wire format (72 bytes, little-endian, version 1):
///
/// | offset | size | field                                                   |
/// |-------:|-----:|---------------------------------------------------------|
/// |      0 |    4 | magic "BTNV"                                            |
/// |      4 |    1 | version (1)                                             |
/// |      5 |    1 | value type (baton::ValueType)                           |
/// |      6 |    1 | rank, 0 to 8                                            |
/// |      7 |    1 | layout of the data that follows: 0 right, 1 left        |
/// |      8 |   64 | extents, 8 x uint64; those at and past `rank` are 0     |
///
/// The data follows: product(extents) elements, contiguous in that layout.
///
/// Split form, for large Views: magic "BTNS", the same fields, then at offset 72 the sequence tag
/// (uint64, at most INT_MAX) of a separate data message on the communicator's payload(); 80 bytes,
/// no data after them.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "baton/transport/value_type.hpp"

namespace baton {

enum class WireLayout : std::uint8_t { right = 0, left = 1 };

struct ViewEnvelope {
  static constexpr std::size_t max_rank = 8;
  static constexpr std::size_t wire_size = 72;
  static constexpr std::size_t split_wire_size = 80;
  static constexpr std::uint8_t version = 1;

  ValueType value_type = ValueType::float64;
  std::uint8_t rank = 0;
  WireLayout layout = WireLayout::right;
  std::array<std::uint64_t, max_rank> extents{};
  /// -1: the data follows the envelope in the same message. Otherwise the split form: the data is
  /// the message with this tag on the communicator's payload().
  std::int64_t sequence = -1;

  /// Number of elements (1 for rank 0).
  std::uint64_t element_count() const noexcept;
  /// Bytes of data after the envelope.
  std::uint64_t data_bytes() const noexcept;
  /// "float64[3,4] (right)", for messages.
  std::string describe() const;
};

/// Writes the 72-byte wire form.
std::array<std::byte, ViewEnvelope::wire_size> encode_envelope(const ViewEnvelope& envelope);
/// Writes the 80-byte split form (envelope.sequence must be >= 0).
std::array<std::byte, ViewEnvelope::split_wire_size> encode_split_envelope(
    const ViewEnvelope& envelope);

/// Reads an envelope from untrusted bytes: `message` is the whole message (envelope and data),
/// `message_size` its length. Throws baton::Error naming the first thing wrong: too short, bad
/// magic, version, unknown value type, rank over 8, layout, non-zero unused extents, an element
/// count that overflows, or a data size that differs from the message's. Reads the split form too
/// (a message of exactly 80 bytes starting "BTNS"); its sequence is then >= 0 and no data size is
/// checked.
ViewEnvelope decode_envelope(const std::byte* message, std::size_t message_size);

/// Reads the 72 envelope bytes alone (the data travels elsewhere): the same checks as
/// decode_envelope() except the data size.
ViewEnvelope decode_envelope_header(const std::byte* envelope);

}  // namespace baton
