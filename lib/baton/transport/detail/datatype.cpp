#include "baton/transport/detail/datatype.hpp"

#include <climits>
#include <utility>

#include "baton/core/check_mpi.hpp"

namespace baton::detail {

namespace {
constexpr std::size_t block = std::size_t(1) << 30;  // 1 GiB

// A committed type of exactly `bytes` bytes (bytes > INT_MAX).
MPI_Datatype large_byte_type(std::size_t bytes) {
  MPI_Datatype gib = MPI_DATATYPE_NULL;
  check_mpi(MPI_Type_contiguous(static_cast<int>(block), MPI_BYTE, &gib), "MPI_Type_contiguous");
  const int blocks[2] = {static_cast<int>(bytes / block), static_cast<int>(bytes % block)};
  const MPI_Aint displacements[2] = {0, static_cast<MPI_Aint>((bytes / block) * block)};
  const MPI_Datatype types[2] = {gib, MPI_BYTE};
  MPI_Datatype type = MPI_DATATYPE_NULL;
  const int rc = MPI_Type_create_struct(2, blocks, displacements, types, &type);
  MPI_Type_free(&gib);
  check_mpi(rc, "MPI_Type_create_struct");
  check_mpi(MPI_Type_commit(&type), "MPI_Type_commit");
  return type;
}
}  // namespace

ByteDatatype::ByteDatatype(std::size_t bytes) {
  if (bytes <= static_cast<std::size_t>(INT_MAX)) {
    count_ = static_cast<int>(bytes);
    return;
  }
  type_ = large_byte_type(bytes);
  count_ = 1;
  owned_ = true;
}

ByteDatatype::~ByteDatatype() {
  if (owned_)
    MPI_Type_free(&type_);
}

ByteDatatype::ByteDatatype(ByteDatatype&& other) noexcept
    : type_(std::exchange(other.type_, MPI_BYTE)),
      count_(std::exchange(other.count_, 0)),
      owned_(std::exchange(other.owned_, false)) {}

TwoBlockDatatype::TwoBlockDatatype(const void* first, std::size_t first_bytes, const void* second,
                                   std::size_t second_bytes) {
  ByteDatatype a(first_bytes);
  ByteDatatype b(second_bytes);
  MPI_Aint addresses[2] = {0, 0};
  check_mpi(MPI_Get_address(first, &addresses[0]), "MPI_Get_address");
  check_mpi(MPI_Get_address(second, &addresses[1]), "MPI_Get_address");
  const int counts[2] = {a.count(), b.count()};
  const MPI_Datatype types[2] = {a.type(), b.type()};
  check_mpi(MPI_Type_create_struct(2, counts, addresses, types, &type_), "MPI_Type_create_struct");
  check_mpi(MPI_Type_commit(&type_), "MPI_Type_commit");
}

TwoBlockDatatype::~TwoBlockDatatype() {
  if (type_ != MPI_DATATYPE_NULL)
    MPI_Type_free(&type_);
}

TwoBlockDatatype::TwoBlockDatatype(TwoBlockDatatype&& other) noexcept
    : type_(std::exchange(other.type_, MPI_DATATYPE_NULL)) {}

}  // namespace baton::detail
