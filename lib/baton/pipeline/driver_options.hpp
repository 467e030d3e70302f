#pragma once
/// \file
/// How a pipeline runs: communication mode, debugging switches, overflow sink.

#include <cstddef>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "baton/pipeline/checkpoint.hpp"
#include "baton/pipeline/hooks.hpp"
#include "baton/systems/systems_batch.hpp"

namespace baton::pipeline {

/// How hand-offs between ranks are completed. Every mode moves the same systems and gives the same
/// results; they differ in where a rank blocks.
enum class CommMode {
  sync,        ///< receive at the start of a step, send and wait for the send in the same step
  async_recv,  ///< receives posted at the end of a step, completed at the start of the next
  fully_async  ///< as async_recv, and sends complete in the background, waited before the next one
};

/// "sync", "async_recv", "fully_async" (also "async-recv", "fully-async"); throws baton::Error
/// listing the choices otherwise.
CommMode parse_comm_mode(const std::string& text);
std::string to_string(CommMode mode);

struct DriverOptions {
  /// How every link completes its hand-offs, unless the stage it feeds says otherwise
  /// (StageSpec::mode).
  CommMode mode = CommMode::async_recv;
  /// Dynamics steps every stage takes per pipeline step.
  int steps_per_call = 10;
  /// Barrier (with a done-flag reduction) after every step, for debugging: all ranks step together.
  bool synchronized = false;
  /// Log every hand-off and credit (step, ranks, tag, counts) to `log` (default std::cerr).
  bool debug = false;
  std::ostream* log = nullptr;
  /// The overflow chain of each rank that feeds a later stage: where finished systems wait when the
  /// next stage has no room, tried in order. First a device batch of this capacity ({0, 0}: none;
  /// when only the later links are given, it gets the next stage's capacity) ...
  systems::BatchCapacity overflow{0, 0};
  /// ... then a bounded host buffer ({0, 0}: none) ...
  systems::BatchCapacity host_overflow{0, 0};
  /// ... then a spill file in this directory (empty: none), baton-spill.<pid>.rank<r>.bin, removed
  /// at the end. Without any link, finished systems wait in their batch slots and the stage takes
  /// in less. Nothing is ever dropped.
  std::string spill_directory;
  /// Throw baton::Error when a finished system finds the next stage and the whole overflow chain
  /// full, instead of holding it (for finding where a pipeline backs up).
  bool error_when_full = false;
  /// Before planning, rank 0 times every stage on a copy of the first input systems (up to 8, a few
  /// milliseconds per stage) and the planner weighs each stage by its step budget times its
  /// measured seconds per atom-step, so that ranks go where the time goes. false: by step budget
  /// alone. Not done when a StageSpec::cost is given, on one rank, or with an explicit plan.
  bool calibrate = true;
  /// Ranks per stage (one entry per stage, summing to the world size); empty: automatic.
  std::vector<int> ranks_per_stage;
  /// An explicit rank -> stage map: stage s runs on ranks stage_ranks[s] (every rank once, rank 0
  /// on stage 0; see plan_ranks_explicit). Not with ranks_per_stage.
  std::vector<std::vector<int>> stage_ranks;
  /// Iterations each of this rank's timers keeps for the reports (the first ones; later ones only
  /// add to the totals), so that memory does not grow with the length of a run. 0: all.
  std::size_t timer_iterations = 10000;
  /// Hooks called for every stage (hooks.hpp), after the stage's own StageSpec::hooks.
  std::vector<std::shared_ptr<Hook>> hooks;
  /// Species labels that take the first indices of the run's species table, in this order (e.g. an
  /// EAM file's elements, so that species index i is element i); the input's other labels follow
  /// in order of first use.
  std::vector<std::string> species;
  /// Exact restarts (checkpoint.hpp; docs/pipeline.md, "Exact restarts"). Every
  /// `checkpoint_every` dynamics steps (rounded up to whole pipeline steps; 0: never) each rank
  /// writes the whole state of its running systems to `checkpoint_prefix`.<rank>, atomically, with
  /// `checkpoint_run` (e.g. the results' run description) in its header. Each rank removes its
  /// file, and rank 0 `checkpoint_prefix` itself, when the run completes.
  std::string checkpoint_prefix;
  long checkpoint_every = 0;
  std::string checkpoint_run;
  /// Rank 0 (the others may leave it null): systems that go on from a checkpoint. Such a system
  /// passes the stages before its checkpoint's without steps (as a failed one does) and enters
  /// that stage with the checkpoint's state instead of the stage's enter(): its results are those
  /// of a run that was never stopped.
  std::shared_ptr<const Checkpoints> resume;
};

}  // namespace baton::pipeline
