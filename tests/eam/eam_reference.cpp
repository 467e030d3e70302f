// baton_eam_reference POTENTIAL CLUSTER.xyz: Baton's host EAM reference (eam_compute_host) on the
// first frame of an XYZ file, printed with 17 significant digits for tests/eam/compare_lammps.py.
//
// Output lines:
//   elements <names of the potential's elements>
//   energy <E>            embedding <sum F>      pair <sum phi>
//   virial <xx yy zz xy xz yz>
//   rho_max <largest host density>  rhomax <the F table's end>
//   atom <i> <fx fy fz> <per-atom energy> <rho_i>     (one line per atom, in file order)
#include <baton/core/error.hpp>
#include <baton/dynamics/eam_tables.hpp>
#include <baton/systems/host_system.hpp>
#include <baton/systems/xyz.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s POTENTIAL CLUSTER.xyz\n", argv[0]);
    return 2;
  }
  try {
    namespace bd = baton::dynamics;
    namespace bs = baton::systems;
    const bd::EamTables tables = bd::read_eam_file(argv[1]);
    const std::vector<bs::HostSystem> frames = bs::read_xyz_file(argv[2]);
    if (frames.empty()) {
      std::fprintf(stderr, "%s: no frame\n", argv[2]);
      return 1;
    }
    const bd::EamHostResult r = bd::eam_compute_host(tables, frames.front());
    std::printf("elements");
    for (const auto& e : tables.elements)
      std::printf(" %s", e.c_str());
    std::printf("\nenergy %.17g\nembedding %.17g\npair %.17g\n", r.energy, r.embedding_energy,
                r.pair_energy);
    std::printf("virial %.17g %.17g %.17g %.17g %.17g %.17g\n", r.virial[0], r.virial[1],
                r.virial[2], r.virial[3], r.virial[4], r.virial[5]);
    std::printf("rho_max %.17g\nrhomax %.17g\n",
                r.rho.empty() ? 0.0 : *std::max_element(r.rho.begin(), r.rho.end()), tables.rhomax);
    for (std::size_t i = 0; i < r.rho.size(); ++i)
      std::printf("atom %zu %.17g %.17g %.17g %.17g %.17g\n", i, r.forces[3 * i],
                  r.forces[3 * i + 1], r.forces[3 * i + 2], r.atom_energy[i], r.rho[i]);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
