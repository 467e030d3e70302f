#pragma once
/// \file
/// MPI datatypes for byte counts past INT_MAX (internal).

#include <mpi.h>

#include <cstddef>

namespace baton::detail {

/// `count` elements of `type` describe `bytes` bytes: MPI_BYTE x bytes when that fits an int,
/// otherwise one committed derived type (1 GiB blocks plus the rest), freed on destruction.
class ByteDatatype {
 public:
  explicit ByteDatatype(std::size_t bytes);
  ~ByteDatatype();
  ByteDatatype(ByteDatatype&& other) noexcept;
  ByteDatatype& operator=(ByteDatatype&&) = delete;
  ByteDatatype(const ByteDatatype&) = delete;
  ByteDatatype& operator=(const ByteDatatype&) = delete;

  MPI_Datatype type() const noexcept { return type_; }
  int count() const noexcept { return count_; }

 private:
  MPI_Datatype type_ = MPI_BYTE;
  int count_ = 0;
  bool owned_ = false;
};

/// One message made of two separate memory blocks (an envelope and the data), sent or received
/// in place with MPI_BOTTOM and absolute addresses: no packing copy.
class TwoBlockDatatype {
 public:
  TwoBlockDatatype(const void* first, std::size_t first_bytes, const void* second,
                   std::size_t second_bytes);
  ~TwoBlockDatatype();
  TwoBlockDatatype(TwoBlockDatatype&& other) noexcept;
  TwoBlockDatatype& operator=(TwoBlockDatatype&&) = delete;
  TwoBlockDatatype(const TwoBlockDatatype&) = delete;
  TwoBlockDatatype& operator=(const TwoBlockDatatype&) = delete;

  MPI_Datatype type() const noexcept { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

}  // namespace baton::detail
