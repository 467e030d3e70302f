#include "baton/comm/group.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <string>
#include <utility>

#include "baton/core/check_mpi.hpp"

namespace baton {

namespace {

// The tag of MPI_Comm_create_group. It only tells apart creations that run at the same time on the
// same parent from different threads; it never matches point-to-point tags (MPI 3.1, 6.4.2). Baton
// creates a group from one thread at a time, so one fixed tag is enough. Programs that create
// groups of the same parent concurrently from several threads must serialize those constructions.
constexpr int create_group_tag = 0;

std::string where(const Communicator& comm) {
  return " (on rank " + std::to_string(comm.rank()) + ")";
}

// An MPI_Group that is freed however the scope is left.
struct GroupHandle {
  MPI_Group handle = MPI_GROUP_NULL;
  GroupHandle() = default;
  GroupHandle(const GroupHandle&) = delete;
  GroupHandle& operator=(const GroupHandle&) = delete;
  ~GroupHandle() {
    if (handle != MPI_GROUP_NULL) {
      MPI_Group_free(&handle);
    }
  }
};

bool parent_rank_less(const std::pair<int, int>& entry, int parent_rank) {
  return entry.first < parent_rank;
}

}  // namespace

Group::Group(const Communicator& parent, std::vector<int> ranks) : ranks_(std::move(ranks)) {
  // Checks first, on every rank, so that bad input throws everywhere and no member is left waiting
  // in MPI_Comm_create_group for a rank that threw.
  if (parent.is_null()) {
    throw Error("baton::Group: the parent communicator is null");
  }
  if (ranks_.empty()) {
    throw Error("baton::Group: the rank list is empty" + where(parent));
  }
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    const int r = ranks_[i];
    if (r < 0 || r >= parent.size()) {
      throw Error("baton::Group: rank " + std::to_string(r) + " at position " + std::to_string(i) +
                  " is out of range for a communicator of " + std::to_string(parent.size()) +
                  " ranks" + where(parent));
    }
  }
  // Positions are kept as ints; a list longer than INT_MAX repeats a rank anyway.
  if (ranks_.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw Error("baton::Group: the rank list has " + std::to_string(ranks_.size()) +
                " entries, more than any communicator has ranks" + where(parent));
  }
  by_parent_.reserve(ranks_.size());
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    by_parent_.emplace_back(ranks_[i], static_cast<int>(i));
  }
  std::sort(by_parent_.begin(), by_parent_.end());
  // Equal ranks are now adjacent, ordered by position; report the repeat that comes first in the
  // list, together with the first occurrence of its rank.
  std::size_t repeat = 0;  // index into by_parent_ of that repeat; 0: none
  for (std::size_t k = 1; k < by_parent_.size(); ++k) {
    if (by_parent_[k].first == by_parent_[k - 1].first &&
        (repeat == 0 || by_parent_[k].second < by_parent_[repeat].second)) {
      repeat = k;
    }
  }
  if (repeat != 0) {
    throw Error("baton::Group: rank " + std::to_string(by_parent_[repeat].first) + " at position " +
                std::to_string(by_parent_[repeat].second) + " is a duplicate (also at position " +
                std::to_string(by_parent_[repeat - 1].second) + ")" + where(parent));
  }

  parent_rank_ = parent.rank();
  rank_ = group_rank_of(parent_rank_);
  if (rank_ < 0) {
    return;  // not a member: no MPI call, nothing to wait for
  }

  // Collective over the members only (unlike MPI_Comm_create, which all of parent must call).
  GroupHandle parent_group;
  GroupHandle group;
  check_mpi(MPI_Comm_group(parent.raw(), &parent_group.handle), "MPI_Comm_group", parent.raw());
  check_mpi(MPI_Group_incl(parent_group.handle, size(), ranks_.data(), &group.handle),
            "MPI_Group_incl", parent.raw());
  MPI_Comm created = MPI_COMM_NULL;
  check_mpi(MPI_Comm_create_group(parent.raw(), group.handle, create_group_tag, &created),
            "MPI_Comm_create_group", parent.raw());
  comm_ = Communicator::adopt(created);  // Baton owns and frees it
}

Group::Group(Group&& other) noexcept
    : ranks_(std::exchange(other.ranks_, {})),
      by_parent_(std::exchange(other.by_parent_, {})),
      parent_rank_(std::exchange(other.parent_rank_, -1)),
      rank_(std::exchange(other.rank_, -1)),
      comm_(std::move(other.comm_)) {}

Group& Group::operator=(Group&& other) noexcept {
  if (this != &other) {
    comm_ = std::move(other.comm_);  // frees the communicator this Group held
    ranks_ = std::exchange(other.ranks_, {});
    by_parent_ = std::exchange(other.by_parent_, {});
    parent_rank_ = std::exchange(other.parent_rank_, -1);
    rank_ = std::exchange(other.rank_, -1);
  }
  return *this;
}

int Group::parent_rank_of(int group_rank) const {
  if (group_rank < 0 || group_rank >= size()) {
    throw Error("baton::Group::parent_rank_of: group rank " + std::to_string(group_rank) +
                " is out of range for a group of " + std::to_string(size()) + " ranks");
  }
  return ranks_[static_cast<std::size_t>(group_rank)];
}

int Group::group_rank_of(int parent_rank) const noexcept {
  const auto it =
      std::lower_bound(by_parent_.begin(), by_parent_.end(), parent_rank, parent_rank_less);
  return it != by_parent_.end() && it->first == parent_rank ? it->second : -1;
}

void Group::require_members(const char* operation) const {
  if (ranks_.empty()) {
    throw Error(std::string("baton::Group::") + operation + ": the group is empty");
  }
}

void Group::require_member(const char* operation) const {
  if (rank_ < 0) {
    std::string message = std::string("baton::Group::") + operation +
                          ": the calling rank is not a member of the group";
    if (parent_rank_ >= 0) {
      message += " (it is rank " + std::to_string(parent_rank_) + " of the parent)";
    }
    throw Error(message);
  }
}

int Group::first() const {
  require_members("first");
  return ranks_.front();
}

int Group::last() const {
  require_members("last");
  return ranks_.back();
}

int Group::next() const {
  require_member("next");
  return ranks_[static_cast<std::size_t>((rank_ + 1) % size())];
}

int Group::prev() const {
  require_member("prev");
  return ranks_[static_cast<std::size_t>((rank_ + size() - 1) % size())];
}

}  // namespace baton
