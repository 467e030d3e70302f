#include "baton/transport/bytes.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>
#include <utility>

#include "baton/core/check_mpi.hpp"
#include "baton/transport/detail/datatype.hpp"

namespace baton {

namespace {

std::string where(const Communicator& comm) {
  return " (on rank " + std::to_string(comm.rank()) + ")";
}

std::string describe_source(int source) {
  return source == any_source ? std::string("any source") : "source " + std::to_string(source);
}

std::string describe_tag(int tag) {
  return tag == any_tag ? std::string("any tag") : "tag " + std::to_string(tag);
}

void require_comm(const Communicator& comm, const char* operation) {
  if (comm.is_null())
    throw Error(std::string(operation) + ": the communicator is null");
}

MessageInfo info_from(const Communicator& comm, const MPI_Status& status, const char* operation) {
  MPI_Count count = 0;
  check_mpi(MPI_Get_elements_x(&status, MPI_BYTE, &count), "MPI_Get_elements_x", comm.raw());
  if (count == MPI_UNDEFINED || count < 0) {
    throw Error(std::string(operation) + ": the size of the message from source " +
                std::to_string(status.MPI_SOURCE) + " with tag " + std::to_string(status.MPI_TAG) +
                " is not a whole number of bytes" + where(comm));
  }
  return MessageInfo{status.MPI_SOURCE, status.MPI_TAG, static_cast<std::size_t>(count)};
}

}  // namespace

void check_rank(const Communicator& comm, int rank, const char* operation, bool allow_any_source) {
  require_comm(comm, operation);
  if (allow_any_source && rank == any_source)
    return;
  if (rank < 0 || rank >= comm.size()) {
    throw Error(std::string(operation) + ": rank " + std::to_string(rank) +
                " is out of range for a communicator of " + std::to_string(comm.size()) + " ranks" +
                where(comm));
  }
}

void check_tag(const Communicator& comm, int tag, const char* operation, bool allow_any_tag) {
  require_comm(comm, operation);
  if (allow_any_tag && tag == any_tag)
    return;
  if (tag < 0 || tag > comm.tag_ub()) {
    throw Error(std::string(operation) + ": tag " + std::to_string(tag) + " is outside 0.." +
                std::to_string(comm.tag_ub()) + " (MPI_TAG_UB)" + where(comm));
  }
}

void send(const Communicator& comm, const void* data, std::size_t size, int dest, int tag) {
  check_rank(comm, dest, "baton::send");
  check_tag(comm, tag, "baton::send");
  detail::ByteDatatype type(size);
  check_mpi(MPI_Send(data, type.count(), type.type(), dest, tag, comm.raw()), "MPI_Send",
            comm.raw());
}

namespace detail {

Matched mprobe(const Communicator& comm, int source, int tag, const char* operation) {
  check_rank(comm, source, operation, true);
  check_tag(comm, tag, operation, true);
  Matched matched;
  MPI_Status status;
  check_mpi(MPI_Mprobe(source, tag, comm.raw(), &matched.handle, &status), "MPI_Mprobe",
            comm.raw());
  matched.info = info_from(comm, status, operation);
  return matched;
}

std::optional<Matched> improbe(const Communicator& comm, int source, int tag,
                               const char* operation) {
  check_rank(comm, source, operation, true);
  check_tag(comm, tag, operation, true);
  Matched matched;
  MPI_Status status;
  int found = 0;
  check_mpi(MPI_Improbe(source, tag, comm.raw(), &found, &matched.handle, &status), "MPI_Improbe",
            comm.raw());
  if (!found)
    return std::nullopt;
  matched.info = info_from(comm, status, operation);
  return matched;
}

void mrecv_bytes(const Communicator& comm, Matched& matched, void* data) {
  ByteDatatype type(matched.info.size);
  check_mpi(MPI_Mrecv(data, type.count(), type.type(), &matched.handle, MPI_STATUS_IGNORE),
            "MPI_Mrecv", comm.raw());
}

}  // namespace detail

namespace {
Message receive_matched(const Communicator& comm, detail::Matched& matched) {
  Message message{matched.info.source, matched.info.tag, ByteBuffer(matched.info.size)};
  detail::mrecv_bytes(comm, matched, message.bytes.data());
  return message;
}
}  // namespace

Message recv(const Communicator& comm, int source, int tag) {
  detail::Matched matched = detail::mprobe(comm, source, tag, "baton::recv");
  return receive_matched(comm, matched);
}

Message recv(const Communicator& comm, int source, int tag, std::chrono::duration<double> timeout) {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline =
      start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout);
  auto pause = std::chrono::microseconds(1);
  for (;;) {
    if (auto matched = detail::improbe(comm, source, tag, "baton::recv")) {
      return receive_matched(comm, *matched);
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%.3f", timeout.count());
      throw Error("baton::recv: no message from " + describe_source(source) + " with " +
                  describe_tag(tag) + " within " + seconds + " s" + where(comm));
    }
    // Poll often at first (short waits are the common case), then back off to 1 ms.
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

MessageInfo probe(const Communicator& comm, int source, int tag) {
  check_rank(comm, source, "baton::probe", true);
  check_tag(comm, tag, "baton::probe", true);
  MPI_Status status;
  check_mpi(MPI_Probe(source, tag, comm.raw(), &status), "MPI_Probe", comm.raw());
  return info_from(comm, status, "baton::probe");
}

std::optional<MessageInfo> iprobe(const Communicator& comm, int source, int tag) {
  check_rank(comm, source, "baton::iprobe", true);
  check_tag(comm, tag, "baton::iprobe", true);
  MPI_Status status;
  int found = 0;
  check_mpi(MPI_Iprobe(source, tag, comm.raw(), &found, &status), "MPI_Iprobe", comm.raw());
  if (!found)
    return std::nullopt;
  return info_from(comm, status, "baton::iprobe");
}

// --- SendHandle ----------------------------------------------------------------------------------

SendHandle::SendHandle(const Communicator& comm, std::shared_ptr<const void> keep_alive,
                       const void* data, std::size_t size, int dest, int tag)
    : comm_(comm.raw()), keep_alive_(std::move(keep_alive)) {
  check_rank(comm, dest, "baton::isend");
  check_tag(comm, tag, "baton::isend");
  // A derived type (past INT_MAX bytes) may be freed while the send is pending: MPI completes
  // communication that uses a freed type normally (MPI standard, MPI_Type_free).
  detail::ByteDatatype type(size);
  check_mpi(MPI_Isend(data, type.count(), type.type(), dest, tag, comm_, &requests_[0]),
            "MPI_Isend", comm_);
}

SendHandle SendHandle::start(const Communicator& comm, std::shared_ptr<const void> keep_alive,
                             const void* buffer, int count, MPI_Datatype type, int dest, int tag) {
  check_rank(comm, dest, "baton::isend");
  check_tag(comm, tag, "baton::isend");
  SendHandle handle;
  handle.comm_ = comm.raw();
  handle.keep_alive_ = std::move(keep_alive);
  check_mpi(MPI_Isend(buffer, count, type, dest, tag, handle.comm_, &handle.requests_[0]),
            "MPI_Isend", handle.comm_);
  return handle;
}

void SendHandle::also_send(MPI_Comm comm, const void* buffer, int count, MPI_Datatype type,
                           int dest, int tag) {
  if (requests_[1] != MPI_REQUEST_NULL)
    throw Error("baton::SendHandle::also_send: a second send is already posted");
  check_mpi(MPI_Isend(buffer, count, type, dest, tag, comm, &requests_[1]), "MPI_Isend", comm);
}

SendHandle::~SendHandle() {
  if (!active()) {
    finish();
    return;
  }
  const int rc = MPI_Waitall(2, requests_.data(), MPI_STATUSES_IGNORE);
  if (rc != MPI_SUCCESS) {
    std::fprintf(stderr, "baton: MPI_Waitall in ~SendHandle failed: %s\n",
                 mpi_error_string(rc).c_str());
  }
  finish();
}

SendHandle::SendHandle(SendHandle&& other) noexcept
    : requests_(std::exchange(other.requests_, {MPI_REQUEST_NULL, MPI_REQUEST_NULL})),
      comm_(std::exchange(other.comm_, MPI_COMM_NULL)),
      keep_alive_(std::move(other.keep_alive_)) {}

SendHandle& SendHandle::operator=(SendHandle&& other) noexcept {
  if (this != &other) {
    if (active())
      MPI_Waitall(2, requests_.data(), MPI_STATUSES_IGNORE);
    finish();
    requests_ = std::exchange(other.requests_, {MPI_REQUEST_NULL, MPI_REQUEST_NULL});
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    keep_alive_ = std::move(other.keep_alive_);
  }
  return *this;
}

bool SendHandle::test() {
  if (!active())
    return true;
  int done = 0;
  check_mpi(MPI_Testall(2, requests_.data(), &done, MPI_STATUSES_IGNORE), "MPI_Testall", comm_);
  if (done)
    finish();
  return done != 0;
}

void SendHandle::wait() {
  if (!active())
    return;
  check_mpi(MPI_Waitall(2, requests_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall", comm_);
  finish();
}

void SendHandle::finish() noexcept {
  keep_alive_.reset();
}

SendHandle isend(const Communicator& comm, std::vector<std::byte> bytes, int dest, int tag) {
  auto owned = std::make_shared<std::vector<std::byte>>(std::move(bytes));
  const void* data = owned->data();
  const std::size_t size = owned->size();
  return SendHandle(comm, std::move(owned), data, size, dest, tag);
}

SendHandle isend(const Communicator& comm, ByteBuffer bytes, int dest, int tag) {
  auto owned = std::make_shared<ByteBuffer>(std::move(bytes));
  const void* data = owned->data();
  const std::size_t size = owned->size();
  return SendHandle(comm, std::move(owned), data, size, dest, tag);
}

}  // namespace baton
