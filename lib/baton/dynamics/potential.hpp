#pragma once
/// \file
/// What a potential is to Baton's stages (FireStage, VerletStage, LangevinStage and
/// compute_forces are templates over it), and the pair loop that turns a pair potential into
/// forces, energy and virial inside a system's team.
///
/// A potential is a host object `P` (its parameters) with
///
///     K kernel() const;
///
/// which checks the parameters (throwing baton::Error that names the bad one) and returns what the
/// kernels use: a trivially copyable object `K`, copied into every kernel. A pair potential's `K`
/// has two device functions:
///
///     KOKKOS_FUNCTION double cutoff_squared() const;  // pairs with r^2 >= this do not interact
///     KOKKOS_FUNCTION void pair(int species_i, int species_j, double r2,
///                               double& energy, double& force_over_r) const;
///
/// `pair` gives the pair's energy at squared distance r2 < cutoff_squared() and -dE/dr / r, so that
/// the force on atom i from atom j is force_over_r * (x_i - x_j). `species_i` and `species_j` are
/// the atoms' indices in the caller's systems::SpeciesTable. `K` may be `P` itself (`P kernel()
/// const` returning a checked copy). A `K` whose pair() is defined and cheap at any r2 (beyond the
/// cutoff too) may say so, `static constexpr bool pair_at_any_r2 = true;`, for the host's
/// small-system loop in lanes (small_pair_forces). See docs/dynamics.md for a complete example.

#include <Kokkos_Core.hpp>
#include <type_traits>
#include <utility>

#include "baton/dynamics/neighbours.hpp"
#include "baton/dynamics/random.hpp"
#include "baton/dynamics/team.hpp"
#include "baton/systems/cell.hpp"

namespace baton::dynamics {

/// What a force evaluation gives for one system.
struct SystemForces {
  double energy = 0;
  double fmax = 0;  ///< largest atom force norm
  /// Sum over pairs of r_ij (x) F_ij (r_ij = x_i - x_j, F_ij the force on i from j): xx, yy, zz,
  /// xy, xz, yz, in energy units (LAMMPS' convention; pressure = (N k T + trace / 3) / V).
  /// Computed only where asked (see team_forces), otherwise 0.
  double virial[6] = {0, 0, 0, 0, 0, 0};
};

/// The kernel object of potential P.
template <class P>
using kernel_t = decltype(std::declval<const P&>().kernel());

namespace detail {

template <class K, class = void>
struct is_pair_kernel : std::false_type {};
template <class K>
struct is_pair_kernel<K,
                      std::void_t<decltype(std::declval<const K&>().pair(
                                      0, 0, 0.0, std::declval<double&>(), std::declval<double&>())),
                                  decltype(std::declval<const K&>().cutoff_squared())>>
    : std::true_type {};

/// Pair contributions to the six virial components.
KOKKOS_INLINE_FUNCTION void add_pair_virial(double* w, double s, double dx, double dy, double dz) {
  w[0] += s * dx * dx;
  w[1] += s * dy * dy;
  w[2] += s * dz * dz;
  w[3] += s * dx * dy;
  w[4] += s * dx * dz;
  w[5] += s * dy * dz;
}

/// team_pair_forces' loop where the team's threads share the atoms i and loop over all their
/// j != i (no atomics): energy into e, and the virial into w when Virial, in the same pass.
template <bool Virial, class K, class Pairs>
KOKKOS_INLINE_FUNCTION void all_atoms_pair_forces(const TeamMember& team, const K& pot,
                                                  const SpeciesView& species, const Positions& f,
                                                  const Pairs& pairs, int begin, int end, double& e,
                                                  double* w) {
  const double rc2 = pot.cutoff_squared();
  // Atom i's forces into f, its pair energies into acc[0] and, when Virial, its pairs' virial into
  // acc[1..7) (each pair is seen from both ends: the halves come below).
  const auto atom = [&](int i, double* acc) {
    const int si = species(i);
    double fx = 0, fy = 0, fz = 0, ei = 0;
    double wi[6] = {0, 0, 0, 0, 0, 0};
    pairs.template each<false>(i, [&](int j, double dx, double dy, double dz) {
      const double r2 = dx * dx + dy * dy + dz * dz;
      if (r2 < rc2) {
        double pe = 0, s = 0;
        pot.pair(si, species(j), r2, pe, s);
        ei += pe;
        fx += s * dx;
        fy += s * dy;
        fz += s * dz;
        if constexpr (Virial)
          add_pair_virial(wi, s, dx, dy, dz);
      }
    });
    f(i, 0) = fx;
    f(i, 1) = fy;
    f(i, 2) = fz;
    acc[0] += ei;
    if constexpr (Virial)
      for (int c = 0; c < 6; ++c)
        acc[1 + c] += wi[c];
  };
  if constexpr (Virial) {
    const Sums<7> sums = team_sums<7>(team, begin, end, atom);
    e = 0.5 * sums.v[0];
    for (int c = 0; c < 6; ++c)
      w[c] = 0.5 * sums.v[1 + c];
  } else {
    e = 0.5 * team_sum(team, begin, end, [&](int i) {
          double ei = 0;
          atom(i, &ei);
          return ei;
        });
  }
}

/// all_atoms_pair_forces out of line: a wide team's loop where the pairs are not a list, kept out
/// of the host's one-thread loop that it would otherwise make larger.
template <bool Virial, class K, class Pairs>
BATON_NOINLINE KOKKOS_FUNCTION void all_atoms_pair_forces_apart(
    const TeamMember& team, const K& pot, const SpeciesView& species, const Positions& f,
    const Pairs& pairs, int begin, int end, double& e, double* w) {
  all_atoms_pair_forces<Virial>(team, pot, species, f, pairs, begin, end, e, w);
}

template <class K, class = void>
struct declares_pair_at_any_r2 : std::false_type {};
template <class K>
struct declares_pair_at_any_r2<K, std::enable_if_t<K::pair_at_any_r2>> : std::true_type {};

/// v when r2 < rc2, otherwise +0, without a comparison: r2 - rc2 is negative exactly when
/// r2 < rc2 (for any r2 and rc2 that are not NaN), and where_negative selects on its sign bit.
/// Compilers vectorise it where they keep an FP comparison and its select as a branch (GCC does,
/// under its default -ftrapping-math).
KOKKOS_INLINE_FUNCTION double keep_below(double v, double r2, double rc2) {
  return where_negative(r2 - rc2, v, 0.0);
}

/// Systems of at most this many atoms, from all pairs, take small_pair_forces on the host when
/// their kernel declares `static constexpr bool pair_at_any_r2 = true`.
inline constexpr int small_pairs_max = 64;
/// The lanes of small_pair_forces: each keeps its own sums (pairs j0 + l, j0 + l + L, ...).
inline constexpr int pair_lanes = 8;

/// The forces on atoms [begin, end) of a small non-periodic system (end - begin <=
/// small_pairs_max) from all its pairs, each once, on one thread; its pairs' energy to e. The
/// positions and forces are copied into arrays of their own, one per axis, and atom i's row of
/// pairs j > i runs pair_lanes at a time with no branch: pot.pair is called for every pair and its
/// terms kept only within the cutoff (keep_below; the slots after the last atom, up to a whole
/// number of lanes, have a cutoff of -1, so whatever pair gives there is dropped too). The
/// compiler vectorises the lanes, the potential's terms (LennardJones' division) included. The
/// sums of atom i's force and of the energy are kept per lane and added at the end of the row, so
/// their bits differ from one loop's (the same on every run and rank count). Only for kernels
/// whose pair() is defined and cheap at any r2 (pair_at_any_r2).
template <class K>
KOKKOS_FORCEINLINE_FUNCTION void small_pair_forces_body(const K& pot, const int* __restrict sp,
                                                        const double* __restrict xp,
                                                        double* __restrict fp, int begin, int end,
                                                        double& e) {
  constexpr int L = pair_lanes;
  constexpr int cap = small_pairs_max + L;
  // Per slot: position, force, species and the squared cutoff of its pairs (-1: padding).
  double px[cap], py[cap], pz[cap], gx[cap], gy[cap], gz[cap], cut[cap];
  int s[cap];
  const int n = end - begin;
  e = 0;
  if (n <= 0)
    return;
  const double rc2 = pot.cutoff_squared();
  for (int k = 0; k < cap; ++k) {
    const int a = begin + (k < n ? k : 0);
    px[k] = xp[3 * a];
    py[k] = xp[3 * a + 1];
    pz[k] = xp[3 * a + 2];
    s[k] = sp[a];
    cut[k] = k < n ? rc2 : -1.0;
    gx[k] = gy[k] = gz[k] = 0;
  }
  double el[L] = {};
  for (int i = 0; i < n; ++i) {
    const double xi = px[i], yi = py[i], zi = pz[i];
    const int si = s[i];
    double ax[L] = {}, ay[L] = {}, az[L] = {};
    for (int j0 = i + 1; j0 < n; j0 += L) {
      for (int l = 0; l < L; ++l) {
        const int j = j0 + l;
        const double dx = xi - px[j], dy = yi - py[j], dz = zi - pz[j];
        const double r2 = dx * dx + dy * dy + dz * dz;
        double pe = 0, f = 0;
        pot.pair(si, s[j], r2, pe, f);
        pe = keep_below(pe, r2, cut[j]);
        f = keep_below(f, r2, cut[j]);
        el[l] += pe;
        ax[l] += f * dx;
        ay[l] += f * dy;
        az[l] += f * dz;
        gx[j] -= f * dx;
        gy[j] -= f * dy;
        gz[j] -= f * dz;
      }
    }
    double sx = 0, sy = 0, sz = 0;
    for (int l = 0; l < L; ++l) {
      sx += ax[l];
      sy += ay[l];
      sz += az[l];
    }
    gx[i] += sx;
    gy[i] += sy;
    gz[i] += sz;
  }
  double es = 0;
  for (int l = 0; l < L; ++l)
    es += el[l];
  e = es;
  for (int k = 0; k < n; ++k) {
    fp[3 * (begin + k)] = gx[k];
    fp[3 * (begin + k) + 1] = gy[k];
    fp[3 * (begin + k) + 2] = gz[k];
  }
}

/// small_pair_forces_body for the build's target.
template <class K>
BATON_NOINLINE KOKKOS_FUNCTION void small_pair_forces(const K& pot, const int* sp, const double* xp,
                                                      double* fp, int begin, int end, double& e) {
  small_pair_forces_body(pot, sp, xp, fp, begin, end, e);
}

#if BATON_AVX2_DISPATCH
/// small_pair_forces_body for AVX2 (team.hpp, BATON_AVX2_DISPATCH): the same bits.
template <class K>
BATON_NOINLINE BATON_TARGET_AVX2 void small_pair_forces_avx2(const K& pot, const int* sp,
                                                             const double* xp, double* fp,
                                                             int begin, int end, double& e) {
  small_pair_forces_body(pot, sp, xp, fp, begin, end, e);
}
#endif

/// A block of one atom's pairs within the cutoff (each_pair_block): displacements, r^2, the
/// neighbour.
struct PairBlock {
  static constexpr int size = 64;
  double dx[size], dy[size], dz[size], r2[size];
  int j[size];
};

/// each_pair_block's fill of one pair: written at b's place n, which advances past it when r^2 =
/// (dx^2 + dy^2) + dz^2 < rc2; true when that fills the block.
KOKKOS_FORCEINLINE_FUNCTION bool pair_block_append(PairBlock& b, int& n, double rc2, int j,
                                                   double dx, double dy, double dz) {
  const double r2 = dx * dx + dy * dy + dz * dz;
  b.dx[n] = dx;
  b.dy[n] = dy;
  b.dz[n] = dz;
  b.r2[n] = r2;
  b.j[n] = j;
  n += r2 < rc2 ? 1 : 0;
  return n == PairBlock::size;
}

/// The pairs (HalfPairs) of atom i closer than sqrt(rc2), in blocks: body(n) for the first n <=
/// PairBlock::size of them in `b`, then the next, in the order `pairs` gives them. Every pair is
/// written and the block advances past those inside, so no branch is mispredicted (a list holds
/// pairs up to the cutoff plus the skin, and about a third of them lie outside); the body then
/// loops over pairs that all interact, in loops the compiler can vectorise. A body that adds in
/// block order makes the sums one loop over the pairs would, in its order: the same bits. For the
/// host's one-thread and wide-team loops over a list (the blocks live on the thread's stack).
template <class Pairs, class Body>
KOKKOS_INLINE_FUNCTION void each_pair_block(const Pairs& pairs, int i, double rc2, PairBlock& b,
                                            const Body& body) {
  int n = 0;
  const auto fill = [&](int j, double dx, double dy, double dz) {
    if (pair_block_append(b, n, rc2, j, dx, dy, dz)) {
      body(n);
      n = 0;
    }
  };
  if constexpr (std::is_same_v<Pairs, ListPairs>) {
    if (pairs.is_plain(i))
      pairs.each_plain(i, fill);
    else
      pairs.template each<true>(i, fill);
  } else {
    pairs.template each<true>(i, fill);
  }
  if (n > 0)
    body(n);
}

#if BATON_AVX2_DISPATCH
/// each_pair_block over a list for loops compiled for AVX2: the entries four at a time
/// (detail/list_avx2.hpp) while the block has room for four, else one at a time as
/// each_pair_block fills them (so the blocks end where its do); the same blocks.
template <class Body>
BATON_TARGET_AVX2 inline void each_list_block_avx2(const ListPairs& pairs, int i, double rc2,
                                                   PairBlock& b, const Body& body) {
  if (pairs.min_image) {
    each_pair_block(pairs, i, rc2, b, body);
    return;
  }
  const int count = pairs.num(i);
  const int* const row = pairs.list.data() + static_cast<std::size_t>(i) * pairs.list.stride(0);
  const double* const xp = pairs.xs.data();
  const double xi[3] = {xp[3 * i], xp[3 * i + 1], xp[3 * i + 2]};
  const bool plain = pairs.is_plain(i);
  int n = 0;
  for (int m = 0;;) {
    m = plain ? fill_pairs_avx2<true>(row, m, count, image_bits, xp, nullptr, xi, rc2, b.dx, b.dy,
                                      b.dz, b.r2, b.j, n, PairBlock::size)
              : fill_pairs_avx2<false>(row, m, count, image_bits, xp, &pairs.shift[0][0], xi, rc2,
                                       b.dx, b.dy, b.dz, b.r2, b.j, n, PairBlock::size);
    if (n == PairBlock::size) {  // full: as each_pair_block, the body takes it now
      body(n);
      n = 0;
    }
    if (m >= count)
      break;
    // each_pair_block's fill of one entry (ListPairs::each_plain and each).
    const int j = row[m] >> image_bits;
    const double* t = pairs.shift[row[m] & ((1 << image_bits) - 1)];
    double d[3];
    for (int k = 0; k < 3; ++k)
      d[k] = plain ? xi[k] - xp[3 * j + k] : xi[k] - xp[3 * j + k] - t[k];
    if (pair_block_append(b, n, rc2, j, d[0], d[1], d[2])) {
      body(n);
      n = 0;
    }
    ++m;
  }
  if (n > 0)
    body(n);
}
#endif

/// One pair (i, j) within the cutoff, once, in the host's one-thread loops: its energy pe into e,
/// s (x_i - x_j) into atom i's force fi and out of j's in fp, and its virial into w when Virial.
template <bool Virial>
KOKKOS_FORCEINLINE_FUNCTION void add_half_pair(double& e, double* fi, double* __restrict fp,
                                               double* w, int j, double pe, double s, double dx,
                                               double dy, double dz) {
  e += pe;
  fi[0] += s * dx;
  fi[1] += s * dy;
  fi[2] += s * dz;
  fp[3 * j] -= s * dx;
  fp[3 * j + 1] -= s * dy;
  fp[3 * j + 2] -= s * dz;
  if constexpr (Virial)
    add_pair_virial(w, s, dx, dy, dz);
}

/// The host's one-thread half-pair loop over a system's list (team_pair_forces): blocks of pairs
/// within the cutoff (each_pair_block), the potential's terms in a loop of their own, then added
/// in pair order (the same bits as one loop). Forces into fp (zeroed by the caller), the pairs'
/// energy to es and, when Virial, their virial to ws.
template <bool Virial, bool Avx2, class K>
KOKKOS_FORCEINLINE_FUNCTION void list_pair_forces_body(const K& pot, const ListPairs& pairs,
                                                       const int* __restrict sp,
                                                       double* __restrict fp, int begin, int end,
                                                       double& es, double* ws) {
  const double rc2 = pot.cutoff_squared();
  double e = 0;
  double w[6] = {0, 0, 0, 0, 0, 0};
  PairBlock b;
  double be[PairBlock::size], bs[PairBlock::size];
  for (int i = begin; i < end; ++i) {
    const int si = sp[i];
    double fi[3] = {0, 0, 0};
    const auto block = [&](int n) {
      for (int k = 0; k < n; ++k)
        pot.pair(si, sp[b.j[k]], b.r2[k], be[k], bs[k]);
      for (int k = 0; k < n; ++k)
        add_half_pair<Virial>(e, fi, fp, w, b.j[k], be[k], bs[k], b.dx[k], b.dy[k], b.dz[k]);
    };
#if BATON_AVX2_DISPATCH
    if constexpr (Avx2)
      each_list_block_avx2(pairs, i, rc2, b, block);
    else
#endif
      each_pair_block(pairs, i, rc2, b, block);
    for (int d = 0; d < 3; ++d)
      fp[3 * i + d] += fi[d];
  }
  es = e;
  for (int c = 0; c < 6; ++c)
    ws[c] = w[c];
}

/// list_pair_forces_body for the build's target.
template <bool Virial, class K>
BATON_NOINLINE KOKKOS_FUNCTION void list_pair_forces(const K& pot, const ListPairs& pairs,
                                                     const int* sp, double* fp, int begin, int end,
                                                     double& es, double* ws) {
  list_pair_forces_body<Virial, false>(pot, pairs, sp, fp, begin, end, es, ws);
}

#if BATON_AVX2_DISPATCH
/// list_pair_forces_body for AVX2 (team.hpp, BATON_AVX2_DISPATCH): the same bits.
template <bool Virial, class K>
BATON_NOINLINE BATON_TARGET_AVX2 void list_pair_forces_avx2(const K& pot, const ListPairs& pairs,
                                                            const int* sp, double* fp, int begin,
                                                            int end, double& es, double* ws) {
  list_pair_forces_body<Virial, true>(pot, pairs, sp, fp, begin, end, es, ws);
}
#endif

/// A wide team's half-pair force pass (wide_half_loop) over a system's list: for each pair (once)
/// closer than sqrt(rc2), term(i, j, r2, pe, s) gives its energy pe and -dE/dr / r s; the forces go
/// to f, the pairs' energy to e and, when Virial, their virial to w.
template <bool Virial, class Term>
KOKKOS_INLINE_FUNCTION void wide_force_pass(const TeamMember& team, const ListPairs& pairs,
                                            const Positions& f, int begin, int end, double rc2,
                                            const Term& term, double& e, double* w) {
  double sums[team_acc_sums];
  wide_half_loop<3>(
      team, pairs.acc, begin, end, sums,
      [&](int i, double* __restrict a, double* part) {
        double fx = 0, fy = 0, fz = 0, ei = 0;
        double wi[6] = {0, 0, 0, 0, 0, 0};
        // Blocks of pairs within the cutoff (each_pair_block), the terms in a loop of their own,
        // then added in pair order.
        PairBlock b;
        double be[PairBlock::size], bs[PairBlock::size];
        each_pair_block(pairs, i, rc2, b, [&](int n) {
          for (int k = 0; k < n; ++k)
            term(i, b.j[k], b.r2[k], be[k], bs[k]);
          for (int k = 0; k < n; ++k) {
            const double s = bs[k], dx = b.dx[k], dy = b.dy[k], dz = b.dz[k];
            ei += be[k];
            fx += s * dx;
            fy += s * dy;
            fz += s * dz;
            double* aj = a + 3 * (b.j[k] - begin);
            aj[0] -= s * dx;
            aj[1] -= s * dy;
            aj[2] -= s * dz;
            if constexpr (Virial)
              add_pair_virial(wi, s, dx, dy, dz);
          }
        });
        double* ai = a + 3 * (i - begin);
        ai[0] += fx;
        ai[1] += fy;
        ai[2] += fz;
        part[0] += ei;
        if constexpr (Virial)
          for (int c = 0; c < 6; ++c)
            part[1 + c] += wi[c];
      },
      [&](int i, const double* total) {
        for (int d = 0; d < 3; ++d)
          f(i, d) = total[d];
      });
  e = sums[0];
  if constexpr (Virial)
    for (int c = 0; c < 6; ++c)
      w[c] = sums[1 + c];
}

/// team_pair_forces' half-pair loop on a wide team (team.hpp): wide_force_pass with the pair
/// potential; out of line, as above.
template <bool Virial, class K>
BATON_NOINLINE KOKKOS_FUNCTION void wide_pair_forces(const TeamMember& team, const K& pot,
                                                     const SpeciesView& species, const Positions& f,
                                                     const ListPairs& pairs, int begin, int end,
                                                     double& e, double* w) {
  wide_force_pass<Virial>(
      team, pairs, f, begin, end, pot.cutoff_squared(),
      [&](int i, int j, double r2, double& pe, double& s) {
        pot.pair(species(i), species(j), r2, pe, s);
      },
      e, w);
}

/// Forces on atoms [begin, end) of one system from its pairs (`pairs`: all of them, AllPairs, or
/// its neighbour list, ListPairs; each pair comes with its displacement, the minimum image in a
/// periodic cell); every thread of the team gets the system's energy and fmax (and the virial
/// when `Virial`). HalfPairs (host): each pair once, Newton's third law; on a team of one thread
/// in one loop, on a wide team (team.hpp) each thread over its blocks of atoms into its own
/// accumulators (wide_pair_forces). Otherwise the team's threads share the atoms i and loop over
/// all their j != i (no atomics), the virial, when asked, in the same pass; a wide team does this
/// too where the pairs are not a list (all pairs, or the bins of a list that did not fit).
template <bool HalfPairs, bool Virial, class K, class Pairs>
KOKKOS_INLINE_FUNCTION void team_pair_forces(const TeamMember& team, const K& pot,
                                             const SpeciesView& species, const Positions& f,
                                             const Pairs& pairs, int begin, int end,
                                             SystemForces& out) {
  double e = 0;
  double w[6] = {0, 0, 0, 0, 0, 0};
  if constexpr (HalfPairs) {
    if (team.team_size() == 1) {
      // Sums in locals of their own: e and w are passed by reference to the out-of-line paths,
      // and the loop's writes to forces would otherwise keep them out of registers.
      double es = 0;
      double ws[6] = {0, 0, 0, 0, 0, 0};
      const double rc2 = pot.cutoff_squared();
      // One thread, each pair once, Newton's third law; raw pointers into the LayoutRight rows.
      const int* __restrict sp = &species(0);
      double* __restrict fp = &f(0, 0);
      for (int i = 3 * begin; i < 3 * end; ++i)
        fp[i] = 0;
      bool small = false;
      if constexpr (std::is_same_v<Pairs, AllPairs<false>> && !Virial &&
                    declares_pair_at_any_r2<K>::value) {
        small = end - begin <= small_pairs_max;
        if (small) {
#if BATON_AVX2_DISPATCH
          if (host_has_avx2())
            small_pair_forces_avx2(pot, sp, &pairs.x(0, 0), fp, begin, end, es);
          else
#endif
            small_pair_forces(pot, sp, &pairs.x(0, 0), fp, begin, end, es);
        }
      }
      if (small) {
      } else if constexpr (!std::is_same_v<Pairs, ListPairs>) {
        // All pairs (small systems, nearly all within the cutoff) or the bins of a list that did
        // not fit: one loop. (Blocks, as for a list below, measured 4-8% slower on the 55-atom
        // clusters of baton-bench dynamics.)
        for (int i = begin; i < end; ++i) {
          const int si = sp[i];
          double fi[3] = {0, 0, 0};
          pairs.template each<true>(i, [&](int j, double dx, double dy, double dz) {
            const double r2 = dx * dx + dy * dy + dz * dz;
            if (r2 < rc2) {
              double pe = 0, s = 0;
              pot.pair(si, sp[j], r2, pe, s);
              add_half_pair<Virial>(es, fi, fp, ws, j, pe, s, dx, dy, dz);
            }
          });
          for (int d = 0; d < 3; ++d)
            fp[3 * i + d] += fi[d];
        }
      } else {
#if BATON_AVX2_DISPATCH
        if (host_has_avx2())
          list_pair_forces_avx2<Virial>(pot, pairs, sp, fp, begin, end, es, ws);
        else
#endif
          list_pair_forces<Virial>(pot, pairs, sp, fp, begin, end, es, ws);
      }
      e = es;
      for (int c = 0; c < 6; ++c)
        w[c] = ws[c];
    } else if constexpr (std::is_same_v<Pairs, ListPairs>) {
      wide_pair_forces<Virial>(team, pot, species, f, pairs, begin, end, e, w);
    } else {
      all_atoms_pair_forces_apart<Virial>(team, pot, species, f, pairs, begin, end, e, w);
    }
  } else {
    all_atoms_pair_forces<Virial>(team, pot, species, f, pairs, begin, end, e, w);
  }
  team.team_barrier();
  const double f2 = team_max(team, begin, end, [&](int i) {
    return f(i, 0) * f(i, 0) + f(i, 1) * f(i, 1) + f(i, 2) * f(i, 2);
  });
  out.energy = e;
  out.fmax = math_sqrt(f2);
  for (int c = 0; c < 6; ++c)
    out.virial[c] = w[c];
}

/// A Failure code (0: none), the same on every thread of the team: whether one system's numbers
/// broke: a non-finite energy, force, position or velocity (atoms on top of each other, an
/// exploding step, bad input), or an atom past systems::max_coordinate. Such a system is failed.
KOKKOS_INLINE_FUNCTION int broken(const TeamMember& team, const Positions& x, const Positions& v,
                                  const Positions& f, int begin, int end, const SystemForces& r) {
  const auto finite = [](double u) { return u - u == 0; };  // false for inf and NaN
  if (!finite(r.energy))
    return static_cast<int>(systems::Failure::energy);
  if (!finite(r.fmax))
    return static_cast<int>(systems::Failure::forces);
  const double worst = team_max(team, begin, end, [&](int i) {
    double code = 0;
    for (int d = 0; d < 3; ++d) {
      if (!finite(x(i, d)) || !finite(v(i, d)))
        code = static_cast<double>(systems::Failure::positions);
      else if (!finite(f(i, d)))
        code = code > 0 ? code : static_cast<double>(systems::Failure::forces);
      else if (x(i, d) > systems::max_coordinate || x(i, d) < -systems::max_coordinate)
        code = code > 0 ? code : static_cast<double>(systems::Failure::exploded);
    }
    return code;
  });
  return static_cast<int>(worst);
}

template <class K, class = void>
struct is_many_body_kernel : std::false_type {};
template <class K>
struct is_many_body_kernel<
    K,
    std::void_t<decltype(std::declval<const K&>().template team_forces<true, false>(
                    std::declval<const TeamMember&>(), std::declval<const SpeciesView&>(),
                    std::declval<const Positions&>(), std::declval<const AtomScratch&>(),
                    std::declval<const AllPairs<false>&>(), 0, 0, std::declval<SystemForces&>())),
                decltype(std::declval<const K&>().cutoff_squared())>> : std::true_type {};

template <class K, class = void>
struct declares_wide_teams : std::false_type {};
template <class K>
struct declares_wide_teams<K, std::enable_if_t<K::wide_teams>> : std::true_type {};

/// Whether kernel K's host half-pair loop runs on wide teams (team.hpp): a pair potential's (the
/// pair loop above), or a many-body kernel that says so with `static constexpr bool wide_teams =
/// true` (its team_forces<true, ...> then shares a ListPairs' atoms among the team's threads, as
/// Eam's does). Other kernels keep one thread per system on the host.
template <class K>
inline constexpr bool wide_teams_for = is_pair_kernel<K>::value || declares_wide_teams<K>::value;

/// Forces of potential kernel `pot` on one system over `pairs` (see team_pair_forces): the pair
/// loop for a pair potential, the kernel's own team_forces for a many-body one (EAM), which may
/// use `scratch` (two values per atom) between its passes.
template <bool HalfPairs, bool Virial, class K, class Pairs>
KOKKOS_INLINE_FUNCTION void team_forces(const TeamMember& team, const K& pot,
                                        const SpeciesView& species, const Positions& f,
                                        const AtomScratch& scratch, const Pairs& pairs, int begin,
                                        int end, SystemForces& out) {
  static_assert(is_pair_kernel<K>::value || is_many_body_kernel<K>::value,
                "a potential's kernel() must return an object with KOKKOS_FUNCTION members "
                "cutoff_squared() and pair(species_i, species_j, r2, energy, force_over_r) "
                "(see baton/dynamics/potential.hpp)");
  if constexpr (is_pair_kernel<K>::value) {
    (void)scratch;
    team_pair_forces<HalfPairs, Virial>(team, pot, species, f, pairs, begin, end, out);
  } else {
    pot.template team_forces<HalfPairs, Virial>(team, species, f, scratch, pairs, begin, end, out);
  }
}

/// Calls fn(pairs) with the pairs of one system: its neighbour list when it uses one and the list
/// fits, the bins of that list's build when it does not (O(N) still), otherwise all its pairs
/// (minimum images in a periodic cell). Every thread of the team calls it. Returns false when the
/// list did not fit but can grow (the caller may stop the system for this call so that the stage
/// grows the lists and goes on).
template <bool HalfPairs, class Fn>
KOKKOS_INLINE_FUNCTION bool with_system_pairs(const TeamMember& team, const NeighbourData& lists,
                                              int slot, std::int64_t id, const Positions& x,
                                              int begin, int end, const systems::CellImage& cell,
                                              const Fn& fn) {
  if (lists.used_for(end - begin)) {
    const int longest = lists.refresh<HalfPairs>(team, slot, id, begin, end, cell, x);
    if (longest <= lists.capacity) {
      fn(lists.pairs(team, slot, begin, end, cell, x));
      return true;
    }
    fn(bin_pairs(lists, team, slot, begin, end, cell, x));
    return longest > lists.max_capacity;
  }
  if (cell.periodic[0] || cell.periodic[1] || cell.periodic[2])
    fn(AllPairs<true>{x, cell, begin, end});
  else
    fn(AllPairs<false>{x, cell, begin, end});
  return true;
}

/// Forces on one system over its pairs (with_system_pairs). Returns false when the list did not
/// fit but can grow (the caller stops the system's steps for this call so that the stage can grow
/// the lists and go on).
template <bool HalfPairs, bool Virial, class K>
KOKKOS_INLINE_FUNCTION bool system_forces(const TeamMember& team, const K& pot,
                                          const NeighbourData& lists, int slot, std::int64_t id,
                                          const Positions& x, const SpeciesView& species,
                                          const Positions& f, const AtomScratch& scratch, int begin,
                                          int end, const systems::CellImage& cell,
                                          SystemForces& out) {
  return with_system_pairs<HalfPairs>(
      team, lists, slot, id, x, begin, end, cell, [&](const auto& pairs) {
        team_forces<HalfPairs, Virial>(team, pot, species, f, scratch, pairs, begin, end, out);
      });
}

/// Whether some pair of `pairs` interacts (see system_interacts); every thread of the team gets
/// the answer.
template <bool HalfPairs, class K, class Pairs>
KOKKOS_INLINE_FUNCTION bool team_interacts(const TeamMember& team, const K& pot,
                                           const SpeciesView& species, const Pairs& pairs,
                                           int begin, int end) {
  const double rc2 = pot.cutoff_squared();
  const double found = team_max(team, begin, end, [&](int i) {
    double any = 0;
    pairs.template each<HalfPairs>(i, [&](int j, double dx, double dy, double dz) {
      const double r2 = dx * dx + dy * dy + dz * dz;
      if (r2 < rc2) {
        if constexpr (is_pair_kernel<K>::value) {
          double pe = 0, s = 0;
          pot.pair(species(i), species(j), r2, pe, s);
          if (pe != 0 || s != 0)
            any = 1;
        } else {
          (void)species;
          any = 1;
        }
      }
    });
    return any;
  });
  return found > 0;
}

/// Whether any two atoms of one system interact: some pair (with its minimum image, or any image
/// within the cutoff, in a periodic cell) is closer than the cutoff and, for a pair potential,
/// its pair energy or force is not exactly 0 (with no cutoff: the pair is not so far apart that
/// both underflow). Found through the same pairs as system_forces() (the list that force call
/// made current, its build's bins, or all pairs); every thread of the team gets the answer. When
/// no pair interacts, every force is exactly 0: callers ask only when fmax is 0.
template <bool HalfPairs, class K>
KOKKOS_INLINE_FUNCTION bool system_interacts(const TeamMember& team, const K& pot,
                                             const NeighbourData& lists, int slot, std::int64_t id,
                                             const Positions& x, const SpeciesView& species,
                                             int begin, int end, const systems::CellImage& cell) {
  bool found = false;
  with_system_pairs<HalfPairs>(team, lists, slot, id, x, begin, end, cell, [&](const auto& pairs) {
    found = team_interacts<HalfPairs>(team, pot, species, pairs, begin, end);
  });
  return found;
}

}  // namespace detail

}  // namespace baton::dynamics
