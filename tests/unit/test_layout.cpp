// baton::RankLayout: pure logic, no MPI calls.
#include <doctest/doctest.h>

#include <algorithm>
#include <baton/core/error.hpp>
#include <baton/roles/layout.hpp>
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

using Ranks = std::vector<int>;

baton::LayoutOptions options(int world, int buffers, bool coordinator, int groups = 1,
                             std::vector<std::string> names = {}) {
  baton::LayoutOptions o;
  o.world_size = world;
  o.buffers = buffers;
  o.coordinator = coordinator;
  o.agent_groups = groups;
  o.node_names = std::move(names);
  return o;
}

// Node names for `world` ranks on `nodes` nodes: blocks of consecutive ranks, or round-robin.
std::vector<std::string> node_names(int world, int nodes, bool round_robin) {
  std::vector<std::string> names;
  for (int r = 0; r < world; ++r) {
    const int node = round_robin ? r % nodes : r * nodes / world;
    names.push_back("node" + std::to_string(node));
  }
  return names;
}

// Whether the request can be met, computed from the rules, not from RankLayout.
bool possible(int world, int buffers, bool coordinator, int groups) {
  if (coordinator && world == 1) {
    return false;
  }
  const int others = world - (coordinator ? 1 : 0);
  if (buffers > 0 && others < 2 * buffers) {
    return false;
  }
  return (others - buffers) % groups == 0;
}

// The non-coordinator ranks of each node, nodes in order of first appearance.
std::vector<Ranks> ranks_by_node(const std::vector<std::string>& names, int others) {
  std::vector<Ranks> nodes;
  std::vector<std::string> seen;
  for (int r = 0; r < others; ++r) {
    const auto it = std::find(seen.begin(), seen.end(), names[static_cast<std::size_t>(r)]);
    if (it == seen.end()) {
      seen.push_back(names[static_cast<std::size_t>(r)]);
      nodes.push_back({r});
    } else {
      nodes[static_cast<std::size_t>(it - seen.begin())].push_back(r);
    }
  }
  return nodes;
}

template <class F>
bool throws_error(F&& f) {
  try {
    f();
  } catch (const baton::Error&) {
    return true;
  }
  return false;
}

// Checks every rule on a layout built from `o`; returns the first violation, or "" when none.
std::string violation(const baton::LayoutOptions& o, const baton::RankLayout& l) {
  const int world = o.world_size;
  const int others = world - (o.coordinator ? 1 : 0);
  const int buffers = o.buffers;
  const int agent_count = others - buffers;

  // Counts and the coordinator.
  if (l.world_size() != world || l.buffer_count() != buffers ||
      l.has_coordinator() != o.coordinator || l.group_count() != o.agent_groups) {
    return "counts differ from the options";
  }
  if (l.coordinator() != (o.coordinator ? world - 1 : -1)) {
    return "coordinator is " + std::to_string(l.coordinator());
  }

  // Roles partition the ranks.
  Ranks agents, managers;
  int coordinators = 0;
  for (int r = 0; r < world; ++r) {
    const int flags = int(l.is_agent(r)) + int(l.is_buffer(r)) + int(l.is_coordinator(r));
    if (flags != 1) {
      return "rank " + std::to_string(r) + " has " + std::to_string(flags) + " roles";
    }
    switch (l.role(r)) {
      case baton::Role::agent:
        if (!l.is_agent(r)) {
          return "role() and is_agent() disagree on " + std::to_string(r);
        }
        agents.push_back(r);
        break;
      case baton::Role::buffer:
        if (!l.is_buffer(r)) {
          return "role() and is_buffer() disagree on " + std::to_string(r);
        }
        managers.push_back(r);
        break;
      case baton::Role::coordinator:
        if (!l.is_coordinator(r) || r != world - 1) {
          return "coordinator at rank " + std::to_string(r);
        }
        ++coordinators;
        break;
    }
  }
  if (static_cast<int>(agents.size()) != agent_count ||
      static_cast<int>(managers.size()) != buffers || coordinators != (o.coordinator ? 1 : 0)) {
    return "role counts " + std::to_string(agents.size()) + "/" + std::to_string(managers.size()) +
           "/" + std::to_string(coordinators);
  }
  if (l.agents() != agents) {
    return "agents() is not the agent ranks in order";
  }
  Ranks sorted_buffers = l.buffers();
  std::sort(sorted_buffers.begin(), sorted_buffers.end());
  if (sorted_buffers != managers) {
    return "buffers() is not the set of manager ranks";
  }

  // Assignments round-trip.
  std::size_t assigned = 0;
  for (int b : l.buffers()) {
    const Ranks& mine = l.assigned_agents(b);
    if (mine.empty() || !std::is_sorted(mine.begin(), mine.end())) {
      return "buffer " + std::to_string(b) + " has no agents, or unsorted ones";
    }
    for (int a : mine) {
      if (!l.is_agent(a) || l.assigned_buffer(a) != b) {
        return "agent " + std::to_string(a) + " of buffer " + std::to_string(b) + " maps back to " +
               std::to_string(l.assigned_buffer(a));
      }
    }
    assigned += mine.size();
  }
  for (int a : agents) {
    const int b = l.assigned_buffer(a);
    if (buffers == 0 ? b != -1 : !l.is_buffer(b)) {
      return "agent " + std::to_string(a) + " has buffer " + std::to_string(b);
    }
    if (b >= 0) {
      const Ranks& mine = l.assigned_agents(b);
      if (std::find(mine.begin(), mine.end(), a) == mine.end()) {
        return "buffer " + std::to_string(b) + " does not list agent " + std::to_string(a);
      }
    }
  }
  if (buffers > 0 && assigned != agents.size()) {
    return "buffers list " + std::to_string(assigned) + " agents";
  }

  // Node-aware exactly when the rules allow it; a warning exactly when node names were ignored.
  std::vector<Ranks> nodes;
  if (!o.node_names.empty()) {
    nodes = ranks_by_node(o.node_names, others);
  }
  const int node_count = static_cast<int>(nodes.size());
  bool expect_aware = !nodes.empty() && buffers > 0 && buffers % node_count == 0;
  for (const Ranks& n : nodes) {
    if (expect_aware && static_cast<int>(n.size()) < 2 * (buffers / node_count)) {
      expect_aware = false;
    }
  }
  if (l.node_aware() != expect_aware) {
    return std::string("node_aware() is ") + (l.node_aware() ? "true" : "false");
  }
  const bool expect_warning = !nodes.empty() && buffers > 0 && !expect_aware;
  if (l.warning().empty() == expect_warning) {
    return "warning is '" + l.warning() + "'";
  }

  // Chunks: in buffers() order, each chunk's agents then its manager run through the ranks of
  // each node (or of the whole world, contiguous layout) in rank order; chunk sizes within a node
  // (or globally) differ by at most one, larger ones first.
  if (buffers > 0) {
    std::vector<Ranks> segments;
    if (expect_aware) {
      segments = nodes;
    } else {
      segments.emplace_back();
      for (int r = 0; r < others; ++r) {
        segments.back().push_back(r);
      }
    }
    const std::size_t per_segment = static_cast<std::size_t>(buffers) / segments.size();
    std::size_t chunk = 0;
    for (const Ranks& segment : segments) {
      Ranks walked;
      std::vector<std::size_t> sizes;
      for (std::size_t k = 0; k < per_segment; ++k, ++chunk) {
        const int b = l.buffers()[chunk];
        const Ranks& mine = l.assigned_agents(b);
        walked.insert(walked.end(), mine.begin(), mine.end());
        walked.push_back(b);
        sizes.push_back(mine.size() + 1);
      }
      if (walked != segment) {
        return "chunks " + std::to_string(chunk - per_segment) + ".." + std::to_string(chunk - 1) +
               " do not run through their node's ranks in order";
      }
      if (!std::is_sorted(sizes.rbegin(), sizes.rend()) || sizes.front() - sizes.back() > 1) {
        return "chunk sizes " + std::to_string(sizes.front()) + " .. " +
               std::to_string(sizes.back());
      }
    }
  }

  // Groups: equal, consecutive, covering all agents.
  Ranks walked;
  for (int g = 0; g < l.group_count(); ++g) {
    const Ranks& members = l.group_members(g);
    if (static_cast<int>(members.size()) != agent_count / o.agent_groups) {
      return "group " + std::to_string(g) + " has " + std::to_string(members.size()) + " agents";
    }
    for (int a : members) {
      if (l.agent_group(a) != g) {
        return "agent " + std::to_string(a) + " is in group " + std::to_string(l.agent_group(a));
      }
    }
    walked.insert(walked.end(), members.begin(), members.end());
  }
  if (walked != agents) {
    return "the groups are not the agents in order";
  }
  for (int r = 0; r < world; ++r) {
    if (!l.is_agent(r) && l.agent_group(r) != -1) {
      return "non-agent " + std::to_string(r) + " is in a group";
    }
  }

  // Every query checks its argument.
  if (!throws_error([&] { l.role(-1); }) || !throws_error([&] { l.role(world); }) ||
      !throws_error([&] { l.is_agent(world); }) || !throws_error([&] { l.is_buffer(-1); }) ||
      !throws_error([&] { l.is_coordinator(world); }) ||
      !throws_error([&] { l.agent_group(world); }) ||
      !throws_error([&] { l.assigned_buffer(world); }) ||
      !throws_error([&] { l.assigned_agents(-1); }) ||
      !throws_error([&] { l.group_members(-1); }) ||
      !throws_error([&] { l.group_members(l.group_count()); }) ||
      !throws_error([&] { l.assigned_agents(agents.front()); })) {
    return "a query accepted a bad argument";
  }
  if (buffers > 0 && !throws_error([&] { l.assigned_buffer(l.buffers().front()); })) {
    return "assigned_buffer accepted a buffer";
  }
  if (o.coordinator && (!throws_error([&] { l.assigned_buffer(world - 1); }) ||
                        !throws_error([&] { l.assigned_agents(world - 1); }))) {
    return "a query accepted the coordinator";
  }
  if (l.describe().rfind("RankLayout: " + std::to_string(world) + " rank", 0) != 0) {
    return "describe() starts '" + l.describe().substr(0, 40) + "'";
  }
  return "";
}

}  // namespace

TEST_CASE("RankLayout obeys its rules for every world of 1 to 64 ranks") {
  int built = 0, refused = 0, aware = 0, warned = 0;
  for (int world = 1; world <= 64; ++world) {
    for (int buffers = 0; buffers <= 8; ++buffers) {
      for (bool coordinator : {false, true}) {
        for (int groups : {1, 2, 3}) {
          for (int nodes : {0, 1, 2, 4}) {
            for (bool round_robin : {false, true}) {
              if (nodes == 0 && round_robin) {
                continue;
              }
              const baton::LayoutOptions o = options(
                  world, buffers, coordinator, groups,
                  nodes == 0 ? std::vector<std::string>{} : node_names(world, nodes, round_robin));
              CAPTURE(world);
              CAPTURE(buffers);
              CAPTURE(coordinator);
              CAPTURE(groups);
              CAPTURE(nodes);
              CAPTURE(round_robin);
              if (!possible(world, buffers, coordinator, groups)) {
                CHECK_THROWS_WITH_AS(baton::RankLayout{o}, doctest::Contains("baton::RankLayout: "),
                                     baton::Error);
                ++refused;
                continue;
              }
              std::string problem;
              try {
                const baton::RankLayout layout(o);
                problem = violation(o, layout);
                aware += layout.node_aware() ? 1 : 0;
                warned += layout.warning().empty() ? 0 : 1;
              } catch (const baton::Error& e) {
                problem = std::string("threw: ") + e.what();
              }
              CHECK(problem == "");
              ++built;
            }
          }
        }
      }
    }
  }
  // The grid reaches every branch.
  CHECK(built > 5000);
  CHECK(refused > 5000);
  CHECK(aware > 1000);
  CHECK(warned > 1000);
}

TEST_CASE("RankLayout by hand: world 10, 3 buffers, a coordinator, 3 agent groups") {
  const baton::RankLayout l(options(10, 3, true, 3));
  CHECK(l.agents() == Ranks{0, 1, 3, 4, 6, 7});
  CHECK(l.buffers() == Ranks{2, 5, 8});
  CHECK(l.coordinator() == 9);
  CHECK(l.assigned_agents(2) == Ranks{0, 1});
  CHECK(l.assigned_agents(5) == Ranks{3, 4});
  CHECK(l.assigned_agents(8) == Ranks{6, 7});
  CHECK(l.assigned_buffer(4) == 5);
  CHECK(l.group_members(0) == Ranks{0, 1});
  CHECK(l.group_members(1) == Ranks{3, 4});
  CHECK(l.group_members(2) == Ranks{6, 7});
  CHECK(l.agent_group(6) == 2);
  CHECK(l.agent_group(5) == -1);
  CHECK(l.agent_group(9) == -1);
  CHECK(l.role(9) == baton::Role::coordinator);
  CHECK(std::string(baton::to_string(l.role(8))) == "buffer");
  CHECK(std::string(baton::to_string(l.role(0))) == "agent");
  CHECK(std::string(baton::to_string(l.role(9))) == "coordinator");
  CHECK_FALSE(l.node_aware());
  CHECK(l.warning().empty());
  CHECK(l.describe() ==
        "RankLayout: 10 ranks = 6 agents + 3 buffers + coordinator 9; 3 agent groups of 2; "
        "contiguous\n"
        "  buffer 2: agents 0-1\n"
        "  buffer 5: agents 3-4\n"
        "  buffer 8: agents 6-7\n"
        "  group 0: agents 0-1\n"
        "  group 1: agents 3-4\n"
        "  group 2: agents 6-7\n");
}

TEST_CASE("RankLayout by hand: uneven chunks put the larger ones first") {
  // 11 ranks into 3 chunks: 4, 4, 3.
  const baton::RankLayout l(options(11, 3, false, 2));
  CHECK(l.buffers() == Ranks{3, 7, 10});
  CHECK(l.assigned_agents(3) == Ranks{0, 1, 2});
  CHECK(l.assigned_agents(7) == Ranks{4, 5, 6});
  CHECK(l.assigned_agents(10) == Ranks{8, 9});
  CHECK(l.coordinator() == -1);
  CHECK(l.group_members(0) == Ranks{0, 1, 2, 4});
  CHECK(l.group_members(1) == Ranks{5, 6, 8, 9});
  CHECK(l.agent_group(4) == 0);
  CHECK(l.agent_group(5) == 1);
}

TEST_CASE("RankLayout by hand: no buffers, and the one-rank world") {
  const baton::RankLayout l(options(5, 0, true, 2));
  CHECK(l.agents() == Ranks{0, 1, 2, 3});
  CHECK(l.buffers().empty());
  CHECK(l.buffer_count() == 0);
  CHECK(l.coordinator() == 4);
  CHECK(l.assigned_buffer(0) == -1);
  CHECK(l.group_members(1) == Ranks{2, 3});

  const baton::RankLayout one(options(1, 0, false));
  CHECK(one.agents() == Ranks{0});
  CHECK(one.role(0) == baton::Role::agent);
  CHECK(one.assigned_buffer(0) == -1);
  CHECK(one.agent_group(0) == 0);
  CHECK_FALSE(one.has_coordinator());
  CHECK(one.describe() ==
        "RankLayout: 1 rank = 1 agent + 0 buffers; 1 agent group of 1; no buffers\n"
        "  group 0: agents 0\n");

  // Node names with no buffers: nothing to place, no warning.
  const baton::RankLayout named(options(4, 0, false, 1, {"a", "b", "a", "b"}));
  CHECK_FALSE(named.node_aware());
  CHECK(named.warning().empty());
}

TEST_CASE("RankLayout by hand: node-aware layouts") {
  SUBCASE("round-robin nodes, coordinator on a node") {
    const baton::RankLayout l(
        options(9, 2, true, 2, {"a", "b", "a", "b", "a", "b", "a", "b", "a"}));
    CHECK(l.node_aware());
    CHECK(l.warning().empty());
    CHECK(l.buffers() == Ranks{6, 7});
    CHECK(l.assigned_agents(6) == Ranks{0, 2, 4});
    CHECK(l.assigned_agents(7) == Ranks{1, 3, 5});
    CHECK(l.coordinator() == 8);
    CHECK(l.group_members(0) == Ranks{0, 1, 2});
    CHECK(l.group_members(1) == Ranks{3, 4, 5});
    CHECK(l.describe() ==
          "RankLayout: 9 ranks = 6 agents + 2 buffers + coordinator 8; 2 agent groups of 3; "
          "node-aware over 2 nodes\n"
          "  buffer 6 (node a): agents 0,2,4\n"
          "  buffer 7 (node b): agents 1,3,5\n"
          "  group 0: agents 0-2\n"
          "  group 1: agents 3-5\n");
  }
  SUBCASE("uneven nodes: sizes differ by at most one within each node") {
    // n0: ranks 0-6 into 4 + 3; n1: ranks 7-11 into 3 + 2.
    std::vector<std::string> names(12, "n0");
    std::fill(names.begin() + 7, names.end(), "n1");
    const baton::RankLayout l(options(12, 4, false, 1, names));
    CHECK(l.node_aware());
    CHECK(l.buffers() == Ranks{3, 6, 9, 11});
    CHECK(l.assigned_agents(3) == Ranks{0, 1, 2});
    CHECK(l.assigned_agents(6) == Ranks{4, 5});
    CHECK(l.assigned_agents(9) == Ranks{7, 8});
    CHECK(l.assigned_agents(11) == Ranks{10});
  }
  SUBCASE("nodes in order of first appearance: buffers() follows the nodes, not rank order") {
    // b: ranks 0, 3, 5; a: ranks 1, 2, 4.
    const baton::RankLayout l(options(6, 2, false, 1, {"b", "a", "a", "b", "a", "b"}));
    CHECK(l.node_aware());
    CHECK(l.buffers() == Ranks{5, 4});
    CHECK(l.assigned_agents(5) == Ranks{0, 3});
    CHECK(l.assigned_agents(4) == Ranks{1, 2});
  }
  SUBCASE("a node holding only the coordinator does not count") {
    std::vector<std::string> names(9, "n0");
    names[8] = "n1";
    const baton::RankLayout l(options(9, 3, true, 1, names));
    CHECK(l.node_aware());
    CHECK(l.warning().empty());
    CHECK(l.buffers() == Ranks{2, 5, 7});
  }
}

TEST_CASE("RankLayout falls back to contiguous chunks and says why") {
  SUBCASE("a node too small for its chunks") {
    std::vector<std::string> names(10, "n0");
    std::fill(names.begin() + 7, names.end(), "n1");
    const baton::RankLayout l(options(10, 4, false, 1, names));
    CHECK_FALSE(l.node_aware());
    CHECK(l.warning() ==
          "baton::RankLayout: node-aware layout not possible: node 'n1' has 3 ranks for its 2 "
          "buffers, which need at least 4 (one agent and one manager each); using contiguous "
          "chunks of ranks instead");
    // Contiguous: 10 ranks into 3, 3, 2, 2.
    CHECK(l.buffers() == Ranks{2, 5, 7, 9});
    CHECK(l.assigned_agents(7) == Ranks{6});
    CHECK(l.describe().find("  warning: baton::RankLayout: node-aware layout not possible") !=
          std::string::npos);
  }
  SUBCASE("buffers not a multiple of the nodes") {
    const baton::RankLayout l(options(8, 3, false, 1, node_names(8, 2, false)));
    CHECK_FALSE(l.node_aware());
    CHECK(l.warning() ==
          "baton::RankLayout: node-aware layout not possible: 3 buffers cannot be shared equally "
          "by 2 nodes (the buffer count must be a multiple of the node count); using contiguous "
          "chunks of ranks instead");
    CHECK(l.buffers() == Ranks{2, 5, 7});
  }
}

TEST_CASE("RankLayout refuses impossible requests with the numbers") {
  CHECK_THROWS_WITH_AS(baton::RankLayout(options(4, 4, true)),
                       "baton::RankLayout: world size 4 with a coordinator leaves 3 ranks for 4 "
                       "buffers, and each buffer needs at least one agent and its manager (8 "
                       "ranks)",
                       baton::Error);
  CHECK_THROWS_WITH_AS(baton::RankLayout(options(16, 3, true, 5)),
                       "baton::RankLayout: 12 agents do not split into 5 equal agent groups "
                       "(world size 16: 3 buffers, a coordinator)",
                       baton::Error);
  CHECK_THROWS_WITH_AS(baton::RankLayout(options(1, 0, true)),
                       "baton::RankLayout: world size 1 has no room for a coordinator beside an "
                       "agent (a coordinator needs a world of at least 2 ranks)",
                       baton::Error);
  CHECK_THROWS_WITH_AS(baton::RankLayout(options(2, 1, true)),
                       doctest::Contains("world size 2 with a coordinator leaves 1 rank for 1 "
                                         "buffer"),
                       baton::Error);
  CHECK_THROWS_WITH_AS(baton::RankLayout(options(0, 0, false)),
                       doctest::Contains("world size 0 is not possible"), baton::Error);
  CHECK_THROWS_WITH_AS(baton::RankLayout(options(4, -1, false)),
                       doctest::Contains("-1 buffers requested"), baton::Error);
  CHECK_THROWS_WITH_AS(baton::RankLayout(options(4, 1, false, 0)),
                       doctest::Contains("0 agent groups requested"), baton::Error);
  CHECK_THROWS_WITH_AS(baton::RankLayout(options(4, 1, false, 1, {"a", "b", "c"})),
                       doctest::Contains("3 node names for a world of 4 ranks"), baton::Error);
}

TEST_CASE("RankLayout queries name the bad argument") {
  const baton::RankLayout l(options(10, 3, true, 3));
  CHECK_THROWS_WITH_AS(l.role(10),
                       "baton::RankLayout::role: rank 10 is out of range for a world of 10 ranks",
                       baton::Error);
  CHECK_THROWS_WITH_AS(l.is_agent(-1), doctest::Contains("is_agent: rank -1 is out of range"),
                       baton::Error);
  CHECK_THROWS_WITH_AS(l.assigned_buffer(2),
                       "baton::RankLayout::assigned_buffer: rank 2 is a buffer, not an agent",
                       baton::Error);
  CHECK_THROWS_WITH_AS(l.assigned_buffer(9), doctest::Contains("rank 9 is the coordinator"),
                       baton::Error);
  CHECK_THROWS_WITH_AS(l.assigned_agents(0),
                       "baton::RankLayout::assigned_agents: rank 0 is an agent, not a buffer",
                       baton::Error);
  CHECK_THROWS_WITH_AS(
      l.group_members(3),
      "baton::RankLayout::group_members: group 3 is out of range; there are 3 agent groups",
      baton::Error);
  CHECK_THROWS_WITH_AS(l.agent_group(11), doctest::Contains("agent_group: rank 11"), baton::Error);
}
