#include "baton/pipeline/plan.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <sstream>

#include "baton/core/error.hpp"

namespace baton::pipeline {

int RankPlan::segment_of(int rank) const {
  for (std::size_t s = 0; s < segments.size(); ++s)
    if (std::find(segments[s].ranks.begin(), segments[s].ranks.end(), rank) !=
        segments[s].ranks.end())
      return static_cast<int>(s);
  return -1;
}

std::string RankPlan::describe(const std::vector<std::string>& stage_names) const {
  std::ostringstream out;
  for (const Segment& seg : segments) {
    out << (seg.first_stage == seg.last_stage ? "stage " : "stages ") << seg.first_stage;
    if (seg.last_stage != seg.first_stage)
      out << "-" << seg.last_stage;
    out << " '";
    for (int s = seg.first_stage; s <= seg.last_stage; ++s)
      out << (s > seg.first_stage ? "," : "")
          << (static_cast<std::size_t>(s) < stage_names.size()
                  ? stage_names[static_cast<std::size_t>(s)]
                  : "?");
    out << "': rank" << (seg.ranks.size() > 1 ? "s" : "");
    for (int r : seg.ranks)
      out << ' ' << r;
    out << '\n';
  }
  return out.str();
}

namespace {

std::string list(const std::vector<int>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

// Splits stages into `parts` consecutive groups minimising the largest group cost (exact, by
// dynamic programming: stages and ranks are few). Returns the first stage of each group.
std::vector<int> split_stages(const std::vector<double>& costs, int parts) {
  const int k = static_cast<int>(costs.size());
  std::vector<double> prefix(static_cast<std::size_t>(k) + 1, 0.0);
  for (int i = 0; i < k; ++i)
    prefix[static_cast<std::size_t>(i) + 1] =
        prefix[static_cast<std::size_t>(i)] + costs[static_cast<std::size_t>(i)];
  const double inf = std::numeric_limits<double>::infinity();
  // best[p][i]: smallest largest cost splitting the first i stages into p groups.
  std::vector<std::vector<double>> best(static_cast<std::size_t>(parts) + 1,
                                        std::vector<double>(static_cast<std::size_t>(k) + 1, inf));
  std::vector<std::vector<int>> cut(best.size(),
                                    std::vector<int>(static_cast<std::size_t>(k) + 1, 0));
  best[0][0] = 0.0;
  for (int p = 1; p <= parts; ++p)
    for (int i = p; i <= k; ++i)
      for (int j = p - 1; j < i; ++j) {
        const double c =
            std::max(best[static_cast<std::size_t>(p) - 1][static_cast<std::size_t>(j)],
                     prefix[static_cast<std::size_t>(i)] - prefix[static_cast<std::size_t>(j)]);
        if (c < best[static_cast<std::size_t>(p)][static_cast<std::size_t>(i)]) {
          best[static_cast<std::size_t>(p)][static_cast<std::size_t>(i)] = c;
          cut[static_cast<std::size_t>(p)][static_cast<std::size_t>(i)] = j;
        }
      }
  std::vector<int> firsts(static_cast<std::size_t>(parts));
  int i = k;
  for (int p = parts; p >= 1; --p) {
    const int j = cut[static_cast<std::size_t>(p)][static_cast<std::size_t>(i)];
    firsts[static_cast<std::size_t>(p) - 1] = j;
    i = j;
  }
  return firsts;
}

}  // namespace

RankPlan plan_ranks(int world, const std::vector<double>& costs,
                    const std::vector<int>& ranks_per_stage, const std::vector<int>& most_replicas,
                    bool replicate) {
  const int k = static_cast<int>(costs.size());
  if (k == 0)
    throw Error("baton::pipeline::plan_ranks: a pipeline needs at least one stage");
  if (world < 1)
    throw Error("baton::pipeline::plan_ranks: world size " + std::to_string(world) +
                " is not a rank count");
  for (int s = 0; s < k; ++s)
    if (!(costs[static_cast<std::size_t>(s)] > 0.0))
      throw Error("baton::pipeline::plan_ranks: stage " + std::to_string(s) +
                  " has cost estimate " + std::to_string(costs[static_cast<std::size_t>(s)]) +
                  "; it must be > 0");
  if (!most_replicas.empty() &&
      (static_cast<int>(most_replicas.size()) != k ||
       !std::all_of(most_replicas.begin(), most_replicas.end(), [](int m) { return m >= 1; })))
    throw Error("baton::pipeline::plan_ranks: the most replicas per stage '" + list(most_replicas) +
                "' must give " + std::to_string(k) + " counts >= 1, one per stage");
  const auto cap = [&](int s) {
    return most_replicas.empty() ? std::numeric_limits<int>::max()
                                 : most_replicas[static_cast<std::size_t>(s)];
  };
  RankPlan plan;
  std::vector<int> replicas;
  if (!ranks_per_stage.empty()) {
    const int sum = std::accumulate(ranks_per_stage.begin(), ranks_per_stage.end(), 0);
    const bool positive =
        std::all_of(ranks_per_stage.begin(), ranks_per_stage.end(), [](int r) { return r >= 1; });
    if (static_cast<int>(ranks_per_stage.size()) != k || !positive || sum != world)
      throw Error("baton::pipeline::plan_ranks: ranks per stage '" + list(ranks_per_stage) +
                  "' must give " + std::to_string(k) +
                  " counts >= 1, one per stage, adding up to the world size " +
                  std::to_string(world));
    for (int s = 0; s < k; ++s)
      plan.segments.push_back({s, s, {}});
    replicas = ranks_per_stage;
  } else if (world < k) {
    const std::vector<int> firsts = split_stages(costs, world);
    double split_bound = 0;  // the largest group's cost: the split's time per system
    for (int p = 0; p < world; ++p) {
      const int last = p + 1 < world ? firsts[static_cast<std::size_t>(p) + 1] - 1 : k - 1;
      plan.segments.push_back({firsts[static_cast<std::size_t>(p)], last, {}});
      double group = 0;
      for (int s = firsts[static_cast<std::size_t>(p)]; s <= last; ++s)
        group += costs[static_cast<std::size_t>(s)];
      split_bound = std::max(split_bound, group);
    }
    replicas.assign(static_cast<std::size_t>(world), 1);
    // Every stage on every rank, each rank with its share of the systems, takes the total cost
    // over the ranks: chosen where that is below (1 - replicated_margin) times the split's.
    const double total = std::accumulate(costs.begin(), costs.end(), 0.0);
    if (replicate && total / world < (1 - replicated_margin) * split_bound) {
      plan.segments.assign(1, Segment{0, k - 1, {}});
      replicas.assign(1, world);
    }
  } else {
    for (int s = 0; s < k; ++s)
      plan.segments.push_back({s, s, {}});
    replicas.assign(static_cast<std::size_t>(k), 1);
    for (int extra = world - k; extra > 0; --extra) {
      int best = -1;
      for (int s = 0; s < k; ++s) {
        const auto i = static_cast<std::size_t>(s);
        if (replicas[i] >= cap(s))
          continue;
        if (best < 0 || costs[i] / replicas[i] > costs[static_cast<std::size_t>(best)] /
                                                     replicas[static_cast<std::size_t>(best)])
          best = s;
      }
      if (best < 0)
        throw Error("baton::pipeline::plan_ranks: the stages take at most " +
                    std::to_string(world - extra) + " ranks (most replicas per stage '" +
                    list(most_replicas) + "'); the world has " + std::to_string(world));
      ++replicas[static_cast<std::size_t>(best)];
    }
  }
  int rank = 0;
  for (std::size_t s = 0; s < plan.segments.size(); ++s)
    for (int r = 0; r < replicas[s]; ++r)
      plan.segments[s].ranks.push_back(rank++);
  return plan;
}

RankPlan plan_ranks_explicit(int world, int stages,
                             const std::vector<std::vector<int>>& stage_ranks) {
  const std::string who = "baton::pipeline::plan_ranks_explicit: ";
  if (static_cast<int>(stage_ranks.size()) != stages)
    throw Error(who + "the map gives ranks for " + std::to_string(stage_ranks.size()) +
                " stages; the pipeline has " + std::to_string(stages));
  std::vector<int> stage_of(static_cast<std::size_t>(world), -1);
  RankPlan plan;
  for (int s = 0; s < stages; ++s) {
    Segment seg{s, s, stage_ranks[static_cast<std::size_t>(s)]};
    if (seg.ranks.empty())
      throw Error(who + "stage " + std::to_string(s) + " has no rank");
    for (int r : seg.ranks) {
      if (r < 0 || r >= world)
        throw Error(who + "rank " + std::to_string(r) + " (stage " + std::to_string(s) +
                    ") is not in a world of " + std::to_string(world) + " ranks");
      if (stage_of[static_cast<std::size_t>(r)] >= 0)
        throw Error(who + "rank " + std::to_string(r) + " is given stages " +
                    std::to_string(stage_of[static_cast<std::size_t>(r)]) + " and " +
                    std::to_string(s) + "; a rank runs one");
      stage_of[static_cast<std::size_t>(r)] = s;
    }
    std::sort(seg.ranks.begin(), seg.ranks.end());
    plan.segments.push_back(std::move(seg));
  }
  for (int r = 0; r < world; ++r)
    if (stage_of[static_cast<std::size_t>(r)] < 0)
      throw Error(who + "rank " + std::to_string(r) + " runs no stage");
  if (stage_of[0] != 0)
    throw Error(who + "rank 0 must run stage 0 (it reads the input and writes the results)");
  return plan;
}

}  // namespace baton::pipeline
