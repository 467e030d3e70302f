#pragma once
/// \file
/// Batched neighbour lists: for every system of a batch at once, inside the stages' kernels, the
/// atoms j within the potential's cutoff plus a skin of each atom i, found through bins (a cell
/// list) so that building a system's list is O(N). A list is built for an origin: the positions
/// and the cell at a build (systems::SystemsBatch::list_origin and list_cell, which travel with the
/// system). It is rebuilt from the current positions and cell only when the pairs closer than the
/// cutoff may no longer all be in it: with F the cell's deformation since the origin (h = h0 F,
/// cell vectors as rows) and d_i = x_i - x0_i F each atom's move from its affinely carried origin,
/// when
///
///     2 max_i |d_i| + |F - I| (cutoff + skin) > skin      (|.|: the Frobenius norm)
///
/// which at a fixed cell is LAMMPS' rule (an atom moved more than half the skin). So a barostat's
/// small cell changes do not rebuild lists every step. When its slot or rows change, the same list
/// is built again from the same origin.
///
/// Small systems keep looping over all pairs (NeighbourOptions::all_pairs_below). A list that
/// does not fit its capacity is never truncated: that force evaluation walks the build's bins
/// (BinPairs), the stage stops the system's steps for this call, the capacity grows and the stage
/// goes on (see docs/dynamics.md, "Neighbour lists").
///
/// Pairs come out in a fixed order (bins in a fixed order, the atoms of a bin in order along the
/// third axis at the build, then by index), so results are the same run to run, and in any slot,
/// on every backend. A build visits the bins within reach of each atom, but skips those, and the
/// atoms of a bin along the third axis, that lie too far (each_candidate).

#include <Kokkos_Core.hpp>
#include <climits>
#include <cstdint>
#include <type_traits>

#include "baton/dynamics/detail/list_avx2.hpp"
#include "baton/dynamics/random.hpp"
#include "baton/dynamics/team.hpp"
#include "baton/dynamics/units.hpp"
#include "baton/systems/cell.hpp"
#include "baton/systems/systems_batch.hpp"

namespace baton::dynamics {

/// How stages find the pairs of a system.
struct NeighbourOptions {
  /// Lists hold pairs up to the potential's cutoff plus this; < 0: the unit system's default
  /// (Units::skin: 0.3 sigma in lj units, 2 Angstrom in metal units, as LAMMPS).
  double skin = -1;
  /// Systems with fewer atoms loop over all pairs and have no list (the crossover measured:
  /// docs/dynamics.md, "Neighbour lists").
  int all_pairs_below = 64;
  /// Most neighbours a list holds per atom. An atom with more (atoms on top of each other, an
  /// absurd density) keeps its system on the bins of its build (BinPairs): slower, never wrong.
  int max_neighbours = 2048;

  /// The skin to use with `units`.
  double skin_in(const Units& units) const { return skin < 0 ? units.skin : skin; }
};

/// Throws baton::Error naming the setting when `s` is not usable.
void validate(const NeighbourOptions& s);

namespace detail {

/// The pairs of a system, all of them: j > i (Half) or j != i, each with its displacement
/// x_i - x_j (the minimum image in `cell` when Periodic).
template <bool Periodic>
struct AllPairs {
  Positions x;
  systems::CellImage cell;
  int begin = 0, end = 0;
  template <bool Half, class F>
  KOKKOS_INLINE_FUNCTION void each(int i, const F& f) const {
    const double xi = x(i, 0), yi = x(i, 1), zi = x(i, 2);
    for (int j = Half ? i + 1 : begin; j < end; ++j) {
      if (!Half && j == i)
        continue;
      double dx = xi - x(j, 0), dy = yi - x(j, 1), dz = zi - x(j, 2);
      if constexpr (Periodic)
        cell.minimum_image(dx, dy, dz);
      f(j, dx, dy, dz);
    }
  }
};

/// Image codes of list entries: entry = (j << image_bits) | code, code = 9 (o_a + 1) + 3 (o_b + 1)
/// + (o_c + 1) for the image of j shifted by o_a a + o_b b + o_c c.
inline constexpr int image_codes = 27;
inline constexpr int image_bits = 5;  ///< 2^5 >= image_codes
/// Atom rows a batch may have for its lists' entries to fit an int.
inline constexpr long long max_list_rows = 1LL << (31 - image_bits);
/// Throws baton::Error when a batch of `atom_rows` rows is too large for lists
/// (NeighbourLists::prepare() calls it when the batch has a system that uses one).
void check_list_rows(long long atom_rows);
KOKKOS_INLINE_FUNCTION constexpr int list_entry(int j, int code) {
  return (j << image_bits) | code;
}

/// The pairs of a system from its neighbour list (built half or full as the loop needs), each with
/// its displacement: xs_i - xs_j - shift(code) where xs are the positions less the whole cells
/// they were in when the list was built (shifted lists), or the minimum image of x_i - x_j.
struct ListPairs {
  systems::SystemsBatch::view<int**> list;
  systems::SystemsBatch::view<int*> num;
  systems::SystemsBatch::view<int*> plain;
  Positions xs;
  double shift[image_codes][3];
  bool min_image = false;
  systems::CellImage cell;
  /// The accumulators of a wide team's half-pair loop (NeighbourData::team_acc).
  systems::SystemsBatch::view<double**> acc;

  /// Whether atom i's pairs carry no images (each_plain() may give them).
  KOKKOS_INLINE_FUNCTION bool is_plain(int i) const { return !min_image && plain(i) == 1; }
  /// each() for an atom whose pairs carry no images (is_plain(): most atoms of a large cell), with
  /// no shifts to look up: the pair loop over blocks takes it (each_pair_block).
  template <class F>
  KOKKOS_INLINE_FUNCTION void each_plain(int i, const F& f) const {
    const int n = num(i);
    const double xi = xs(i, 0), yi = xs(i, 1), zi = xs(i, 2);
    const int* const row = list.data() + static_cast<std::size_t>(i) * list.stride(0);
    const double* const xp = xs.data();
    for (int m = 0; m < n; ++m) {
      const int j = row[m] >> image_bits;
      f(j, xi - xp[3 * j], yi - xp[3 * j + 1], zi - xp[3 * j + 2]);
    }
  }

  template <bool Half, class F>
  KOKKOS_INLINE_FUNCTION void each(int i, const F& f) const {
    const int n = num(i);
    const double xi = xs(i, 0), yi = xs(i, 1), zi = xs(i, 2);
    if (min_image) {
      for (int m = 0; m < n; ++m) {
        const int j = list(i, m) >> image_bits;
        double dx = xi - xs(j, 0), dy = yi - xs(j, 1), dz = zi - xs(j, 2);
        cell.minimum_image(dx, dy, dz);
        f(j, dx, dy, dz);
      }
    } else {
      // Raw pointers: the rows of both are contiguous (LayoutRight), x's of three.
      const int* const row = list.data() + static_cast<std::size_t>(i) * list.stride(0);
      const double* const xp = xs.data();
      for (int m = 0; m < n; ++m) {
        const int e = row[m];
        const int j = e >> image_bits;
        const double* t = shift[e & ((1 << image_bits) - 1)];
        f(j, xi - xp[3 * j] - t[0], yi - xp[3 * j + 1] - t[1], zi - xp[3 * j + 2] - t[2]);
      }
    }
  }
};

/// The neighbour lists as the kernels see them (copied into every kernel). Per atom row: the
/// list, its length, the positions at the last build and the bins' work arrays; per slot: what
/// the list was built for.
struct NeighbourData {
  template <class T>
  using view = systems::SystemsBatch::view<T>;

  view<int**> list;  ///< [atom][capacity]
  view<int*> num;    ///< neighbours of the atom (may exceed capacity: then the list is unusable)
  view<int*> plain;  ///< 1 when no entry of the atom's list carries an image (all code 13)
  view<int*> bin_of, bin_start, bin_fill, sorted;  ///< binning, rows [begin, begin + bins)
  /// The batch's list_origin and list_built (systems::SystemsBatch): the positions each system's
  /// list was built from, travelling with the system through slot moves.
  view<double* [3]> x_ref;
  view<int*> origin_built;
  view<double* [9]> origin_cell;  ///< the batch's list_cell: the cell of each system's origin
  /// The whole cells (along a, b, c) each atom's origin lay beyond, at the build (shifted lists).
  view<double* [3]> whole;
  view<double* [3]> x_now;  ///< positions less their whole cells in the current cell
  /// x_now in the build's bin order (row begin + p: atom sorted(begin + p)), so that a build's
  /// candidates are read from contiguous memory.
  view<double* [3]> x_bin;
  /// Where each atom lies along the bins' third axis, in bins (its bin and where it lies inside,
  /// 0 to 1): by atom row, and in the build's bin order (as x_bin), by which a build prunes its
  /// candidates.
  view<double*> along_atom, along_sorted;
  /// Per slot: first atom row, atoms, pbc bits, half (1) or full (0), largest list needed, 1 when
  /// a list was built for it, 1 when its entries carry images (else: minimum image per pair).
  view<int* [7]> key;
  view<std::int64_t*> key_id;      ///< per slot: the system id it was built for
  view<std::int64_t*> call_first;  ///< per slot: its steps when the stage call began
  view<std::int64_t> builds;       ///< lists built since creation
  /// Per thread of a wide team (team.hpp, SystemLaunch): accumulators for its share of a half-pair
  /// loop, [thread][width x atoms of the system + sums] (NeighbourLists::reserve_team_acc()).
  view<double**> team_acc;
  view<int> needed;  ///< the batch's list_overflow: largest list needed that did not fit (<= max)
  int capacity = 0;  ///< neighbours per atom the list holds
  int max_capacity = 0;     ///< NeighbourOptions::max_neighbours
  int all_pairs_below = 0;  ///< NeighbourOptions::all_pairs_below
  double list_cutoff2 = 0;  ///< (cutoff + skin)^2
  double half_skin2 = 0;    ///< (skin / 2)^2

  /// Whether a system of `atoms` atoms uses a list.
  KOKKOS_INLINE_FUNCTION bool used_for(int atoms) const {
    return atoms >= all_pairs_below && list.extent(0) > 0;
  }

  /// The pairs of the list refresh() made current for this system (the team's threads call it
  /// together: a shifted list of a periodic system first fills x_now).
  KOKKOS_INLINE_FUNCTION ListPairs pairs(const TeamMember& team, int slot, int begin, int end,
                                         const systems::CellImage& cell, const Positions& x) const {
    // Views are never default-constructed and assigned here: see docs/building.md,
    // "Default-constructed Views and GCC 12".
    const bool min_image = key(slot, 6) == 0;
    const bool shifted_now =
        !min_image && (cell.periodic[0] || cell.periodic[1] || cell.periodic[2]);
    if (shifted_now) {
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end),
                           [&](int i) { less_whole_cells(cell, x, i); });
      team.team_barrier();
    }
    ListPairs p{list, num, plain, shifted_now ? x_now : x, {}, min_image, cell, team_acc};
    for (int c = 0; c < image_codes; ++c) {
      const int o[3] = {c / 9 - 1, (c / 3) % 3 - 1, c % 3 - 1};
      for (int d = 0; d < 3; ++d)
        p.shift[c][d] = o[0] * cell.h[d] + o[1] * cell.h[3 + d] + o[2] * cell.h[6 + d];
    }
    return p;
  }

  /// x_now(i) = x(i) less the whole cells of atom i's origin, as vectors of `cell`.
  KOKKOS_INLINE_FUNCTION void less_whole_cells(const systems::CellImage& cell, const Positions& x,
                                               int i) const {
    for (int d = 0; d < 3; ++d)
      x_now(i, d) = x(i, d) - (whole(i, 0) * cell.h[d] + whole(i, 1) * cell.h[3 + d] +
                               whole(i, 2) * cell.h[6 + d]);
  }

  /// The deformation F = h0^-1 h of the cell since the origin of `slot` (row vectors: r -> r F;
  /// f[3 d + e] is F's element d, e). All zero when the origin's cell cannot be inverted.
  KOKKOS_INLINE_FUNCTION void deformation(int slot, const systems::CellImage& cell,
                                          double* f) const {
    double h0[9];
    for (int k = 0; k < 9; ++k)
      h0[k] = origin_cell(slot, k);
    const systems::CellImage c0 = systems::make_cell_image(h0, 7);
    for (int d = 0; d < 3; ++d)
      for (int e = 0; e < 3; ++e)
        f[3 * d + e] = c0.inv[3 * d] * cell.h[e] + c0.inv[3 * d + 1] * cell.h[3 + e] +
                       c0.inv[3 * d + 2] * cell.h[6 + e];
  }

  /// Makes the list of the system in `slot` (atom rows [begin, end), id `id`, cell `cell`)
  /// current, rebuilding it when it is stale; returns the longest list any of its atoms needs,
  /// which is usable when it is at most `capacity`. Every thread of the team gets the result.
  template <bool Half>
  KOKKOS_INLINE_FUNCTION int refresh(const TeamMember& team, int slot, std::int64_t id, int begin,
                                     int end, const systems::CellImage& cell,
                                     const Positions& x) const {
    const int pbc =
        (cell.periodic[0] ? 1 : 0) | (cell.periodic[1] ? 2 : 0) | (cell.periodic[2] ? 4 : 0);
    const bool same = key(slot, 5) == 1 && key(slot, 0) == begin && key(slot, 1) == end - begin &&
                      key(slot, 2) == pbc && key(slot, 3) == (Half ? 1 : 0) && key_id(slot) == id;
    // Moved: the origin's list may miss a pair now closer than the cutoff (or there is none).
    bool moved = origin_built(slot) != 1;
    bool same_cell = !moved;
    for (int k = 0; k < 9; ++k)
      same_cell = same_cell && origin_cell(slot, k) == cell.h[k];
    if (!moved && same_cell) {
      moved = team_max(team, begin, end, [&](int i) {
                double d2 = 0;
                for (int d = 0; d < 3; ++d)
                  d2 += (x(i, d) - x_ref(i, d)) * (x(i, d) - x_ref(i, d));
                return d2 > half_skin2 ? 1.0 : 0.0;
              }) > 0;
    } else if (!moved) {  // the cell deformed: atoms move against their carried origins
      double f[9];
      deformation(slot, cell, f);
      double strain2 = 0;
      for (int d = 0; d < 3; ++d)
        for (int e = 0; e < 3; ++e) {
          const double g = f[3 * d + e] - (d == e ? 1.0 : 0.0);
          strain2 += g * g;
        }
      const double skin = 2 * math_sqrt(half_skin2);
      const double room = 0.5 * (skin - math_sqrt(strain2) * math_sqrt(list_cutoff2));
      moved = !(room > 0);  // also when the strain is not a number
      if (!moved)
        moved = team_max(team, begin, end, [&](int i) {
                  double d2 = 0;
                  for (int e = 0; e < 3; ++e) {
                    const double carried =
                        x_ref(i, 0) * f[e] + x_ref(i, 1) * f[3 + e] + x_ref(i, 2) * f[6 + e];
                    d2 += (x(i, e) - carried) * (x(i, e) - carried);
                  }
                  return d2 > room * room ? 1.0 : 0.0;
                }) > 0;
    }
    if (same && !moved)
      return key(slot, 4);
    team.team_barrier();  // every thread has read the key and the origin before they change
    if (moved) {          // a new origin: the current positions and cell
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end), [&](int i) {
        for (int d = 0; d < 3; ++d)
          x_ref(i, d) = x(i, d);
      });
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        for (int k = 0; k < 9; ++k)
          origin_cell(slot, k) = cell.h[k];
        origin_built(slot) = 1;
      });
      team.team_barrier();
      return build<Half>(team, slot, id, begin, end, cell, x_ref, pbc);
    }
    // Otherwise the slot, the rows or this object changed: the same list again, from the same
    // origin, so that a system's pairs (and their order) never depend on where it sits.
    double h0[9];
    for (int k = 0; k < 9; ++k)
      h0[k] = origin_cell(slot, k);
    return build<Half>(team, slot, id, begin, end, systems::make_cell_image(h0, pbc), x_ref, pbc);
  }

  // The build's parts (also used by BinPairs).
  /// Bins of width >= w along an extent (1 when it is not a usable number).
  /// One bin where there would be 2 reach or fewer: the stencil would visit them all anyway.
  KOKKOS_INLINE_FUNCTION static int bins_along(double extent, double w) {
    if (!(extent >= w) || !(w > 0))
      return 1;
    const double q = extent / w;
    const int n = q >= 1024 ? 1024 : static_cast<int>(q);
    return n > 2 * reach ? n : 1;
  }
  /// The bin of coordinate t (in bins), clamped to [0, nb); 0 for a non-finite t.
  KOKKOS_INLINE_FUNCTION static int clamp_bin(double t, int nb) {
    if (!(t >= 0))
      return 0;
    return t >= nb ? nb - 1 : static_cast<int>(t);
  }
  /// The floor of u (0 for a non-finite or absurd u).
  KOKKOS_INLINE_FUNCTION static double floor_of(double u) {
    if (!(u > -1e15 && u < 1e15))
      return 0;
    const double fl = static_cast<double>(static_cast<long long>(u));
    return fl > u ? fl - 1 : fl;
  }

  /// A stencil entry that stands for every image of its bin within rl (found per pair).
  static constexpr int any_image = 2;
  /// Bins are at least rl / reach wide, so atoms within rl are at most `reach` bins apart along
  /// each axis: the stencil is (2 reach + 1)^3 bins of (rl / reach)^3. Reach 2 (LAMMPS' default
  /// bins, 15.6 rl^3 of candidates against 27 rl^3) measured slower here (baton-bench dynamics, LJ
  /// liquid: 1.53e6 against 1.79e6 atom-steps/s; Cu EAM 1.07e6 against 1.10e6): the bins' loop
  /// costs more than the candidates it saves. Again with half stencils and blocked pair loops
  /// (2026-11-27, `baton-bench scale`, three runs each, taking turns): 2.72-2.81e6 against
  /// 2.88-2.94e6 on the liquid.
  static constexpr int reach = 1;

  /// Where bins lie: along each axis, coordinate u (fractional in a periodic cell, Cartesian for
  /// a cluster) maps to bin (u - lo) * scale.
  struct Bins {
    bool fractional = false;
    bool wide[3] = {false, false, false};  ///< periodic width >= rl
    double q[3] = {0, 0, 0};  ///< rl / width (a little more): the fractional reach of rl
    int nb[3] = {1, 1, 1};
    double lo[3] = {0, 0, 0};
    double scale[3] = {1, 1, 1};
    /// For a build's pruning (each_candidate): whether the axes are orthogonal (a cluster's
    /// always are), each bin's width in length units, and the most bins apart along each axis two
    /// atoms within rl can be.
    bool orthogonal = false;
    double width[3] = {0, 0, 0};
    double reach_bins[3] = {0, 0, 0};
  };

  /// Whether a build with bins `g` in `cell` prunes its candidates (each_candidate): when the
  /// stencil's images are the only ones (`shifted`) or there are none, and every axis has more
  /// than 2 reach bins (fewer, along a periodic axis, stand for every image). Only then are a
  /// bin's atoms ordered along the third axis; else by index (a bin may hold every atom of a
  /// small system, and the insertion sort would cost the square of them).
  KOKKOS_INLINE_FUNCTION static bool prunes(const Bins& g, const systems::CellImage& cell,
                                            bool shifted) {
    const bool periodic = cell.periodic[0] || cell.periodic[1] || cell.periodic[2];
    if (periodic && !shifted)
      return false;
    for (int k = 0; k < 3; ++k)
      if (g.nb[k] <= 2 * reach)
        return false;
    return true;
  }

  KOKKOS_INLINE_FUNCTION Bins bins_for(const TeamMember& team, int begin, int end,
                                       const systems::CellImage& cell, int pbc) const {
    Bins g;
    const double rl = math_sqrt(list_cutoff2);
    g.fractional = pbc != 0;
    for (int k = 0; k < 3; ++k) {
      if (g.fractional) {
        const double c2 = cell.inv[k] * cell.inv[k] + cell.inv[3 + k] * cell.inv[3 + k] +
                          cell.inv[6 + k] * cell.inv[6 + k];  // 1 / width^2
        g.nb[k] = c2 > 0 ? bins_along(1 / math_sqrt(c2), rl / reach) : 1;
        g.wide[k] = c2 > 0 && 1 / math_sqrt(c2) >= rl;
        g.q[k] = rl * math_sqrt(c2) * (1 + 1e-9) + 1e-12;
        g.scale[k] = g.nb[k];
      } else {
        double lo = 0, hi = 0;
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, begin, end),
            [&](int i, double& m) { m = x_at(i, k) < m ? x_at(i, k) : m; },
            Kokkos::Min<double>(lo));
        Kokkos::parallel_reduce(
            Kokkos::TeamThreadRange(team, begin, end),
            [&](int i, double& m) { m = x_at(i, k) > m ? x_at(i, k) : m; },
            Kokkos::Max<double>(hi));
        g.nb[k] = bins_along(hi - lo, rl / reach);
        g.lo[k] = lo;
        g.scale[k] = hi > lo ? g.nb[k] / (hi - lo) : 0;
      }
    }
    // At most one bin per atom (the bin arrays use the system's atom rows): coarser bins are
    // still at least rl / reach wide.
    const long long atoms = end - begin;
    while (static_cast<long long>(g.nb[0]) * g.nb[1] * g.nb[2] > atoms) {
      const int k = g.nb[0] >= g.nb[1] && g.nb[0] >= g.nb[2] ? 0 : (g.nb[1] >= g.nb[2] ? 1 : 2);
      const int coarser = (g.nb[k] + 1) / 2;
      g.scale[k] *= static_cast<double>(coarser) / g.nb[k];
      g.nb[k] = coarser;
    }
    // Bin widths: a cell's widths (the distances between its faces) over its bins, or a
    // cluster's 1 / scale. A cell is orthogonal when its vectors are (then distances add up
    // in squares along its axes).
    g.orthogonal = !g.fractional;
    if (g.fractional) {
      const double* h = cell.h;
      g.orthogonal = h[0] * h[3] + h[1] * h[4] + h[2] * h[5] == 0 &&
                     h[0] * h[6] + h[1] * h[7] + h[2] * h[8] == 0 &&
                     h[3] * h[6] + h[4] * h[7] + h[5] * h[8] == 0;
    }
    for (int k = 0; k < 3; ++k) {
      if (g.fractional) {
        const double c2 = cell.inv[k] * cell.inv[k] + cell.inv[3 + k] * cell.inv[3 + k] +
                          cell.inv[6 + k] * cell.inv[6 + k];
        g.width[k] = c2 > 0 ? 1 / (math_sqrt(c2) * g.scale[k]) : 0;
        g.reach_bins[k] = g.q[k] * g.scale[k];
      } else {
        g.width[k] = g.scale[k] > 0 ? 1 / g.scale[k] : 0;
        g.reach_bins[k] = rl * g.scale[k] * (1 + 1e-9) + 1e-12;
      }
    }
    return g;
  }

  /// Positions the binning reads: the list's origin.
  KOKKOS_INLINE_FUNCTION double x_at(int i, int k) const { return x_ref(i, k); }

  /// Atom i's bin along each axis, (`whole`) the whole cells it lies beyond the cell along the
  /// periodic ones, and (`within`) where it lies inside its bin along each axis, 0 to 1 (0 when
  /// its coordinate is not a number).
  KOKKOS_INLINE_FUNCTION void bin_coords(const Bins& g, const systems::CellImage& cell, int i,
                                         int* c, double* whole = nullptr,
                                         double* within = nullptr) const {
    for (int k = 0; k < 3; ++k) {
      double t;
      if (whole)
        whole[k] = 0;
      if (g.fractional) {
        double u =
            x_at(i, 0) * cell.inv[k] + x_at(i, 1) * cell.inv[3 + k] + x_at(i, 2) * cell.inv[6 + k];
        if (cell.periodic[k]) {
          const double w = floor_of(u);
          u -= w;
          if (whole)
            whole[k] = w;
        }
        t = u * g.scale[k];
      } else {
        t = (x_at(i, k) - g.lo[k]) * g.scale[k];
      }
      c[k] = clamp_bin(t, g.nb[k]);
      if (within) {
        const double w = t - c[k];
        within[k] = w > 0 ? (w < 1 ? w : 1) : 0;  // 0 also when not a number
      }
    }
  }

  /// Calls f(j, image code, dx, dy, dz) for every neighbour j of atom i closer than rl at the
  /// positions less their whole cells (x_now; j's read from xw: x_now, or for a Build x_bin, whose
  /// rows follow `sorted`) in `cell`, found through the bins `g` the last build made in `bin_cell`
  /// (its origin's cell): the bins up to `reach` away from i's. A Build calls f(j, image code,
  /// inside) for every candidate instead, inside telling whether it is a neighbour (so that the
  /// build appends without a branch). Half: each pair once, from a half
  /// stencil: only bins whose offset from i's (per axis, in bins, -reach to reach) is
  /// lexicographically positive, and in i's own bin the atoms j > i. The offset of i's bin seen
  /// from j's is the negated one, so exactly one of the two atoms finds the pair.
  /// Along a periodic axis at least rl wide, each image of j the stencil meets is a distinct one:
  /// with more than 2 reach bins the stencil wraps around (and the wrap is the image); with fewer,
  /// every bin is visited and the images of j within rl / width (fractional) are tried. Such
  /// entries carry their image (`shifted`) and force evaluations need no minimum images. Only a
  /// periodic axis narrower than rl makes entries minimum images (cutoff_problem still keeps the
  /// cutoff within half the width). Complete while refresh()'s rule holds (see the file's top).
  template <bool Half, bool Build, class F>
  KOKKOS_INLINE_FUNCTION F each_candidate(const Bins& g, const systems::CellImage& bin_cell,
                                          const systems::CellImage& cell, bool shifted, int begin,
                                          int i, const Positions& xw, F f) const {
    const double rl2 = list_cutoff2;
    const bool periodic = cell.periodic[0] || cell.periodic[1] || cell.periodic[2];
    int c[3];
    double within[3];
    bin_coords(g, bin_cell, i, c, nullptr, within);
    // Along each axis, the bins to visit, the image of j each stands for and its offset from c
    // (wrapped bins count from c: -reach to reach; with every bin visited, at most 2 reach bins,
    // the difference of the two).
    int bin[3][6], image[3][6], off[3][6], span[3];
    for (int k = 0; k < 3; ++k) {
      const bool along = periodic && cell.periodic[k];
      span[k] = 0;
      if (along && shifted && g.nb[k] > 2 * reach) {
        for (int w = c[k] - reach; w <= c[k] + reach; ++w) {
          const int o = w < 0 ? -1 : (w >= g.nb[k] ? 1 : 0);
          image[k][span[k]] = o;
          bin[k][span[k]] = w - o * g.nb[k];
          off[k][span[k]] = w - c[k];
          ++span[k];
        }
      } else if (along && shifted) {
        for (int w = 0; w < g.nb[k]; ++w) {
          image[k][span[k]] = any_image;
          bin[k][span[k]] = w;
          off[k][span[k]] = w - c[k];
          ++span[k];
        }
      } else if (g.nb[k] <= 2 * reach) {
        for (int w = 0; w < g.nb[k]; ++w) {
          image[k][span[k]] = 0;
          bin[k][span[k]] = w;
          off[k][span[k]] = w - c[k];
          ++span[k];
        }
      } else {
        for (int w = c[k] - reach; w <= c[k] + reach; ++w)
          if (along || (w >= 0 && w < g.nb[k])) {  // along: min images, wrap the bin only
            image[k][span[k]] = 0;
            bin[k][span[k]] = (w + g.nb[k]) % g.nb[k];
            off[k][span[k]] = w - c[k];
            ++span[k];
          }
      }
    }
    const double xi[3] = {x_now(i, 0), x_now(i, 1), x_now(i, 2)};  // x_bin is x_now, sorted
    if constexpr (Build) {
      // A build prunes where the stencil's images are the only ones (or there are none): it skips
      // the bins that lie rl or more from atom i and, in the others, the atoms too far along the
      // third axis (a bin's atoms are in order along it: along_sorted). The distances are lower
      // bounds, short by a margin of 1e-9 bins: no pair closer than rl is skipped. The pairs
      // come in each_candidate's order.
      if (prunes(g, cell, shifted)) {
        constexpr double margin = 1e-9;
        // Bins between atom i's place and the nearest side of a bin `o` bins away along axis k.
        const auto gap = [&](int k, int o) {
          const double d = o > 0 ? o - within[k] : (o < 0 ? -o - 1 + within[k] : 0.0);
          return d > margin ? d - margin : 0.0;
        };
        const double at = c[2] + within[2];  // atom i along the third axis, in bins
        // Four candidates at a time take whole bins: skipping the atoms too far along the third
        // axis (a square root and a division per column, two branches that go either way per
        // run) measured no faster there (docs/performance.md).
        constexpr bool four = std::is_same_v<F, AppendAvx2>;
        const int* const srt = sorted.data();
        const double* const xb = xw.data();
        const double* const along = along_sorted.data();
#if BATON_AVX2_DISPATCH
        // Rows the arrays hold: four candidates at a time read up to p + 3 < rows.
        const int rows =
            static_cast<int>(sorted.extent(0) < xw.extent(0) ? sorted.extent(0) : xw.extent(0));
#endif
        for (int o0 = 0; o0 < span[0]; ++o0)
          for (int o1 = 0; o1 < span[1]; ++o1) {
            const int sign01 = off[0][o0] != 0 ? off[0][o0] : off[1][o1];
            if (Half && sign01 < 0)
              continue;
            // The column's distance across the third axis (squared; orthogonal axes), and the
            // bins along it an atom within rl may lie from atom i.
            const double a0 = gap(0, off[0][o0]), a1 = gap(1, off[1][o1]);
            double across2 = 0, window = g.reach_bins[2] + margin;
            if (g.orthogonal) {
              across2 =
                  (a0 * g.width[0]) * (a0 * g.width[0]) + (a1 * g.width[1]) * (a1 * g.width[1]);
              if (across2 >= rl2)
                continue;
              if (g.width[2] > 0 && !four)
                window = math_sqrt(rl2 - across2) / g.width[2] + margin;
            } else if (a0 >= g.reach_bins[0] || a1 >= g.reach_bins[1]) {
              continue;
            }
            // The atoms p0 to p1 of bins in a row, whose images are the same, with their image
            // code, shift t and place from: those within the window along the third axis (a
            // run is in order along it), then each a candidate.
            const auto take = [&](int p0, int p1, int sign, int code, const double* t,
                                  double from) {
              if (!four) {
                while (p0 < p1 && along[p0] <= from - window)
                  ++p0;
                while (p1 > p0 && along[p1 - 1] >= from + window)
                  --p1;
              }
              int p = p0;
#if BATON_AVX2_DISPATCH
              if constexpr (four)  // the same entries
                p = append_candidates_avx2(srt, xb, p0, p1, rows, xi, t, rl2, code, image_bits,
                                           sign != 0 ? 0 : (Half ? INT_MIN : i), sign != 0 ? -1 : i,
                                           f.row, f.m, f.last + 1);
#endif
              for (; p < p1; ++p) {
                const int j = srt[p];
                if (sign == 0 && (Half ? j <= i : j == i))
                  continue;
                const double d0 = xi[0] - xb[3 * p] - t[0], d1 = xi[1] - xb[3 * p + 1] - t[1],
                             d2 = xi[2] - xb[3 * p + 2] - t[2];
                f(j, code, d0 * d0 + d1 * d1 + d2 * d2 < rl2);
              }
            };
            // A run of bins not yet taken (AppendAvx2 joins the column's next bins to it where
            // they follow in memory with the same image, outside atom i's own bin).
            int run0 = 0, run1 = 0, run_sign = 0, run_code = 0, run_image = 0;
            double run_t[3] = {0, 0, 0}, run_from = 0;
            for (int o2 = 0; o2 < span[2]; ++o2) {
              const int sign = sign01 != 0 ? sign01 : off[2][o2];
              if (Half && sign < 0)
                continue;
              if (four && g.orthogonal) {
                const double a2 = gap(2, off[2][o2]) * g.width[2];
                if (a2 * a2 + across2 >= rl2)
                  continue;
              } else if (gap(2, off[2][o2]) >= window) {
                continue;
              }
              const int b = (bin[0][o0] * g.nb[1] + bin[1][o1]) * g.nb[2] + bin[2][o2];
              const int p0 = begin + bin_start(begin + b), p1 = p0 + bin_fill(begin + b);
              if constexpr (four) {
                if (run1 > run0 && p0 == run1 && sign != 0 && run_sign != 0 &&
                    image[2][o2] == run_image) {
                  run1 = p1;
                  continue;
                }
                if (run1 > run0)
                  take(run0, run1, run_sign, run_code, run_t, run_from);
              }
              const int code = 9 * (image[0][o0] + 1) + 3 * (image[1][o1] + 1) + (image[2][o2] + 1);
              double t[3];
              for (int k = 0; k < 3; ++k)
                t[k] = image[0][o0] * cell.h[k] + image[1][o1] * cell.h[3 + k] +
                       image[2][o2] * cell.h[6 + k];
              // Atom j lies along[p] + image nb - at bins from atom i: within the window only.
              const double from = at - image[2][o2] * g.nb[2];
              if constexpr (four) {
                run0 = p0;
                run1 = p1;
                run_sign = sign;
                run_code = code;
                run_image = image[2][o2];
                for (int k = 0; k < 3; ++k)
                  run_t[k] = t[k];
                run_from = from;
              } else {
                take(p0, p1, sign, code, t, from);
              }
            }
            if (run1 > run0)
              take(run0, run1, run_sign, run_code, run_t, run_from);
          }
        return f;
      }
    }
    for (int o0 = 0; o0 < span[0]; ++o0)
      for (int o1 = 0; o1 < span[1]; ++o1)
        for (int o2 = 0; o2 < span[2]; ++o2) {
          // Half: the sign of the offset, lexicographically (0: i's own bin).
          const int sign =
              off[0][o0] != 0 ? off[0][o0] : (off[1][o1] != 0 ? off[1][o1] : off[2][o2]);
          if (Half && sign < 0)
            continue;
          const int fixed[3] = {image[0][o0], image[1][o1], image[2][o2]};
          const bool any = fixed[0] == any_image || fixed[1] == any_image || fixed[2] == any_image;
          // The common case: one image, the stencil's, and its shift.
          const int code = shifted && !any
                               ? 9 * (fixed[0] + 1) + 3 * (fixed[1] + 1) + (fixed[2] + 1)
                               : image_codes / 2;
          double t[3] = {0, 0, 0};
          if (shifted && !any)
            for (int k = 0; k < 3; ++k)
              t[k] = fixed[0] * cell.h[k] + fixed[1] * cell.h[3 + k] + fixed[2] * cell.h[6 + k];
          const int b = (bin[0][o0] * g.nb[1] + bin[1][o1]) * g.nb[2] + bin[2][o2];
          const int s0 = begin + bin_start(begin + b), s1 = s0 + bin_fill(begin + b);
          // Candidate p of the bin: false for i itself, or an atom the half stencil leaves to
          // the other end of the pair; else its row j and displacement d.
          const auto candidate = [&](int p, int& j, double* d) {
            j = sorted(p);
            if (sign == 0 && (Half ? j <= i : j == i))
              return false;
            for (int k = 0; k < 3; ++k)
              d[k] = xi[k] - (Build ? xw(p, k) : xw(j, k)) - t[k];
            return true;
          };
          if (!any) {  // the common case, in a loop of its own
            const bool min_image = !shifted && periodic;
            for (int p = s0; p < s1; ++p) {
              int j;
              double d[3];
              if (!candidate(p, j, d))
                continue;
              if (min_image)
                cell.minimum_image(d[0], d[1], d[2]);
              const bool inside = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] < rl2;
              if constexpr (Build)
                f(j, code, inside);
              else if (inside)
                f(j, code, d[0], d[1], d[2]);
            }
            continue;
          }
          for (int p = s0; p < s1; ++p) {
            int j;
            double d[3];
            if (!candidate(p, j, d))
              continue;
            // Along an axis with fewer than three bins: the images of j whose fractional
            // distance is within rl / width (at most two).
            int lo[3], hi[3];
            for (int k = 0; k < 3; ++k) {
              if (fixed[k] != any_image) {
                lo[k] = hi[k] = fixed[k];
                continue;
              }
              const double du =
                  d[0] * cell.inv[k] + d[1] * cell.inv[3 + k] + d[2] * cell.inv[6 + k];
              const bool near = du < g.q[k] && du > -g.q[k];
              lo[k] = du < g.q[k] - 1 ? -1 : (near ? 0 : 1);
              hi[k] = du > 1 - g.q[k] ? 1 : (near ? 0 : -1);
            }
            for (int a0 = lo[0]; a0 <= hi[0]; ++a0)
              for (int a1 = lo[1]; a1 <= hi[1]; ++a1)
                for (int a2 = lo[2]; a2 <= hi[2]; ++a2) {
                  double e[3];
                  for (int k = 0; k < 3; ++k)
                    e[k] = d[k] - (a0 * cell.h[k] + a1 * cell.h[3 + k] + a2 * cell.h[6 + k]);
                  if (e[0] * e[0] + e[1] * e[1] + e[2] * e[2] >= rl2)
                    continue;
                  const int code = 9 * (a0 + 1) + 3 * (a1 + 1) + (a2 + 1);
                  if constexpr (Build)
                    f(j, code, true);
                  else
                    f(j, code, e[0], e[1], e[2]);
                }
          }
        }
    return f;
  }

  /// A build's list row: every candidate is written and only the neighbours are kept (no branch
  /// to mispredict); past the capacity the last entry is overwritten, and the list is not used.
  struct Append {
    int* row;
    std::size_t stride;
    int last;  ///< capacity - 1 (>= 0)
    int m;     ///< neighbours so far
    KOKKOS_INLINE_FUNCTION void operator()(int j, int code, bool inside) {
      row[stride * static_cast<std::size_t>(m < last ? m : last)] = list_entry(j, code);
      m += inside ? 1 : 0;
    }
  };
  /// An Append whose build (build_row_avx2, in builds with BATON_AVX2_DISPATCH) takes the
  /// candidates four at a time (detail/list_avx2.hpp): the same list.
  struct AppendAvx2 : Append {};
#if BATON_AVX2_DISPATCH
  /// Atom i's row of a pruned build in an AVX2 copy: its candidates four at a time, the same
  /// entries in the same order as the generic copy.
  template <bool Half>
  BATON_NOINLINE BATON_TARGET_AVX2 int build_row_avx2(const Bins& g, const systems::CellImage& cell,
                                                      bool shifted, int begin, int i,
                                                      const Append& row) const {
    return each_candidate<Half, true>(g, cell, cell, shifted, begin, i, x_bin, AppendAvx2{row}).m;
  }
#endif
  /// A build without room for a list: the neighbours counted.
  struct Count {
    int m;
    KOKKOS_INLINE_FUNCTION void operator()(int, int, bool inside) { m += inside ? 1 : 0; }
  };

  template <bool Half>
  KOKKOS_INLINE_FUNCTION int build(const TeamMember& team, int slot, std::int64_t id, int begin,
                                   int end, const systems::CellImage& cell, const Positions& x,
                                   int pbc) const {
    // x is the origin, x_ref.
    const Bins g = bins_for(team, begin, end, cell, pbc);
    const int nbins = g.nb[0] * g.nb[1] * g.nb[2];
    bool shifted = true;
    for (int k = 0; k < 3; ++k)
      shifted = shifted && (!pbc || !cell.periodic[k] || g.wide[k]);
    const bool in_order_along = prunes(g, cell, shifted);
    // Counting sort of the atoms by bin: sizes, starts, then the atoms of each bin in order along
    // the third axis (by where they lie in the bin, then by index) where the build prunes, else
    // by index.
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 0, nbins),
                         [&](int b) { bin_fill(begin + b) = 0; });
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end), [&](int i) {
      int c[3];
      double w[3], u[3];
      bin_coords(g, cell, i, c, w, u);
      for (int d = 0; d < 3; ++d)
        whole(i, d) = w[d];
      along_atom(i) = c[2] + u[2];
      const int b = (c[0] * g.nb[1] + c[1]) * g.nb[2] + c[2];
      bin_of(i) = b;
      Kokkos::atomic_fetch_add(&bin_fill(begin + b), 1);
    });
    team.team_barrier();
    Kokkos::parallel_scan(Kokkos::TeamThreadRange(team, 0, nbins),
                          [&](int b, int& start, bool final) {
                            if (final)
                              bin_start(begin + b) = start;
                            start += bin_fill(begin + b);
                          });
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 0, nbins),
                         [&](int b) { bin_fill(begin + b) = 0; });
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end), [&](int i) {
      const int b = bin_of(i);
      sorted(begin + bin_start(begin + b) + Kokkos::atomic_fetch_add(&bin_fill(begin + b), 1)) = i;
    });
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 0, nbins), [&](int b) {
      int* a = &sorted(begin + bin_start(begin + b));
      const int n = bin_fill(begin + b);
      const auto before = [&](int j, int k) {
        if (!in_order_along)
          return j < k;
        return along_atom(j) < along_atom(k) || (along_atom(j) == along_atom(k) && j < k);
      };
      for (int p = 1; p < n; ++p)  // insertion sort: a bin holds a few atoms
        for (int q = p; q > 0 && before(a[q], a[q - 1]); --q) {
          const int t = a[q];
          a[q] = a[q - 1];
          a[q - 1] = t;
        }
    });
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end),
                         [&](int i) { less_whole_cells(cell, x, i); });
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end), [&](int p) {
      const int i = sorted(p);
      for (int d = 0; d < 3; ++d)
        x_bin(p, d) = x_now(i, d);
      along_sorted(p) = along_atom(i);
    });
    team.team_barrier();
    const int longest = static_cast<int>(team_max(team, begin, end, [&](int i) {
      int m = 0;
      if (capacity > 0) {
        const Append row{&list(i, 0), list.stride(1), capacity - 1, 0};
#if BATON_AVX2_DISPATCH
        if (row.stride == 1 && prunes(g, cell, shifted) && host_has_avx2())
          m = build_row_avx2<Half>(g, cell, shifted, begin, i, row);
        else
#endif
          m = each_candidate<Half, true>(g, cell, cell, shifted, begin, i, x_bin, row).m;
      } else
        m = each_candidate<Half, true>(g, cell, cell, shifted, begin, i, x_bin, Count{0}).m;
      num(i) = m;
      int none = 1;  // no entry of the row carries an image
      for (int k = 0; k < (m < capacity ? m : capacity); ++k)
        none &= (list(i, k) & ((1 << image_bits) - 1)) == image_codes / 2 ? 1 : 0;
      plain(i) = none;
      return static_cast<double>(m);
    }));
    team.team_barrier();
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      key(slot, 0) = begin;
      key(slot, 1) = end - begin;
      key(slot, 2) = pbc;
      key(slot, 3) = Half ? 1 : 0;
      key(slot, 4) = longest;
      key(slot, 5) = 1;
      key(slot, 6) = shifted ? 1 : 0;
      key_id(slot) = id;
      Kokkos::atomic_fetch_add(&builds(), std::int64_t(1));
      if (longest > capacity && longest <= max_capacity)
        Kokkos::atomic_fetch_max(&needed(), longest);
    });
    team.team_barrier();
    return longest;
  }
};

/// The pairs of a system whose list did not fit: found through the bins of its last build, as the
/// build finds them (O(N), about six times the candidates of a list), each with its displacement.
struct BinPairs {
  NeighbourData lists;
  NeighbourData::Bins bins;
  systems::CellImage bin_cell;  ///< the cell of the build's origin, which the bins are in
  systems::CellImage cell;      ///< the cell now
  bool shifted = false;
  int begin = 0;
  Positions xw;  ///< positions less their whole cells (x_now)
  template <bool Half, class F>
  KOKKOS_INLINE_FUNCTION void each(int i, const F& f) const {
    lists.each_candidate<Half, false>(
        bins, bin_cell, cell, shifted, begin, i, xw,
        [&](int j, int, double dx, double dy, double dz) { f(j, dx, dy, dz); });
  }
};

/// The BinPairs of the system in `slot` after refresh() (the team's threads call it together: it
/// fills x_now with the positions less their whole cells).
KOKKOS_INLINE_FUNCTION BinPairs bin_pairs(const NeighbourData& lists, const TeamMember& team,
                                          int slot, int begin, int end,
                                          const systems::CellImage& cell, const Positions& x) {
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end),
                       [&](int i) { lists.less_whole_cells(cell, x, i); });
  team.team_barrier();
  double h0[9];
  for (int k = 0; k < 9; ++k)
    h0[k] = lists.origin_cell(slot, k);
  const systems::CellImage bin_cell = systems::make_cell_image(h0, lists.key(slot, 2));
  return BinPairs{lists,
                  lists.bins_for(team, begin, end, bin_cell, lists.key(slot, 2)),
                  bin_cell,
                  cell,
                  lists.key(slot, 6) == 1,
                  begin,
                  lists.x_now};
}

}  // namespace detail

/// The neighbour lists a stage keeps for the batch it runs (one object per stage; copies share
/// the lists). Sized for the batch's atom capacity when prepared; grows its capacity in
/// neighbours per atom when a list did not fit.
class NeighbourLists {
 public:
  /// No lists yet. User-provided on purpose (see systems::SystemsBatch()).
  NeighbourLists() {}  // NOLINT(modernize-use-equals-default)
  explicit NeighbourLists(NeighbourOptions settings);

  const NeighbourOptions& settings() const noexcept { return settings_; }

  /// Ready for `batch` and pairs up to sqrt(cutoff_squared) + skin: allocates for the batch's
  /// capacity the first time and when it changed, and forgets every list when the batch, its
  /// capacity, the cutoff or the skin changed. Grows to the overflow the batch's owner noted
  /// (systems::SystemsBatch::note_list_overflow()) when it reads it itself.
  void prepare(const systems::SystemsBatch& batch, double cutoff_squared, double skin);

  /// What the kernels use.
  const detail::NeighbourData& data() const noexcept { return data_; }

  /// After a kernel that refreshed lists: when a list needed more room than the capacity (up to
  /// max_neighbours), grows the capacity past it, forgets every list, and returns true (the
  /// caller then runs its kernel again). Reads the batch's list_overflow back (one copy).
  bool grow();
  /// grow() after a kernel on slots [first, first + n) of `batch`: reads nothing back when none of
  /// them is big enough for a list (the host knows their sizes).
  bool grow(const systems::SystemsBatch& batch, int first, int n);
  /// grow() after a stage's kernel on the whole batch, unless the batch's owner reads the
  /// overflow itself (systems::SystemsBatch::defer_list_overflow()): then false, and the lists grow
  /// at the next prepare() to what the owner noted.
  bool grow_after_call(const systems::SystemsBatch& batch);
  /// Grows as grow() does for a list of `needed` neighbours, read back by the caller; false when
  /// the capacity holds it already.
  bool grow_to(int needed);

  /// Begins a stage's advance() call: prepare(), then records every slot's step count as where
  /// the call began (the stage counts its max_steps from there, also when its kernel runs again
  /// after grow()).
  void begin_call(const systems::SystemsBatch& batch, double cutoff_squared, double skin);

  /// Room for wide teams of `threads` threads on systems of up to `atoms` atoms in their half-pair
  /// loops (NeighbourData::team_acc; kept, and grown only when too small).
  void reserve_team_acc(int threads, int atoms);

  /// Neighbours per atom the lists hold now.
  int capacity() const noexcept { return data_.capacity; }
  /// Lists built so far (one copy to the host).
  std::int64_t builds() const;

 private:
  NeighbourOptions settings_;
  detail::NeighbourData data_;
  int atom_capacity_ = -1, system_capacity_ = -1;
  const void* batch_ = nullptr;  ///< the batch the lists are for (its list_origin's memory)
  double cutoff_squared_ = -1, skin_ = -1;
};

}  // namespace baton::dynamics
