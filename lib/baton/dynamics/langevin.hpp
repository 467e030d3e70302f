#pragma once
/// \file
/// Langevin dynamics (BAOAB splitting, Leimkuhler and Matthews 2013) of every system in a batch.

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

/// Langevin parameters, in the units of `units` (defaults for Lennard-Jones units).
struct LangevinParams {
  double dt = 0.005;             ///< time step
  long steps = 1000;             ///< steps per system
  double temperature = 0.1;      ///< bath temperature
  double friction = 1.0;         ///< gamma, in 1 / time
  std::uint64_t seed = 1;        ///< noise seed
  Units units = Units::lj();     ///< the unit system of the potential, masses and temperature
  NeighbourSettings neighbours;  ///< how pairs are found (neighbours.hpp)
};

/// Throws baton::Error naming the parameter when `p` is not usable.
void validate(const LangevinParams& p);

/// The "langevin" stage: params.steps BAOAB steps per system, then Finished. The O-step noise of
/// component c of atom a (index in its system) at step k (batch.steps) of system `id` is
/// random_normal(seed, id, k, a, c). Incoming velocities are kept.
template <class Potential = LennardJones>
class LangevinStage : public Stage {
 public:
  explicit LangevinStage(Potential potential = {}, LangevinParams params = {});
  std::string name() const override { return "langevin"; }
  /// Computes forces.
  void enter(systems::SystemsBatch& batch, int first, int n) override;
  void advance(systems::SystemsBatch& batch, int max_steps) override;
  double cost_estimate() const override { return static_cast<double>(params_.steps); }
  long step_limit() const override { return params_.steps; }

  const Potential& potential() const noexcept { return potential_; }
  const LangevinParams& params() const noexcept { return params_; }
  /// The neighbour lists the stage keeps (builds(), capacity()).
  const NeighbourLists& neighbour_lists() const noexcept { return lists_; }

 private:
  Potential potential_;
  LangevinParams params_;
  NeighbourLists lists_;
};

// Implementation.

template <class Potential>
LangevinStage<Potential>::LangevinStage(Potential potential, LangevinParams params)
    : potential_(std::move(potential)), params_(params), lists_(params_.neighbours) {
  (void)potential_.kernel();  // checks the potential's parameters
  validate(params_);
}

template <class Potential>
void LangevinStage<Potential>::enter(systems::SystemsBatch& batch, int first, int n) {
  detail::check_slots("LangevinStage::enter", batch, first, n);
  enter_forces(potential_, batch, first, n, lists_, params_.neighbours.skin_in(params_.units));
}

template <class Potential>
void LangevinStage<Potential>::advance(systems::SystemsBatch& batch, int max_steps) {
  detail::check_max_steps("LangevinStage::advance", max_steps);
  const int n = batch.num_systems();
  if (n == 0 || max_steps == 0)
    return;
  const auto pot = potential_.kernel();
  const double dt = params_.dt;
  const long limit = params_.steps;
  const double kt = params_.units.boltz * params_.temperature / params_.units.mvv2e;
  const double ftm2v = params_.units.ftm2v;
  const std::uint64_t seed = params_.seed;
  const double c1 = std::exp(-params_.friction * dt);  // O step: v <- c1 v + c2 sqrt(kT/m) xi
  const double c2 = std::sqrt(1 - c1 * c1);
  constexpr int active = static_cast<int>(systems::SystemStatus::Active);
  lists_.begin_call(batch, pot.cutoff_squared(), params_.neighbours.skin_in(params_.units));
  do {  // again for the rest of the steps when a neighbour list had to grow
    const detail::StageViews sv(batch, lists_);
    Kokkos::parallel_for(
        "baton::dynamics::langevin", detail::system_teams(n),
        KOKKOS_LAMBDA(const detail::TeamMember& team) {
          if (sv.status(team.league_rank()) != active || !sv.ready(team, pot, team.league_rank()))
            return;
          detail::StageSystem sys = sv.begin(team, pot, team.league_rank());
          const int b = sys.begin;
          const std::int64_t sid = sv.id(sys.slot);
          while (!sys.done) {
            if (sys.taken >= limit) {
              sys.done = true;
              break;
            }
            if (sv.call_over(sys, max_steps))
              break;
            const std::int64_t step = sys.taken;
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b, sys.end), [&](int i) {
              const double h = 0.5 * dt * ftm2v / sv.mass(i);
              const double sd = c2 * detail::math_sqrt(kt / sv.mass(i));
              for (int d = 0; d < 3; ++d) {
                sv.v(i, d) += h * sv.f(i, d);                                                  // B
                sv.x(i, d) += 0.5 * dt * sv.v(i, d);                                           // A
                sv.v(i, d) = c1 * sv.v(i, d) + sd * random_normal(seed, sid, step, i - b, d);  // O
                sv.x(i, d) += 0.5 * dt * sv.v(i, d);                                           // A
              }
            });
            team.team_barrier();
            sv.forces<false>(team, pot, sys);
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b, sys.end), [&](int i) {
              const double h = 0.5 * dt * ftm2v / sv.mass(i);
              for (int d = 0; d < 3; ++d)
                sv.v(i, d) += h * sv.f(i, d);  // B
            });
            if (sv.stepped(team, pot, sys))
              break;
          }
          sv.finish(team, pot, sys);
        });
  } while (lists_.grow_after_call(batch));
}

extern template class LangevinStage<LennardJones>;
extern template class LangevinStage<Morse>;
extern template class LangevinStage<Eam>;

}  // namespace baton::dynamics
