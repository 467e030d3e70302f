#pragma once
/// \file
/// The pipeline driver: runs a Pipeline on a communicator, stages mapped to ranks (plan.hpp).
/// Input is pulled from a SystemSource on rank 0 as room opens (source.hpp) and handed to the
/// first stage's ranks; systems move from rank to rank with credit-based back-pressure (links.hpp);
/// finished systems go to rank 0 as they finish, into a ResultSink (sink.hpp) or memory
/// (collector.hpp). See docs/pipeline.md.

#include <cstdint>
#include <deque>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "baton/comm/communicator.hpp"
#include "baton/pipeline/driver_options.hpp"
#include "baton/pipeline/pipeline.hpp"
#include "baton/pipeline/plan.hpp"
#include "baton/pipeline/sink.hpp"
#include "baton/pipeline/source.hpp"
#include "baton/pipeline/stage_counters.hpp"
#include "baton/systems/host_system.hpp"
#include "baton/systems/systems_batch.hpp"
#include "baton/timing/timers.hpp"

namespace baton::systems {
struct HostPacked;
}  // namespace baton::systems

namespace baton::pipeline {

namespace detail {
struct LinkContext;
struct Runner;
}  // namespace detail

class Driver {
 public:
  /// Duplicates `comm` (collective); the pipeline runs on the duplicate. After a failure the
  /// duplicate is kept until MPI_Finalize starts, so that messages the failure left in flight can
  /// never match on a later communicator.
  Driver(const Communicator& comm, Pipeline pipeline, DriverOptions settings = {});
  ~Driver();
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  /// Call on every rank before setup() (collective in effect: every rank must call it, or none):
  /// finished systems then go to `sink` on rank 0 as they arrive, instead of being kept for
  /// gather_results(). Other ranks may pass null. The sink must outlive the run.
  void write_results_to(ResultSink* sink) noexcept { sink_ = sink; }

  /// Collective. Plans ranks over stages, builds this rank's stages and batches, and wires each
  /// rank to its neighbours. The input is pulled from `source` on rank 0 only (the others' source
  /// is not used), as batches open room, during run(). Every capacity is checked against the
  /// largest input system when the source knows it, and each system as it is read otherwise. Any
  /// failure on any rank (a bad setting, an allocation) throws the same baton::CollectiveError on
  /// every rank.
  void setup(SystemSource& source);
  /// setup() with the systems of `input` (read on rank 0 only; the others may pass nothing). The
  /// vector must outlive the run.
  void setup(const std::vector<systems::HostSystem>& input);

  /// One pipeline step on this rank: receive, advance every local stage, hand on, exchange credit.
  /// Returns false once this rank is done (in synchronized mode: once every rank is done).
  /// When it throws, it first tells its neighbour ranks, whose step() then throws a baton::Error
  /// naming this rank, and so on down and up the chain: an error anywhere stops every rank, none
  /// hangs. The Driver cannot be stepped after an error.
  bool step();
  /// Collective: step() until done (calling `after_step`, if given, after each step), starting with
  /// a barrier unless step() was called before, which starts the clock of wall_seconds(). Rank 0
  /// then takes the last finished systems of the last-stage ranks (poll_progress(), calling
  /// `after_step` too); a caller that loops over step() itself must do the same.
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
  /// throws the same baton::Error on every rank if not. Not with write_results_to() (the results
  /// went to the sink).
  std::vector<systems::HostSystem> gather_results(int root = 0);

  const RankPlan& plan() const noexcept { return plan_; }
  const Communicator& communicator() const noexcept { return comm_; }
  const Pipeline& pipeline() const noexcept { return pipeline_; }
  const DriverOptions& settings() const noexcept { return settings_; }
  int segment() const noexcept { return segment_; }
  /// This rank in the driver's communicator.
  int global_rank() const noexcept { return comm_.rank(); }
  /// This rank among the ranks on its node (set by setup; e.g. to choose a device).
  int node_rank() const noexcept { return node_rank_; }
  /// The first and last stage this rank runs (set by setup; {-1, -1} before).
  std::pair<int, int> local_stages() const;
  bool done() const noexcept { return done_; }
  long steps_taken() const noexcept { return step_; }
  /// Input systems, when the source knows how many (set by setup on every rank; -1: unknown).
  long input_count() const noexcept { return input_count_; }
  /// Systems the last stage finished so far: on rank 0, everywhere; elsewhere, on this rank.
  long finished_count() const noexcept { return finished_seen_; }
  /// Systems this rank wrote to its spill file (DriverOptions::spill_directory) so far.
  long spilled_count() const noexcept;
  /// Rank 0: how many of the finished systems failed (non-finite numbers, an explosion).
  long failed_count() const noexcept;
  /// Seconds from the first step to the moment this rank was done.
  double wall_seconds() const noexcept { return wall_; }
  /// Device-to-host reads this rank's steps made so far (systems::host_syncs() counted over its
  /// step() calls), by kind. On a GPU each is a synchronisation with the device.
  systems::HostSyncs host_syncs() const noexcept { return host_syncs_; }
  /// systems::host_syncs().total() / steps_taken() (0 before the first step). See docs/pipeline.md,
  /// "What a step reads back".
  double host_syncs_per_step() const noexcept {
    return step_ > 0 ? static_cast<double>(host_syncs_.total()) / static_cast<double>(step_) : 0.0;
  }
  /// The copies of systems' payload this rank's hand-offs made so far, per path (docs/pipeline.md,
  /// "What each hand-off copies"). Plain counters, no cost.
  HandoffCopies handoff_copies() const noexcept;
  /// Named timers of this rank: "<stage> compute", "receive", "send", "wait".
  const TimerRegistry& timers() const noexcept { return timers_; }
  std::vector<StageCounters> counters() const;
  /// The run's species labels: those known at setup (DriverOptions::species,
  /// SystemSource::species()) on every rank from setup; a label the source meets later is named on
  /// rank 0 when it is read, and on another rank when the first hand-off carrying it arrives there
  /// (before its systems enter a batch or a hook sees them). Every rank gives a label the same
  /// index.
  const systems::SpeciesTable& species() const noexcept { return species_; }
  /// Rank 0: takes the finished systems that arrived (finished_count()), and says whether some
  /// last-stage rank has not sent its last ones yet. Elsewhere: false.
  bool poll_progress();

 private:
  void step_once();
  void write_checkpoint();
  void resume_arrivals(detail::Runner& r, int first);
  void receive_handoffs();
  void take_snapshot();
  void take_in();
  void finish_stages();
  bool send_downstream();
  void grant_and_feed();
  void expect_credit();
  void advance_stages();
  void update_done();
  void stop_neighbours() noexcept;
  void check_conservation();
  void check_not_full();
  void call_hooks(detail::Runner& r, const std::vector<int>& finished,
                  const systems::HostPacked* downloaded);
  void build_links();
  void make_overflow_chain();
  std::vector<double> stage_costs(SystemSource& source, std::deque<systems::HostSystem>& ahead);
  bool inputs_done();
  long systems_here() const;
  bool has_running() const;
  double remaining_work() const;
  std::vector<std::vector<int>> assign_downstream(const systems::SystemsBatch& out, bool all);
  detail::LinkContext context(CommMode mode);
  CommMode mode_into(int stage) const;
  std::ostream& log() const;
  struct Impl;
  Communicator comm_;
  Pipeline pipeline_;
  DriverOptions settings_;
  RankPlan plan_;
  int segment_ = -1;
  bool done_ = false;
  bool failed_ = false;
  long step_ = 0;
  long input_count_ = 0;
  long finished_seen_ = 0;
  double wall_ = 0.0;
  double start_ = -1.0;
  systems::HostSyncs host_syncs_;
  int node_rank_ = 0;
  ResultSink* sink_ = nullptr;
  bool streamed_ = false;  ///< rank 0 has a sink (set alike on every rank by setup)
  TimerRegistry timers_;
  systems::SpeciesTable species_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace baton::pipeline
