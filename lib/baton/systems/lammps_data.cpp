#include "baton/systems/lammps_data.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "baton/core/error.hpp"

namespace baton::systems {

std::vector<std::string> lammps_types(const HostSystem& s) {
  std::vector<std::string> types;
  for (const std::string& label : s.species)
    if (std::find(types.begin(), types.end(), label) == types.end())
      types.push_back(label);
  return types;
}

void write_lammps_data(const std::string& path, const HostSystem& s, double margin) {
  const std::string who = "baton::systems::write_lammps_data: " + path + ": ";
  const auto& h = s.cell;
  double lo[3] = {0, 0, 0}, hi[3] = {h[0], h[4], h[8]};
  if (s.has_cell()) {
    if (h[1] != 0 || h[2] != 0 || h[5] != 0)
      throw Error(
          who + "system " + std::to_string(s.id) +
          " has a cell LAMMPS cannot take as is (it needs a along x and b in the xy plane)");
  } else {
    for (int d = 0; d < 3; ++d) {
      lo[d] = 1e300;
      hi[d] = -1e300;
      for (std::size_t i = 0; i < s.size(); ++i) {
        lo[d] = std::min(lo[d], s.positions[3 * i + static_cast<std::size_t>(d)] - margin);
        hi[d] = std::max(hi[d], s.positions[3 * i + static_cast<std::size_t>(d)] + margin);
      }
    }
  }
  const std::vector<std::string> types = lammps_types(s);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "w"), &std::fclose);
  if (!file)
    throw Error(who + "cannot open it for writing");
  std::FILE* f = file.get();
  std::fprintf(f, "Baton system %lld\n\n%zu atoms\n%zu atom types\n\n",
               static_cast<long long>(s.id), s.size(), types.size());
  const char* axes[3] = {"x", "y", "z"};
  for (int d = 0; d < 3; ++d)
    std::fprintf(f, "%.17g %.17g %slo %shi\n", lo[d], hi[d], axes[d], axes[d]);
  if (s.has_cell())
    std::fprintf(f, "%.17g %.17g %.17g xy xz yz\n", h[3], h[6], h[7]);
  std::fprintf(f, "\nMasses\n\n");
  for (std::size_t t = 0; t < types.size(); ++t) {
    double mass = 1;
    for (std::size_t i = 0; i < s.size() && !s.masses.empty(); ++i)
      if (s.species[i] == types[t]) {
        mass = s.masses[i];
        break;
      }
    std::fprintf(f, "%zu %.17g # %s\n", t + 1, mass, types[t].c_str());
  }
  std::fprintf(f, "\nAtoms # atomic\n\n");
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto type = std::find(types.begin(), types.end(), s.species[i]) - types.begin() + 1;
    std::fprintf(f, "%zu %ld %.17g %.17g %.17g\n", i + 1, static_cast<long>(type),
                 s.positions[3 * i], s.positions[3 * i + 1], s.positions[3 * i + 2]);
  }
  if (s.velocities.size() == 3 * s.size()) {
    std::fprintf(f, "\nVelocities\n\n");
    for (std::size_t i = 0; i < s.size(); ++i)
      std::fprintf(f, "%zu %.17g %.17g %.17g\n", i + 1, s.velocities[3 * i],
                   s.velocities[3 * i + 1], s.velocities[3 * i + 2]);
  }
  if (std::ferror(f))
    throw Error(who + "writing failed");
}

}  // namespace baton::systems
