#pragma once
/// \file
/// baton::Record: what one rank contributes to a node gather (shm/gather.hpp) or a workspace
/// (workspace/workspace.hpp): a config text (JSON, or any text) and named Views.
///
/// Wire format (version 1, little-endian), the one format both use:
///   "BTNR", version (1 byte), 3 zero bytes, config length (uint64), config bytes,
///   then the View bundle's wire form (collectives/bundle.hpp) to the end.

#include <cstddef>
#include <string>

#include "baton/collectives/bundle.hpp"
#include "baton/transport/byte_buffer.hpp"

namespace baton {

struct Record {
  /// Free text, typically JSON; may be empty.
  std::string config;
  /// Named Views (host copies); may be empty.
  ViewBundle views;
};

/// The size of encode_record(record), without encoding it.
std::size_t encoded_size(const Record& record) noexcept;
/// Writes the wire form into [out, out + size); `size` must be encoded_size(record), else
/// baton::Error.
void encode_record_into(const Record& record, std::byte* out, std::size_t size);
/// The wire form of a record (one buffer).
ByteBuffer encode_record(const Record& record);
/// Reads a record from untrusted bytes; throws baton::Error naming the first thing wrong.
Record decode_record(const std::byte* data, std::size_t size);

}  // namespace baton
