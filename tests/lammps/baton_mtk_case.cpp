// baton_mtk_case EAM_FILE iso|aniso|tri DIR STEPS: one trajectory of the MTK barostat for
// tests/lammps/compare_mtk.py. Cu (the EAM file's first element), fcc 4x4x4 of a = 3.615 A (256
// atoms, jittered by 0.02 A), strained so that the barostat has work to do: iso, the cell 1%
// larger; aniso, its lengths scaled by 1.01, 0.99 and 1.005; tri, those and the tilts xy 0.4, xz
// -0.3, yz 0.2 A (the atoms carried along). Velocities drawn at 300 K (seed 4928459). Writes
// DIR/mtk_<coupling>.data, that starting state as a LAMMPS data file, then runs Baton's MtkStage
// (300 K, tau 0.1 ps, P0 1000 bar, tau_p 0.1 ps, dt 0.001 ps) one step at a time, printing
//   start <volume>
//   step <n> <potential energy> <kinetic energy> <volume> <xx yy zz xy xz yz> <conserved>
// after each of its STEPS steps (energies in eV, lengths in A).
#include <Kokkos_Core.hpp>
#include <baton/dynamics/eam.hpp>
#include <baton/dynamics/lattice.hpp>
#include <baton/dynamics/mtk.hpp>
#include <baton/systems/cell.hpp>
#include <baton/systems/host_transfer.hpp>
#include <baton/systems/lammps_data.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

namespace bd = baton::dynamics;
namespace bs = baton::systems;

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s EAM_FILE iso|aniso|tri DIR STEPS\n", argv[0]);
    return 2;
  }
  Kokkos::ScopeGuard kokkos(argc, argv);
  try {
    const bd::Eam eam(argv[1]);
    const std::string coupling = argv[2], dir = argv[3];
    const int steps = std::atoi(argv[4]);
    const std::string element = eam.elements().front();
    bs::HostSystem s = bd::fcc_crystal({4, 4, 4}, 3.615, element, 0, 0.02, 11);
    s.masses.assign(s.size(), eam.mass(element));
    const bool iso = coupling == "iso";
    const double scale[3] = {1.01, iso ? 1.01 : 0.99, iso ? 1.01 : 1.005};
    for (std::size_t i = 0; i < s.size(); ++i)
      for (int d = 0; d < 3; ++d)
        s.positions[3 * i + d] *= scale[d];
    for (int d = 0; d < 3; ++d)
      s.cell[4 * d] *= scale[d];
    bd::MtkOptions p;
    p.units = bd::Units::metal();
    if (coupling == "aniso")
      p.coupling = bd::MtkOptions::Coupling::aniso;
    else if (coupling == "tri") {
      p.coupling = bd::MtkOptions::Coupling::tri;
      bd::tilt_cell(s, 0.4, -0.3, 0.2);
    } else if (coupling != "iso")
      throw std::runtime_error("unknown coupling '" + coupling + "'");
    p.dt = 0.001;
    p.temperature = 300;
    p.tau = 0.1;
    p.pressure = 1000 / p.units.nktv2p;
    p.tau_p = 0.1;
    p.steps = steps;
    p.draw = false;

    bs::SpeciesTable species;
    bs::SystemsBatch batch({1, static_cast<int>(s.size())}, 1);
    bs::append_systems(batch, {s}, species);
    bd::draw_velocities(batch, 0, 1, 300, 4928459, p.units);
    const bs::HostSystem start = bs::copy_systems_to_host(batch, {0}, species)[0];
    bs::write_lammps_data(dir + "/mtk_" + coupling + ".data", start);
    std::printf("start %.17g\n", bs::cell_volume(start.cell));

    bd::MtkStage<bd::Eam> npt(eam, p);
    npt.enter(batch, 0, 1);
    for (int n = 1; n <= steps; ++n) {
      npt.advance(batch, 1);
      const bs::HostSystem now = bs::copy_systems_to_host(batch, {0}, species)[0];
      if (now.failed)
        throw std::runtime_error("failed at step " + std::to_string(n) + ": " + now.failure);
      double ke = 0;
      for (std::size_t i = 0; i < now.velocities.size(); ++i)
        ke += 0.5 * now.masses[i / 3] * now.velocities[i] * now.velocities[i] * p.units.mvv2e;
      const auto& h = now.cell;
      std::printf("step %d %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", n,
                  now.energy, ke, bs::cell_volume(h), h[0], h[4], h[8], h[3], h[6], h[7],
                  now.conserved);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "baton_mtk_case: %s\n", e.what());
    return 1;
  }
  return 0;
}
