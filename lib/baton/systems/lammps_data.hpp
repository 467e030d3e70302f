#pragma once
/// \file
/// LAMMPS data files (`atom_style atomic`) of Baton systems, for running LAMMPS on exactly the same
/// state (the comparison tests and baton-bench). Numbers are written with 17 significant digits.

#include <string>
#include <vector>

#include "baton/systems/host_system.hpp"

namespace baton::systems {

/// Writes `s` as a LAMMPS data file at `path`: its cell as the box (LAMMPS' triclinic form a = (lx,
/// 0, 0), b = (xy, ly, 0), c = (xz, yz, lz), origin 0; a cell of another orientation is an error),
/// or for a cluster a box `margin` beyond its atoms on every side; one atom type per species,
/// numbered in order of first appearance, with its mass (1 when the system has none); Atoms and
/// Velocities with ids from 1 in the system's order. Throws baton::Error naming the path on
/// failure.
void write_lammps_data(const std::string& path, const HostSystem& s, double margin = 10);

/// The species of `s` in the order write_lammps_data() numbers their atom types (1, 2, ...).
std::vector<std::string> lammps_types(const HostSystem& s);

}  // namespace baton::systems
