// Barostats against the isothermal-isobaric ensemble. C-rescale (with CSVR) on an ideal gas, where
// the ensemble's volume distribution is known exactly (V^N exp(-P0 V / kT): mean (N + 1) kT / P0,
// variance (N + 1) (kT / P0)^2), and on a Lennard-Jones liquid, where the mean pressure must be
// the target (with the kinetic part of N_f = 3N - 3: <P + kT / V> = P0) and the kinetic energy
// canonical; aniso C-rescale on the ideal gas (the same volume distribution) and on a strained
// Lennard-Jones crystal (each axis's pressure the target, the strain gone), and in a rotated
// frame. Error bars: standard errors from the spread between independent systems (their own
// velocities and noise); every check is within 3 of them. Seeds fixed. (MTK: test_mtk.cpp.)
#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <baton/dynamics/crescale.hpp>
#include <baton/dynamics/lattice.hpp>
#include <baton/dynamics/lennard_jones.hpp>
#include <baton/dynamics/morse.hpp>
#include <baton/systems/cell.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "dynamics_batch.hpp"
#include "estimate.hpp"
#include "mpi_doctest.hpp"
#include "npt_samples.hpp"
#include "rotated_system.hpp"

namespace bd = baton::dynamics;
namespace bs = baton::systems;
using baton::test::Batch;
using baton::test::Estimate;
using baton::test::estimate;
using baton::test::means;
using baton::test::run_samples;
using baton::test::Sample;

namespace {

/// The C-rescale tests' ideal gas: `systems` systems of 32 atoms with a Morse potential of depth
/// 1e-9 and cutoff `cutoff` (forces negligible, finite at any distance). kT = 1, P0 = 0.1: <V> =
/// 330, var V = 3300. CSVR tau 0.1, C-rescale tau_p 0.5 with the ideal gas's compressibility 1 /
/// P0 = 10, dt 0.005. 1,000 steps of equilibration, then `samples` samples `every` steps apart.
/// Checks <V> and var V (each system's second moment about the exact mean: its variance without
/// the bias of measuring it about its own mean) within 3 standard errors, with error bars that
/// resolve the 3% of a missing kT / V. Returns the systems at the end.
std::vector<bs::HostSystem> check_ideal_gas(bd::CrescaleOptions::Coupling coupling, int systems,
                                            double cutoff, std::uint64_t seed, int samples,
                                            int every, const std::string& what) {
  bd::Morse gas;
  gas.depth = 1e-9;
  gas.cutoff = cutoff;
  bd::CrescaleOptions p;
  p.dt = 0.005;
  p.temperature = 1.0;
  p.tau = 0.1;
  p.pressure = 0.1;
  p.tau_p = 0.5;
  p.compressibility = 10;
  p.seed = seed;
  p.coupling = coupling;
  p.steps = 1000 + samples * every;
  bd::CrescaleStage<bd::Morse> stage(gas, p);
  std::vector<bs::HostSystem> in;
  for (int s = 0; s < systems; ++s)
    in.push_back(bd::fcc_crystal({2, 2, 2}, 3.46, "Ar", s, 0.3, static_cast<std::uint64_t>(s + 1)));
  Batch b(in);
  const auto all = run_samples(stage, b, 1000, samples, every);
  const Estimate mean = estimate(means(all, [](const Sample& x) { return x.volume; }));
  const Estimate variance =
      estimate(means(all, [](const Sample& x) { return (x.volume - 330) * (x.volume - 330); }));
  MESSAGE(what << ": <V> " << mean.mean << " +- " << mean.error << " (330), var V " << variance.mean
               << " +- " << variance.error << " (3300)");
  CHECK(std::abs(mean.mean - 330) <= 3 * mean.error);
  CHECK(std::abs(variance.mean - 3300) <= 3 * variance.error);
  CHECK(mean.error < 0.01 * 330);
  return b.systems();
}

/// C-rescale aniso on the LJ crystals (kT 0.3, P0 1): CSVR tau 0.1, tau_p 0.5, compressibility
/// 0.02, dt 0.005.
bd::CrescaleOptions crystal_aniso(long steps) {
  bd::CrescaleOptions p;
  p.dt = 0.005;
  p.temperature = 0.3;
  p.tau = 0.1;
  p.pressure = 1.0;
  p.tau_p = 0.5;
  p.compressibility = 0.02;
  p.coupling = bd::CrescaleOptions::Coupling::aniso;
  p.steps = steps;
  return p;
}

}  // namespace

TEST_CASE("C-rescale on an ideal gas: the volume's mean and variance of the NPT ensemble") {
  // check_ideal_gas() on 64 systems, cutoff 1, seed 7; a sample every 50 steps for 20,000 steps
  // (V decorrelates in about tau_p): 400 per system. Without the kT / V term of the drift the
  // mean would be N kT / P0 = 320, 3% low (about 15 standard errors).
  check_ideal_gas(bd::CrescaleOptions::Coupling::iso, 64, 1.0, 7, 400, 50, "ideal gas");
}

TEST_CASE(
    "C-rescale on a Lennard-Jones liquid: the target pressure and the canonical kinetic "
    "energy") {
  // 32 systems of 108 atoms (fcc 3 x 3 x 3 at density 0.675, about the liquid's at this state
  // point, jittered), cutoff 2.5, neighbour lists (built again as the atoms move and the cell
  // strains), kT = 1.2, P0 = 1. CSVR tau 0.1, C-rescale tau_p 0.5, compressibility 0.1, dt 0.005,
  // seed 11. 2,000 steps of equilibration, then a sample every 20 steps for 10,000 steps (measured
  // in windows of 1,000 steps from the start: steps 1,000 to 6,000 gave <P + kT / V> 0.969 +-
  // 0.010, 3 error bars low, and the 6,000 after them 1.006, so the equilibration stays at 2,000
  // steps). <P + kT / V> = P0 (the kinetic part has 3N - 3 degrees of
  // freedom; the positions 3N) and <K> = (3N - 3) kT / 2, each within 3 standard errors.
  bd::LennardJones lj;
  lj.cutoff = 2.5;
  bd::CrescaleOptions p;
  p.dt = 0.005;
  p.temperature = 1.2;
  p.tau = 0.1;
  p.pressure = 1.0;
  p.tau_p = 0.5;
  p.compressibility = 0.1;
  p.seed = 11;
  p.steps = 2000 + 10000;
  bd::CrescaleStage<bd::LennardJones> stage(lj, p);
  std::vector<bs::HostSystem> in;
  const double a = std::cbrt(4 / 0.675);
  for (int s = 0; s < 32; ++s)
    in.push_back(bd::fcc_crystal({3, 3, 3}, a, "Ar", s, 0.05, static_cast<std::uint64_t>(s + 1)));
  Batch b(in);
  const auto samples = run_samples(stage, b, 2000, 500, 20);
  const std::vector<double> pressure =
      means(samples, [](const Sample& x) { return x.pressure + 1.2 / x.volume; });
  const std::vector<double> kinetic = means(samples, [](const Sample& x) { return x.kinetic; });
  const Estimate pm = estimate(pressure), km = estimate(kinetic);
  const Estimate vm = estimate(means(samples, [](const Sample& x) { return x.volume; }));
  const Estimate v2 = estimate(means(samples, [](const Sample& x) { return x.volume * x.volume; }));
  const double want_k = (3 * 108 - 3) * 1.2 / 2;
  MESSAGE("LJ liquid: <P + kT/V> "
          << pm.mean << " +- " << pm.error << " (1), <K> " << km.mean << " +- " << km.error << " ("
          << want_k << "), density " << 108 / vm.mean << ", compressibility from the volume's "
          << "fluctuations " << (v2.mean - vm.mean * vm.mean) / (1.2 * vm.mean));
  CHECK(std::abs(pm.mean - 1.0) <= 3 * pm.error);
  CHECK(std::abs(km.mean - want_k) <= 3 * km.error);
  CHECK(pm.error < 0.05);
}

TEST_CASE("C-rescale aniso on an ideal gas: the same volume distribution as iso") {
  // Each axis moves on its own, with its own noise; their sum is iso's move, so the volume's
  // distribution is iso's: V^N exp(-P0 V / kT) for N atoms with a fixed momentum (the kT / V in
  // each axis's drift is that momentum's share; without it <V> would be N kT / P0 = 320, 3% low).
  // The shape has no restoring force in a gas: the lengths' ratios wander (their logarithms'
  // variance grows by 4 kT beta / (3 V tau_p) = 0.08 per time unit), so the runs are short and
  // many: check_ideal_gas() on 128 systems, a Morse cutoff of 0.05 (thin cells stay usable),
  // seed 17, a sample every 50 steps for 3,000 steps (60 per system).
  const std::vector<bs::HostSystem> end = check_ideal_gas(bd::CrescaleOptions::Coupling::aniso, 128,
                                                          0.05, 17, 60, 50, "ideal gas, aniso");
  // The shape moved: aniso is not iso.
  double spread = 0;
  for (const bs::HostSystem& s : end) {
    const std::array<double, 3> w = bs::cell_widths(s.cell);
    spread = std::max(spread, std::log(*std::max_element(w.begin(), w.end()) /
                                       *std::min_element(w.begin(), w.end())));
  }
  MESSAGE("ideal gas, aniso: largest log ratio of two cell widths " << spread);
  CHECK(spread > 0.5);
}

TEST_CASE("C-rescale aniso on a strained Lennard-Jones crystal: each axis at the target") {
  // 16 fcc crystals of 3 x 3 x 4 cells (144 atoms, a = 1.56, jittered), the x axis stretched by
  // 4%, kT 0.3, P0 1, cutoff 2; CSVR tau 0.1, tau_p 0.5, compressibility 0.02, dt 0.005, seed
  // 23. 1,000 steps of equilibration (the strain relaxes in about tau_p), then a sample every 20
  // steps for 6,000 steps. Each diagonal component: <P_aa + kT / V> = P0 (the fixed momentum's
  // share, as iso's); the canonical kinetic energy; and the strain gone: the three lattice
  // constants (L_a over the cells along a) equal.
  bd::LennardJones lj;
  lj.cutoff = 2.0;
  bd::CrescaleOptions p = crystal_aniso(1000 + 6000);
  p.seed = 23;
  bd::CrescaleStage<bd::LennardJones> stage(lj, p);
  std::vector<bs::HostSystem> in;
  for (int s = 0; s < 16; ++s) {
    bs::HostSystem c =
        bd::fcc_crystal({3, 3, 4}, 1.56, "Ar", s, 0.02, static_cast<std::uint64_t>(s + 1));
    for (std::size_t i = 0; i < c.size(); ++i)
      c.positions[3 * i] *= 1.04;
    for (int r = 0; r < 3; ++r)
      c.cell[static_cast<std::size_t>(3 * r)] *= 1.04;
    in.push_back(c);
  }
  Batch b(in);
  const auto samples = run_samples(stage, b, 1000, 300, 20);
  const std::string names[3] = {"xx", "yy", "zz"};
  for (int c = 0; c < 3; ++c) {
    const Estimate e =
        estimate(means(samples, [&](const Sample& x) { return x.tensor[c] + 0.3 / x.volume; }));
    MESSAGE("C-rescale aniso, LJ crystal: <P_" << names[c] << " + kT/V> " << e.mean << " +- "
                                               << e.error << " (1)");
    CHECK(std::abs(e.mean - 1.0) <= 3 * e.error);
    CHECK(e.error < 0.05);
  }
  const Estimate k = estimate(means(samples, [](const Sample& x) { return x.kinetic; }));
  const double want_k = (3 * 144 - 3) * 0.3 / 2;
  MESSAGE("C-rescale aniso, LJ crystal: <K> " << k.mean << " +- " << k.error << " (" << want_k
                                              << ")");
  CHECK(std::abs(k.mean - want_k) <= 3 * k.error);
  // The lattice constants at the end, per system: x's (L_x / 3) against y's and z's.
  std::vector<double> xy, xz;
  for (const bs::HostSystem& s : b.systems()) {
    xy.push_back(s.cell[0] / 3 - s.cell[4] / 3);
    xz.push_back(s.cell[0] / 3 - s.cell[8] / 4);
  }
  const Estimate dxy = estimate(xy), dxz = estimate(xz);
  MESSAGE("C-rescale aniso, LJ crystal: a_x - a_y "
          << dxy.mean << " +- " << dxy.error << ", a_x - a_z " << dxz.mean << " +- " << dxz.error
          << " (0; 4% strain: 0.06)");
  CHECK(std::abs(dxy.mean) <= 3 * dxy.error);
  CHECK(std::abs(dxz.mean) <= 3 * dxz.error);
  CHECK(dxy.error < 0.01);
}

TEST_CASE("C-rescale aniso acts in the cell's own axes, so a rotated system runs the same") {
  // MTK's test (test_mtk.cpp) for C-rescale aniso: a tilted LJ crystal and the same system
  // rotated by 30 degrees about z and 20 about x; after 200 steps (kT 0.3, P0 1, tau 0.1, tau_p
  // 0.5, dt 0.005, the same noise: the same id and seed) the rotated one's energy and volume are
  // the other's, and so are its cell and velocities rotated back, to rounding (1e-9).
  const baton::test::RotatedPair pair;
  const bs::HostSystem& s = pair.system;
  bd::LennardJones lj;
  lj.cutoff = 2.0;
  bd::CrescaleOptions p = crystal_aniso(200);
  p.draw = false;
  bd::CrescaleStage<bd::LennardJones> stage(lj, p);
  const auto out = pair.check_same_run(stage, 200, false);
  // The lengths moved apart (aniso, not iso): |a| and the volume changed by other factors.
  const double fa = std::hypot(out[0].cell[0], std::hypot(out[0].cell[1], out[0].cell[2])) /
                    std::hypot(s.cell[0], std::hypot(s.cell[1], s.cell[2]));
  const double fv = std::cbrt(bs::cell_volume(out[0].cell) / bs::cell_volume(s.cell));
  MESSAGE("|a| scaled by " << fa << ", V^(1/3) by " << fv);
  CHECK(std::abs(fa - fv) > 1e-4);
}

TEST_CASE("C-rescale: a cell squeezed below the cutoff fails the system, keeping the last cell") {
  // A crystal just wider than twice the cutoff (3 cells of 1.7: 5.1) at pressure 50: the volume
  // falls until a scaling would leave it narrower than 5; that step fails the system.
  bd::LennardJones lj;
  lj.cutoff = 2.5;
  bd::CrescaleOptions p;
  p.temperature = 1.0;
  p.pressure = 50;
  p.tau_p = 0.1;
  p.compressibility = 0.1;
  p.steps = 5000;
  bd::CrescaleStage<bd::LennardJones> stage(lj, p);
  Batch b({bd::fcc_crystal({3, 3, 3}, 1.7, "Ar", 0, 0.01, 3)});
  baton::test::run(stage, b, 500);
  const bs::HostSystem out = b.systems().front();
  CHECK(out.failed);
  CHECK(out.failure == bs::failure_text(static_cast<int>(bs::Failure::cell)));
  for (double w : bs::cell_widths(out.cell))
    CHECK(w >= 5.0);
  CHECK(b.steps().front() < 5000);
}

TEST_CASE("C-rescale: bad options are refused, naming them") {
  bd::CrescaleOptions p;
  p.tau_p = 0;
  CHECK_THROWS_WITH_AS(bd::validate(p), doctest::Contains("tau_p"), baton::Error);
  p = {};
  p.compressibility = -1;
  CHECK_THROWS_WITH_AS(bd::validate(p), doctest::Contains("compressibility"), baton::Error);
  p = {};
  p.pressure = std::nan("");
  CHECK_THROWS_WITH_AS(bd::validate(p), doctest::Contains("pressure"), baton::Error);
  p = {};
  p.temperature = 0;
  CHECK_THROWS_WITH_AS(bd::validate(p), doctest::Contains("temperature"), baton::Error);
  p = {};
  p.coupling = static_cast<bd::CrescaleOptions::Coupling>(2);
  CHECK_THROWS_WITH_AS(bd::validate(p), doctest::Contains("coupling"), baton::Error);
}
