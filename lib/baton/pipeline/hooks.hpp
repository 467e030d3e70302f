#pragma once
/// \file
/// Hooks: code the driver calls on the host, on the rank that runs a stage, at two points of a
/// pipeline step (after the stage advanced):
///  - on_finished(): with the systems that just finished the stage, before they move on;
///  - on_step(): every `every()` pipeline steps, with the systems still running in the stage.
/// A hook is given per stage (StageSpec::hooks) or for every stage (DriverOptions::hooks). It sees
/// copies (a hook cannot change a result). A hook that throws stops the run on every rank, like a
/// stage that throws. Built in: XyzSnapshots (trajectory frames) and LogHook (a line per finished
/// system).

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "baton/systems/host_system.hpp"

namespace baton::pipeline {

/// Where a hook is called.
struct HookContext {
  int stage = 0;           ///< the stage's index in the pipeline
  std::string stage_name;  ///< its name
  long step = 0;           ///< the pipeline step on this rank (from 1)
  int rank = 0;            ///< this rank in the driver's communicator
  /// Every stage's name, in pipeline order: the names of systems::HostSystem::stage_steps' entries
  /// (as systems::write_xyz() takes them, for keys such as `steps_fire`).
  std::vector<std::string> stage_names;
};

class Hook {
 public:
  virtual ~Hook() = default;
  /// Systems that just finished the stage (converged, out of budget, or failed: see
  /// systems::HostSystem::failed), as they leave its advance().
  virtual void on_finished(const HookContext& where,
                           const std::vector<systems::HostSystem>& systems) {
    (void)where;
    (void)systems;
  }
  /// Pipeline steps between on_step() calls (0: never).
  virtual long every() const { return 0; }
  /// Every every() pipeline steps: the systems still running in the stage (none: not called).
  virtual void on_step(const HookContext& where, const std::vector<systems::HostSystem>& running) {
    (void)where;
    (void)running;
  }
};

/// Trajectory snapshots: every `every` pipeline steps, the running systems of each stage it is
/// given to are appended as extended-XYZ frames (key `snapshot_step`, the pipeline step) to
/// `<prefix>.<stage>.rank<r>.xyz`, one file per stage and rank (no communication), flushed.
class XyzSnapshots : public Hook {
 public:
  XyzSnapshots(std::string prefix, long every);
  /// The file a stage's snapshots on a rank go to: `<prefix>.<stage_name>.rank<rank>.xyz`.
  static std::string file_name(const std::string& prefix, const std::string& stage_name, int rank);
  long every() const override { return every_; }
  void on_step(const HookContext& where, const std::vector<systems::HostSystem>& running) override;
  /// Frames written so far by this hook on this rank.
  long frames() const noexcept { return frames_; }

 private:
  std::string prefix_;
  long every_;
  long frames_ = 0;
};

/// One line per finished system to `out`: "[baton::pipeline] rank 1 stage 'fire': system 17
/// finished after 143 steps, energy -44.3268, fmax 9.1e-07" (failed: "failed (<why>)").
class LogHook : public Hook {
 public:
  explicit LogHook(std::ostream& out) : out_(out) {}
  void on_finished(const HookContext& where,
                   const std::vector<systems::HostSystem>& systems) override;

 private:
  std::ostream& out_;
};

}  // namespace baton::pipeline
