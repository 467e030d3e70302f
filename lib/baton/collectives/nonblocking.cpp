#include "baton/collectives/nonblocking.hpp"

#include <cstdio>
#include <exception>
#include <utility>
#include <vector>

#include "baton/core/check_mpi.hpp"

namespace baton {

Request::~Request() {
  wait_quietly();
}

Request::Request(Request&& other) noexcept
    : request_(std::exchange(other.request_, MPI_REQUEST_NULL)),
      comm_(std::exchange(other.comm_, MPI_COMM_NULL)),
      operation_(other.operation_),
      pending_(std::move(other.pending_)) {}

Request& Request::operator=(Request&& other) noexcept {
  if (this != &other) {
    wait_quietly();
    request_ = std::exchange(other.request_, MPI_REQUEST_NULL);
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    operation_ = other.operation_;
    pending_ = std::move(other.pending_);
  }
  return *this;
}

void Request::complete() {
  // Released even when the copy back throws: the collective itself is over.
  std::unique_ptr<detail::PendingCollective> pending = std::move(pending_);
  if (pending)
    pending->finish();
}

bool Request::test() {
  if (request_ != MPI_REQUEST_NULL) {
    int done = 0;
    const int code = MPI_Test(&request_, &done, MPI_STATUS_IGNORE);
    if (code != MPI_SUCCESS) {
      request_ = MPI_REQUEST_NULL;
      pending_.reset();
      check_mpi(code, "MPI_Test", comm_);
    }
    if (!done)
      return false;
  }
  complete();
  return true;
}

void Request::wait() {
  if (request_ != MPI_REQUEST_NULL) {
    const int code = MPI_Wait(&request_, MPI_STATUS_IGNORE);
    if (code != MPI_SUCCESS) {
      request_ = MPI_REQUEST_NULL;
      pending_.reset();
      check_mpi(code, "MPI_Wait", comm_);
    }
  }
  complete();
}

void Request::wait_quietly() noexcept {
  if (!active())
    return;
  try {
    wait();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: a request dropped before completion: %s\n", operation_, e.what());
  }
  request_ = MPI_REQUEST_NULL;
  pending_.reset();
}

void wait_all(std::vector<Request>& requests) {
  std::vector<Request*> list(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i)
    list[i] = &requests[i];
  detail::RequestAccess::wait_all(list.data(), list.size());
}

namespace detail {

void RequestAccess::wait_all(Request* const* requests, std::size_t n) {
  std::vector<MPI_Request> raw(n);
  for (std::size_t i = 0; i < n; ++i)
    raw[i] = requests[i]->request_;
  const int code = MPI_Waitall(static_cast<int>(n), raw.data(), MPI_STATUSES_IGNORE);
  MPI_Comm comm = MPI_COMM_NULL;
  for (std::size_t i = 0; i < n; ++i) {
    requests[i]->request_ = raw[i];
    if (requests[i]->comm_ != MPI_COMM_NULL)
      comm = requests[i]->comm_;
  }
  if (code != MPI_SUCCESS) {
    // Which ones failed is not portable to tell (MPI_ERR_IN_STATUS): the others are finished by
    // their destructors (which wait).
    check_mpi(code, "MPI_Waitall", comm);
  }
  for (std::size_t i = 0; i < n; ++i)
    requests[i]->complete();
}

}  // namespace detail
}  // namespace baton
