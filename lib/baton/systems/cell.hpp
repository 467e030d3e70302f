#pragma once
/// \file
/// Periodic cells: the geometry a kernel needs for minimum images, and the host-side checks and
/// wrapping. A cell is three vectors a, b, c stored as rows of a 3x3 matrix H (a_x a_y a_z b_x
/// ...), so that a position is x = s H for fractional coordinates s. Each axis may be periodic or
/// not; a system without a cell (all of H zero) is an isolated cluster.

#include <Kokkos_Core.hpp>
#include <array>
#include <optional>
#include <string>

#include "baton/systems/host_system.hpp"

namespace baton::systems {

/// What the pair loop needs of a system's cell, computed once per system and kernel.
struct CellImage {
  double h[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};    ///< the cell, rows a, b, c
  double inv[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};  ///< H^-1
  bool periodic[3] = {false, false, false};
  bool orthorhombic = true;  ///< H diagonal: each axis on its own

  /// Makes `d` (= x_i - x_j) the minimum image over the periodic axes. Exact for every pair
  /// closer than half the cell's smallest periodic width, which cutoff checks guarantee.
  KOKKOS_INLINE_FUNCTION void minimum_image(double& dx, double& dy, double& dz) const {
    if (orthorhombic) {
      if (periodic[0])
        dx -= h[0] * nearest(dx * inv[0]);
      if (periodic[1])
        dy -= h[4] * nearest(dy * inv[4]);
      if (periodic[2])
        dz -= h[8] * nearest(dz * inv[8]);
      return;
    }
    double f[3];
    for (int k = 0; k < 3; ++k) {
      f[k] = dx * inv[k] + dy * inv[3 + k] + dz * inv[6 + k];
      if (periodic[k])
        f[k] -= nearest(f[k]);
    }
    dx = f[0] * h[0] + f[1] * h[3] + f[2] * h[6];
    dy = f[0] * h[1] + f[1] * h[4] + f[2] * h[7];
    dz = f[0] * h[2] + f[1] * h[5] + f[2] * h[8];
  }

  /// The integer nearest to f (halves away from zero), as a double.
  KOKKOS_INLINE_FUNCTION static double nearest(double f) {
    return static_cast<double>(static_cast<long long>(f >= 0 ? f + 0.5 : f - 0.5));
  }
};

/// The cell image of a system whose cell is `h` (rows) and periodic axes the bits of `pbc_bits`
/// (bit k: axis k). Host or device.
KOKKOS_INLINE_FUNCTION CellImage make_cell_image(const double* h, int pbc_bits) {
  CellImage c;
  for (int k = 0; k < 9; ++k)
    c.h[k] = h[k];
  for (int k = 0; k < 3; ++k)
    c.periodic[k] = (pbc_bits >> k) & 1;
  c.orthorhombic = h[1] == 0 && h[2] == 0 && h[3] == 0 && h[5] == 0 && h[6] == 0 && h[7] == 0;
  const double det = h[0] * (h[4] * h[8] - h[5] * h[7]) - h[1] * (h[3] * h[8] - h[5] * h[6]) +
                     h[2] * (h[3] * h[7] - h[4] * h[6]);
  if (det == 0)
    return c;
  const double r = 1 / det;
  c.inv[0] = (h[4] * h[8] - h[5] * h[7]) * r;
  c.inv[1] = (h[2] * h[7] - h[1] * h[8]) * r;
  c.inv[2] = (h[1] * h[5] - h[2] * h[4]) * r;
  c.inv[3] = (h[5] * h[6] - h[3] * h[8]) * r;
  c.inv[4] = (h[0] * h[8] - h[2] * h[6]) * r;
  c.inv[5] = (h[2] * h[3] - h[0] * h[5]) * r;
  c.inv[6] = (h[3] * h[7] - h[4] * h[6]) * r;
  c.inv[7] = (h[1] * h[6] - h[0] * h[7]) * r;
  c.inv[8] = (h[0] * h[4] - h[1] * h[3]) * r;
  if (c.orthorhombic)
    for (int k = 0; k < 3; ++k)
      c.inv[4 * k] = 1 / h[4 * k];  // exactly 1/L, as the orthorhombic path uses it
  return c;
}

/// The longest periodic cell vector a system may have (length units). Atoms are moved by whole
/// cell vectors (neighbour lists, wrap_positions), which rounds their coordinates to about
/// L * 2^-53 for a vector of length L: 1.1e-10 at 1e6, where forces are still good to fmax 1e-6
/// (a 108-atom Lennard-Jones chunk straddling the origin relaxes as it does without a cell, its
/// energy 6e-10 off), but 1.1e-4 at 1e12 (it never converges, at a wrong energy). cell_problem()
/// rejects longer periodic vectors.
inline constexpr double max_cell_length = 1e6;

/// pbc flags as bits (bit k: axis k periodic).
inline int pbc_bits(const std::array<bool, 3>& pbc) {
  return (pbc[0] ? 1 : 0) | (pbc[1] ? 2 : 0) | (pbc[2] ? 4 : 0);
}

/// The cell's volume |det H|.
double cell_volume(const std::array<double, 9>& h);

/// Distances between opposite faces of the cell: volume / |b x c|, volume / |c x a|, volume / |a x
/// b|.
std::array<double, 3> cell_widths(const std::array<double, 9>& h);

/// What is wrong with a system's cell ("has a periodic axis but no cell", "has a cell of zero
/// volume", a periodic vector longer than max_cell_length, ...), or "" when it is usable.
std::string cell_problem(const HostSystem& s);

/// "" when pairs up to `cutoff` see at most one image of each atom (cutoff <= half of every
/// periodic width), otherwise what is wrong ("cutoff 5 is more than half the cell's width 8.2
/// along b (widths 10, 8.2, 10)"). A cluster (no periodic axis) is always fine.
std::string cutoff_problem(const std::array<double, 9>& h, int pbc_bits, double cutoff);

/// The stress of a system periodic along a, b and c: -(virial + kinetic) / volume, xx yy zz xy xz
/// yz in energy / length^3 (ASE's `stress`: positive when tensile, minus LAMMPS' pressure tensor).
/// The kinetic part is sum over atoms of m v (x) v times `mvv2e` (dynamics::Units::mvv2e: mass x
/// velocity^2 -> energy; masses 1 and velocities 0 where the system has none). Empty unless the
/// system is periodic along all three axes with a cell of non-zero volume and its virial is known.
std::optional<std::array<double, 6>> stress(const HostSystem& s, double mvv2e);

/// The pressure of a stress: minus the mean of its diagonal (LAMMPS' scalar pressure, in energy /
/// length^3).
double pressure(const std::array<double, 6>& stress);

/// Moves every atom into the cell along its periodic axes (fractional coordinates in [0, 1)).
void wrap_positions(HostSystem& s);

}  // namespace baton::systems
