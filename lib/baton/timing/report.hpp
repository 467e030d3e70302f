#pragma once
/// \file
/// Timing reports from every rank's step timings: time per step, load imbalance, text tables,
/// JSON, CSV and Chrome trace files. Pure code, no MPI: call it on the rank that gathered the
/// records.

#include <cstddef>
#include <string>
#include <vector>

namespace baton {

/// One named step of one rank: iteration i started at `starts[i]` and took `durations[i]` seconds.
/// Starts are relative to the rank's time origin (ranks align their origins with a barrier).
struct StepRecord {
  std::string name;
  std::vector<double> starts;     ///< seconds since the rank's origin, one per iteration
  std::vector<double> durations;  ///< seconds, one per iteration, same length as `starts`
};

/// Everything one rank recorded. Ranks may have different steps and iteration counts.
struct RankRecord {
  int rank;
  std::vector<StepRecord> steps;
};

/// One rank's time in one step, over all the iterations that rank recorded.
struct RankStepTime {
  std::string step;
  std::size_t iterations = 0;
  double average = 0;  ///< seconds per iteration
  double total = 0;    ///< seconds
};

/// One rank's times: the steps it recorded (with at least one iteration), in report step order.
struct RankTime {
  int rank = 0;
  std::vector<RankStepTime> steps;
};

/// One step over the ranks that recorded it (with at least one iteration).
struct StepTime {
  std::string step;
  int ranks = 0;                   ///< how many ranks recorded the step
  std::size_t min_iterations = 0;  ///< fewest iterations on one of those ranks
  std::size_t max_iterations = 0;  ///< most iterations on one of those ranks
  double mean_average = 0;         ///< mean over those ranks of the per-rank average, seconds
  double max_average = 0;          ///< maximum over those ranks of the per-rank average, seconds
  double mean_total = 0;           ///< mean over those ranks of the per-rank total, seconds
  double max_total = 0;            ///< maximum over those ranks of the per-rank total, seconds
};

/// Report 1: per rank, each step's average and total; per step, mean and maximum over ranks.
struct TimeInfo {
  std::vector<RankTime> ranks;        ///< in increasing rank order
  std::vector<StepTime> steps;        ///< in order of first appearance
  std::vector<std::string> warnings;  ///< missing steps, uneven iteration counts, empty input
};

/// Load imbalance of one step (or of all steps together: LoadImbalance::overall).
///
/// Over the iterations i < n recorded by every rank that has the step (n: the fewest iterations on
/// one of those ranks): useful = sum_i mean_i, waiting = sum_i (max_i - mean_i), where mean_i and
/// max_i are over those ranks; efficiency = useful / (useful + waiting), 1 when both are 0.
struct StepImbalance {
  std::string step;            ///< the step name; "overall" for LoadImbalance::overall
  std::size_t iterations = 0;  ///< n, the iterations compared (overall: sum over steps)
  int ranks = 0;               ///< ranks compared (overall: ranks in at least one step)
  double useful = 0;           ///< seconds
  double waiting = 0;          ///< seconds
  double efficiency = 1;       ///< useful / (useful + waiting), in [0, 1]
  int slowest_rank = -1;       ///< largest total over the compared iterations; lowest on ties
  double slowest_total = 0;    ///< that rank's total, seconds
};

/// Report 2: load imbalance per step, in order of first appearance, and over all steps.
///
/// `overall` sums useful and waiting over the steps (efficiency likewise); its slowest rank has the
/// largest sum over steps of its totals over the compared iterations. With no steps, `overall` has
/// 0 iterations, 0 ranks, efficiency 1 and slowest_rank -1.
struct LoadImbalance {
  std::vector<StepImbalance> steps;
  StepImbalance overall;
  std::vector<std::string> warnings;  ///< missing steps, uneven iteration counts, empty input
};

/// Time per step per rank, and its mean and maximum over ranks. Steps are ordered by first
/// appearance (ranks scanned in increasing rank order). A step recorded with no iterations counts
/// as not recorded on that rank. Different steps or iteration counts on different ranks give
/// warnings, never errors. Throws baton::Error for malformed records only, naming the rank and the
/// step: a negative or repeated rank, a step repeated on one rank, starts and durations of
/// different lengths, a start or duration that is not finite, a negative duration.
TimeInfo time_info(const std::vector<RankRecord>& records);

/// Load imbalance per step over the iterations every rank with the step recorded (see
/// StepImbalance), and overall. Same warnings and errors as time_info().
LoadImbalance load_imbalance(const std::vector<RankRecord>& records);

/// Text tables (times in milliseconds, 3 decimals): per step over ranks, then per rank and step;
/// then the warnings, one per line, each prefixed "warning: ".
std::string format_time_info(const TimeInfo& info);

/// Text table (times in milliseconds, 3 decimals, efficiency as a fraction with 3 decimals): one
/// line per step and an "overall" line; then the warnings, each prefixed "warning: ".
std::string format_load_imbalance(const LoadImbalance& imbalance);

/// Writes {"time_info": {...}, "load_imbalance": {...}, "warnings": [...]} to `path` (times in
/// seconds; warnings of both reports, each once). Throws baton::Error naming `path` when it cannot
/// be written.
void write_json(const std::string& path, const TimeInfo& info, const LoadImbalance& imbalance);

/// Writes the load imbalance as CSV to `path`: a header row, one row per step, then the "overall"
/// row; columns step,iterations,ranks,useful_s,waiting_s,efficiency,slowest_rank,slowest_total_s.
/// Throws baton::Error naming `path` when it cannot be written.
void write_csv(const std::string& path, const LoadImbalance& imbalance);

/// Writes a Chrome trace-event file (chrome://tracing, ui.perfetto.dev) to `path`: one track per
/// rank ("rank N"), one complete event per recorded step iteration, times in microseconds. When a
/// start is negative, all events shift so that the earliest starts at 0. Throws baton::Error for
/// malformed records (as time_info()) and naming `path` when it cannot be written.
void write_chrome_trace(const std::string& path, const std::vector<RankRecord>& records);

}  // namespace baton
