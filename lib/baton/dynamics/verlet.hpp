#pragma once
/// \file
/// Velocity-Verlet (NVE) dynamics of every system in a batch.

#include <cstdint>
#include <string>

#include <utility>

#include "baton/dynamics/detail/checks.hpp"
#include "baton/dynamics/eam.hpp"
#include "baton/dynamics/forces.hpp"
#include "baton/dynamics/lennard_jones.hpp"
#include "baton/dynamics/morse.hpp"
#include "baton/dynamics/potential.hpp"
#include "baton/dynamics/random.hpp"
#include "baton/dynamics/stage.hpp"
#include "baton/dynamics/team.hpp"
#include "baton/dynamics/units.hpp"

namespace baton::dynamics {

/// Velocity-Verlet parameters, in the units of `units` (defaults for Lennard-Jones units).
struct VerletParams {
  double dt = 0.005;          ///< time step
  long steps = 1000;          ///< steps per system
  double temperature = -1;    ///< >= 0: Maxwell-Boltzmann velocities at this temperature on entry
  std::uint64_t seed = 1;     ///< seed of those velocities
  Units units = Units::lj();  ///< the unit system of the potential, masses and temperature
  NeighbourSettings neighbours;  ///< how pairs are found (neighbours.hpp)
};

/// Throws baton::Error naming the parameter when `p` is not usable.
void validate(const VerletParams& p);

/// Key step of the velocities VerletStage draws on entry (Langevin noise uses steps >= 0).
inline constexpr std::int64_t initial_velocity_step = -1;

/// Draws Maxwell-Boltzmann velocities at `temperature` for slots [first, first + n): component c
/// of atom a (index in its system) of system `id` is sqrt(T / m) times random_normal(seed, id,
/// initial_velocity_step, a, c); then the centre-of-mass velocity is removed.
void draw_velocities(systems::SystemsBatch& batch, int first, int n, double temperature,
                     std::uint64_t seed, const Units& units = Units::lj());

/// The "nve" stage: params.steps velocity-Verlet steps per system, then Finished.
template <class Potential = LennardJones>
class VerletStage : public Stage {
 public:
  explicit VerletStage(Potential potential = {}, VerletParams params = {});
  std::string name() const override { return "nve"; }
  /// Draws velocities (if params.temperature >= 0) and computes forces.
  void enter(systems::SystemsBatch& batch, int first, int n) override;
  void advance(systems::SystemsBatch& batch, int max_steps) override;
  double cost_estimate() const override { return static_cast<double>(params_.steps); }
  long step_limit() const override { return params_.steps; }

  const Potential& potential() const noexcept { return potential_; }
  const VerletParams& params() const noexcept { return params_; }
  /// The neighbour lists the stage keeps (builds(), capacity()).
  const NeighbourLists& neighbour_lists() const noexcept { return lists_; }

 private:
  Potential potential_;
  VerletParams params_;
  NeighbourLists lists_;
};

// Implementation.

template <class Potential>
VerletStage<Potential>::VerletStage(Potential potential, VerletParams params)
    : potential_(std::move(potential)), params_(params), lists_(params_.neighbours) {
  (void)potential_.kernel();  // checks the potential's parameters
  validate(params_);
}

template <class Potential>
void VerletStage<Potential>::enter(systems::SystemsBatch& batch, int first, int n) {
  detail::check_slots("VerletStage::enter", batch, first, n);
  if (params_.temperature >= 0 && n > 0)
    draw_velocities(batch, first, n, params_.temperature, params_.seed, params_.units);
  enter_forces(potential_, batch, first, n, lists_, params_.neighbours.skin_in(params_.units));
}

template <class Potential>
void VerletStage<Potential>::advance(systems::SystemsBatch& batch, int max_steps) {
  detail::check_max_steps("VerletStage::advance", max_steps);
  const int n = batch.num_systems();
  if (n == 0 || max_steps == 0)
    return;
  const auto pot = potential_.kernel();
  const double dt = params_.dt;
  const double ftm2v = params_.units.ftm2v;
  const long limit = params_.steps;
  constexpr int active = static_cast<int>(systems::SystemStatus::Active);
  lists_.begin_call(batch, pot.cutoff_squared(), params_.neighbours.skin_in(params_.units));
  do {  // again for the rest of the steps when a neighbour list had to grow
    const detail::StageViews sv(batch, lists_);
    Kokkos::parallel_for(
        "baton::dynamics::verlet", detail::system_teams(n),
        KOKKOS_LAMBDA(const detail::TeamMember& team) {
          if (sv.status(team.league_rank()) != active || !sv.ready(team, pot, team.league_rank()))
            return;
          detail::StageSystem sys = sv.begin(team, pot, team.league_rank());
          while (!sys.done) {
            if (sys.taken >= limit) {
              sys.done = true;
              break;
            }
            if (sv.call_over(sys, max_steps))
              break;
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, sys.begin, sys.end), [&](int i) {
              const double h = 0.5 * dt * ftm2v / sv.mass(i);
              for (int d = 0; d < 3; ++d) {
                sv.v(i, d) += h * sv.f(i, d);
                sv.x(i, d) += dt * sv.v(i, d);
              }
            });
            team.team_barrier();
            sv.forces<false>(team, pot, sys);
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, sys.begin, sys.end), [&](int i) {
              const double h = 0.5 * dt * ftm2v / sv.mass(i);
              for (int d = 0; d < 3; ++d)
                sv.v(i, d) += h * sv.f(i, d);
            });
            if (sv.stepped(team, pot, sys))
              break;
          }
          sv.finish(team, pot, sys);
        });
  } while (lists_.grow_after_call(batch));
}

extern template class VerletStage<LennardJones>;
extern template class VerletStage<Morse>;
extern template class VerletStage<Eam>;

}  // namespace baton::dynamics
