#pragma once
/// \file
/// Langevin dynamics (BAOAB splitting, Leimkuhler and Matthews 2013) of every system in a batch.

#include <cstdint>
#include <string>

#include "baton/dynamics/lennard_jones.hpp"
#include "baton/pipeline/stage.hpp"

namespace baton::dynamics {

/// Langevin parameters (Lennard-Jones units, kB = 1).
struct LangevinParams {
  double dt = 0.005;         ///< time step
  long steps = 1000;         ///< steps per system
  double temperature = 0.1;  ///< bath temperature
  double friction = 1.0;     ///< gamma, in 1 / time
  std::uint64_t seed = 1;    ///< noise seed
};

/// Throws baton::Error naming the parameter when `p` is not usable.
void validate(const LangevinParams& p);

/// The "langevin" stage: params.steps BAOAB steps per system, then Finished. The O-step noise of
/// component c of atom a (index in its system) at step k (batch.steps) of system `id` is
/// random_normal(seed, id, k, a, c). Incoming velocities are kept.
class LangevinStage : public pipeline::Stage {
 public:
  explicit LangevinStage(LennardJones lj = {}, LangevinParams params = {});
  std::string name() const override { return "langevin"; }
  /// Computes forces.
  void enter(SystemsBatch& batch, int first, int n) override;
  void advance(SystemsBatch& batch, int max_steps) override;
  double cost_estimate() const override { return static_cast<double>(params_.steps); }
  long step_limit() const override { return params_.steps; }

  const LennardJones& potential() const noexcept { return lj_; }
  const LangevinParams& params() const noexcept { return params_; }

 private:
  LennardJones lj_;
  LangevinParams params_;
};

}  // namespace baton::dynamics
