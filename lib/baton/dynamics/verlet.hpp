#pragma once
/// \file
/// Velocity-Verlet (NVE) dynamics of every system in a batch.

#include <cstdint>
#include <string>

#include "baton/dynamics/lennard_jones.hpp"
#include "baton/pipeline/stage.hpp"

namespace baton::dynamics {

/// Velocity-Verlet parameters (Lennard-Jones units, kB = 1).
struct VerletParams {
  double dt = 0.005;        ///< time step
  long steps = 1000;        ///< steps per system
  double temperature = -1;  ///< >= 0: Maxwell-Boltzmann velocities at this temperature on entry
  std::uint64_t seed = 1;   ///< seed of those velocities
};

/// Throws baton::Error naming the parameter when `p` is not usable.
void validate(const VerletParams& p);

/// Key step of the velocities VerletStage draws on entry (Langevin noise uses steps >= 0).
inline constexpr std::int64_t initial_velocity_step = -1;

/// Draws Maxwell-Boltzmann velocities at `temperature` for slots [first, first + n): component c
/// of atom a (index in its system) of system `id` is sqrt(T / m) times random_normal(seed, id,
/// initial_velocity_step, a, c); then the centre-of-mass velocity is removed.
void draw_velocities(SystemsBatch& batch, int first, int n, double temperature, std::uint64_t seed);

/// The "nve" stage: params.steps velocity-Verlet steps per system, then Finished.
class VerletStage : public pipeline::Stage {
 public:
  explicit VerletStage(LennardJones lj = {}, VerletParams params = {});
  std::string name() const override { return "nve"; }
  /// Draws velocities (if params.temperature >= 0) and computes forces.
  void enter(SystemsBatch& batch, int first, int n) override;
  void advance(SystemsBatch& batch, int max_steps) override;
  double cost_estimate() const override { return static_cast<double>(params_.steps); }
  long step_limit() const override { return params_.steps; }

  const LennardJones& potential() const noexcept { return lj_; }
  const VerletParams& params() const noexcept { return params_; }

 private:
  LennardJones lj_;
  VerletParams params_;
};

}  // namespace baton::dynamics
