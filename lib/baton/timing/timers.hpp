#pragma once
/// \file
/// Step timers: a registry of named steps, each holding one (start, duration) per iteration, filled
/// by scoped timers; gathered to one rank for the reports of report.hpp.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "baton/comm/communicator.hpp"
#include "baton/timing/report.hpp"

namespace baton {

class ScopedTimer;

/// Named steps of one rank. Not thread-safe: one registry per thread that times.
class TimerRegistry {
 public:
  /// Times are measured from `origin` (seconds of a steady clock, see now()); default:
  /// construction.
  TimerRegistry();
  /// Seconds on a steady clock.
  static double now() noexcept;
  /// Sets the time origin (after a barrier, so that ranks' timelines line up).
  void reset_origin(double origin = now()) noexcept { origin_ = origin; }
  double origin() const noexcept { return origin_; }

  /// Adds one iteration of `step` that started at `start` (now()-based) and took `duration`
  /// seconds.
  void record(const std::string& step, double start, double duration);
  /// Times the enclosing scope as one iteration of `step` (NVTX range too when built with CUDA).
  ScopedTimer scope(const std::string& step);

  /// The steps in order of first use.
  const std::vector<StepRecord>& steps() const noexcept { return steps_; }
  /// Keeps at most `n` iterations per step (0: all): later iterations only add to total(), so a
  /// run of any length times its steps in bounded memory. The reports then cover each step's first
  /// `n` iterations.
  void limit_iterations(std::size_t n) noexcept { limit_ = n; }
  /// Seconds over every iteration of `step`, kept or not (0 if it never ran).
  double total(const std::string& step) const;
  /// Iterations recorded beyond the limit (over all steps).
  std::size_t dropped_iterations() const noexcept;
  /// This rank's record, for the reports.
  RankRecord record_of(int rank) const { return RankRecord{rank, steps_}; }
  void clear() noexcept {
    steps_.clear();
    dropped_.clear();
  }

 private:
  StepRecord& step(const std::string& name);
  std::vector<StepRecord> steps_;
  /// Per step (same order): seconds and iterations past the limit.
  std::vector<std::pair<double, std::size_t>> dropped_;
  std::size_t limit_ = 0;
  double origin_;
};

/// Records one iteration of a step from construction to stop() or destruction. Move-only.
class ScopedTimer {
 public:
  ScopedTimer(TimerRegistry& registry, std::string step);
  ~ScopedTimer();
  ScopedTimer(ScopedTimer&& other) noexcept;
  ScopedTimer& operator=(ScopedTimer&&) = delete;
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;
  /// Ends the iteration now (later calls and the destructor do nothing); returns its duration.
  double stop();

 private:
  TimerRegistry* registry_;
  std::string step_;
  double start_;
};

/// Every rank's record on `root`, in rank order (other ranks get an empty vector). Collective over
/// comm. Ranks may have recorded different steps and iteration counts; the reports handle that.
std::vector<RankRecord> gather_records(const Communicator& comm, const TimerRegistry& timers,
                                       int root);

}  // namespace baton
