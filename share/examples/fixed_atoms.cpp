// Fixed atoms: a periodic Lennard-Jones crystal whose bottom layer is held (as ASE's FixAtoms holds
// atoms: HostSystem::move_mask false), its other atoms shaken, relaxed with FIRE, then run with
// NVE. Prints how far the fixed and the free atoms moved, and the extended-XYZ column that carries
// the mask. Exits 1 if a fixed atom moved.
//   mpiexec -n 1 fixed_atoms
#include <algorithm>
#include <baton/baton.hpp>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace dyn = baton::dynamics;
namespace sys = baton::systems;

int main(int argc, char** argv) {
  baton::Runtime runtime(argc, argv);

  // 3 x 3 x 3 fcc cells (108 atoms), every atom jittered by up to 0.1; the layer z < 0.5 is fixed.
  sys::HostSystem crystal = dyn::fcc_crystal({3, 3, 3}, std::cbrt(4 / 0.8442), "Ar", 1, 0.1, 7);
  crystal.move_mask.assign(crystal.size(), true);
  for (std::size_t i = 0; i < crystal.size(); ++i)
    if (crystal.positions[3 * i + 2] < 0.5)
      crystal.move_mask[i] = false;
  const auto fixed = std::count(crystal.move_mask.begin(), crystal.move_mask.end(), false);

  dyn::LennardJones lj;
  lj.cutoff = 2.5;
  dyn::FireStage fire(lj);  // to fmax 1e-6 over the free atoms
  dyn::VerletOptions nve;
  nve.steps = 200;
  nve.temperature = 0.5;  // velocities drawn on entry: 0 for the fixed atoms
  dyn::VerletStage md(lj, nve);

  const sys::BatchCapacity one{1, static_cast<int>(crystal.size())};
  sys::SpeciesTable species;
  sys::SystemsBatch relaxing(one, 1);
  sys::append_systems(relaxing, {crystal}, species);
  fire.enter(relaxing, 0, 1);
  while (relaxing.status_on_host()[0] != static_cast<int>(sys::SystemStatus::finished))
    fire.advance(relaxing, 1000);
  const sys::HostSystem relaxed = sys::copy_systems_to_host(relaxing, {0}, species)[0];
  sys::SystemsBatch running(one, 1);  // the mask travels with the system
  sys::append_systems(running, {relaxed}, species);
  md.enter(running, 0, 1);
  md.advance(running, 200);
  const sys::HostSystem out = sys::copy_systems_to_host(running, {0}, species)[0];

  double fixed_moved = 0, free_moved = 0;
  for (std::size_t k = 0; k < out.positions.size(); ++k) {
    const double moved = std::abs(out.positions[k] - crystal.positions[k]);
    double& most = crystal.move_mask[k / 3] ? free_moved : fixed_moved;
    most = std::max(most, moved);
  }
  std::ostringstream xyz;
  sys::write_xyz(xyz, {out});
  const std::string text = xyz.str();
  const std::size_t at = text.find("Properties=");
  const std::string properties = text.substr(at, text.find(' ', at) - at);
  if (runtime.world().rank() == 0)
    std::printf(
        "%zu atoms, %ld fixed; after FIRE (fmax %.1e) and 200 NVE steps the fixed atoms "
        "moved %g, the free ones up to %.2f\n%s\n",
        out.size(), static_cast<long>(fixed), relaxed.fmax, fixed_moved, free_moved,
        properties.c_str());
  return fixed_moved == 0 ? 0 : 1;
}
