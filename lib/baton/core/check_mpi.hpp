#pragma once
/// \file
/// check_mpi(): the one function every MPI return code passes through, and the hook that sees each
/// failed MPI call before it becomes a baton::Error.

#include <mpi.h>

#include <string>

#include "baton/core/error.hpp"

namespace baton {

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
