#include "baton/comm/communicator.hpp"

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "baton/core/check_mpi.hpp"

namespace baton {

Communicator::Communicator(MPI_Comm comm, bool owned) : comm_(comm), owned_(owned) {
  if (comm_ == MPI_COMM_NULL) {
    owned_ = false;
    return;
  }
  try {
    if (owned_)
      check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler",
                comm_);
    check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank", comm_);
    check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size", comm_);
    void* value = nullptr;
    int found = 0;
    check_mpi(MPI_Comm_get_attr(comm_, MPI_TAG_UB, &value, &found), "MPI_Comm_get_attr", comm_);
    tag_ub_ = found ? *static_cast<int*>(value) : 32767;  // 32767: the least MPI guarantees
    if (owned_) {
      check_mpi(MPI_Comm_dup(comm_, &payload_), "MPI_Comm_dup", comm_);
      check_mpi(MPI_Comm_set_errhandler(payload_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler",
                payload_);
      sequences_ = std::make_unique<std::atomic<std::uint32_t>[]>(static_cast<std::size_t>(size_));
    }
  } catch (...) {
    release();  // an owned handle is freed, not leaked
    throw;
  }
}

Communicator::~Communicator() {
  release();
}

Communicator::Communicator(Communicator&& other) noexcept {
  swap(other);
}

Communicator& Communicator::operator=(Communicator&& other) noexcept {
  if (this != &other) {
    release();
    swap(other);
  }
  return *this;
}

void Communicator::swap(Communicator& other) noexcept {
  std::swap(comm_, other.comm_);
  std::swap(payload_, other.payload_);
  std::swap(sequences_, other.sequences_);
  std::swap(owned_, other.owned_);
  std::swap(rank_, other.rank_);
  std::swap(size_, other.size_);
  std::swap(tag_ub_, other.tag_ub_);
  std::swap(view_path_, other.view_path_);
  std::swap(collective_checks_, other.collective_checks_);
}

int Communicator::next_sequence(int dest) const noexcept {
  const std::uint32_t n =
      sequences_[static_cast<std::size_t>(dest)].fetch_add(1, std::memory_order_relaxed);
  return static_cast<int>(n % (static_cast<std::uint32_t>(tag_ub_) + 1u));
}

void Communicator::release() noexcept {
  if (owned_ && comm_ != MPI_COMM_NULL) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    // After MPI_Finalize the handles are gone with MPI; freeing them then would be an error.
    if (!finalized) {
      if (payload_ != MPI_COMM_NULL)
        MPI_Comm_free(&payload_);
      MPI_Comm_free(&comm_);
    }
  }
  comm_ = MPI_COMM_NULL;
  payload_ = MPI_COMM_NULL;
  sequences_.reset();
  owned_ = false;
  rank_ = -1;
  size_ = 0;
  tag_ub_ = -1;
  view_path_ = ViewPath::automatic;
}

CollectiveChecksDefault decide_collective_checks(const char* env_value, bool debug_build) noexcept {
  if (env_value != nullptr && *env_value != '\0') {
    if (std::strcmp(env_value, "0") == 0)
      return {false, "BATON_CHECK_COLLECTIVES=0"};
    return {true, "BATON_CHECK_COLLECTIVES (set, not 0)"};
  }
  if (debug_build)
    return {true, "a Debug build of Baton (NDEBUG not defined)"};
  return {false, "a Release build of Baton (NDEBUG defined)"};
}

bool library_debug_build() noexcept {
#ifdef NDEBUG
  return false;
#else
  return true;
#endif
}

CollectiveChecksDefault collective_checks_default() noexcept {
  static const CollectiveChecksDefault decision =
      decide_collective_checks(std::getenv("BATON_CHECK_COLLECTIVES"), library_debug_build());
  return decision;
}

bool Communicator::default_collective_checks() noexcept {
  return collective_checks_default().on;
}

Communicator Communicator::duplicate(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL)
    throw Error("baton::Communicator::duplicate: the communicator is MPI_COMM_NULL");
  MPI_Comm copy = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(comm, &copy), "MPI_Comm_dup", comm);
  return Communicator(copy, true);
}

Communicator Communicator::adopt(MPI_Comm comm) {
  return Communicator(comm, true);
}

Communicator Communicator::borrow(MPI_Comm comm) {
  return Communicator(comm, false);
}

void Communicator::require_handle(const char* operation) const {
  if (comm_ == MPI_COMM_NULL) {
    throw Error(std::string("baton::Communicator::") + operation + ": the communicator is null");
  }
}

Communicator Communicator::split(int color, int key) const {
  require_handle("split");
  if (color < 0 && color != undefined) {
    throw Error("baton::Communicator::split: colour " + std::to_string(color) + " on rank " +
                std::to_string(rank_) + " is negative (use Communicator::undefined to opt out)");
  }
  MPI_Comm part = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(comm_, color, key, &part), "MPI_Comm_split", comm_);
  return Communicator(part, true);
}

Communicator Communicator::split_node() const {
  require_handle("split_node");
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
            "MPI_Comm_split_type", comm_);
  return Communicator(node, true);
}

}  // namespace baton
