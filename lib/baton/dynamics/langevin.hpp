#pragma once
/// \file
/// Langevin dynamics (BAOAB splitting, Leimkuhler and Matthews 2013) of every system in a batch.

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

/// Langevin parameters, in the units of `units` (defaults for Lennard-Jones units).
struct LangevinParams {
  double dt = 0.005;          ///< time step
  long steps = 1000;          ///< steps per system
  double temperature = 0.1;   ///< bath temperature
  double friction = 1.0;      ///< gamma, in 1 / time
  std::uint64_t seed = 1;     ///< noise seed
  Units units = Units::lj();  ///< the unit system of the potential, masses and temperature
};

/// Throws baton::Error naming the parameter when `p` is not usable.
void validate(const LangevinParams& p);

/// The "langevin" stage: params.steps BAOAB steps per system, then Finished. The O-step noise of
/// component c of atom a (index in its system) at step k (batch.steps) of system `id` is
/// random_normal(seed, id, k, a, c). Incoming velocities are kept.
template <class Potential = LennardJones>
class LangevinStage : public pipeline::Stage {
 public:
  explicit LangevinStage(Potential potential = {}, LangevinParams params = {});
  std::string name() const override { return "langevin"; }
  /// Computes forces.
  void enter(SystemsBatch& batch, int first, int n) override;
  void advance(SystemsBatch& batch, int max_steps) override;
  double cost_estimate() const override { return static_cast<double>(params_.steps); }
  long step_limit() const override { return params_.steps; }

  const Potential& potential() const noexcept { return potential_; }
  const LangevinParams& params() const noexcept { return params_; }

 private:
  Potential potential_;
  LangevinParams params_;
};

// Implementation.

template <class Potential>
LangevinStage<Potential>::LangevinStage(Potential potential, LangevinParams params)
    : potential_(std::move(potential)), params_(params) {
  (void)potential_.kernel();  // checks the potential's parameters
  validate(params_);
}

template <class Potential>
void LangevinStage<Potential>::enter(SystemsBatch& batch, int first, int n) {
  detail::check_slots("LangevinStage::enter", batch, first, n);
  compute_forces(potential_, batch, first, n);
}

template <class Potential>
void LangevinStage<Potential>::advance(SystemsBatch& batch, int max_steps) {
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
  const auto id = batch.id;
  const auto status = batch.status;
  const detail::ForceOutputs out(batch);
  const auto steps = batch.steps;
  constexpr int active = static_cast<int>(SystemStatus::Active);
  Kokkos::parallel_for(
      "baton::dynamics::langevin", detail::system_teams(n),
      KOKKOS_LAMBDA(const detail::TeamMember& team) {
        const int s = team.league_rank();
        if (status(s) != active)
          return;
        const int b = offset(s), e = offset(s) + count(s);
        const CellImage cell = make_cell_image(&cells(s, 0), pbc(s));
        const std::int64_t sid = id(s);
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
            const double sd = c2 * detail::math_sqrt(kt / mass(i));
            for (int d = 0; d < 3; ++d) {
              v(i, d) += h * f(i, d);                                                   // B
              x(i, d) += 0.5 * dt * v(i, d);                                            // A
              v(i, d) = c1 * v(i, d) + sd * random_normal(seed, sid, taken, i - b, d);  // O
              x(i, d) += 0.5 * dt * v(i, d);                                            // A
            }
          });
          team.team_barrier();
          detail::team_forces<detail::on_host, false>(team, pot, x, species, f, atom_scratch, b, e,
                                                      cell, r);
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, b, e), [&](int i) {
            const double h = 0.5 * dt * ftm2v / mass(i);
            for (int d = 0; d < 3; ++d)
              v(i, d) += h * f(i, d);  // B
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

extern template class LangevinStage<LennardJones>;
extern template class LangevinStage<Morse>;
extern template class LangevinStage<Eam>;

}  // namespace baton::dynamics
