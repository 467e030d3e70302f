#pragma once
/// \file
/// baton::Error and the one function every MPI return code passes through.

#include <mpi.h>

#include <stdexcept>
#include <string>

namespace baton {

/// The exception Baton throws: bad input, or a failed MPI call.
/// For an MPI failure, mpi_error_code() is the MPI return code and what() names the operation,
/// the rank and MPI's own error text.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, int mpi_error_code = MPI_SUCCESS);
  /// MPI_SUCCESS when the error did not come from MPI.
  int mpi_error_code() const noexcept { return mpi_error_code_; }
  /// The MPI error class of mpi_error_code() (MPI_SUCCESS when not from MPI).
  int mpi_error_class() const noexcept;

 private:
  int mpi_error_code_;
};

/// MPI's text for an error code (MPI_Error_string). Before MPI_Init and after MPI_Finalize this is
/// guaranteed only by MPI 4.0 libraries; otherwise call it while MPI runs.
std::string mpi_error_string(int code);

/// Everything known about one failed MPI call, handed to the error hook.
struct MpiFailure {
  int code;               ///< the return code
  const char* operation;  ///< e.g. "MPI_Send"
  int rank;               ///< rank in the communicator of the call, or in the world; -1 if unknown
  std::string message;    ///< the full text that baton::Error would carry
};

/// Called for every failed MPI call. The default throws baton::Error(failure.message, code).
/// A hook may log, or abort the job; if it returns, Baton throws anyway.
using MpiErrorHook = void (*)(const MpiFailure& failure);

/// Installs a new hook (nullptr restores the default) and returns the previous one.
MpiErrorHook set_mpi_error_hook(MpiErrorHook hook) noexcept;

/// A hook that prints the failure to stderr and calls MPI_Abort on MPI_COMM_WORLD: for jobs that
/// would rather stop at once than unwind.
void abort_on_mpi_error(const MpiFailure& failure);

namespace detail {
[[noreturn]] void raise_mpi_error(int code, const char* operation, MPI_Comm comm);
}  // namespace detail

/// Checks an MPI return code: MPI_SUCCESS passes, anything else goes to the error hook and then
/// throws baton::Error naming `operation`, the rank in `comm` (or in the world) and MPI's text.
inline void check_mpi(int code, const char* operation, MPI_Comm comm = MPI_COMM_NULL) {
  if (code != MPI_SUCCESS)
    detail::raise_mpi_error(code, operation, comm);
}

}  // namespace baton
