#include "baton/comm/communicator.hpp"

#include <cstdlib>
#include <string>
#include <utility>

#include "baton/runtime/error.hpp"

namespace baton {

Communicator::Communicator(MPI_Comm comm, bool owned) : comm_(comm), owned_(owned) {
  if (comm_ == MPI_COMM_NULL) {
    owned_ = false;
    return;
  }
  try {
    if (owned_) check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler", comm_);
    check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank", comm_);
    check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size", comm_);
    void* value = nullptr;
    int found = 0;
    check_mpi(MPI_Comm_get_attr(comm_, MPI_TAG_UB, &value, &found), "MPI_Comm_get_attr", comm_);
    tag_ub_ = found ? *static_cast<int*>(value) : 32767;  // 32767: the least MPI guarantees
  } catch (...) {
    release();  // an owned handle is freed, not leaked
    throw;
  }
}

Communicator::~Communicator() { release(); }

Communicator::Communicator(Communicator&& other) noexcept
    : comm_(std::exchange(other.comm_, MPI_COMM_NULL)),
      owned_(std::exchange(other.owned_, false)),
      rank_(std::exchange(other.rank_, -1)),
      size_(std::exchange(other.size_, 0)),
      tag_ub_(std::exchange(other.tag_ub_, -1)),
      view_path_(std::exchange(other.view_path_, ViewPath::automatic)),
      collective_checks_(other.collective_checks_) {}

Communicator& Communicator::operator=(Communicator&& other) noexcept {
  if (this != &other) {
    release();
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    owned_ = std::exchange(other.owned_, false);
    rank_ = std::exchange(other.rank_, -1);
    size_ = std::exchange(other.size_, 0);
    tag_ub_ = std::exchange(other.tag_ub_, -1);
    view_path_ = std::exchange(other.view_path_, ViewPath::automatic);
    collective_checks_ = other.collective_checks_;
  }
  return *this;
}

void Communicator::release() noexcept {
  if (owned_ && comm_ != MPI_COMM_NULL) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    // After MPI_Finalize the handle is gone with MPI; freeing it then would be an error.
    if (!finalized) MPI_Comm_free(&comm_);
  }
  comm_ = MPI_COMM_NULL;
  owned_ = false;
  rank_ = -1;
  size_ = 0;
  tag_ub_ = -1;
  view_path_ = ViewPath::automatic;
}

bool Communicator::default_collective_checks() noexcept {
  static const bool on = [] {
    const char* value = std::getenv("BATON_CHECK_COLLECTIVES");
    return value == nullptr || std::string(value) != "0";
  }();
  return on;
}

Communicator Communicator::duplicate(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) throw Error("baton::Communicator::duplicate: the communicator is MPI_COMM_NULL");
  MPI_Comm copy = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(comm, &copy), "MPI_Comm_dup", comm);
  return Communicator(copy, true);
}

Communicator Communicator::adopt(MPI_Comm comm) { return Communicator(comm, true); }

Communicator Communicator::borrow(MPI_Comm comm) { return Communicator(comm, false); }

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
