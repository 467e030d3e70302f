// Issue 23, item 5: a periodic cell so large that moving atoms by whole cell vectors ruins double
// precision is rejected with its reason (max_cell_length), not relaxed to a wrong answer; cells
// up to the bound relax as the same atoms do without a cell.
#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <baton/core/error.hpp>
#include <baton/dynamics/fire.hpp>
#include <baton/dynamics/lattice.hpp>
#include <baton/dynamics/lennard_jones.hpp>
#include <baton/systems/cell.hpp>
#include <baton/systems/host_transfer.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "dynamics_batch.hpp"

namespace bd = baton::dynamics;
namespace bs = baton::systems;
using baton::test::Batch;

namespace {

// 108 Lennard-Jones atoms (3 x 3 x 3 fcc cells at the LJ solid's density) centred on the origin,
// so that about half of their coordinates are negative, in a cubic periodic cell of side L (0: no
// cell).
bs::HostSystem chunk(double side) {
  bs::HostSystem s = bd::fcc_crystal({3, 3, 3}, 1.5874, "Ar", 1);
  for (double& x : s.positions)
    x -= 2.3;
  s.cell = {side, 0, 0, 0, side, 0, 0, 0, side};
  s.pbc = {side > 0, side > 0, side > 0};
  if (side == 0)
    s.cell = {};
  return s;
}

std::string append_error(const bs::HostSystem& s) {
  try {
    Batch b({s});
  } catch (const baton::Error& e) {
    return e.what();
  }
  return "(no baton::Error)";
}

}  // namespace

TEST_CASE("a periodic cell longer than max_cell_length is rejected, for that reason") {
  for (double side : {1e12, 1e100}) {
    CAPTURE(side);
    const std::string problem = bs::host_system_problem(chunk(side));
    CAPTURE(problem);
    CHECK(problem.find("periodic cell vector a of length") != std::string::npos);
    CHECK(problem.find("longer than 1e+06") != std::string::npos);
    CHECK(append_error(chunk(side)).find("longer than 1e+06") != std::string::npos);
  }
  // Only periodic vectors count: along an axis that is not periodic nothing is wrapped.
  bs::HostSystem open = chunk(1e12);
  open.pbc = {false, true, true};
  open.cell[4] = open.cell[8] = 10;
  CHECK(bs::host_system_problem(open).empty());
  CHECK(bs::host_system_problem(chunk(bs::max_cell_length)).empty());

  // Widths of a huge cell do not overflow to 0 (a 1e100 cell was "width 0", too small).
  const std::array<double, 9> huge{1e100, 0, 0, 0, 1e100, 0, 0, 0, 1e100};
  for (double w : bs::cell_widths(huge))
    CHECK(w == doctest::Approx(1e100));
  CHECK(bs::cutoff_problem(huge, 7, 3).empty());
}

TEST_CASE("in a cell of max_cell_length, FIRE relaxes a chunk as it does without a cell") {
  bd::LennardJones lj;
  lj.cutoff = 3;
  bd::FireStage fire(lj);
  Batch cluster({chunk(0)}), cell({chunk(bs::max_cell_length)});
  for (Batch* b : {&cluster, &cell}) {
    fire.enter(b->batch, 0, 1);
    for (int k = 0; k < 100 && !b->all_finished(); ++k)
      fire.advance(b->batch, 1000);
    REQUIRE(b->all_finished());
  }
  const auto free = cluster.systems()[0], boxed = cell.systems()[0];
  CHECK(free.fmax <= 1e-6);
  CHECK(boxed.fmax <= 1e-6);
  CHECK(boxed.energy == doctest::Approx(free.energy).epsilon(1e-10));
  CHECK(std::abs(cell.steps()[0] - cluster.steps()[0]) <= 10);
}
