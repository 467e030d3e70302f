#pragma once
/// \file
/// The pipeline driver: runs a Pipeline on a communicator, stages mapped to ranks (plan.hpp),
/// systems handed from rank to rank in the wire format (wire.hpp).
///
/// Protocol, per link between a rank of one segment (upstream) and a rank of the next (downstream):
/// in every step the upstream sends exactly one hand-off (two View messages: integers, then
/// doubles; possibly 0 systems) and, unless that hand-off ended the stream, the downstream answers
/// with one credit message granting room for more systems and atoms. A rank never sends more than
/// the credit it holds, so a batch never overflows (back-pressure). Initial credit is the
/// downstream capacity split evenly over its upstream ranks; both sides compute it, no message
/// needed. The last hand-off on a link carries the end-of-stream flag: the upstream rank had no
/// input left and nothing in its batches. See docs/pipeline.md.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "baton/comm/communicator.hpp"
#include "baton/dynamics/host_system.hpp"
#include "baton/pipeline/pipeline.hpp"
#include "baton/pipeline/plan.hpp"
#include "baton/pipeline/settings.hpp"
#include "baton/timing/timers.hpp"

namespace baton::pipeline {

/// What one stage did on this rank.
struct StageCounters {
  int stage = 0;
  std::string name;
  long systems = 0;              ///< systems that finished this stage here
  long steps = 0;                ///< dynamics steps those systems took here
  long atom_steps = 0;           ///< sum over those systems of atoms * steps
  double compute_seconds = 0.0;  ///< time in enter() and advance()
};

class Driver {
 public:
  /// Duplicates `comm` (collective); the pipeline runs on the duplicate. After a failure the
  /// duplicate is kept until MPI_Finalize starts, so that messages the failure left in flight can
  /// never match on a later communicator.
  Driver(const Communicator& comm, Pipeline pipeline, Settings settings = {});
  ~Driver();
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  /// Collective. Plans ranks over stages, builds this rank's stages and batches, checks every
  /// capacity against the largest input system, and wires each rank to its neighbours. `input` is
  /// read on rank 0 only (the others may pass nothing): rank 0 sends each replica r of R of the
  /// first stage the systems at positions r, r + R, ... and every rank the species names.
  void setup(const std::vector<dynamics::HostSystem>& input);

  /// One pipeline step on this rank: receive, advance every local stage, hand on, exchange credit.
  /// Returns false once this rank is done (in synchronized mode: once every rank is done).
  /// When it throws, it first tells its neighbour ranks, whose step() then throws a baton::Error
  /// naming this rank, and so on down and up the chain: an error anywhere stops every rank, none
  /// hangs. The Driver cannot be stepped after an error.
  bool step();
  /// Collective: step() until done (calling `after_step`, if given, after each step), starting with
  /// a barrier unless step() was called before, which starts the clock of wall_seconds(). Rank 0
  /// with progress tracking then waits for the last progress reports (calling `after_step` too).
  /// Ends with an agreement over all ranks: if any rank failed, every rank throws (the failing
  /// ones their own error), so no rank walks on into a collective that the others never reach.
  void run(const std::function<void()>& after_step = {});
  /// Starts the clock of wall_seconds() and the timers' origin at `t` (TimerRegistry::now(), taken
  /// after a barrier so that all ranks' timelines line up), for callers that loop over step().
  void start_clock(double t) {
    start_ = t;
    timers_.reset_origin(t);
  }
  /// Collective: every finished system on `root`, sorted by id, its atoms wrapped into its periodic
  /// cell (others get an empty vector). Checks that every input system came out exactly once;
  /// throws the same baton::Error on every rank if not.
  std::vector<dynamics::HostSystem> gather_results(int root = 0);

  const RankPlan& plan() const noexcept { return plan_; }
  const Communicator& communicator() const noexcept { return comm_; }
  const Pipeline& pipeline() const noexcept { return pipeline_; }
  const Settings& settings() const noexcept { return settings_; }
  int segment() const noexcept { return segment_; }
  bool done() const noexcept { return done_; }
  long steps_taken() const noexcept { return step_; }
  /// Input systems (set by setup on every rank).
  long input_count() const noexcept { return input_count_; }
  /// Systems the last stage finished so far: on this rank, or on rank 0 everywhere when
  /// `progress` was requested (see track_progress).
  long finished_count() const noexcept { return finished_seen_; }
  /// Seconds from the first step to the moment this rank was done.
  double wall_seconds() const noexcept { return wall_; }
  /// Named timers of this rank: "<stage> compute", "receive", "send", "wait".
  const TimerRegistry& timers() const noexcept { return timers_; }
  std::vector<StageCounters> counters() const;
  const dynamics::SpeciesTable& species() const noexcept { return species_; }
  /// Rank 0 with progress tracking: takes the progress reports that arrived (finished_count()), and
  /// says whether some last-stage rank has not reported its end yet. Elsewhere: false.
  bool poll_progress();
  /// Call before setup() on every rank (same value): the last-stage ranks then report finished
  /// counts to rank 0 as they go, so that rank 0's finished_count() is global.
  void track_progress(bool on) noexcept { progress_ = on; }

 private:
  void step_once();
  void stop_neighbours();
  struct Impl;
  Communicator comm_;
  Pipeline pipeline_;
  Settings settings_;
  RankPlan plan_;
  int segment_ = -1;
  bool done_ = false;
  bool failed_ = false;
  bool progress_ = false;
  long step_ = 0;
  long input_count_ = 0;
  long finished_seen_ = 0;
  double wall_ = 0.0;
  double start_ = -1.0;
  TimerRegistry timers_;
  dynamics::SpeciesTable species_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace baton::pipeline
