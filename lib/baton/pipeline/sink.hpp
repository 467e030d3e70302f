#pragma once
/// \file
/// Where a pipeline's results go as they finish: the driver hands each arriving group of finished
/// systems to a sink on rank 0, so that results are on disk long before the run ends and no rank
/// holds the campaign.

#include <cstdint>
#include <string>
#include <vector>

#include "baton/dynamics/host_system.hpp"
#include "baton/runtime/atomic_file.hpp"

namespace baton::pipeline {

/// Takes finished systems on rank 0.
class ResultSink {
 public:
  virtual ~ResultSink() = default;
  /// Systems that just came out of the last stage (atoms wrapped into periodic cells), in the order
  /// they arrived. A failed system is among them, marked failed with its reason.
  virtual void write(const std::vector<dynamics::HostSystem>& systems) = 0;
  /// After the last write of a run in which every rank succeeded: makes the output complete.
  virtual void finish() {}
};

/// Extended XYZ written as results arrive: frames go to `path + ".part"`, flushed after every
/// write() (a run killed at any moment leaves every system of the flushed writes whole on disk, and
/// at most a cut last frame), and finish() fsyncs it and renames it to `path`. So `path` exists
/// only when the run completed; `path.part` is an unfinished run's results (removed again if the
/// sink goes away before any result was written and it was not resuming).
///
/// With `resume`, the results of an earlier run are kept and continued: `path.part` if it exists,
/// otherwise `path`. Its complete frames stay (a cut last frame is dropped) and done_ids() lists
/// their ids, for the input to pass over.
class XyzFileSink : public ResultSink {
 public:
  static constexpr const char* partial_suffix = ".part";
  XyzFileSink(std::string path, std::vector<std::string> stage_names, bool resume = false);
  void write(const std::vector<dynamics::HostSystem>& systems) override;
  void finish() override;
  /// Ids of the systems an earlier run finished (resume), sorted.
  const std::vector<std::int64_t>& done_ids() const noexcept { return done_; }
  /// Systems written by this run.
  std::int64_t written() const noexcept { return written_; }

 private:
  std::vector<std::string> stages_;
  std::vector<std::int64_t> done_;
  std::int64_t written_ = 0;
  AtomicFile file_;
};

/// Scans extended-XYZ results (as XyzFileSink writes them): the ids of the complete frames, and
/// the byte length they take from the start of the file (what follows is a cut frame or nothing).
struct ResultsOnDisk {
  std::vector<std::int64_t> ids;  ///< sorted
  std::int64_t complete_bytes = 0;
};
ResultsOnDisk scan_results(const std::string& path);

}  // namespace baton::pipeline
