#pragma once
/// \file
/// baton::Error, the exception Baton throws. MPI-free: code that only computes (dynamics, systems)
/// includes this without <mpi.h>; MPI return codes are checked with check_mpi.hpp.

#include <stdexcept>
#include <string>

namespace baton {

/// The exception Baton throws: bad input, or a failed MPI call.
/// For an MPI failure, mpi_error_code() is the MPI return code and what() names the operation,
/// the rank and MPI's own error text.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, int mpi_error_code = 0);
  /// 0 (MPI_SUCCESS) when the error did not come from MPI.
  int mpi_error_code() const noexcept { return mpi_error_code_; }
  /// The MPI error class of mpi_error_code() (0, MPI_SUCCESS, when not from MPI).
  int mpi_error_class() const noexcept;

 private:
  int mpi_error_code_;
};

}  // namespace baton
