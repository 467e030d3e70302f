#pragma once
/// \file
/// Node gathers: every member of a baton::Group contributes a baton::Record (a config text and
/// named Views); the group's first rank gets them all, one entry per member in group order.
///
/// Members on the first rank's node write their encoded record straight into node shared memory
/// (a baton::NodeWindow, MPI_Win_allocate_shared: no POSIX names, nothing outlives the job) and
/// the first rank reads it from there; members on other nodes send it as an MPI message. The two
/// paths mix freely in one gather. See docs/shared-memory.md ("Node gathers").

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "baton/collectives/bundle.hpp"
#include "baton/collectives/record.hpp"
#include "baton/comm/communicator.hpp"
#include "baton/comm/group.hpp"
#include "baton/shm/node_window.hpp"
#include "baton/transport/byte_buffer.hpp"

namespace baton {

/// One member's contribution, as the first rank receives it.
struct GatherEntry {
  /// The member's group rank.
  int rank = -1;
  /// Its record (owned: a copy, independent of any shared memory).
  Record record;
  /// True when the member gave nothing: an empty config and no Views.
  bool empty() const noexcept { return record.config.empty() && record.views.empty(); }
};

/// One member's contribution in its wire form (record.hpp), not decoded: NodeGather::
/// gather_encoded(). `data` points into node shared memory (members on the first rank's node) or
/// into a buffer of the NodeGather (the others), valid until the next gather on that NodeGather or
/// its destruction.
struct EncodedEntry {
  /// The member's group rank.
  int rank = -1;
  const std::byte* data = nullptr;
  /// 0 for a member that gave nothing (then `data` is null).
  std::size_t size = 0;
  bool empty() const noexcept { return size == 0; }
  /// The record (a copy); throws baton::Error naming the group rank when the bytes are not a
  /// record, and an empty Record for an empty entry.
  Record decode() const;
};

/// Options of a NodeGather. The defaults are what a program wants; the rest are test hooks.
struct NodeGatherOptions {
  /// Test hook: group ranks to treat as if they ran on another node than the first rank, so that
  /// their records travel as MPI messages even on one node. Each member reads only whether its
  /// own group rank is listed (members may pass different lists). Group rank 0 (the first) and
  /// ranks outside [0, group.size()) are refused with baton::Error on every member.
  std::vector<int> remote;
  /// Test hook: called on each member that gives a non-empty record, with its encoded bytes right
  /// after encoding (in shared memory or in the message buffer) and before the first rank reads
  /// them. It may change the bytes (to test the first rank's checks) or throw (to test failure
  /// agreement: every member then throws the same baton::CollectiveError).
  std::function<void(std::byte* data, std::size_t size)> after_encode;
};

/// A reusable node gather over the members of a Group.
///
/// Construction is collective over the members (non-members make no MPI call and get an object
/// whose gathers return at once with nothing): it duplicates the group communicator, splits it by
/// node and agrees which members share the first rank's node. The shared memory is allocated at
/// the first gather and kept: a later gather reallocates it (collectively, on the first rank's
/// node) only when some member's record does not fit its segment, growing by at least half, and
/// never shrinks it; reserve() allocates ahead. Each gather exchanges the record sizes (one small
/// all-gather, as MPI_Gatherv needs counts) and agrees twice more on success (after encoding and
/// after reading), so that any failure on any member -- a shared memory allocation that fails, an
/// after_encode hook that throws, a record the first rank cannot decode -- throws the same
/// baton::CollectiveError on every member, and no member is left waiting.
///
/// Move-only. Destroying it on a member is collective over the first rank's node (MPI_Win_free).
class NodeGather {
 public:
  /// No gather: gathers return empty vectors.
  NodeGather() noexcept = default;
  /// Collective over the members of `group`; see the class comment.
  explicit NodeGather(const Group& group, NodeGatherOptions options = NodeGatherOptions());
  NodeGather(NodeGather&&) = default;
  NodeGather& operator=(NodeGather&&) = default;
  NodeGather(const NodeGather&) = delete;
  NodeGather& operator=(const NodeGather&) = delete;
  ~NodeGather() = default;

  /// Collective over the members: on the first rank, one entry per member in group order, each
  /// owning a copy of that member's record; on the other members and on non-members, an empty
  /// vector. When it returns, on every member, the first rank has read every record and the
  /// shared memory may be reused. A member with nothing to give passes an empty Record (empty
  /// config, no Views) and appears as an empty entry.
  std::vector<GatherEntry> gather(const Record& record);
  /// As gather(const Record&), but the first rank moves its own record into its entry instead of
  /// copying it (on the other members `record` is left as it was).
  std::vector<GatherEntry> gather(Record&& record);

  /// As gather(), but the first rank gets the records in their wire form, not copied: members on
  /// its node are read in place in shared memory. Valid until the next gather on this object or
  /// its destruction. The first rank does not decode them (EncodedEntry::decode() does).
  std::vector<EncodedEntry> gather_encoded(const Record& record);

  /// Collective over the members: makes this member's shared segment hold at least `bytes` (each
  /// member passes its own; 0 keeps it), so that gathers of records up to that size allocate
  /// nothing. A member that cannot get its memory makes every member throw the same
  /// baton::CollectiveError.
  void reserve(std::size_t bytes);

  /// True on members.
  bool is_member() const noexcept { return !comm_.is_null(); }
  /// True on the group's first rank.
  bool is_first() const noexcept { return comm_.rank() == 0; }
  /// The number of members.
  int size() const noexcept { return comm_.size(); }
  /// Whether group rank `rank` writes into shared memory (true) or sends messages (false).
  bool shares_node_with_first(int rank) const {
    return shared_.at(static_cast<std::size_t>(rank)) != 0;
  }
  /// The shared bytes kept for group rank `rank` (0 for members that send messages).
  std::size_t capacity(int rank) const { return capacities_.at(static_cast<std::size_t>(rank)); }

 private:
  enum class Mode { owned, encoded };
  void run(const Record& record, Record* movable, Mode mode, const char* operation,
           std::vector<GatherEntry>* owned, std::vector<EncodedEntry>* encoded);
  void grow(const std::vector<std::size_t>& needed, bool exact, const char* operation);

  Communicator comm_;  // a duplicate of the group communicator
  Communicator node_;  // the members sharing the first rank's node, in group order; null elsewhere
  NodeWindow window_;  // one segment per rank of node_
  std::vector<char> shared_;             // by group rank: 1 when on the first rank's node
  std::vector<int> node_rank_;           // by group rank: its rank on node_, or -1
  std::vector<std::size_t> capacities_;  // by group rank: its segment's bytes
  std::vector<ByteBuffer> received_;     // gather_encoded: the remote members' messages
  std::vector<std::int64_t> sizes_;      // by group rank: this gather's record bytes
  NodeGatherOptions options_;
};

/// One gather with a NodeGather made for it (collective over the members of `group`): on the
/// first rank, every member's record, in group order; elsewhere an empty vector. Non-members make
/// no MPI call and get an empty vector. For repeated gathers, keep a NodeGather: it keeps its
/// shared memory (fresh shared pages cost page faults).
std::vector<GatherEntry> gather_to_first(const Group& group, const std::string& config,
                                         const ViewBundle& views,
                                         const NodeGatherOptions& options = NodeGatherOptions());
std::vector<GatherEntry> gather_to_first(const Group& group, const Record& record,
                                         const NodeGatherOptions& options = NodeGatherOptions());
/// As above; the first rank moves its own record into its entry.
std::vector<GatherEntry> gather_to_first(const Group& group, Record&& record,
                                         const NodeGatherOptions& options = NodeGatherOptions());

/// A copy of `record` (ViewBundle is move-only): one copy of every View's bytes.
Record copy_record(const Record& record);
/// A record holding copies of `config` and `views`.
Record make_record(const std::string& config, const ViewBundle& views);

}  // namespace baton
