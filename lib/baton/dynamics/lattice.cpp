#include "baton/dynamics/lattice.hpp"

#include <cmath>

#include "baton/core/error.hpp"
#include "baton/dynamics/random.hpp"

namespace baton::dynamics {

systems::HostSystem fcc_crystal(std::array<int, 3> cells, double a, const std::string& species,
                                std::int64_t id, double jitter, std::uint64_t seed) {
  if (cells[0] < 1 || cells[1] < 1 || cells[2] < 1 || !(a > 0) || !std::isfinite(a) ||
      !(jitter >= 0) || !std::isfinite(jitter))
    throw Error(
        "baton::dynamics::fcc_crystal: need at least 1 unit cell per axis, a lattice "
        "constant > 0 and a jitter >= 0 (got " +
        std::to_string(cells[0]) + "x" + std::to_string(cells[1]) + "x" + std::to_string(cells[2]) +
        ", a = " + std::to_string(a) + ", jitter = " + std::to_string(jitter) + ")");
  static const double basis[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
  systems::HostSystem s;
  s.id = id;
  s.cell = {cells[0] * a, 0, 0, 0, cells[1] * a, 0, 0, 0, cells[2] * a};
  s.pbc = {true, true, true};
  const std::size_t n = 4 * static_cast<std::size_t>(cells[0]) * cells[1] * cells[2];
  s.species.assign(n, species);
  s.positions.reserve(3 * n);
  std::int64_t atom = 0;
  for (int k = 0; k < cells[2]; ++k)
    for (int j = 0; j < cells[1]; ++j)
      for (int i = 0; i < cells[0]; ++i)
        for (const auto& b : basis) {
          const double site[3] = {(i + b[0]) * a, (j + b[1]) * a, (k + b[2]) * a};
          for (int d = 0; d < 3; ++d) {
            const double u = jitter > 0 ? random_uniform(seed, id, 0, atom, d) : 0.5;
            s.positions.push_back(site[d] + jitter * (2 * u - 1));
          }
          ++atom;
        }
  return s;
}

void tilt_cell(systems::HostSystem& s, double xy, double xz, double yz) {
  const auto& h = s.cell;
  if (!s.has_cell() || h[1] != 0 || h[2] != 0 || h[3] != 0 || h[5] != 0 || h[6] != 0 || h[7] != 0)
    throw Error("baton::dynamics::tilt_cell: system " + std::to_string(s.id) +
                " has no orthorhombic cell to tilt");
  const double lx = h[0], ly = h[4], lz = h[8];
  for (std::size_t i = 0; i + 2 < s.positions.size(); i += 3) {
    const double f1 = s.positions[i + 1] / ly, f2 = s.positions[i + 2] / lz;
    s.positions[i] += f1 * xy + f2 * xz;
    s.positions[i + 1] += f2 * yz;
  }
  s.cell = {lx, 0, 0, xy, ly, 0, xz, yz, lz};
}

}  // namespace baton::dynamics
