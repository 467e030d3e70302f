#pragma once
/// \file
/// Built-in periodic input: fcc crystals in orthorhombic or tilted (triclinic) cells, the starting
/// point of the liquids and metals the benchmarks and the LAMMPS comparisons use.

#include <array>
#include <cstdint>
#include <string>

#include "baton/systems/host_system.hpp"

namespace baton::dynamics {

/// An fcc crystal of cells[0] x cells[1] x cells[2] cubic unit cells of side `a`, labelled
/// `species`, in an orthorhombic cell periodic along all three axes. Atoms are ordered by unit cell
/// (x fastest, then y, then z), 4 per cell at (0,0,0), (1/2,1/2,0), (1/2,0,1/2), (0,1/2,1/2) of it.
/// Each coordinate moves by a value drawn uniformly from [-jitter, jitter) by hashing (seed, id,
/// atom, axis). Throws baton::Error for cells < 1, a not positive and finite, or jitter < 0.
systems::HostSystem fcc_crystal(std::array<int, 3> cells, double a, const std::string& species,
                                std::int64_t id = 0, double jitter = 0, std::uint64_t seed = 1);

/// Tilts an orthorhombic cell into LAMMPS' triclinic form a = (lx, 0, 0), b = (xy, ly, 0),
/// c = (xz, yz, lz), carrying every atom along (its fractional coordinates stay the same).
/// Throws baton::Error unless the system has an orthorhombic cell.
void tilt_cell(systems::HostSystem& s, double xy, double xz, double yz);

}  // namespace baton::dynamics
