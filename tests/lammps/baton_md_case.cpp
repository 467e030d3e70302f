// baton_md_case CASE DIR [EAM_FILE]: one periodic system of the LAMMPS comparison
// (tests/lammps/compare_periodic.py), run by Baton. Writes DIR/CASE.data, a LAMMPS data file of the
// starting state (box, masses, positions, velocities; numbers with 17 significant digits), and
// writes DIR/CASE.xyz, that state as a results file has it (its stress and pressure at step 0), and
// prints Baton's results:
//   step0 <energy> <virial xx yy zz xy xz yz>
//   force <id> <fx fy fz>                   (one line per atom, ids from 1 in data-file order)
//   step100 <potential energy> <kinetic energy>   (after 100 velocity-Verlet steps)
// Cases: lj (LAMMPS bench/in.lj: fcc at density 0.8442, 4000 atoms, rc 2.5, T 1.44, dt 0.005),
// lj_tri (the same at 864 atoms in a tilted cell), eam (Cu fcc, 864 atoms, 300 K, dt 0.001 ps, the
// given EAM file), eam_tri (500 atoms in a tilted cell).
#include <Kokkos_Core.hpp>
#include <baton/dynamics/eam.hpp>
#include <baton/dynamics/forces.hpp>
#include <baton/dynamics/lattice.hpp>
#include <baton/dynamics/lennard_jones.hpp>
#include <baton/dynamics/verlet.hpp>
#include <baton/systems/host_transfer.hpp>
#include <baton/systems/lammps_data.hpp>
#include <baton/systems/xyz.hpp>
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace bd = baton::dynamics;
namespace bs = baton::systems;

namespace {

struct Run {
  bs::HostSystem start;  // with velocities
  std::vector<double> forces;
  double energy = 0, virial[6] = {0, 0, 0, 0, 0, 0};
  double pe100 = 0, ke100 = 0;
  double mvv2e = 1;
};

template <class P>
Run run(const P& potential, bs::HostSystem s, const bd::VerletOptions& params) {
  Run out;
  bs::SpeciesTable species;
  bs::SystemsBatch batch({1, static_cast<int>(s.size())}, 1);
  bs::append_systems(batch, {s}, species);
  bd::draw_velocities(batch, 0, 1, params.temperature, params.seed, params.units);
  out.start = bs::copy_systems_to_host(batch, {0}, species)[0];
  bd::compute_forces(potential, batch, 0, 1);
  const auto f = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.forces);
  out.forces.assign(f.data(), f.data() + 3 * s.size());
  const auto w = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.virial);
  for (int k = 0; k < 6; ++k)
    out.virial[k] = w(0, k);
  out.energy = bs::copy_systems_to_host(batch, {0}, species)[0].energy;
  for (int k = 0; k < 6; ++k)  // the start's stress, as a results file gives it
    out.start.virial[k] = out.virial[k];
  out.mvv2e = params.units.mvv2e;

  bd::VerletOptions p = params;
  p.temperature = -1;  // keep the velocities drawn above
  p.steps = 100;
  bd::VerletStage<P> nve(potential, p);
  nve.enter(batch, 0, 1);
  nve.advance(batch, 100);
  const bs::HostSystem end = bs::copy_systems_to_host(batch, {0}, species)[0];
  out.pe100 = end.energy;
  for (std::size_t i = 0; i < end.velocities.size(); ++i)
    out.ke100 += 0.5 * end.masses[i / 3] * end.velocities[i] * end.velocities[i] * p.units.mvv2e;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s lj|lj_tri|eam|eam_tri DIR [EAM_FILE]\n", argv[0]);
    return 2;
  }
  Kokkos::ScopeGuard kokkos(argc, argv);
  try {
    const std::string name = argv[1], dir = argv[2];
    Run r;
    if (name == "lj" || name == "lj_tri") {
      const double a = std::cbrt(4 / 0.8442);
      const int n = name == "lj" ? 10 : 6;
      bs::HostSystem s = bd::fcc_crystal({n, n, n}, a, "Ar", 1, 0.02, 7);
      if (name == "lj_tri")
        bd::tilt_cell(s, 0.1 * n * a, 0.05 * n * a, -0.08 * n * a);
      s.masses.assign(s.size(), 1.0);
      bd::LennardJones lj;
      lj.cutoff = 2.5;
      lj.shift = false;  // as bench/in.lj
      bd::VerletOptions p;
      p.dt = 0.005;
      p.temperature = 1.44;
      p.seed = 87287;
      r = run(lj, s, p);
    } else if ((name == "eam" || name == "eam_tri") && argc == 4) {
      const bd::Eam eam(argv[3]);
      const std::string element = eam.elements().front();
      const int n = name == "eam" ? 6 : 5;
      bs::HostSystem s = bd::fcc_crystal({n, n, n}, 3.615, element, 1, 0.02, 11);
      if (name == "eam_tri")
        bd::tilt_cell(s, 0.1 * n * 3.615, -0.06 * n * 3.615, 0.04 * n * 3.615);
      s.masses.assign(s.size(), eam.mass(element));
      bd::VerletOptions p;
      p.units = bd::Units::metal();
      p.dt = 0.001;
      p.temperature = 300;
      p.seed = 4928459;
      r = run(eam, s, p);
    } else {
      std::fprintf(stderr, "unknown case '%s' (or an eam case without its file)\n", argv[1]);
      return 2;
    }
    bs::write_lammps_data(dir + "/" + name + ".data", r.start);
    bs::write_xyz_file(dir + "/" + name + ".xyz", {r.start}, {}, r.mvv2e);
    std::printf("step0 %.17g", r.energy);
    for (double w : r.virial)
      std::printf(" %.17g", w);
    std::printf("\n");
    for (std::size_t i = 0; i < r.forces.size() / 3; ++i)
      std::printf("force %zu %.17g %.17g %.17g\n", i + 1, r.forces[3 * i], r.forces[3 * i + 1],
                  r.forces[3 * i + 2]);
    std::printf("step100 %.17g %.17g\n", r.pe100, r.ke100);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "baton_md_case: %s\n", e.what());
    return 1;
  }
  return 0;
}
