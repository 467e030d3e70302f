// Variable-cell relaxation: a Lennard-Jones crystal, strained by a few percent and sheared, relaxed
// by FIRE with its cell (FireOptions::cell) at zero pressure and at pressure 1. Prints each
// result's volume per atom, pressure and steps. Exits 1 if a relaxation did not reach its target.
//   mpiexec -n 1 relax_cell
#include <baton/baton.hpp>
#include <cmath>
#include <cstdio>

namespace dyn = baton::dynamics;
namespace sys = baton::systems;

int main(int argc, char** argv) {
  baton::Runtime runtime(argc, argv);

  // 4 x 4 x 4 fcc cells (256 atoms), stretched 3% along x, squeezed 2% along y, sheared.
  sys::HostSystem crystal = dyn::fcc_crystal({4, 4, 4}, 1.55, "Ar", 0, 0.02, 7);
  for (std::size_t i = 0; i < crystal.positions.size(); i += 3) {
    crystal.positions[i] *= 1.03;
    crystal.positions[i + 1] *= 0.98;
  }
  crystal.cell[0] *= 1.03;
  crystal.cell[4] *= 0.98;
  dyn::tilt_cell(crystal, 0.3, -0.2, 0.1);  // b gains 0.3 along x; c gains -0.2 and 0.1

  dyn::LennardJones lj;
  lj.cutoff = 2.5;
  bool ok = true;
  for (double pressure : {0.0, 1.0}) {
    dyn::FireOptions options;
    options.fmax = 1e-6;
    options.cell.enabled = true;
    options.cell.set_pressure(pressure);  // epsilon / sigma^3 here; metal units: eV / A^3
    dyn::FireStage fire(lj, options);

    sys::SpeciesTable species;
    sys::SystemsBatch batch({1, static_cast<int>(crystal.size())}, 1);
    sys::append_systems(batch, {crystal}, species);
    fire.enter(batch, 0, 1);
    while (batch.status_on_host()[0] != static_cast<int>(sys::SystemStatus::finished))
      fire.advance(batch, 1000);
    const sys::HostSystem out = sys::copy_systems_to_host(batch, {0}, species)[0];
    const auto steps = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.steps);

    const double n = static_cast<double>(out.size());
    const double reached = sys::pressure(*sys::stress(out, 1.0));  // virial and kinetic part
    ok = ok && !out.failed && out.fmax <= 1e-6 && std::abs(reached - pressure) < 1e-4;
    if (runtime.world().rank() == 0)
      std::printf(
          "target %.1f: pressure %.2e, volume per atom %.6f, energy per atom %.6f, "
          "%ld steps\n",
          pressure, reached, sys::cell_volume(out.cell) / n, out.energy / n,
          static_cast<long>(steps(0)));
  }
  return ok ? 0 : 1;
}
