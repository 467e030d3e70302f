#pragma once
/// \file
/// baton::Group: an ordered set of ranks of a communicator, with its own communicator.

#include <utility>
#include <vector>

#include "baton/comm/communicator.hpp"

namespace baton {

/// An ordered set of ranks of a parent communicator, and a communicator over exactly those ranks.
///
/// Group rank i is parent rank `ranks()[i]`; the group communicator `comm()` is ranked the same
/// way. Construction is collective over the members only (MPI_Comm_create_group): ranks outside the
/// group need not construct it, and when they do they make no MPI call and get a non-member Group.
///
/// Ranks given to and returned by this class (ranks(), first(), next(), parent_rank_of(), ...) are
/// ranks of the parent communicator; to address a member on comm(), use its group rank
/// (group_rank_of()). Move-only; a moved-from or default-constructed Group is empty.
class Group {
 public:
  /// An empty group: no members, not a member, null communicator.
  Group() noexcept = default;

  /// The group of `ranks` (ranks of `parent`, in group order: group rank i is `ranks[i]`).
  ///
  /// Every rank checks the list before any MPI call and throws baton::Error if `parent` is null,
  /// the list is empty, a rank is outside [0, parent.size()) or appears twice. Members (the calling
  /// rank of `parent` is in the list) then create the group communicator together; all of them must
  /// pass the same list. Non-members make no MPI call and do not block.
  Group(const Communicator& parent, std::vector<int> ranks);

  Group(Group&& other) noexcept;
  Group& operator=(Group&& other) noexcept;
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  ~Group() = default;

  /// True when the calling rank is in the group.
  bool is_member() const noexcept { return rank_ >= 0; }
  /// The group communicator (owned, MPI_ERRORS_RETURN); null on non-members.
  const Communicator& comm() const noexcept { return comm_; }
  /// The number of members (also known on non-members).
  int size() const noexcept { return static_cast<int>(ranks_.size()); }
  /// The calling rank's group rank, equal to comm().rank(); -1 on non-members.
  int rank() const noexcept { return rank_; }
  /// The parent ranks of the members, in group order.
  const std::vector<int>& ranks() const noexcept { return ranks_; }

  /// The parent rank of group rank `group_rank`; throws baton::Error unless 0 <= group_rank <
  /// size().
  int parent_rank_of(int group_rank) const;
  /// The group rank of parent rank `parent_rank`, or -1 when it is not in the group.
  int group_rank_of(int parent_rank) const noexcept;

  /// The parent rank of group rank 0. Throws baton::Error for an empty Group.
  int first() const;
  /// The parent rank of group rank size() - 1. Throws baton::Error for an empty Group.
  int last() const;
  /// The parent rank of the member after the calling rank (after the last: the first).
  /// Throws baton::Error on non-members.
  int next() const;
  /// The parent rank of the member before the calling rank (before the first: the last).
  /// Throws baton::Error on non-members.
  int prev() const;
  /// True on group rank 0 (false on non-members).
  bool is_first() const noexcept { return rank_ == 0; }
  /// True on group rank size() - 1 (false on non-members).
  bool is_last() const noexcept { return rank_ >= 0 && rank_ == size() - 1; }

 private:
  void require_member(const char* operation) const;
  void require_members(const char* operation) const;

  std::vector<int> ranks_;                      // parent ranks in group order
  std::vector<std::pair<int, int>> by_parent_;  // (parent rank, group rank), sorted by parent rank
  int parent_rank_ = -1;                        // the calling rank in the parent
  int rank_ = -1;                               // the calling rank in the group
  Communicator comm_;
};

}  // namespace baton
