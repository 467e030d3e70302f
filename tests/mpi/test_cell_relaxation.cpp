// Variable-cell FIRE (FireOptions::cell): a strained, sheared, jittered Lennard-Jones crystal
// relaxes to the perfect fcc crystal at zero pressure, whose lattice constant the test finds on
// its own (a scan of the energy per atom of perfect crystals); a target pressure is reached;
// hydrostatic, constant-volume and masked strains keep what they promise; clusters beside
// crystals relax their atoms only; a cell squeezed below the cutoff fails the system.
#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <array>
#include <baton/dynamics/clusters.hpp>
#include <baton/dynamics/fire.hpp>
#include <baton/dynamics/forces.hpp>
#include <baton/dynamics/lattice.hpp>
#include <baton/dynamics/lennard_jones.hpp>
#include <baton/systems/cell.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "dynamics_batch.hpp"
#include "mpi_doctest.hpp"

namespace bd = baton::dynamics;
namespace bs = baton::systems;
using baton::test::Batch;

namespace {

/// The configurational pressure tensor W / V (xx yy zz xy xz yz) of a relaxed system.
std::array<double, 6> pressure_tensor(const bs::HostSystem& s) {
  std::array<double, 6> p{};
  const double v = bs::cell_volume(s.cell);
  for (std::size_t c = 0; c < 6; ++c)
    p[c] = s.virial[c] / v;
  return p;
}

/// The energy per atom of a perfect 4x4x4 fcc crystal of lattice constant a.
double energy_per_atom(const bd::LennardJones& lj, double a) {
  Batch b({bd::fcc_crystal({4, 4, 4}, a, "Ar")});
  bd::compute_forces(lj, b.batch, 0, 1);
  const bs::HostSystem s = b.systems().front();
  return s.energy / static_cast<double>(s.size());
}

/// The pressure (the virial's trace / 3V) of a perfect 4x4x4 fcc crystal of lattice constant a.
double crystal_pressure(const bd::LennardJones& lj, double a) {
  Batch b({bd::fcc_crystal({4, 4, 4}, a, "Ar")});
  bd::compute_forces(lj, b.batch, 0, 1);
  const auto p = pressure_tensor(b.systems().front());
  return (p[0] + p[1] + p[2]) / 3;
}

/// The lattice constant of zero pressure, where the energy per atom is least (bisection on
/// [1.45, 1.7], where the pressure falls from positive to negative).
double equilibrium_lattice(const bd::LennardJones& lj) {
  double lo = 1.45, hi = 1.7;
  REQUIRE(crystal_pressure(lj, lo) > 0);
  REQUIRE(crystal_pressure(lj, hi) < 0);
  for (int k = 0; k < 60 && hi - lo > 1e-14; ++k) {
    const double mid = (lo + hi) / 2;
    (crystal_pressure(lj, mid) > 0 ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

/// A 4x4x4 fcc crystal of lattice constant a, jittered, strained by `strain` (xx yy zz) and
/// tilted by `tilt` (xy xz yz, in units of the cell's side).
bs::HostSystem strained_crystal(double a, std::array<double, 3> strain, std::array<double, 3> tilt,
                                std::int64_t id) {
  bs::HostSystem s = bd::fcc_crystal({4, 4, 4}, a, "Ar", id, 0.03, 7);
  for (std::size_t i = 0; i < s.size(); ++i)
    for (std::size_t d = 0; d < 3; ++d)
      s.positions[3 * i + d] *= 1 + strain[d];
  for (std::size_t d = 0; d < 3; ++d)
    s.cell[4 * d] *= 1 + strain[d];
  const double side = 4 * a;
  bd::tilt_cell(s, tilt[0] * side, tilt[1] * side, tilt[2] * side);
  return s;
}

bd::FireOptions cell_fire() {
  bd::FireOptions p;
  p.fmax = 1e-8;
  p.max_steps = 20000;
  p.cell.enabled = true;
  return p;
}

bd::LennardJones lj25() {
  bd::LennardJones lj;
  lj.cutoff = 2.5;
  return lj;
}

}  // namespace

TEST_CASE("variable-cell FIRE: a strained, sheared LJ crystal relaxes to the perfect crystal") {
  const bd::LennardJones lj = lj25();
  const double a0 = equilibrium_lattice(lj);
  const double e0 = energy_per_atom(lj, a0);
  MESSAGE("perfect fcc, cutoff 2.5: a0 " << a0 << ", energy per atom " << e0);
  // FIRE, and FIRE 2.0 (whose move back strains the cell back too, then restarts from new forces).
  for (const bool fire2 : {false, true}) {
    CAPTURE(fire2);
    bd::FireStage<bd::LennardJones> fire(
        lj, fire2 ? bd::FireOptions::fire2(0.05, cell_fire()) : cell_fire());
    Batch b({strained_crystal(a0, {0.04, -0.02, 0.01}, {0.05, -0.03, 0.02}, 0),
             strained_crystal(a0, {-0.03, 0.0, 0.03}, {0.0, 0.04, 0.0}, 1)});
    baton::test::run(fire, b, 500);
    for (const bs::HostSystem& s : b.systems()) {
      CHECK_FALSE(s.failed);
      const double n = static_cast<double>(s.size());
      const double volume = bs::cell_volume(s.cell) / n;
      const auto p = pressure_tensor(s);
      INFO("volume per atom " << volume << " (perfect crystal " << a0 * a0 * a0 / 4 << "), energy "
                              << s.energy / n << " (" << e0 << "), pressure " << p[0] << " " << p[1]
                              << " " << p[2] << " " << p[3] << " " << p[4] << " " << p[5]);
      CHECK(s.fmax <= 1e-8);
      CHECK(std::abs(volume / (a0 * a0 * a0 / 4) - 1) < 1e-7);
      CHECK(std::abs(s.energy / n / e0 - 1) < 1e-10);
      for (double x : p)
        CHECK(std::abs(x) < 1e-7);
    }
    // The host's copy of the cells (what enter()'s cutoff check and the hand-off to the next
    // stage read) is the relaxed cell, not the one the system arrived with.
    const std::vector<bs::HostSystem> relaxed = b.systems();
    for (std::size_t s = 0; s < relaxed.size(); ++s)
      CHECK(b.batch.host_slots()[s].cell == relaxed[s].cell);
    for (auto steps : b.steps()) {
      MESSAGE(std::string(fire2 ? "FIRE 2.0" : "FIRE") << " steps " << steps);
      CHECK(steps < 1000);
    }
  }
}

TEST_CASE("variable-cell FIRE: a target pressure, and the cell held where the options say") {
  const bd::LennardJones lj = lj25();
  const double a0 = 1.5496;  // about the perfect crystal's
  const bs::HostSystem start = strained_crystal(a0, {0.03, -0.02, 0.02}, {0.04, 0.0, -0.02}, 0);

  SUBCASE("a hydrostatic target pressure of 2: the pressure is 2, the volume smaller") {
    bd::FireOptions p = cell_fire();
    p.cell.set_pressure(2.0);
    bd::FireStage<bd::LennardJones> fire(lj, p);
    Batch b({start});
    baton::test::run(fire, b, 500);
    const bs::HostSystem s = b.systems().front();
    CHECK_FALSE(s.failed);
    const auto w = pressure_tensor(s);
    INFO("pressure tensor " << w[0] << " " << w[1] << " " << w[2] << " " << w[3] << " " << w[4]
                            << " " << w[5]);
    for (int c = 0; c < 3; ++c)
      CHECK(std::abs(w[c] - 2.0) < 1e-7);
    for (int c = 3; c < 6; ++c)
      CHECK(std::abs(w[c]) < 1e-7);
    CHECK(bs::cell_volume(s.cell) < 0.97 * bs::cell_volume(start.cell));
  }
  SUBCASE("hydrostatic strain: the cell keeps its shape") {
    bd::FireOptions p = cell_fire();
    p.cell.strain = bd::CellRelaxation::Strain::hydrostatic;
    bd::FireStage<bd::LennardJones> fire(lj, p);
    Batch b({start});
    baton::test::run(fire, b, 500);
    const bs::HostSystem s = b.systems().front();
    CHECK_FALSE(s.failed);
    const double scale = s.cell[0] / start.cell[0];
    for (std::size_t k = 0; k < 9; ++k)
      CHECK(s.cell[k] == doctest::Approx(scale * start.cell[k]).epsilon(1e-12));
    const auto w = pressure_tensor(s);
    CHECK(std::abs(w[0] + w[1] + w[2]) < 3e-7);  // the mean pressure relaxed, not the shear
    CHECK(std::abs(w[0] - w[1]) > 1e-3);
  }
  SUBCASE("constant volume: the volume stays, the stress becomes isotropic") {
    bd::FireOptions p = cell_fire();
    p.cell.strain = bd::CellRelaxation::Strain::constant_volume;
    bd::FireStage<bd::LennardJones> fire(lj, p);
    Batch b({start});
    baton::test::run(fire, b, 500);
    const bs::HostSystem s = b.systems().front();
    CHECK_FALSE(s.failed);
    CHECK(bs::cell_volume(s.cell) == doctest::Approx(bs::cell_volume(start.cell)).epsilon(1e-12));
    const auto w = pressure_tensor(s);
    INFO("pressure tensor " << w[0] << " " << w[1] << " " << w[2] << " " << w[3] << " " << w[4]
                            << " " << w[5]);
    CHECK(std::abs(w[0] - w[1]) < 3e-7);
    CHECK(std::abs(w[0] - w[2]) < 3e-7);
    for (int c = 3; c < 6; ++c)
      CHECK(std::abs(w[c]) < 1e-7);
    CHECK(std::abs(w[0]) > 1e-3);  // the volume's pressure is left
  }
  SUBCASE("a mask holding zz, yz and xz: a c vector along z stays bit for bit") {
    bd::FireOptions p = cell_fire();
    p.cell.mask = {true, true, false, false, false, true};  // xx yy zz yz xz xy
    bd::FireStage<bd::LennardJones> fire(lj, p);
    // c = (0, 0, lz): strains with no zz, yz or xz component leave it as it is.
    const bs::HostSystem start = strained_crystal(a0, {0.03, -0.02, 0.02}, {0.04, 0.0, 0.0}, 0);
    Batch b({start});
    baton::test::run(fire, b, 500);
    const bs::HostSystem s = b.systems().front();
    CHECK_FALSE(s.failed);
    for (std::size_t k = 6; k < 9; ++k)
      CHECK(s.cell[k] == start.cell[k]);
    const auto w = pressure_tensor(s);
    CHECK(std::abs(w[0]) < 1e-7);
    CHECK(std::abs(w[1]) < 1e-7);
    CHECK(std::abs(w[3]) < 1e-7);
    CHECK(std::abs(w[2]) > 1e-3);
  }
}

TEST_CASE("variable-cell FIRE: clusters relax their atoms only; a collapsing cell fails") {
  const bd::LennardJones lj = lj25();
  bd::FireOptions p = cell_fire();
  p.cell.set_pressure(5.0);
  bd::FireStage<bd::LennardJones> fire(lj, p);
  // A crystal just wider than twice the cutoff (3 cells of 1.7: 5.1), squeezed at pressure 5
  // towards a lattice constant near 1.5, and a cluster.
  const bs::HostSystem wide = bd::fcc_crystal({3, 3, 3}, 1.7, "Ar", 0, 0.01, 3);
  const bs::HostSystem cluster = bd::perturbed_cluster(13, 1, 42, 0.05, baton::test::lj_nn);
  Batch b({wide, cluster});
  baton::test::run(fire, b, 500);
  const std::vector<bs::HostSystem> out = b.systems();
  CHECK(out[0].failed);
  CHECK(out[0].failure == bs::failure_text(static_cast<int>(bs::Failure::cell)));
  // The failed crystal's cell is the last one that fit: still at least twice the cutoff wide.
  for (double w : bs::cell_widths(out[0].cell))
    CHECK(w >= 5.0);
  CHECK_FALSE(out[1].failed);
  CHECK(out[1].fmax <= 1e-8);
  CHECK(out[1].cell == cluster.cell);
}

TEST_CASE("variable-cell FIRE with fixed atoms: they keep their fractional coordinates") {
  // Every ninth atom fixed (ASE's FixAtoms): the cell still relaxes to zero pressure, and a fixed
  // atom moves only with the cell's strain.
  const bd::LennardJones lj = lj25();
  bs::HostSystem start = strained_crystal(1.5496, {0.03, -0.02, 0.02}, {0.04, 0.0, -0.02}, 0);
  start.move_mask.assign(start.size(), true);
  for (std::size_t i = 0; i < start.size(); i += 9)
    start.move_mask[i] = false;
  bd::FireOptions p = cell_fire();
  p.fmax = 1e-7;
  bd::FireStage<bd::LennardJones> fire(lj, p);
  Batch b({start});
  baton::test::run(fire, b, 500);
  const bs::HostSystem s = b.systems().front();
  CHECK_FALSE(s.failed);
  CHECK(s.fmax <= 1e-7);
  const auto w = pressure_tensor(s);
  for (double x : w)
    CHECK(std::abs(x) < 1e-6);
  const bs::CellImage before = bs::make_cell_image(start.cell.data(), 7);
  const bs::CellImage after = bs::make_cell_image(s.cell.data(), 7);
  for (std::size_t i = 0; i < start.size(); i += 9)
    for (int k = 0; k < 3; ++k) {
      double f0 = 0, f1 = 0;
      for (int d = 0; d < 3; ++d) {
        f0 += start.positions[3 * i + static_cast<std::size_t>(d)] * before.inv[3 * d + k];
        f1 += s.positions[3 * i + static_cast<std::size_t>(d)] * after.inv[3 * d + k];
      }
      CHECK(f1 == doctest::Approx(f0).epsilon(1e-12));
      CHECK(s.velocities[3 * i + static_cast<std::size_t>(k)] == 0.0);
    }
}

TEST_CASE("variable-cell FIRE: bad options are refused, naming them") {
  bd::FireOptions p = cell_fire();
  p.cell.strain = bd::CellRelaxation::Strain::constant_volume;
  p.cell.mask[2] = false;
  CHECK_THROWS_WITH_AS(bd::validate(p), doctest::Contains("cell.mask"), baton::Error);
  p = cell_fire();
  p.cell.pressure[0] = std::nan("");
  CHECK_THROWS_WITH_AS(bd::validate(p), doctest::Contains("cell.pressure"), baton::Error);
  p = cell_fire();
  p.cell.factor = -1;
  CHECK_THROWS_WITH_AS(bd::validate(p), doctest::Contains("cell.factor"), baton::Error);
}
