#pragma once
/// \file
/// Velocity-Verlet (NVE) dynamics of every system in a batch.

#include <cstdint>
#include <string>

#include <utility>

#include "baton/dynamics/checks.hpp"
#include "baton/dynamics/eam.hpp"
#include "baton/dynamics/forces.hpp"
#include "baton/dynamics/lennard_jones.hpp"
#include "baton/dynamics/morse.hpp"
#include "baton/dynamics/potential.hpp"
#include "baton/dynamics/random.hpp"
#include "baton/dynamics/team.hpp"
#include "baton/dynamics/units.hpp"
#include "baton/pipeline/stage.hpp"

namespace baton::dynamics {

/// Velocity-Verlet parameters, in the units of `units` (defaults for Lennard-Jones units).
struct VerletParams {
  double dt = 0.005;          ///< time step
  long steps = 1000;          ///< steps per system
  double temperature = -1;    ///< >= 0: Maxwell-Boltzmann velocities at this temperature on entry
  std::uint64_t seed = 1;     ///< seed of those velocities
  Units units = Units::lj();  ///< the unit system of the potential, masses and temperature
};

/// Throws baton::Error naming the parameter when `p` is not usable.
void validate(const VerletParams& p);

/// Key step of the velocities VerletStage draws on entry (Langevin noise uses steps >= 0).
inline constexpr std::int64_t initial_velocity_step = -1;

/// Draws Maxwell-Boltzmann velocities at `temperature` for slots [first, first + n): component c
/// of atom a (index in its system) of system `id` is sqrt(T / m) times random_normal(seed, id,
/// initial_velocity_step, a, c); then the centre-of-mass velocity is removed.
void draw_velocities(SystemsBatch& batch, int first, int n, double temperature, std::uint64_t seed,
                     const Units& units = Units::lj());

/// The "nve" stage: params.steps velocity-Verlet steps per system, then Finished.
template <class Potential = LennardJones>
class VerletStage : public pipeline::Stage {
 public:
  explicit VerletStage(Potential potential = {}, VerletParams params = {});
  std::string name() const override { return "nve"; }
  /// Draws velocities (if params.temperature >= 0) and computes forces.
  void enter(SystemsBatch& batch, int first, int n) override;
  void advance(SystemsBatch& batch, int max_steps) override;
  double cost_estimate() const override { return static_cast<double>(params_.steps); }
  long step_limit() const override { return params_.steps; }

  const Potential& potential() const noexcept { return potential_; }
  const VerletParams& params() const noexcept { return params_; }

 private:
  Potential potential_;
  VerletParams params_;
};

// Implementation.

template <class Potential>
VerletStage<Potential>::VerletStage(Potential potential, VerletParams params)
    : potential_(std::move(potential)), params_(params) {
  (void)potential_.kernel();  // checks the potential's parameters
  validate(params_);
}

template <class Potential>
void VerletStage<Potential>::enter(SystemsBatch& batch, int first, int n) {
  detail::check_slots("VerletStage::enter", batch, first, n);
  if (params_.temperature >= 0 && n > 0)
    draw_velocities(batch, first, n, params_.temperature, params_.seed, params_.units);
  compute_forces(potential_, batch, first, n);
}

template <class Potential>
void VerletStage<Potential>::advance(SystemsBatch& batch, int max_steps) {
  detail::check_max_steps("VerletStage::advance", max_steps);
  const int n = batch.num_systems();
  if (n == 0 || max_steps == 0)
    return;
  const auto pot = potential_.kernel();
  const double dt = params_.dt;
  const double ftm2v = params_.units.ftm2v;
  const long limit = params_.steps;
  const auto x = batch.positions;
  const auto v = batch.velocities;
  const auto f = batch.forces;
  const auto species = batch.species;
  const auto atom_scratch = batch.atom_scratch;
  const auto failed = batch.failed;
  const auto cells = batch.cell;
  const auto pbc = batch.pbc;
  const auto mass = batch.masses;
  const auto offset = batch.offset;
  const auto count = batch.count;
  const auto status = batch.status;
  const detail::ForceOutputs out(batch);
  const auto steps = batch.steps;
  constexpr int active = static_cast<int>(SystemStatus::Active);
  Kokkos::parallel_for(
      "baton::dynamics::verlet", detail::system_teams(n),
      KOKKOS_LAMBDA(const detail::TeamMember& team) {
        const int s = team.league_rank();
        if (status(s) != active)
          return;
        const int b = offset(s), e = offset(s) + count(s);
        const CellImage cell = make_cell_image(&cells(s, 0), pbc(s));
        SystemForces r;
        r.energy = out.energy(s);
        r.fmax = out.fmax(s);
        std::int64_t taken = steps(s);
        // A system that failed earlier, or whose numbers are broken already, takes no steps.
        bool broke = failed(s) != 0 || detail::broken(team, x, f, b, e, r);
        bool done = broke;
        for (int k = 0; !broke; ++k) {
          if (taken >= limit) {
            done = true;
            break;
          }
          if (k == max_steps)
            break;
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b, e), [&](int i) {
            const double h = 0.5 * dt * ftm2v / mass(i);
            for (int d = 0; d < 3; ++d) {
              v(i, d) += h * f(i, d);
              x(i, d) += dt * v(i, d);
            }
          });
          team.team_barrier();
          detail::team_forces<detail::on_host, false>(team, pot, x, species, f, atom_scratch, b, e,
                                                      cell, r);
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b, e), [&](int i) {
            const double h = 0.5 * dt * ftm2v / mass(i);
            for (int d = 0; d < 3; ++d)
              v(i, d) += h * f(i, d);
          });
          ++taken;
          if (detail::broken(team, x, f, b, e, r)) {
            broke = done = true;
            break;
          }
        }
        team.team_barrier();
        if (done && !broke)  // once more with the virial, at the final positions
          detail::team_forces<detail::on_host, true>(team, pot, x, species, f, atom_scratch, b, e,
                                                     cell, r);
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          detail::store(out, s, r, done);
          steps(s) = taken;
          if (broke)
            failed(s) = 1;
          if (done)
            status(s) = static_cast<int>(SystemStatus::Finished);
        });
      });
}

extern template class VerletStage<LennardJones>;
extern template class VerletStage<Morse>;
extern template class VerletStage<Eam>;

}  // namespace baton::dynamics
