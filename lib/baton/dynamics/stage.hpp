#pragma once
/// \file
/// The stage interface: what a pipeline driver needs from a piece of dynamics. It lives here, with
/// the dynamics that implement it, so that dynamics/ never includes pipeline/ (the layer above).

#include <memory>
#include <string>

#include "baton/systems/systems_batch.hpp"

namespace baton::dynamics {

/// One stage of a pipeline. The driver owns the batch: it appends arriving systems (status Active,
/// or Finished for a system that failed before; steps 0, scratch 0), calls enter() for them, calls
/// advance() every pipeline step, and takes out the systems advance() marked Finished. A system's
/// result must depend only on its own data, so that it does not matter which rank, slot or step
/// runs it.
class Stage {
 public:
  virtual ~Stage() = default;
  /// Short name, used in reports and XYZ keys ("fire", "nve", "langevin").
  virtual std::string name() const = 0;
  /// Prepares slots [first, first + n) that just arrived (e.g. computes forces, draws velocities).
  virtual void enter(systems::SystemsBatch& batch, int first, int n) = 0;
  /// Runs up to `max_steps` steps on every Active system, incrementing `steps`; marks a system
  /// Finished when it is done. Energy, fmax and forces of a Finished system are current.
  virtual void advance(systems::SystemsBatch& batch, int max_steps) = 0;
  /// Relative cost of one system through this stage (e.g. its step budget), used to decide which
  /// stages extra ranks replicate.
  virtual double cost_estimate() const = 0;
  /// Largest number of steps one system can take here before the stage gives up on it (0: none).
  virtual long step_limit() const { return 0; }
};

}  // namespace baton::dynamics
