#pragma once
/// \file
/// Where a pipeline's results go as they finish: the driver hands each arriving group of finished
/// systems to a sink on rank 0, so that results are on disk long before the run ends and no rank
/// holds the campaign.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "baton/core/atomic_file.hpp"
#include "baton/systems/host_system.hpp"

namespace baton::pipeline {

/// Takes finished systems on rank 0.
class ResultSink {
 public:
  virtual ~ResultSink() = default;
  /// Systems that just came out of the last stage (atoms wrapped into periodic cells), in the order
  /// they arrived. A failed system is among them, marked failed with its reason.
  virtual void write(const std::vector<systems::HostSystem>& systems) = 0;
  /// After the last write of a run in which every rank succeeded: makes the output complete.
  virtual void finish() {}
};

/// What a results file says about the run that wrote it, in order: the run's input, every option
/// that changes results, Baton's version; e.g. {{"version", "0.1.0"}, {"seed", "1"}, ...}. An
/// XyzFileSink writes it into the first frame's comment line as `baton_run="key=value ..."`, and a
/// resumed run goes on only from a file whose description equals its own.
using RunDescription = std::vector<std::pair<std::string, std::string>>;

/// `key=value key=value`, with spaces, '%', ';', '=', '"', '\\' and control characters written as
/// %XX (a value never holds a separator a CMake list or a shell would split).
std::string encode_run(const RunDescription& run);
/// The inverse of encode_run; throws baton::Error for text it did not write.
RunDescription decode_run(const std::string& text);
/// What differs between the run that wrote a file (`there`) and this one (`now`), for a message:
/// "seed: 1 there, 2 now; nve-steps: not there, 1500 now", or "" when they are the same.
std::string run_differences(const RunDescription& there, const RunDescription& now);

/// Extended XYZ written as results arrive: frames go to `path + ".part"`, flushed after every
/// write() (a run killed at any moment leaves every system of the flushed writes whole on disk, and
/// at most a cut last frame), and finish() fsyncs it and renames it to `path`. So `path` exists
/// only when the run completed; `path.part` is an unfinished run's results (removed again if the
/// sink goes away before any result was written and it was not resuming). The first frame's
/// comment carries `run` (encode_run) when it is not empty.
///
/// With `resume`, an unfinished run's results in `path.part` are kept and continued, and only
/// those: a complete `path` is never taken as results to go on from. The constructor throws
/// baton::Error, changing nothing, when `path.part` was written by another run (its description
/// differs from `run`, or it has none while `run` is not empty) or when a frame before its last is
/// damaged (scan_results). Otherwise its complete frames stay (a cut last frame is dropped) and
/// done_ids() lists their ids, for the input to pass over. Without `path.part` the run starts
/// afresh (resumed_from_part() is false).
class XyzFileSink : public ResultSink {
 public:
  static constexpr const char* partial_suffix = ".part";
  /// With `stress_mvv2e` > 0, every frame of a fully periodic system also gets its `stress` and
  /// `pressure` (systems::write_xyz(); the run's dynamics::Units::mvv2e).
  XyzFileSink(std::string path, std::vector<std::string> stage_names, bool resume = false,
              RunDescription run = {}, double stress_mvv2e = 0);
  void write(const std::vector<systems::HostSystem>& systems) override;
  void finish() override;
  /// Ids of the systems an earlier run finished (resume), sorted.
  const std::vector<std::int64_t>& done_ids() const noexcept { return done_; }
  /// Whether an unfinished run's `path.part` was found and continued (resume).
  bool resumed_from_part() const noexcept { return resumed_; }
  /// Systems written by this run.
  std::int64_t written() const noexcept { return written_; }
  /// Systems in the file: the earlier run's and this run's.
  std::int64_t in_file() const noexcept {
    return static_cast<std::int64_t>(done_.size()) + written_;
  }

 private:
  std::vector<std::string> stages_;
  double stress_mvv2e_ = 0;
  std::string run_;  ///< encoded, "" for none
  std::vector<std::int64_t> done_;
  bool resumed_ = false;
  std::int64_t written_ = 0;
  AtomicFile file_;
};

/// Scans extended-XYZ results (as XyzFileSink writes them): the ids of the complete frames, the
/// byte length they take from the start of the file (what follows is a cut last frame or nothing),
/// and the run description of the first frame (nullopt: none). A frame that cannot be read while
/// the lines of a whole frame follow it is damage, not a cut: that throws baton::Error naming the
/// file and line ("baton::pipeline::scan_results: <path>:<line>: ...").
struct ResultsOnDisk {
  std::vector<std::int64_t> ids;  ///< sorted
  std::int64_t complete_bytes = 0;
  std::optional<RunDescription> run;
};
ResultsOnDisk scan_results(const std::string& path);

}  // namespace baton::pipeline
