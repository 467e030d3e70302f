#pragma once
/// \file
/// What a pipeline run did, gathered to one rank: throughput per stage, pipeline efficiency against
/// the bound set by the slowest stage, and the share of time spent communicating.

#include <string>
#include <vector>

#include "baton/pipeline/driver.hpp"

namespace baton::pipeline {

struct StageSummary {
  int stage = 0;
  std::string name;
  int ranks = 0;         ///< ranks running the stage
  long systems = 0;      ///< systems that finished the stage
  long steps = 0;        ///< dynamics steps they took
  long atom_steps = 0;   ///< sum of atoms * steps
  double compute = 0.0;  ///< seconds in the stage's kernels, summed over its ranks
  /// Atom-steps per second of compute on one rank.
  double atom_steps_per_second() const { return compute > 0 ? atom_steps / compute : 0.0; }
};

struct SegmentSummary {
  int first_stage = 0;
  int last_stage = 0;
  int ranks = 0;
  double busy = 0.0;        ///< compute seconds per rank (mean over the segment's ranks)
  double comm_share = 0.0;  ///< (receive + send) / wall, mean over the segment's ranks
  double wait_share = 0.0;  ///< time blocked on neighbours / wall, mean over the segment's ranks
};

struct RunSummary {
  int world = 0;
  std::string mode;
  long systems = 0;       ///< systems through the whole pipeline
  double wall = 0.0;      ///< seconds, slowest rank
  double throughput = 0;  ///< systems / wall
  /// Throughput the slowest segment allows if it computes all the time: systems / its busy time.
  double bound = 0.0;
  double efficiency = 0.0;  ///< throughput / bound
  /// Throughput if the whole run's compute were spread evenly over the ranks: systems / (the
  /// segments' busy seconds times their ranks, summed, over the world size). At least `bound`; the
  /// two are equal when the plan balances the segments perfectly.
  double balanced_bound = 0.0;
  std::vector<StageSummary> stages;
  std::vector<SegmentSummary> segments;
  std::vector<double> peak_rss_mb;  ///< per rank: the most resident memory it used so far (MB)
  /// Per rank: device-to-host reads per step (Driver::host_syncs_per_step()), and the bookkeeping
  /// ones alone (statuses, steps, counts, headers, flags; the rest copy systems' data out).
  std::vector<double> host_syncs_per_step_by_rank;
  std::vector<double> bookkeeping_syncs_per_step_by_rank;
  /// The most over the ranks of host_syncs_per_step_by_rank: the summary's host_syncs_per_step.
  double host_syncs_per_step = 0.0;
};

/// Collective over the driver's communicator, after run(): the summary on `root` (others get an
/// empty one).
RunSummary summarize(const Driver& driver, int root = 0);

/// A text table of the summary.
std::string format_summary(const RunSummary& summary);

}  // namespace baton::pipeline
