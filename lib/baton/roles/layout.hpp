#pragma once
/// \file
/// baton::RankLayout: which world rank is an agent, a replay-buffer manager or the coordinator.
/// Pure logic: no MPI calls, so it can be built and tested on one rank.

#include <string>
#include <vector>

namespace baton {

/// What a layout is asked for.
struct LayoutOptions {
  /// The number of ranks in the job (MPI_COMM_WORLD's size); at least 1.
  int world_size = 0;
  /// The number of replay buffers B, one manager rank each; 0 or more (0: agents only).
  int buffers = 0;
  /// Whether the last rank is a coordinator.
  bool coordinator = false;
  /// The number of equal agent groups; at least 1, and it must divide the number of agents.
  int agent_groups = 1;
  /// The node name of each world rank (e.g. from MPI_Get_processor_name), or empty when unknown.
  /// When given, it has exactly world_size entries and the layout tries to be node-aware.
  std::vector<std::string> node_names;
};

/// The role of one rank.
enum class Role { agent, buffer, coordinator };

/// "agent", "buffer" or "coordinator".
const char* to_string(Role role) noexcept;

/// The roles of the ranks of one job: agents (training ranks), replay-buffer managers and
/// optionally a coordinator, with each agent assigned to one buffer and to one agent group.
///
/// The coordinator, if any, is the last rank. The other ranks are cut into B chunks, one per
/// buffer: each chunk is its agents followed by its buffer manager, the chunk's last rank, and
/// chunk sizes differ by at most one (larger chunks first). Without node names the chunks are
/// contiguous runs of ranks. With node names, and when B is a multiple of the number of nodes,
/// each node's ranks (in rank order, the coordinator left out) are cut into B / nodes chunks the
/// same way, so that agents share a node with their buffer; otherwise the layout falls back to
/// contiguous chunks and warning() says why. With B = 0 every non-coordinator rank is an agent
/// without a buffer. The agents, in rank order, are then cut into agent_groups equal consecutive
/// groups.
///
/// Ranks given to and returned by this class are world ranks; a buffer is named by the rank of
/// its manager. Lists of ranks are in increasing rank order unless said otherwise. Every query
/// checks its argument and throws baton::Error naming it.
class RankLayout {
 public:
  /// The layout for `options`. Throws baton::Error, with the numbers, when the request is
  /// impossible: world size below 1, a negative buffer count, agent_groups below 1, node names
  /// not one per rank, a coordinator in a world of one rank, fewer than 2 * B ranks (or, with
  /// B = 0, no rank) left beside the coordinator, or agents that do not split into agent_groups
  /// equal groups.
  explicit RankLayout(const LayoutOptions& options);

  /// The number of ranks.
  int world_size() const noexcept { return static_cast<int>(roles_.size()); }
  /// The number of buffers B (= the number of manager ranks).
  int buffer_count() const noexcept { return static_cast<int>(buffers_.size()); }
  /// Whether there is a coordinator.
  bool has_coordinator() const noexcept { return coordinator_ >= 0; }
  /// The coordinator's rank (always world_size() - 1), or -1 when there is none.
  int coordinator() const noexcept { return coordinator_; }

  /// The role of `rank`; throws baton::Error unless 0 <= rank < world_size().
  Role role(int rank) const;
  /// Whether `rank` is an agent; throws baton::Error for a rank out of range.
  bool is_agent(int rank) const;
  /// Whether `rank` is a buffer manager; throws baton::Error for a rank out of range.
  bool is_buffer(int rank) const;
  /// Whether `rank` is the coordinator; throws baton::Error for a rank out of range.
  bool is_coordinator(int rank) const;

  /// All agent ranks, in rank order.
  const std::vector<int>& agents() const noexcept { return agents_; }
  /// All buffer manager ranks, in chunk order (node by node for a node-aware layout, then in
  /// rank order within a node; for a contiguous layout simply in rank order).
  const std::vector<int>& buffers() const noexcept { return buffers_; }

  /// The manager rank of the buffer that `agent` feeds, or -1 when there are no buffers.
  /// Throws baton::Error unless `agent` is an agent's rank.
  int assigned_buffer(int agent) const;
  /// The agents of the buffer whose manager is `buffer`, in rank order (never empty).
  /// Throws baton::Error unless `buffer` is a manager's rank.
  const std::vector<int>& assigned_agents(int buffer) const;

  /// The agent group of `rank` (0 <= group < group_count()), or -1 for a rank that is not an
  /// agent. Throws baton::Error for a rank out of range.
  int agent_group(int rank) const;
  /// The number of agent groups (LayoutOptions::agent_groups).
  int group_count() const noexcept { return static_cast<int>(groups_.size()); }
  /// The agents of group `group`, in rank order; all groups have the same size.
  /// Throws baton::Error unless 0 <= group < group_count().
  const std::vector<int>& group_members(int group) const;

  /// Whether the chunks follow the nodes (node names given, B > 0 a multiple of the number of
  /// nodes, and every node has room for its chunks).
  bool node_aware() const noexcept { return node_aware_; }
  /// Why node names were given but the layout is not node-aware, with the numbers; empty when
  /// the layout is as asked.
  const std::string& warning() const noexcept { return warning_; }

  /// A compact description over several lines: the counts and the coordinator, then one line per
  /// buffer with its manager and agents (and node), one per agent group, and the warning if any.
  std::string describe() const;

 private:
  void require_rank(int rank, const char* query) const;

  std::vector<Role> roles_;               // by world rank
  std::vector<int> buffer_of_;            // by world rank: the manager of an agent, else -1
  std::vector<int> chunk_of_;             // by world rank: chunk index of a manager, else -1
  std::vector<int> group_of_;             // by world rank: group of an agent, else -1
  std::vector<int> agents_;               // agent ranks, in rank order
  std::vector<int> buffers_;              // manager ranks, in chunk order
  std::vector<std::vector<int>> chunks_;  // agents of each chunk, in rank order
  std::vector<std::vector<int>> groups_;  // members of each agent group
  std::vector<std::string> chunk_node_;   // node name of each chunk (node-aware only)
  int node_count_ = 0;                    // distinct nodes of the non-coordinator ranks
  int coordinator_ = -1;
  bool node_aware_ = false;
  std::string warning_;
};

}  // namespace baton
