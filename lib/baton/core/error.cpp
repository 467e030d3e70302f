#include "baton/core/check_mpi.hpp"

#include <atomic>
#include <cstdio>

namespace baton {

Error::Error(const std::string& message, int mpi_error_code)
    : std::runtime_error(message), mpi_error_code_(mpi_error_code) {}

int Error::mpi_error_class() const noexcept {
  if (mpi_error_code_ == MPI_SUCCESS)
    return MPI_SUCCESS;
  int error_class = mpi_error_code_;
  if (MPI_Error_class(mpi_error_code_, &error_class) != MPI_SUCCESS)
    return mpi_error_code_;
  return error_class;
}

std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS || length <= 0) {
    return "unknown MPI error code " + std::to_string(code);
  }
  return std::string(text, static_cast<std::size_t>(length));
}

namespace {

std::atomic<MpiErrorHook> error_hook{nullptr};

bool mpi_usable() {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

// Rank and size of `comm`, or of the world when `comm` is null or unusable. For messages only.
void describe_rank(MPI_Comm comm, int& rank, int& size, bool& in_world) {
  rank = -1;
  size = -1;
  in_world = false;
  if (!mpi_usable())
    return;
  if (comm != MPI_COMM_NULL && MPI_Comm_rank(comm, &rank) == MPI_SUCCESS &&
      MPI_Comm_size(comm, &size) == MPI_SUCCESS) {
    return;
  }
  in_world = true;
  if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS)
    rank = -1;
  if (MPI_Comm_size(MPI_COMM_WORLD, &size) != MPI_SUCCESS)
    size = -1;
}

}  // namespace

MpiErrorHook set_mpi_error_hook(MpiErrorHook hook) noexcept {
  return error_hook.exchange(hook);
}

void abort_on_mpi_error(const MpiFailure& failure) {
  std::fprintf(stderr, "baton: %s\n", failure.message.c_str());
  std::fflush(stderr);
  if (mpi_usable())
    MPI_Abort(MPI_COMM_WORLD, 1);
}

namespace detail {

void raise_mpi_error(int code, const char* operation, MPI_Comm comm) {
  int rank = -1;
  int size = -1;
  bool in_world = false;
  describe_rank(comm, rank, size, in_world);
  std::string message = std::string(operation) + " failed";
  if (rank >= 0) {
    message += " on rank " + std::to_string(rank) + " of " + std::to_string(size);
    if (in_world)
      message += " (world)";
  }
  message += ": " + mpi_error_string(code);
  MpiFailure failure{code, operation, rank, message};
  if (MpiErrorHook hook = error_hook.load())
    hook(failure);
  throw Error(failure.message, code);
}

}  // namespace detail
}  // namespace baton
