#include "baton/collectives/sparse_exchange.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "baton/core/check_mpi.hpp"

namespace baton::detail {

namespace {

int delete_counter(MPI_Comm, int, void* value, void*) {
  delete static_cast<std::uint64_t*>(value);
  return MPI_SUCCESS;
}

/// The attribute key of the exchange counter, created once per process.
int counter_key() {
  static const int key = [] {
    int k = MPI_KEYVAL_INVALID;
    check_mpi(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_counter, &k, nullptr),
              "MPI_Comm_create_keyval");
    return k;
  }();
  return key;
}

}  // namespace

int sparse_exchange_tag(const Communicator& comm) {
  if (comm.is_null())
    throw Error("baton::sparse_exchange: the communicator is null");
  const int key = counter_key();
  void* value = nullptr;
  int found = 0;
  check_mpi(MPI_Comm_get_attr(comm.raw(), key, &value, &found), "MPI_Comm_get_attr", comm.raw());
  auto* counter = static_cast<std::uint64_t*>(value);
  if (!found) {
    auto fresh = std::make_unique<std::uint64_t>(0);
    check_mpi(MPI_Comm_set_attr(comm.raw(), key, fresh.get()), "MPI_Comm_set_attr", comm.raw());
    counter = fresh.release();
  }
  const std::uint64_t round = (*counter)++;
  return comm.tag_ub() - static_cast<int>(round & 1);
}

void nbx(const Communicator& comm, const SparseSend* sends, std::size_t n, int tag,
         LandFunction land, void* context) {
  const MPI_Comm raw = comm.raw();
  ScratchArray<MPI_Request, 8> requests(n);
  for (std::size_t i = 0; i < n; ++i) {
    check_mpi(
        MPI_Issend(sends[i].data, sends[i].bytes, MPI_BYTE, sends[i].dest, tag, raw, &requests[i]),
        "MPI_Issend", raw);
  }
  std::vector<std::byte> scratch;
  std::byte nothing{};
  MPI_Request barrier = MPI_REQUEST_NULL;
  bool in_barrier = false;
  for (;;) {
    int arrived = 0;
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status status;
    check_mpi(MPI_Improbe(MPI_ANY_SOURCE, tag, raw, &arrived, &message, &status), "MPI_Improbe",
              raw);
    if (arrived) {
      int bytes = 0;
      check_mpi(MPI_Get_count(&status, MPI_BYTE, &bytes), "MPI_Get_count", raw);
      void* where = land(context, status.MPI_SOURCE, static_cast<std::size_t>(bytes));
      if (bytes == 0) {
        where = &nothing;
      } else if (where == nullptr) {
        scratch.resize(static_cast<std::size_t>(bytes));
        where = scratch.data();
      }
      check_mpi(MPI_Mrecv(where, bytes, MPI_BYTE, &message, MPI_STATUS_IGNORE), "MPI_Mrecv", raw);
      continue;  // drain what is there before testing
    }
    if (in_barrier) {
      int done = 0;
      check_mpi(MPI_Test(&barrier, &done, MPI_STATUS_IGNORE), "MPI_Test", raw);
      if (done)
        return;
    } else {
      int sent = 0;
      check_mpi(MPI_Testall(static_cast<int>(n), requests.data(), &sent, MPI_STATUSES_IGNORE),
                "MPI_Testall", raw);
      if (sent) {
        check_mpi(MPI_Ibarrier(raw, &barrier), "MPI_Ibarrier", raw);
        in_barrier = true;
      }
    }
  }
}

void sparse_agree(const Communicator& comm, ValueType type, const std::string& problem,
                  const char* operation) {
  ShapeSignature s;
  s.values[0] = static_cast<std::int64_t>(type);
  s.values[1] = 1;
  s.values[11] = -1;  // no root
  agree(comm, s, operation, problem);
}

}  // namespace baton::detail
