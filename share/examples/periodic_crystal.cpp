// A periodic, triclinic Lennard-Jones crystal of 864 atoms, 500 NVE steps with a neighbour list:
// prints the total-energy drift and how often the list was rebuilt. Every rank runs its own copy;
// rank 0 prints.
//   mpiexec -n 1 periodic_crystal
#include <baton/baton.hpp>
#include <cmath>
#include <cstdio>

namespace dyn = baton::dynamics;
namespace sys = baton::systems;

// Potential plus kinetic energy of the system in slot 0.
double total_energy(const sys::SystemsBatch& batch, const sys::SpeciesTable& species) {
  const sys::HostSystem s = sys::copy_systems_to_host(batch, {0}, species)[0];
  double kinetic = 0;
  for (std::size_t i = 0; i < s.velocities.size(); ++i)
    kinetic += 0.5 * s.masses[i / 3] * s.velocities[i] * s.velocities[i];
  return s.energy + kinetic;
}

int main(int argc, char** argv) {
  baton::Runtime runtime(argc, argv);

  // fcc at the density of LAMMPS' bench/in.lj, 6 x 6 x 6 cells, then tilted (a triclinic cell).
  sys::HostSystem crystal = dyn::fcc_crystal({6, 6, 6}, std::cbrt(4 / 0.8442), "Ar", 1);
  dyn::tilt_cell(crystal, 1.0, 0.5, -0.5);

  dyn::LennardJones lj;
  lj.cutoff = 2.5;  // at most half the cell's smallest width (checked)
  dyn::VerletOptions nve;
  nve.steps = 500;
  nve.temperature = 0.7;      // Maxwell-Boltzmann velocities on entry
  nve.neighbours.skin = 0.3;  // pairs listed up to 2.8; rebuilt after a move of 0.15
  dyn::VerletStage stage(lj, nve);

  sys::SystemsBatch batch({1, static_cast<int>(crystal.size())}, 1);
  sys::SpeciesTable species;
  sys::append_systems(batch, {crystal}, species);
  stage.enter(batch, 0, 1);
  const double before = total_energy(batch, species);
  stage.advance(batch, 500);
  const double after = total_energy(batch, species);

  if (runtime.world().rank() == 0)
    std::printf("%zu atoms, 500 steps: energy drift %.1e per atom, list rebuilt %lld times\n",
                crystal.size(), std::abs(after - before) / crystal.size(),
                static_cast<long long>(stage.neighbour_lists().builds()));
}
