#pragma once
/// \file
/// Velocity-Verlet (NVE) dynamics of every system in a batch.

#include <cstdint>
#include <string>

#include <utility>

#include "baton/dynamics/detail/checks.hpp"
#include "baton/dynamics/eam.hpp"
#include "baton/dynamics/forces.hpp"
#include "baton/dynamics/integrator.hpp"
#include "baton/dynamics/lennard_jones.hpp"
#include "baton/dynamics/morse.hpp"
#include "baton/dynamics/potential.hpp"
#include "baton/dynamics/random.hpp"
#include "baton/dynamics/stage.hpp"
#include "baton/dynamics/team.hpp"
#include "baton/dynamics/units.hpp"

namespace baton::dynamics {

/// Velocity-Verlet parameters, in the units of `units` (defaults for Lennard-Jones units).
struct VerletOptions {
  double dt = 0.005;            ///< time step
  long steps = 1000;            ///< steps per system
  double temperature = -1;      ///< >= 0: Maxwell-Boltzmann velocities at this temperature on entry
  std::uint64_t seed = 1;       ///< seed of those velocities
  Units units = Units::lj();    ///< the unit system of the potential, masses and temperature
  NeighbourOptions neighbours;  ///< how pairs are found (neighbours.hpp)
};

/// Throws baton::Error naming the parameter when `p` is not usable.
void validate(const VerletOptions& p);

/// Key step of the velocities VerletStage draws on entry (Langevin noise uses steps >= 0).
inline constexpr std::int64_t initial_velocity_step = -1;

/// Draws Maxwell-Boltzmann velocities at `temperature` for slots [first, first + n): component c
/// of atom a (index in its system) of system `id` is sqrt(T / m) times random_normal(seed, id,
/// initial_velocity_step, a, c); then the centre-of-mass velocity is removed. A fixed atom
/// (HostSystem::move_mask) gets 0, and a system with fixed atoms keeps its draw as it is (its
/// momentum is not conserved: the fixed atoms hold it).
void draw_velocities(systems::SystemsBatch& batch, int first, int n, double temperature,
                     std::uint64_t seed, const Units& units = Units::lj());

namespace detail {
/// draw_velocities with kt = k_B T / mvv2e (velocity^2 x mass) given, unchecked.
void draw_velocities(systems::SystemsBatch& batch, int first, int n, double kt, std::uint64_t seed);
}  // namespace detail

/// Velocity Verlet as an Update of IntegratorStage (integrator.hpp): the numbers of VerletOptions
/// its steps and its enter() use.
struct VerletUpdate {
  double dt, ftm2v;
  long steps;
  bool draw;           ///< temperature >= 0: draw velocities on entry...
  double kt;           ///< ...with this k_B T / mvv2e
  std::uint64_t seed;  ///< ...and this seed
  double mvv2e;        ///< mass x velocity^2 -> energy

  explicit VerletUpdate(const VerletOptions& p = {});

  std::string name() const { return "nve"; }
  long step_limit() const { return steps; }
  double cost_estimate() const { return static_cast<double>(steps); }
  /// Draws velocities (draw_velocities) when `draw`.
  void enter(systems::SystemsBatch& batch, int first, int n) const;

  /// Half a kick and a drift (the step: before_forces, forces, after_forces).
  template <class System>
  KOKKOS_INLINE_FUNCTION void before_forces(System& s) const {
    s.for_each_atom([&](int i) {
      const double h = 0.5 * dt * ftm2v / s.mass(i);
      for (int d = 0; d < 3; ++d) {
        s.v(i, d) += h * s.f(i, d);
        s.x(i, d) += dt * s.v(i, d);
      }
    });
  }
  /// The other half kick, with the new forces.
  template <class System>
  KOKKOS_INLINE_FUNCTION void after_forces(System& s) const {
    s.for_each_atom([&](int i) {
      const double h = 0.5 * dt * ftm2v / s.mass(i);
      for (int d = 0; d < 3; ++d)
        s.v(i, d) += h * s.f(i, d);
    });
  }
  /// The kinetic energy (energy units).
  template <class System>
  KOKKOS_INLINE_FUNCTION double kinetic(const System& s) const {
    return 0.5 * mvv2e * s.sum([&](int i) {
      return s.mass(i) * (s.v(i, 0) * s.v(i, 0) + s.v(i, 1) * s.v(i, 1) + s.v(i, 2) * s.v(i, 2));
    });
  }
  /// The conserved quantity: E_pot + E_kin.
  template <class System>
  KOKKOS_INLINE_FUNCTION double conserved(const System& s) const {
    return s.energy() + kinetic(s);
  }
};

/// The "nve" stage: params.steps velocity-Verlet steps per system, then Finished. enter() draws
/// velocities (if params.temperature >= 0) and computes forces.
template <class Potential = LennardJones>
class VerletStage : public IntegratorStage<Potential, VerletUpdate> {
 public:
  explicit VerletStage(Potential potential = {}, VerletOptions params = {})
      : IntegratorStage<Potential, VerletUpdate>(std::move(potential), VerletUpdate(params),
                                                 params.neighbours, params.units),
        params_(std::move(params)) {
    validate(params_);
  }

  const VerletOptions& params() const noexcept { return params_; }

 private:
  VerletOptions params_;
};

extern template class IntegratorStage<LennardJones, VerletUpdate>;
extern template class IntegratorStage<Morse, VerletUpdate>;
extern template class IntegratorStage<Eam, VerletUpdate>;
extern template class VerletStage<LennardJones>;
extern template class VerletStage<Morse>;
extern template class VerletStage<Eam>;

}  // namespace baton::dynamics
