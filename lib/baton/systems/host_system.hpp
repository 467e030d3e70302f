#pragma once
/// \file
/// One atomic system on the host: what the extended-XYZ reader returns and the writer takes, and
/// what the pipeline's input and results are made of.

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace baton::systems {

/// One system of `size()` atoms: a cluster, or a periodic cell. Positions and velocities are xyz
/// triples, atom by atom.
struct HostSystem {
  std::int64_t id = 0;  ///< system id, kept through every stage
  /// Cell vectors a, b, c as rows: a_x a_y a_z b_x b_y b_z c_x c_y c_z (extended XYZ's `Lattice`).
  /// All zero: no cell (an isolated cluster).
  std::array<double, 9> cell{};
  /// Periodic along a, b, c (extended XYZ's `pbc`); only with a cell.
  std::array<bool, 3> pbc{false, false, false};
  std::vector<std::string> species;  ///< one label per atom (LJ treats all atoms alike)
  std::vector<double> positions;     ///< 3 * size()
  std::vector<double> velocities;    ///< 3 * size(), or empty (zero)
  std::vector<double> masses;        ///< size(), or empty (all 1)
  /// size(), or empty (every atom moves): false for a fixed atom, which no stage moves (its forces
  /// are zeroed, its velocity is 0, fmax leaves it out). ASE's FixAtoms, its `move_mask` column.
  std::vector<bool> move_mask;
  double energy = std::numeric_limits<double>::quiet_NaN();  ///< potential energy, if known
  /// The conserved quantity of the last stage that ran it, where that stage has one (NVE,
  /// Nose-Hoover; SystemsBatch::conserved), in energy units; NaN otherwise.
  double conserved = std::numeric_limits<double>::quiet_NaN();
  double fmax = std::numeric_limits<double>::quiet_NaN();  ///< largest atom force norm, if known
  /// Pair virial sum r_ij (x) F_ij: xx, yy, zz, xy, xz, yz (energy units), if known (NaN: not).
  std::array<double, 6> virial{
      std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN(),
      std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN(),
      std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
  std::vector<std::int64_t>
      stage_steps;  ///< steps taken in each stage, in stage order (may be empty)
  /// Its numbers broke in some stage (non-finite energy, forces or positions): it was not stepped
  /// further, and its energy and positions are not a result (extended XYZ: `failed=T`).
  bool failed = false;
  /// Why it failed ("non-finite forces", ...; extended XYZ: `failure`), when known.
  std::string failure;

  std::size_t size() const noexcept { return species.size(); }
  /// True when the system has a cell (some cell entry is not zero).
  bool has_cell() const noexcept {
    for (double c : cell)
      if (c != 0)
        return true;
    return false;
  }
};

/// Species labels as small integers (the batch stores the integer). Labels get indices in order of
/// first use, so every rank that reads the same input builds the same table.
class SpeciesTable {
 public:
  /// The index of `label`, added if new.
  int index(const std::string& label) {
    for (std::size_t i = 0; i < names_.size(); ++i)
      if (names_[i] == label)
        return static_cast<int>(i);
    names_.push_back(label);
    return static_cast<int>(names_.size()) - 1;
  }
  /// The label of index i ("X" for an index the table does not have).
  const std::string& name(int i) const {
    static const std::string unknown = "X";
    return i >= 0 && static_cast<std::size_t>(i) < names_.size() ? names_[i] : unknown;
  }
  const std::vector<std::string>& names() const noexcept { return names_; }

 private:
  std::vector<std::string> names_;
};

}  // namespace baton::systems
