#include "baton/roles/layout.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "baton/core/error.hpp"

namespace baton {

namespace {

// "1 rank", "3 ranks".
std::string count(int n, const char* singular, const char* plural) {
  return std::to_string(n) + " " + (n == 1 ? singular : plural);
}

// Ranks in increasing order as runs: "0-3,6,8-9"; "none" for an empty list.
std::string format_ranks(const std::vector<int>& ranks) {
  if (ranks.empty()) {
    return "none";
  }
  std::string out;
  std::size_t i = 0;
  while (i < ranks.size()) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) {
      ++j;
    }
    if (!out.empty()) {
      out += ",";
    }
    out += std::to_string(ranks[i]);
    if (j > i) {
      // Appended in two steps: `"-" + std::to_string(...)` makes g++ 12 -O2 -std=c++20 report a
      // false -Wrestrict inside std::operator+ (a known g++ 12 false positive).
      out += '-';
      out += std::to_string(ranks[j]);
    }
    i = j + 1;
  }
  return out;
}

// A run of ranks (in order) to be cut into `chunks` chunks.
struct Segment {
  std::vector<int> ranks;
  int chunks = 0;
  std::string node;  // empty for the contiguous layout
};

}  // namespace

const char* to_string(Role role) noexcept {
  switch (role) {
    case Role::agent:
      return "agent";
    case Role::buffer:
      return "buffer";
    case Role::coordinator:
      return "coordinator";
  }
  return "unknown";
}

RankLayout::RankLayout(const LayoutOptions& options) {
  const int world = options.world_size;
  const int buffers = options.buffers;
  const int groups = options.agent_groups;
  if (world < 1) {
    throw Error("baton::RankLayout: world size " + std::to_string(world) +
                " is not possible; a job has at least 1 rank");
  }
  if (buffers < 0) {
    throw Error("baton::RankLayout: " + std::to_string(buffers) +
                " buffers requested; the buffer count must be 0 or more");
  }
  if (groups < 1) {
    throw Error("baton::RankLayout: " + std::to_string(groups) +
                " agent groups requested; there must be at least 1");
  }
  if (!options.node_names.empty() && options.node_names.size() != static_cast<std::size_t>(world)) {
    throw Error("baton::RankLayout: " + std::to_string(options.node_names.size()) +
                " node names for a world of " + count(world, "rank", "ranks") +
                "; give one per rank, or none");
  }
  if (options.coordinator && world == 1) {
    throw Error(
        "baton::RankLayout: world size 1 has no room for a coordinator beside an agent (a "
        "coordinator needs a world of at least 2 ranks)");
  }
  const int others = world - (options.coordinator ? 1 : 0);  // ranks for agents and buffers
  // 2 * buffers cannot overflow in the comparison: others / 2 < buffers is the same test.
  if (buffers > 0 && others / 2 < buffers) {
    throw Error("baton::RankLayout: world size " + std::to_string(world) +
                (options.coordinator ? " with" : " without") + " a coordinator leaves " +
                count(others, "rank", "ranks") + " for " + count(buffers, "buffer", "buffers") +
                ", and each buffer needs at least one agent and its manager (" +
                std::to_string(2 * static_cast<long long>(buffers)) + " ranks)");
  }
  const int agent_count = others - buffers;
  if (agent_count % groups != 0) {
    throw Error("baton::RankLayout: " + count(agent_count, "agent does", "agents do") +
                " not split into " + std::to_string(groups) + " equal agent groups (world size " +
                std::to_string(world) + ": " + count(buffers, "buffer", "buffers") +
                (options.coordinator ? ", a coordinator" : ", no coordinator") + ")");
  }

  // Segments of ranks to cut into chunks: one per node when node-aware, else all of them.
  std::vector<Segment> segments;
  if (!options.node_names.empty()) {
    std::map<std::string, std::size_t> index;  // node name -> position in segments
    for (int r = 0; r < others; ++r) {
      const std::string& name = options.node_names[static_cast<std::size_t>(r)];
      auto found = index.find(name);
      if (found == index.end()) {
        found = index.emplace(name, segments.size()).first;
        segments.push_back(Segment{{}, 0, name});
      }
      segments[found->second].ranks.push_back(r);
    }
    node_count_ = static_cast<int>(segments.size());
    if (buffers > 0) {
      const int nodes = node_count_;
      if (buffers % nodes != 0) {
        warning_ = "baton::RankLayout: node-aware layout not possible: " +
                   count(buffers, "buffer", "buffers") + " cannot be shared equally by " +
                   count(nodes, "node", "nodes") +
                   " (the buffer count must be a multiple of the node count); using contiguous "
                   "chunks of ranks instead";
      } else {
        const int per_node = buffers / nodes;
        for (const Segment& s : segments) {
          const int size = static_cast<int>(s.ranks.size());
          if (size / 2 < per_node) {
            warning_ = "baton::RankLayout: node-aware layout not possible: node '" + s.node +
                       "' has " + count(size, "rank", "ranks") + " for its " +
                       count(per_node, "buffer", "buffers") + ", which need at least " +
                       std::to_string(2 * per_node) +
                       " (one agent and one manager each); using contiguous chunks of ranks "
                       "instead";
            break;
          }
        }
        if (warning_.empty()) {
          node_aware_ = true;
          for (Segment& s : segments) {
            s.chunks = per_node;
          }
        }
      }
    }
  }
  if (!node_aware_) {
    segments.assign(1, Segment{{}, buffers, ""});
    segments[0].ranks.reserve(static_cast<std::size_t>(others));
    for (int r = 0; r < others; ++r) {
      segments[0].ranks.push_back(r);
    }
  }

  roles_.assign(static_cast<std::size_t>(world), Role::agent);
  buffer_of_.assign(static_cast<std::size_t>(world), -1);
  chunk_of_.assign(static_cast<std::size_t>(world), -1);
  group_of_.assign(static_cast<std::size_t>(world), -1);
  if (options.coordinator) {
    coordinator_ = world - 1;
    roles_[static_cast<std::size_t>(coordinator_)] = Role::coordinator;
  }

  // Cut each segment into chunks whose sizes differ by at most one, larger ones first; the last
  // rank of a chunk is its manager.
  for (const Segment& s : segments) {
    if (s.chunks == 0) {
      continue;  // B = 0: every rank stays an agent without a buffer
    }
    const std::size_t n = s.ranks.size();
    const std::size_t k = static_cast<std::size_t>(s.chunks);
    std::size_t begin = 0;
    for (std::size_t c = 0; c < k; ++c) {
      const std::size_t size = n / k + (c < n % k ? 1 : 0);
      const int manager = s.ranks[begin + size - 1];
      const int chunk = static_cast<int>(buffers_.size());
      roles_[static_cast<std::size_t>(manager)] = Role::buffer;
      chunk_of_[static_cast<std::size_t>(manager)] = chunk;
      buffers_.push_back(manager);
      chunk_node_.push_back(s.node);
      std::vector<int> members(s.ranks.begin() + static_cast<std::ptrdiff_t>(begin),
                               s.ranks.begin() + static_cast<std::ptrdiff_t>(begin + size - 1));
      for (int a : members) {
        buffer_of_[static_cast<std::size_t>(a)] = manager;
      }
      chunks_.push_back(std::move(members));
      begin += size;
    }
  }

  for (int r = 0; r < world; ++r) {
    if (roles_[static_cast<std::size_t>(r)] == Role::agent) {
      agents_.push_back(r);
    }
  }
  const std::size_t group_size = agents_.size() / static_cast<std::size_t>(groups);
  groups_.resize(static_cast<std::size_t>(groups));
  for (std::size_t i = 0; i < agents_.size(); ++i) {
    const std::size_t g = i / group_size;
    groups_[g].push_back(agents_[i]);
    group_of_[static_cast<std::size_t>(agents_[i])] = static_cast<int>(g);
  }
}

void RankLayout::require_rank(int rank, const char* query) const {
  if (rank < 0 || rank >= world_size()) {
    throw Error(std::string("baton::RankLayout::") + query + ": rank " + std::to_string(rank) +
                " is out of range for a world of " + count(world_size(), "rank", "ranks"));
  }
}

Role RankLayout::role(int rank) const {
  require_rank(rank, "role");
  return roles_[static_cast<std::size_t>(rank)];
}

bool RankLayout::is_agent(int rank) const {
  require_rank(rank, "is_agent");
  return roles_[static_cast<std::size_t>(rank)] == Role::agent;
}

bool RankLayout::is_buffer(int rank) const {
  require_rank(rank, "is_buffer");
  return roles_[static_cast<std::size_t>(rank)] == Role::buffer;
}

bool RankLayout::is_coordinator(int rank) const {
  require_rank(rank, "is_coordinator");
  return roles_[static_cast<std::size_t>(rank)] == Role::coordinator;
}

int RankLayout::assigned_buffer(int agent) const {
  require_rank(agent, "assigned_buffer");
  const Role r = roles_[static_cast<std::size_t>(agent)];
  if (r != Role::agent) {
    throw Error("baton::RankLayout::assigned_buffer: rank " + std::to_string(agent) + " is " +
                (r == Role::buffer ? "a buffer" : "the coordinator") + ", not an agent");
  }
  return buffer_of_[static_cast<std::size_t>(agent)];
}

const std::vector<int>& RankLayout::assigned_agents(int buffer) const {
  require_rank(buffer, "assigned_agents");
  const Role r = roles_[static_cast<std::size_t>(buffer)];
  if (r != Role::buffer) {
    throw Error("baton::RankLayout::assigned_agents: rank " + std::to_string(buffer) + " is " +
                (r == Role::agent ? "an agent" : "the coordinator") + ", not a buffer");
  }
  return chunks_[static_cast<std::size_t>(chunk_of_[static_cast<std::size_t>(buffer)])];
}

int RankLayout::agent_group(int rank) const {
  require_rank(rank, "agent_group");
  return group_of_[static_cast<std::size_t>(rank)];
}

const std::vector<int>& RankLayout::group_members(int group) const {
  if (group < 0 || group >= group_count()) {
    throw Error("baton::RankLayout::group_members: group " + std::to_string(group) +
                " is out of range; there " + (group_count() == 1 ? "is " : "are ") +
                count(group_count(), "agent group", "agent groups"));
  }
  return groups_[static_cast<std::size_t>(group)];
}

std::string RankLayout::describe() const {
  std::string out = "RankLayout: " + count(world_size(), "rank", "ranks") + " = " +
                    count(static_cast<int>(agents_.size()), "agent", "agents") + " + " +
                    count(buffer_count(), "buffer", "buffers");
  if (has_coordinator()) {
    out += " + coordinator " + std::to_string(coordinator_);
  }
  out += "; " + count(group_count(), "agent group", "agent groups") + " of " +
         std::to_string(groups_[0].size()) + "; ";
  if (node_aware_) {
    out += "node-aware over " + count(node_count_, "node", "nodes");
  } else if (buffers_.empty()) {
    out += "no buffers";
  } else {
    out += "contiguous";
  }
  out += "\n";
  for (std::size_t c = 0; c < buffers_.size(); ++c) {
    out += "  buffer " + std::to_string(buffers_[c]);
    if (node_aware_) {
      out += " (node " + chunk_node_[c] + ")";
    }
    out += ": agents " + format_ranks(chunks_[c]) + "\n";
  }
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    out += "  group " + std::to_string(g) + ": agents " + format_ranks(groups_[g]) + "\n";
  }
  if (!warning_.empty()) {
    out += "  warning: " + warning_ + "\n";
  }
  return out;
}

}  // namespace baton
