// Neighbour lists: forces over the lists equal forces over all pairs (periodic orthorhombic and
// triclinic cells, slabs, cells too small for image-carrying lists, clusters, EAM, the GPU loop,
// which agrees with the host loop to 1e-12, and a large system's loop on a wide team of threads),
// lists are rebuilt only when an atom moved more than half the skin (against its origin carried by
// the cell's deformation, which may itself force a rebuild) or the slot changed, and a
// list that does not fit grows, or loops over all pairs, without losing or adding steps. The host's
// loop over a list gives the same bits from its AVX2 copy as from the generic one.
#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <array>
#include <baton/core/error.hpp>
#include <baton/dynamics/crescale.hpp>
#include <baton/dynamics/eam.hpp>
#include <baton/dynamics/forces.hpp>
#include <baton/dynamics/lattice.hpp>
#include <baton/dynamics/lennard_jones.hpp>
#include <baton/dynamics/neighbours.hpp>
#include <baton/dynamics/verlet.hpp>
#include <baton/systems/cell.hpp>
#include <climits>
#include <cmath>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "dynamics_batch.hpp"

namespace bd = baton::dynamics;
namespace bs = baton::systems;
using baton::test::Batch;

namespace {

const double lj_a = std::cbrt(4 / 0.8442);  // fcc at the density of LAMMPS' bench/in.lj

bd::LennardJones lj25() {
  bd::LennardJones lj;
  lj.cutoff = 2.5;
  return lj;
}

bs::HostSystem crystal(int n, double tilt, std::array<bool, 3> pbc, std::int64_t id = 7) {
  bs::HostSystem s = bd::fcc_crystal({n, n, n}, lj_a, "Ar", id, 0.1, 11);
  if (tilt != 0)
    bd::tilt_cell(s, tilt * n * lj_a, 0.5 * tilt * n * lj_a, -tilt * n * lj_a);
  s.pbc = pbc;
  if (!pbc[0] && !pbc[1] && !pbc[2])
    s.cell.fill(0);  // a cluster
  return s;
}

bd::NeighbourOptions never_lists() {
  bd::NeighbourOptions s;
  s.all_pairs_below = INT_MAX;
  return s;
}

// Forces, energies and virials of every system in `b` with `lists` (and `skin`), with the half-pair
// loop where `half` and the build has it (host spaces), else the full loop.
template <class P>
void forces_with(const P& pot, Batch& b, bd::NeighbourLists& lists, double skin, bool half) {
  bd::detail::compute_forces(pot, b.batch, 0, b.batch.num_systems(), half && bd::detail::host_space,
                             lists, skin);
}

// Every energy, fmax, virial component and force of `a` equals `b`'s to a relative `tolerance`
// (forces and virials: relative to max(1, |value|)).
void check_close(const Batch& a, const Batch& b, double tolerance) {
  const auto sa = a.systems(), sb = b.systems();
  REQUIRE(sa.size() == sb.size());
  for (std::size_t k = 0; k < sa.size(); ++k) {
    CAPTURE(k);
    CHECK(std::abs(sa[k].energy - sb[k].energy) <= tolerance * std::abs(sb[k].energy));
    CHECK(std::abs(sa[k].fmax - sb[k].fmax) <= tolerance * std::max(1.0, sb[k].fmax));
    for (std::size_t c = 0; c < 6; ++c)
      CHECK(std::abs(sa[k].virial[c] - sb[k].virial[c]) <=
            tolerance * std::max(1.0, std::abs(sb[k].virial[c])));
  }
  const auto fa = a.forces(), fb = b.forces();
  REQUIRE(fa.size() == fb.size());
  double worst = 0;
  for (std::size_t i = 0; i < fa.size(); ++i)
    worst = std::max(worst, std::abs(fa[i] - fb[i]) / std::max(1.0, std::abs(fb[i])));
  CHECK(worst <= tolerance);
}

// Jittered Cu fcc cells of n^3 unit cells for each n in `ns` (ids 1, 2, ...), those of n = 5
// tilted.
std::vector<bs::HostSystem> copper_cells(const bd::Eam& eam, std::initializer_list<int> ns) {
  std::vector<bs::HostSystem> systems;
  std::int64_t id = 0;
  for (int n : ns) {
    bs::HostSystem s = bd::fcc_crystal({n, n, n}, 3.615, "Cu", ++id, 0.05, 3);
    if (n == 5)
      bd::tilt_cell(s, 1.5, -0.7, 0.9);
    s.masses.assign(s.size(), eam.mass("Cu"));
    systems.push_back(s);
  }
  return systems;
}

// Lists against all pairs: the same to a relative 1e-11.
void check_same(const Batch& a, const Batch& b) {
  check_close(a, b, 1e-11);
}

// Moves atom `i` of the batch by `d` along x (on the batch's own memory).
void move_atom(Batch& b, int i, double d) {
  auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.batch.positions);
  x(i, 0) += d;
  Kokkos::deep_copy(b.batch.positions, x);
}

// Deforms the cell of every system by F (h -> h F, cell vectors as rows) and carries every atom
// with it (x -> x F), on the batch's own memory.
void deform(Batch& b, const std::array<double, 9>& f) {
  auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.batch.positions);
  auto cell = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.batch.cell);
  const auto times_f = [&](const double* r, double* out) {
    for (int e = 0; e < 3; ++e)
      out[e] = r[0] * f[static_cast<std::size_t>(e)] + r[1] * f[static_cast<std::size_t>(3 + e)] +
               r[2] * f[static_cast<std::size_t>(6 + e)];
  };
  for (std::size_t i = 0; i < x.extent(0); ++i) {
    const double r[3] = {x(i, 0), x(i, 1), x(i, 2)};
    double out[3];
    times_f(r, out);
    for (int d = 0; d < 3; ++d)
      x(i, d) = out[d];
  }
  for (std::size_t s = 0; s < cell.extent(0); ++s)
    for (int k = 0; k < 3; ++k) {
      const double r[3] = {cell(s, 3 * k), cell(s, 3 * k + 1), cell(s, 3 * k + 2)};
      double out[3];
      times_f(r, out);
      for (int d = 0; d < 3; ++d)
        cell(s, 3 * k + d) = out[d];
    }
  Kokkos::deep_copy(b.batch.positions, x);
  Kokkos::deep_copy(b.batch.cell, cell);
  b.batch.cells_changed();
}

// I + scale g.
std::array<double, 9> near_identity(const std::array<double, 9>& g, double scale) {
  std::array<double, 9> f{};
  for (std::size_t k = 0; k < 9; ++k)
    f[k] = (k % 4 == 0 ? 1.0 : 0.0) + scale * g[k];
  return f;
}

// Whether system 0 of `listed` followed the trajectory of system 0 of `all` (the same system run
// without lists): positions and cell within 1e-9, energy within 1e-9 relative.
void check_same_trajectory(const Batch& listed, const Batch& all) {
  const auto sl = listed.systems()[0], sa = all.systems()[0];
  double worst = 0;
  for (std::size_t i = 0; i < sl.positions.size(); ++i)
    worst = std::max(worst, std::abs(sl.positions[i] - sa.positions[i]));
  for (std::size_t k = 0; k < 9; ++k)
    worst = std::max(worst, std::abs(sl.cell[k] - sa.cell[k]));
  CHECK(worst < 1e-9);
  CHECK(std::abs(sl.energy - sa.energy) < 1e-9 * std::abs(sa.energy));
}

}  // namespace

TEST_CASE("neighbour lists give the forces, energy and virial of all pairs") {
  const bd::LennardJones lj = lj25();
  struct Case {
    const char* name;
    bs::HostSystem system;
  };
  // 6^3 cells: widths ~10 >= 3 (rc + skin), lists carry images; 4^3: a too narrow cell for that
  // (minimum images per pair); a slab; a cluster; a triclinic cell.
  for (const Case& c : {Case{"orthorhombic", crystal(6, 0, {true, true, true})},
                        Case{"triclinic", crystal(6, 0.15, {true, true, true})},
                        Case{"narrow (minimum images)", crystal(4, 0.1, {true, true, true})},
                        Case{"slab, c open", crystal(6, 0.1, {true, true, false})},
                        Case{"cluster", crystal(5, 0, {false, false, false})}}) {
    CAPTURE(c.name);
    for (const bool half : {true, false}) {
      CAPTURE(half);
      for (const double skin : {0.0, 0.3, 1.0}) {
        CAPTURE(skin);
        Batch listed({c.system}), all({c.system});
        bd::NeighbourLists lists(bd::NeighbourOptions{}), none(never_lists());
        forces_with(lj, listed, lists, skin, half);
        forces_with(lj, all, none, skin, half);
        check_same(listed, all);
        // Lists start empty: one build learns the lengths, one fills the grown lists.
        CHECK(lists.builds() == 2);
        CHECK(none.builds() == 0);
        CHECK(lists.capacity() > 0);
      }
    }
  }
}

TEST_CASE("the GPU algorithms agree with the host algorithms to 1e-12") {
  // The full pair loop (each thread sums its atoms' forces; teams of several threads in a build
  // with BATON_DEVICE_ALGORITHMS_ON_HOST) against the half loop with Newton's third law (teams of
  // one), with and without lists, LJ and EAM. The half loop exists on host spaces only.
  if constexpr (!bd::detail::host_space) {
    MESSAGE("skipped: the half-pair loop runs on host spaces only");
    return;
  }
  const bd::LennardJones lj = lj25();
  const std::vector<bs::HostSystem> systems = {
      crystal(6, 0.15, {true, true, true}, 1), crystal(4, 0.1, {true, true, true}, 2),
      crystal(6, 0.1, {true, true, false}, 3), crystal(5, 0, {false, false, false}, 4)};
  for (const double skin : {0.0, 0.3}) {
    CAPTURE(skin);
    bd::NeighbourOptions some;
    some.all_pairs_below = 300;  // the 4^3 crystal (256 atoms) over all pairs, the others listed
    for (const bd::NeighbourOptions& options : {some, never_lists()}) {
      Batch gpu(systems), host(systems);
      bd::NeighbourLists gpu_lists(options), host_lists(options);
      forces_with(lj, gpu, gpu_lists, skin, false);
      forces_with(lj, host, host_lists, skin, true);
      check_close(gpu, host, 1e-12);  // not bit-identical: the loops add in other orders
    }
  }
  const char* path = BATON_EAM_FUNCFL_FILE;
  if (!std::ifstream(path)) {
    MESSAGE("EAM part skipped: no " << path << " (Debian: lammps-data)");
    return;
  }
  const bd::Eam eam(path);
  std::vector<bs::HostSystem> copper;
  for (int n : {5, 3}) {
    bs::HostSystem s = bd::fcc_crystal({n, n, n}, 3.615, "Cu", n, 0.05, 3);
    if (n == 5)
      bd::tilt_cell(s, 1.5, -0.7, 0.9);
    s.masses.assign(s.size(), eam.mass("Cu"));
    copper.push_back(s);
  }
  Batch gpu(copper), host(copper);
  bd::NeighbourOptions large_only;
  large_only.all_pairs_below = 256;
  bd::NeighbourLists gpu_lists(large_only), host_lists(large_only);
  forces_with(eam, gpu, gpu_lists, 1.0, false);
  forces_with(eam, host, host_lists, 1.0, true);
  check_close(gpu, host, 1e-12);  // not bit-identical: the loops add in other orders
}

TEST_CASE(
    "a large system on a wide team: the forces of the full loop, the same bits in any batch") {
  // Systems of at least wide_team_atoms atoms run their host half-pair loops on a team of all the
  // rank's threads (each thread into its own accumulators) where the space has several; elsewhere
  // on one thread. Either way: the full loop's forces to 1e-12, and a system's bits do not depend
  // on the systems beside it (the wide systems run in a launch of their own).
  if constexpr (!bd::detail::host_space) {
    MESSAGE("skipped: the half-pair loop runs on host spaces only");
    return;
  }
  MESSAGE("threads: " << Kokkos::DefaultExecutionSpace().concurrency());
  const bd::LennardJones lj = lj25();
  const bs::HostSystem big = crystal(11, 0.1, {true, true, true}, 1);  // 5,324 atoms
  REQUIRE(static_cast<int>(big.size()) >= bd::detail::wide_team_atoms);
  const bs::HostSystem small_a = crystal(4, 0, {true, true, true}, 2);
  const bs::HostSystem small_b = crystal(3, 0, {false, false, false}, 3);
  {
    Batch full({big}), half({big});
    bd::NeighbourLists full_lists(bd::NeighbourOptions{}), half_lists(bd::NeighbourOptions{});
    forces_with(lj, full, full_lists, 0.3, false);
    forces_with(lj, half, half_lists, 0.3, true);
    check_close(full, half, 1e-12);
    Batch mixed({small_a, big, small_b});
    bd::NeighbourLists mixed_lists(bd::NeighbourOptions{});
    forces_with(lj, mixed, mixed_lists, 0.3, true);
    CHECK(mixed.systems()[1].energy == half.systems()[0].energy);
    const auto fm = mixed.forces(), fh = half.forces();
    const std::size_t first = 3 * small_a.size();
    CHECK(std::equal(fh.begin(), fh.end(), fm.begin() + static_cast<std::ptrdiff_t>(first)));
  }
  {  // 20 NVE steps (the stage's kernel, its lists growing on the way): alone and in a batch
    bd::VerletOptions p;
    p.temperature = 1.0;
    bd::VerletStage alone_stage(lj, p), mixed_stage(lj, p);
    Batch alone({big}), mixed({small_a, big, small_b});
    alone_stage.enter(alone.batch, 0, 1);
    mixed_stage.enter(mixed.batch, 0, 3);
    alone_stage.advance(alone.batch, 20);
    mixed_stage.advance(mixed.batch, 20);
    const auto sa = alone.systems(), sm = mixed.systems();
    CHECK(mixed.steps() == std::vector<std::int64_t>{20, 20, 20});
    CHECK(sm[1].positions == sa[0].positions);
    CHECK(sm[1].velocities == sa[0].velocities);
    CHECK(sm[1].energy == sa[0].energy);
  }
  const char* path = BATON_EAM_FUNCFL_FILE;
  if (!std::ifstream(path)) {
    MESSAGE("EAM part skipped: no " << path << " (Debian: lammps-data)");
    return;
  }
  const bd::Eam eam(path);
  bs::HostSystem copper = bd::fcc_crystal({11, 11, 11}, 3.615, "Cu", 4, 0.05, 3);
  bd::tilt_cell(copper, 1.5, -0.7, 0.9);
  copper.masses.assign(copper.size(), eam.mass("Cu"));
  bs::HostSystem few = bd::fcc_crystal({3, 3, 3}, 3.615, "Cu", 5, 0.05, 3);
  few.masses.assign(few.size(), eam.mass("Cu"));
  Batch full({copper}), half({copper}), mixed({few, copper});
  bd::NeighbourLists full_lists(bd::NeighbourOptions{}), half_lists(bd::NeighbourOptions{}),
      mixed_lists(bd::NeighbourOptions{});
  forces_with(eam, full, full_lists, 1.0, false);
  forces_with(eam, half, half_lists, 1.0, true);
  forces_with(eam, mixed, mixed_lists, 1.0, true);
  check_close(full, half, 1e-12);
  CHECK(mixed.systems()[1].energy == half.systems()[0].energy);
  CHECK(mixed.systems()[1].virial == half.systems()[0].virial);
  const auto fm = mixed.forces(), fh = half.forces();
  CHECK(std::equal(fh.begin(), fh.end(), fm.begin() + static_cast<std::ptrdiff_t>(3 * few.size())));
}

TEST_CASE("lists of small cells: every image within reach, or minimum images when too narrow") {
  // 108 atoms, widths 5.04 (tilted: less): cutoff + skin 2.8 gives one bin per axis and images
  // found per pair; skin 3 makes cutoff + skin longer than the width: minimum images per pair.
  const bd::LennardJones lj = lj25();
  bd::NeighbourOptions always;
  always.all_pairs_below = 0;
  for (const double tilt : {0.0, 0.1}) {
    for (const double skin : {0.3, 3.0}) {
      CAPTURE(tilt);
      CAPTURE(skin);
      const bs::HostSystem s = crystal(3, tilt, {true, true, true});
      Batch listed({s}), all({s});
      bd::NeighbourLists lists(always), none(never_lists());
      forces_with(lj, listed, lists, skin, true);
      forces_with(lj, all, none, skin, true);
      check_same(listed, all);
      CHECK(lists.builds() == 2);
    }
  }
}

TEST_CASE("neighbour lists with EAM, and batches of large and small systems") {
  const char* path = BATON_EAM_FUNCFL_FILE;
  if (!std::ifstream(path)) {
    MESSAGE("skipped: no " << path << " (Debian: lammps-data)");
    return;
  }
  const bd::Eam eam(path);
  // 864 atoms with a list, 108 without, 500 (tilted) with, 108 without.
  const std::vector<bs::HostSystem> systems = copper_cells(eam, {6, 3, 5, 3});
  Batch listed(systems), all(systems);
  bd::NeighbourOptions large_only;
  large_only.all_pairs_below = 256;
  bd::NeighbourLists lists(large_only), none(never_lists());
  forces_with(eam, listed, lists, 1.0, true);
  forces_with(eam, all, none, 1.0, true);
  check_same(listed, all);
  // The two systems of at least 256 atoms, twice (learning the lengths, then filling).
  CHECK(lists.builds() == 4);

  // Removing a system moves the others to other slots and rows: their lists are rebuilt there,
  // from the same origin, so the moved system's forces are the same to the bit.
  const auto before = listed.systems();
  const auto forces_before = listed.forces();  // the 500-atom system: rows 972 to 1472
  listed.batch.remove({0});
  all.batch.remove({0});
  forces_with(eam, listed, lists, 1.0, true);
  forces_with(eam, all, none, 1.0, true);
  check_same(listed, all);
  CHECK(lists.builds() == 5);  // only the 500-atom system, now in slot 1
  const auto after = listed.systems();
  const auto forces_after = listed.forces();  // now rows 108 to 608
  CHECK(after[1].energy == before[2].energy);
  CHECK(std::equal(forces_after.begin() + 3 * 108, forces_after.begin() + 3 * 608,
                   forces_before.begin() + 3 * 972));
}

TEST_CASE("EAM's force pass gives the same bits whether its pairs were kept or filled again") {
  const char* path = BATON_EAM_FUNCFL_FILE;
  if (!std::ifstream(path)) {
    MESSAGE("skipped: no " << path << " (Debian: lammps-data)");
    return;
  }
  const bd::Eam eam(path);
  // 108 atoms (every pair through images) and 500 in a tilted cell.
  const std::vector<bs::HostSystem> systems = copper_cells(eam, {3, 5});
  bd::NeighbourOptions options;
  options.all_pairs_below = 0;
  const std::size_t limit = bd::detail::eam_cached_pairs_max;
  // All kept; the first atoms' pairs only (1000 of about 20,000); none.
  std::vector<Batch> runs;
  for (std::size_t max : {limit, std::size_t(1000), std::size_t(0)}) {
    bd::detail::eam_cached_pairs_max = max;
    runs.emplace_back(systems);
    bd::NeighbourLists lists(options);
    forces_with(eam, runs.back(), lists, 1.0, true);
  }
  bd::detail::eam_cached_pairs_max = limit;
  for (std::size_t r = 1; r < runs.size(); ++r) {
    CAPTURE(r);
    const auto a = runs[0].systems(), b = runs[r].systems();
    for (std::size_t k = 0; k < a.size(); ++k) {
      CHECK(a[k].energy == b[k].energy);
      CHECK(a[k].virial == b[k].virial);
    }
    CHECK(runs[0].forces() == runs[r].forces());
  }
}

TEST_CASE("a list is rebuilt only when an atom moved more than half the skin") {
  const bd::LennardJones lj = lj25();
  const double skin = 0.4;
  Batch listed({crystal(6, 0, {true, true, true})});
  bd::NeighbourLists lists(bd::NeighbourOptions{});
  forces_with(lj, listed, lists, skin, true);
  const auto first = lists.builds();
  forces_with(lj, listed, lists, skin, true);  // nothing moved
  CHECK(lists.builds() == first);

  // One atom moves 0.19 (< skin / 2): the list stays, and the forces are still exact.
  move_atom(listed, 100, 0.19);
  forces_with(lj, listed, lists, skin, true);
  CHECK(lists.builds() == first);
  Batch all(listed.systems());
  bd::NeighbourLists none(never_lists());
  forces_with(lj, all, none, skin, true);
  check_same(listed, all);

  // Another 0.02 makes it 0.21 (> skin / 2) from where the list was built: rebuilt.
  move_atom(listed, 100, 0.02);
  forces_with(lj, listed, lists, skin, true);
  CHECK(lists.builds() == first + 1);

  // A different skin or cutoff forgets every list.
  forces_with(lj, listed, lists, 0.5, true);
  CHECK(lists.builds() == first + 2);
}

TEST_CASE("a list outlives small cell deformations while it holds every pair within the cutoff") {
  // The rule: rebuild when 2 max_i |x_i - x0_i F| + |F - I| (rc + skin) > skin. Here rc + skin
  // = 2.9, skin = 0.4 and |F - I| = 0.05: an atom may move 0.1275 from its carried origin.
  const bd::LennardJones lj = lj25();
  const double skin = 0.4;
  const std::array<double, 9> g = {0.4, 0.2, 0, 0, -0.6, 0.4, 0.2, 0, 0.5};  // |g| = 1.005
  for (const double tilt : {0.0, 0.15}) {
    for (const bool half : {true, false}) {
      CAPTURE(tilt);
      CAPTURE(half);
      Batch listed({crystal(6, tilt, {true, true, true})});
      bd::NeighbourLists lists(bd::NeighbourOptions{}), none(never_lists());
      forces_with(lj, listed, lists, skin, half);
      const auto first = lists.builds();
      const auto same_as_all_pairs = [&] {
        Batch all(listed.systems());
        forces_with(lj, all, none, skin, half);
        check_same(listed, all);
      };
      // Strained by 5% (|F - I| = 0.05025), one atom 0.12 from where it was carried: kept.
      deform(listed, near_identity(g, 0.05));
      move_atom(listed, 100, 0.12);
      forces_with(lj, listed, lists, skin, half);
      CHECK(lists.builds() == first);
      same_as_all_pairs();
      // 0.01 more makes it 0.13 > 0.1275: rebuilt, at this cell.
      move_atom(listed, 100, 0.01);
      forces_with(lj, listed, lists, skin, half);
      CHECK(lists.builds() == first + 1);
      same_as_all_pairs();
      // Compressed by 15% with no atom moving against it: pairs 2.9 apart come within 2.5, so the
      // list could miss them (|F - I| rl = 0.74 > skin): rebuilt.
      // (The denser system's lists then outgrow their capacity: built once more, grown.)
      deform(listed, near_identity({-1, 0, 0, 0, -1, 0, 0, 0, -1}, 0.15));
      forces_with(lj, listed, lists, skin, half);
      CHECK(lists.builds() >= first + 2);
      same_as_all_pairs();
    }
  }
}

TEST_CASE("an NPT stage keeps its lists through its small cell steps, with all pairs' forces") {
  // C-rescale changes every cell at every step. 100 steps of a 500-atom liquid cell with lists
  // follow the same trajectory as with all pairs, and build few lists.
  const bd::LennardJones lj = lj25();
  bd::CrescaleOptions p;
  p.steps = 1000;
  p.temperature = 1.2;
  p.pressure = 2;
  p.tau_p = 0.5;
  bd::CrescaleOptions p_all = p;
  p_all.neighbours = never_lists();
  bd::CrescaleStage listed_stage(lj, p), all_stage(lj, p_all);
  const bs::HostSystem start = crystal(5, 0.1, {true, true, true});
  Batch listed({start}), all({start});
  listed_stage.enter(listed.batch, 0, 1);
  all_stage.enter(all.batch, 0, 1);
  const auto entered = listed_stage.neighbour_lists().builds();
  listed_stage.advance(listed.batch, 100);
  all_stage.advance(all.batch, 100);
  REQUIRE(listed.steps()[0] == 100);
  REQUIRE(all.steps()[0] == 100);
  check_same_trajectory(listed, all);
  double strain = 0;
  for (std::size_t k = 0; k < 9; ++k)
    strain = std::max(strain, std::abs(listed.systems()[0].cell[k] - start.cell[k]));
  CHECK(strain > 1e-3);  // the cell did move
  const auto built = listed_stage.neighbour_lists().builds() - entered;
  MESSAGE("lists built in 100 NPT steps: " << built);
  CHECK(built <= 25);
}

TEST_CASE("one lists object over two batches whose systems look alike") {
  // Same id, slot, rows and cell, different positions: each batch gets its own lists.
  const bd::LennardJones lj = lj25();
  const bs::HostSystem a = crystal(6, 0, {true, true, true});
  bs::HostSystem b = a;
  for (std::size_t k = 0; k < b.positions.size(); k += 7)
    b.positions[k] += 0.4;
  Batch first({a}), second({b}), reference({b});
  bd::NeighbourLists lists(bd::NeighbourOptions{}), none(never_lists());
  forces_with(lj, second, lists, 0.3, true);
  forces_with(lj, first, lists, 0.3, true);
  forces_with(lj, second, lists, 0.3, true);
  forces_with(lj, reference, none, 0.3, true);
  check_same(second, reference);
}

TEST_CASE("a list that does not fit grows inside a stage without losing or adding steps") {
  // Enter an NVE stage at one density, then compress the system (cell and positions by 0.85):
  // the first force evaluation of advance() needs longer lists than the stage has. That step
  // loops over all pairs, the lists grow, and the call goes on: exactly 20 steps, and the same
  // trajectory as a stage without lists.
  const bd::LennardJones lj = lj25();
  bd::VerletOptions p;
  p.steps = 1000;
  p.temperature = 0.5;
  bd::VerletOptions p_all = p;
  p_all.neighbours = never_lists();
  bd::VerletStage listed_stage(lj, p), all_stage(lj, p_all);
  Batch listed({crystal(7, 0, {true, true, true})}), all({crystal(7, 0, {true, true, true})});
  listed_stage.enter(listed.batch, 0, 1);
  all_stage.enter(all.batch, 0, 1);
  const int before = listed_stage.neighbour_lists().capacity();
  for (Batch* b : {&listed, &all})
    deform(*b, near_identity({-1, 0, 0, 0, -1, 0, 0, 0, -1}, 0.15));
  listed_stage.advance(listed.batch, 20);
  all_stage.advance(all.batch, 20);
  CHECK(listed.steps()[0] == 20);
  CHECK(all.steps()[0] == 20);
  CHECK(listed_stage.neighbour_lists().capacity() > before);
  check_same_trajectory(listed, all);
}

TEST_CASE("an atom with more neighbours than max_neighbours: all pairs, still exact") {
  const bd::LennardJones lj = lj25();
  bd::NeighbourOptions few;
  few.max_neighbours = 8;
  Batch listed({crystal(6, 0.1, {true, true, true})}), all({crystal(6, 0.1, {true, true, true})});
  bd::NeighbourLists lists(few), none(never_lists());
  forces_with(lj, listed, lists, 0.3, true);
  forces_with(lj, all, none, 0.3, true);
  check_same(listed, all);
  CHECK(lists.capacity() == 0);  // nothing to grow to: never more than max_neighbours

  bd::VerletOptions p;
  p.steps = 10;
  p.neighbours = few;
  bd::VerletStage stage(lj, p);
  stage.enter(listed.batch, 0, 1);
  stage.advance(listed.batch, 100);
  CHECK(listed.steps()[0] == 10);
}

#if BATON_AVX2_DISPATCH
TEST_CASE(
    "the host's pair loop over a list: its AVX2 copy and the generic one give the same bits") {
  // A cluster's half list, every row plain (no images: ListPairs::each_plain), then the same list
  // with no row marked plain (the loop that looks up each entry's shift, all 0 here). The stage
  // took one copy (the AVX2 one where the CPU has it): both give its forces, bit for bit. Host
  // builds only: elsewhere (device algorithms on the host) the lists are full lists.
  if (!bd::detail::host_space)
    return;
  const auto k = lj25().kernel();
  Batch b({crystal(5, 0, {false, false, false})});
  bd::NeighbourLists lists(bd::NeighbourOptions{});
  forces_with(lj25(), b, lists, 0.3, true);
  REQUIRE(lists.capacity() > 0);
  const auto& d = lists.data();
  const int n = static_cast<int>(b.forces().size() / 3);
  const bs::SystemsBatch::view<int*> no_plain_row("no_plain_row", d.plain.extent(0));
  for (const bool plain : {true, false}) {
    CAPTURE(plain);
    const bd::detail::ListPairs pairs{
        d.list,          d.num,     plain ? d.plain : no_plain_row, b.batch.positions, {}, false,
        bs::CellImage{}, d.team_acc};
    std::vector<double> generic(3 * static_cast<std::size_t>(n), 0.0), avx2 = generic;
    double e1 = 0, e2 = 0, w1[6] = {}, w2[6] = {};
    bd::detail::list_pair_forces<true>(k, pairs, &b.batch.species(0), generic.data(), 0, n, e1, w1);
    CHECK(generic == b.forces());
    CHECK(e1 == b.systems()[0].energy);
    if (!bd::detail::host_has_avx2())
      continue;  // the stage took the generic copy: nothing more to compare
    bd::detail::list_pair_forces_avx2<true>(k, pairs, &b.batch.species(0), avx2.data(), 0, n, e2,
                                            w2);
    CHECK(generic == avx2);
    CHECK(e1 == e2);
    for (int c = 0; c < 6; ++c)
      CHECK(w1[c] == w2[c]);
  }
}
#endif

TEST_CASE("neighbour settings are checked") {
  const auto text = [](bd::NeighbourOptions s) {
    try {
      bd::validate(s);
    } catch (const baton::Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  bd::NeighbourOptions s;
  s.skin = NAN;
  CHECK(text(s).find("skin") != std::string::npos);
  s = {};
  s.all_pairs_below = -1;
  CHECK(text(s).find("all_pairs_below") != std::string::npos);
  s = {};
  s.max_neighbours = 0;
  CHECK(text(s).find("max_neighbours") != std::string::npos);
  bd::VerletOptions p;
  p.neighbours.max_neighbours = 0;
  CHECK_THROWS_AS(bd::VerletStage<>(bd::LennardJones{}, p), baton::Error);
  // A list entry packs an atom row and an image code into an int: batches beyond that are refused.
  CHECK_NOTHROW(bd::detail::check_list_rows(bd::detail::max_list_rows));
  CHECK_THROWS_AS(bd::detail::check_list_rows(bd::detail::max_list_rows + 1), baton::Error);
  CHECK(bd::detail::list_entry(static_cast<int>(bd::detail::max_list_rows - 1), 26) > 0);
}
