#pragma once
/// \file
/// One force evaluation over slots of a batch, for any potential (see potential.hpp): forces,
/// energy, fmax and virial of each Active system.

#include <Kokkos_Core.hpp>

#include "baton/dynamics/checks.hpp"
#include "baton/dynamics/lennard_jones.hpp"
#include "baton/dynamics/potential.hpp"
#include "baton/runtime/error.hpp"

namespace baton::dynamics {

namespace detail {

/// Throws baton::Error naming the first Active periodic system among slots [first, first + n)
/// whose cell is too small for the cutoff (cutoff_problem).
void check_cutoff(const SystemsBatch& batch, int first, int n, double cutoff_squared);

/// Stores one system's results in the batch's per-system Views (by one thread of the team).
template <class Batch>
KOKKOS_INLINE_FUNCTION void store(const Batch& b, int s, const SystemForces& r, bool virial) {
  b.energy(s) = r.energy;
  b.fmax(s) = r.fmax;
  if (virial)
    for (int c = 0; c < 6; ++c)
      b.virial(s, c) = r.virial[c];
}

/// The per-system Views a force kernel writes (copied into the kernel, so no SystemsBatch there).
struct ForceOutputs {
  SystemsBatch::view<double*> energy;
  SystemsBatch::view<double*> fmax;
  SystemsBatch::view<double* [6]> virial;
  explicit ForceOutputs(const SystemsBatch& b) : energy(b.energy), fmax(b.fmax), virial(b.virial) {}
};

template <bool HalfPairs, class K>
void launch_forces(const K& pot, SystemsBatch& batch, int first, int n) {
  const auto x = batch.positions;
  const auto f = batch.forces;
  const auto species = batch.species;
  const auto scratch = batch.atom_scratch;
  const auto offset = batch.offset;
  const auto count = batch.count;
  const auto status = batch.status;
  const auto cells = batch.cell;
  const auto pbc = batch.pbc;
  const ForceOutputs out(batch);
  Kokkos::parallel_for(
      "baton::dynamics::forces", system_teams(n), KOKKOS_LAMBDA(const TeamMember& team) {
        const int s = first + team.league_rank();
        if (status(s) != static_cast<int>(SystemStatus::Active))
          return;
        SystemForces r;
        const CellImage cell = make_cell_image(&cells(s, 0), pbc(s));
        team_forces<HalfPairs, true>(team, pot, x, species, f, scratch, offset(s),
                                     offset(s) + count(s), cell, r);
        Kokkos::single(Kokkos::PerTeam(team), [&]() { store(out, s, r, true); });
      });
}

/// compute_forces with the pair loop chosen explicitly (tests run the GPU loop on the host too).
template <class P = LennardJones>
void compute_forces(const P& potential, SystemsBatch& batch, int first_slot, int n_slots,
                    bool half_pairs) {
  const auto pot = potential.kernel();
  check_slots("compute_forces", batch, first_slot, n_slots);
  if (n_slots == 0)
    return;
  check_cutoff(batch, first_slot, n_slots, pot.cutoff_squared());
  if (half_pairs && !on_host)
    throw Error("baton::dynamics::compute_forces: the half-pair loop runs on host spaces only");
  if (half_pairs)
    launch_forces<on_host>(pot, batch, first_slot, n_slots);  // never instantiated on GPUs
  else
    launch_forces<false>(pot, batch, first_slot, n_slots);
}

}  // namespace detail

/// Forces, per-system energy, fmax (largest atom force norm) and virial for slots [first_slot,
/// first_slot + n_slots), skipping systems that are not Active. A system's result depends only on
/// its own atoms (bit-identical in any slot, beside any other systems, run to run).
template <class P = LennardJones>
void compute_forces(const P& potential, SystemsBatch& batch, int first_slot, int n_slots) {
  detail::compute_forces(potential, batch, first_slot, n_slots, detail::on_host);
}

}  // namespace baton::dynamics
