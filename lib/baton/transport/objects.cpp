#include "baton/transport/objects.hpp"
#include "baton/core/check_mpi.hpp"

#include <cstdint>
#include <limits>
#include <string>

#include "baton/transport/detail/datatype.hpp"

namespace baton::detail {

namespace {

std::string where(const Communicator& comm) {
  return " (on rank " + std::to_string(comm.rank()) + ")";
}

// u64 size broadcast by a root that could not encode its value.
constexpr std::uint64_t root_failed_marker = std::numeric_limits<std::uint64_t>::max();

}  // namespace

void check_object_destination(const Communicator& comm, int dest, int tag, const char* operation) {
  check_rank(comm, dest, operation);
  check_tag(comm, tag, operation);
}

MessageInfo recv_raw_object(const Communicator& comm, int source, int tag, void* data,
                            std::size_t size) {
  Matched matched = mprobe(comm, source, tag, "baton::recv_object");
  const MessageInfo info = matched.info;
  if (info.size == size) {
    mrecv_bytes(comm, matched, data);
    return info;
  }
  ByteBuffer discarded(info.size);  // receive it anyway: the channel stays usable
  mrecv_bytes(comm, matched, discarded.data());
  throw Error("baton::recv_object: the message from source " + std::to_string(info.source) +
              " with tag " + std::to_string(info.tag) + " has " + std::to_string(info.size) +
              " bytes, but the trivially copyable type expected takes " + std::to_string(size) +
              " bytes (it travels raw, without a header); the message was consumed" + where(comm));
}

Message recv_object_bytes(const Communicator& comm, int source, int tag) {
  Matched matched = mprobe(comm, source, tag, "baton::recv_object");
  Message message{matched.info.source, matched.info.tag, ByteBuffer(matched.info.size)};
  mrecv_bytes(comm, matched, message.bytes.data());
  return message;
}

Error object_decode_error(const Communicator& comm, const char* operation, int source, int tag,
                          std::size_t size, const char* cause) {
  const std::string what = tag < 0 ? "the broadcast from root " + std::to_string(source)
                                   : "the message from source " + std::to_string(source) +
                                         " with tag " + std::to_string(tag);
  return Error(std::string(operation) + ": " + what + " (" + std::to_string(size) +
               " bytes) does not decode: " + cause + "; the message was consumed" + where(comm));
}

void broadcast_raw_object(const Communicator& comm, void* data, std::size_t size, int root) {
  check_rank(comm, root, "baton::broadcast_object");
  ByteDatatype type(size);
  check_mpi(MPI_Bcast(data, type.count(), type.type(), root, comm.raw()), "MPI_Bcast", comm.raw());
}

ByteBuffer broadcast_object_bytes(const Communicator& comm,
                                  const std::vector<std::byte>* root_bytes, int root,
                                  bool root_failed) {
  check_rank(comm, root, "baton::broadcast_object");
  const bool is_root = comm.rank() == root;
  std::uint64_t size = 0;
  if (is_root) {
    size = root_failed || !root_bytes ? root_failed_marker : root_bytes->size();
  }
  check_mpi(MPI_Bcast(&size, 1, MPI_UINT64_T, root, comm.raw()), "MPI_Bcast", comm.raw());
  if (size == root_failed_marker) {
    if (is_root) {
      return ByteBuffer();
    }
    throw Error("baton::broadcast_object: the root (rank " + std::to_string(root) +
                ") could not encode its value; nothing was broadcast" + where(comm));
  }
  if constexpr (sizeof(std::size_t) < sizeof(std::uint64_t)) {
    if (size > std::numeric_limits<std::size_t>::max()) {
      throw Error("baton::broadcast_object: " + std::to_string(size) +
                  " bytes do not fit in memory" + where(comm));
    }
  }
  ByteDatatype type(static_cast<std::size_t>(size));
  if (is_root) {
    // MPI_Bcast takes a non-const buffer; the root's is only read.
    void* data = const_cast<std::byte*>(root_bytes->data());
    check_mpi(MPI_Bcast(data, type.count(), type.type(), root, comm.raw()), "MPI_Bcast",
              comm.raw());
    return ByteBuffer();
  }
  ByteBuffer bytes(static_cast<std::size_t>(size));
  check_mpi(MPI_Bcast(bytes.data(), type.count(), type.type(), root, comm.raw()), "MPI_Bcast",
            comm.raw());
  return bytes;
}

}  // namespace baton::detail
