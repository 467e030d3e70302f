#pragma once
/// \file
/// Which ranks run which stages: pure logic, no MPI.
///
/// Stages are grouped into segments of consecutive stages; every rank runs one segment, and a
/// segment may have several ranks (replicas) that share its work round-robin.
///  - 1 rank: one segment with every stage.
///  - fewer ranks than stages: consecutive stages are grouped into one segment per rank, splitting
///    where the largest segment cost (sum of the stages' cost estimates) is smallest; but where the
///    total cost over the ranks is below (1 - replicated_margin) times that largest cost, the
///    whole pipeline is one segment that every rank runs (each rank takes systems as it has room).
///  - at least as many ranks as stages: one segment per stage; each extra rank goes to the segment
///    with the highest cost per replica (the earlier stage on ties), so the slowest stages are
///    replicated. A stage is never given more replicas than `most_replicas` allows (when given):
///    the Driver caps a stage at what the next stage's batch can share among its upstream ranks,
///    so that a plan never depends on which stage happened to measure slower.
///  - an explicit ranks-per-stage list (one entry >= 1 per stage, summing to the world size)
///    replaces the automatic choice; an explicit rank -> stage map (plan_ranks_explicit) names the
///    ranks too.
/// Ranks are handed out in stage order: segment 0 gets the lowest ranks, so rank 0 always runs the
/// first stage.

#include <string>
#include <vector>

namespace baton::pipeline {

/// With fewer ranks than stages, the whole pipeline runs on every rank where the total cost over
/// the ranks is below (1 - replicated_margin) times the largest segment of the best split
/// (plan_ranks).
inline constexpr double replicated_margin = 0.05;

struct Segment {
  int first_stage = 0;     ///< first stage of the segment
  int last_stage = 0;      ///< last stage of the segment (inclusive)
  std::vector<int> ranks;  ///< the replicas, ascending
};

struct RankPlan {
  std::vector<Segment> segments;
  /// The segment a rank runs (-1 if none).
  int segment_of(int rank) const;
  /// One line per segment, e.g. "stage 0 'fire': ranks 0 1".
  std::string describe(const std::vector<std::string>& stage_names) const;
};

/// Plans `world` ranks over stages of the given cost estimates (> 0). `most_replicas`, empty or one
/// entry >= 1 per stage, caps the automatic choice (not an explicit list). Throws baton::Error for
/// an impossible request (no stages, world < 1, a bad explicit list, caps that leave a rank with no
/// stage), naming the numbers.
/// `replicate`: false keeps the split with fewer ranks than stages (an overflow chain, which only a
/// segment that feeds a later one has, asks for it).
RankPlan plan_ranks(int world, const std::vector<double>& costs,
                    const std::vector<int>& ranks_per_stage = {},
                    const std::vector<int>& most_replicas = {}, bool replicate = true);

/// An explicit map: stage s runs on the ranks `stage_ranks[s]` (one segment per stage, in any rank
/// order). Every rank of `world` must appear exactly once, and rank 0 must run stage 0 (it reads
/// the input and writes the results). Throws baton::Error naming what is wrong.
RankPlan plan_ranks_explicit(int world, int stages,
                             const std::vector<std::vector<int>>& stage_ranks);

}  // namespace baton::pipeline
