#pragma once
/// \file
/// FIRE minimisation (Bitzek et al., PRL 97, 170201, 2006) of every system in a batch.

#include <string>

#include "baton/dynamics/lennard_jones.hpp"
#include "baton/pipeline/stage.hpp"

namespace baton::dynamics {

/// FIRE's parameters, in Lennard-Jones units. The defaults are Bitzek et al.'s (n_min, f_inc,
/// f_dec, alpha_start, f_alpha); dt was tuned on perturbed LJ13 and LJ55 (dt_max is rarely reached
/// there).
struct FireParams {
  double fmax = 1e-6;          ///< converged when the largest atom force norm is at most this
  double dt = 0.05;            ///< initial time step
  double dt_max = 0.1;         ///< largest time step
  int n_min = 5;               ///< steps with P = F.v >= 0 before dt may grow
  double f_inc = 1.1;          ///< dt growth factor
  double f_dec = 0.5;          ///< dt shrink factor when P < 0
  double alpha_start = 0.1;    ///< initial velocity-mixing coefficient
  double f_alpha = 0.99;       ///< alpha decay factor
  double max_step = 0.1;       ///< largest atom displacement per step (sigma)
  bool half_step_back = true;  ///< when P < 0, first move back half a step (FIRE 2.0)
  long max_steps = 100000;     ///< a system that has not converged after this many steps stops
};

/// Throws baton::Error naming the parameter when `p` is not usable.
void validate(const FireParams& p);

/// The "fire" stage: relaxes every system to fmax <= params.fmax. Per-system state (dt, alpha,
/// steps since P <= 0) lives in batch.scratch (0: not started). enter() zeroes velocities and
/// computes forces; a system is Finished when converged (checked before each step, so a relaxed
/// system takes 0 steps) or after params.max_steps steps.
class FireStage : public pipeline::Stage {
 public:
  explicit FireStage(LennardJones lj = {}, FireParams params = {});
  std::string name() const override { return "fire"; }
  void enter(SystemsBatch& batch, int first, int n) override;
  void advance(SystemsBatch& batch, int max_steps) override;
  /// Expected steps per system: min(max_steps, typical_fire_steps).
  double cost_estimate() const override;
  long step_limit() const override { return params_.max_steps; }

  const LennardJones& potential() const noexcept { return lj_; }
  const FireParams& params() const noexcept { return params_; }

  /// Typical steps to fmax 1e-6 for perturbed LJ13 / LJ55 with the default parameters.
  static constexpr double typical_fire_steps = 200;

 private:
  LennardJones lj_;
  FireParams params_;
};

}  // namespace baton::dynamics
