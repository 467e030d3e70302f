#include "baton/collectives/axis.hpp"

#include <string>

#include "baton/core/check_mpi.hpp"

namespace baton::detail {

SliceDatatype::SliceDatatype(MPI_Datatype base, std::size_t element_bytes, int blocks, int block,
                             int stride, MPI_Comm comm) {
  MPI_Datatype strided = MPI_DATATYPE_NULL;
  check_mpi(MPI_Type_vector(blocks, block, stride, base, &strided), "MPI_Type_vector", comm);
  const int resized =
      MPI_Type_create_resized(strided, 0, static_cast<MPI_Aint>(element_bytes) * block, &type_);
  const int freed = MPI_Type_free(&strided);  // the resized type keeps what it needs
  check_mpi(resized, "MPI_Type_create_resized", comm);
  if (freed != MPI_SUCCESS) {
    MPI_Type_free(&type_);
    check_mpi(freed, "MPI_Type_free", comm);
  }
  const int committed = MPI_Type_commit(&type_);
  if (committed != MPI_SUCCESS) {
    MPI_Type_free(&type_);
    check_mpi(committed, "MPI_Type_commit", comm);
  }
}

SliceDatatype::~SliceDatatype() {
  if (type_ != MPI_DATATYPE_NULL)
    MPI_Type_free(&type_);
}

void check_axis(const Communicator& comm, int axis, int rank, const char* operation) {
  if (axis < 0 || axis >= rank) {
    throw_on_rank(comm, operation,
                  "axis " + std::to_string(axis) + " is not an axis of a rank-" +
                      std::to_string(rank) + " View");
  }
}

}  // namespace baton::detail
