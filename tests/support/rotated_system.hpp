#pragma once
// The barostats' frame tests (test_mtk, test_barostats): a tilted Lennard-Jones crystal with
// velocities, and the same system rotated by 30 degrees about z and 20 about x (cell, positions
// and velocities), so that a stage acting in the cell's own axes runs both the same.

#include <doctest/doctest.h>

#include <baton/dynamics/lattice.hpp>
#include <baton/dynamics/stage.hpp>
#include <baton/systems/cell.hpp>
#include <baton/systems/host_system.hpp>
#include <cmath>
#include <vector>

#include "dynamics_batch.hpp"

namespace baton::test {

struct RotatedPair {
  baton::systems::HostSystem system, turned;
  /// R = R_x(20) R_z(30), rows.
  double r[9];

  RotatedPair() {
    const double cz = std::cos(0.5235987755982988), sz = std::sin(0.5235987755982988);
    const double cx = std::cos(0.3490658503988659), sx = std::sin(0.3490658503988659);
    const double rows[9] = {cz, -sz, 0, cx * sz, cx * cz, -sx, sx * sz, sx * cz, cx};
    for (int k = 0; k < 9; ++k)
      r[k] = rows[k];
    system = baton::dynamics::fcc_crystal({3, 3, 3}, 1.56, "Ar", 0, 0.02, 5);
    baton::dynamics::tilt_cell(system, 0.3, -0.2, 0.1);
    system.velocities.resize(3 * system.size());
    for (std::size_t k = 0; k < system.velocities.size(); ++k)
      system.velocities[k] = 0.5 * std::sin(1.7 * static_cast<double>(k) + 0.3);
    turned = system;
    turned.positions = rotate(system.positions, false);
    turned.velocities = rotate(system.velocities, false);
    const std::vector<double> cell = rotate({system.cell.begin(), system.cell.end()}, false);
    for (std::size_t k = 0; k < 9; ++k)
      turned.cell[k] = cell[k];
  }

  /// R v for each 3-vector of `in` (back: R^T v).
  std::vector<double> rotate(const std::vector<double>& in, bool back) const {
    std::vector<double> out(in.size());
    for (std::size_t i = 0; i < in.size(); i += 3)
      for (int a = 0; a < 3; ++a) {
        double x = 0;
        for (int b = 0; b < 3; ++b)
          x += (back ? r[3 * b + a] : r[3 * a + b]) * in[i + static_cast<std::size_t>(b)];
        out[i + static_cast<std::size_t>(a)] = x;
      }
    return out;
  }

  /// Runs `stage` (of `steps` steps) on both, in one batch, and checks that the rotated one ran the
  /// same: its energy and volume (and conserved quantity, with `conserved`) are the other's, and
  /// so are its cell and velocities rotated back, to rounding (1e-9); and that the volume moved.
  /// Returns both systems at the end.
  std::vector<baton::systems::HostSystem> check_same_run(baton::dynamics::Stage& stage, int steps,
                                                         bool conserved) const {
    Batch b({system, turned});
    run(stage, b, steps);
    const auto out = b.systems();
    REQUIRE_FALSE(out[0].failed);
    REQUIRE_FALSE(out[1].failed);
    CHECK(out[1].energy == doctest::Approx(out[0].energy).epsilon(1e-9));
    if (conserved)
      CHECK(out[1].conserved == doctest::Approx(out[0].conserved).epsilon(1e-9));
    CHECK(baton::systems::cell_volume(out[1].cell) ==
          doctest::Approx(baton::systems::cell_volume(out[0].cell)).epsilon(1e-9));
    CHECK(baton::systems::cell_volume(out[0].cell) !=
          doctest::Approx(baton::systems::cell_volume(system.cell)).epsilon(1e-3));
    double dh = 0, dv = 0;
    differences(out[0], out[1], dh, dv);
    MESSAGE("rotated system: largest difference of the cell " << dh << ", of a velocity " << dv);
    CHECK(dh < 1e-9);
    CHECK(dv < 1e-9);
    return out;
  }

  /// The largest difference between `rotated`'s cell and velocities rotated back and `plain`'s.
  void differences(const baton::systems::HostSystem& plain,
                   const baton::systems::HostSystem& rotated, double& cell,
                   double& velocity) const {
    const std::vector<double> h = rotate({rotated.cell.begin(), rotated.cell.end()}, true);
    const std::vector<double> v = rotate(rotated.velocities, true);
    cell = velocity = 0;
    for (std::size_t k = 0; k < 9; ++k)
      cell = std::fmax(cell, std::abs(h[k] - plain.cell[k]));
    for (std::size_t k = 0; k < v.size(); ++k)
      velocity = std::fmax(velocity, std::abs(v[k] - plain.velocities[k]));
  }
};

}  // namespace baton::test
