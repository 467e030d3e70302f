#pragma once
/// \file
/// A neighbour list's two host loops four entries at a time for AVX2 (team.hpp,
/// BATON_AVX2_DISPATCH):
/// - a build's candidates (append_candidates_avx2; NeighbourData::each_candidate's pruned build
///   takes it for a run of bins), and
/// - the pair loop's blocks of pairs within the cutoff (fill_pairs_avx2; each_pair_block in the
///   one-thread loop's AVX2 copy).
/// Each does the scalar loop's operations in the scalar loop's order (nothing fused) and keeps
/// what it keeps in the same order, so the lists, the blocks and every result built on them are
/// the same bits (tests/unit/test_list_avx2.cpp).

#include <cstdint>

#include "baton/dynamics/team.hpp"

#if BATON_AVX2_DISPATCH
#include <immintrin.h>

namespace baton::dynamics::detail {

/// For each of the 16 masks of four lanes, the bytes of a _mm_shuffle_epi8 that moves the lanes
/// whose bit is set to the front, in order, and how many bits are set.
struct LeftPackTable {
  alignas(16) std::int8_t bytes[16][16];
  int count[16];
};
constexpr LeftPackTable make_left_pack_table() {
  LeftPackTable t{};
  for (int mask = 0; mask < 16; ++mask) {
    int out = 0;
    for (int lane = 0; lane < 4; ++lane)
      if (mask & (1 << lane)) {
        for (int b = 0; b < 4; ++b)
          t.bytes[mask][4 * out + b] = static_cast<std::int8_t>(4 * lane + b);
        ++out;
      }
    t.count[mask] = out;
    for (; out < 4; ++out)
      for (int b = 0; b < 4; ++b)
        t.bytes[mask][4 * out + b] = static_cast<std::int8_t>(0x80);  // zero
  }
  return t;
}
inline constexpr LeftPackTable left_pack_table = make_left_pack_table();

/// The same for four doubles, as the eight 32-bit lanes of a _mm256_permutevar8x32_ps.
struct LeftPackTable4d {
  alignas(32) std::int32_t lanes[16][8];
};
constexpr LeftPackTable4d make_left_pack_table4d() {
  LeftPackTable4d t{};
  for (int mask = 0; mask < 16; ++mask) {
    int out = 0;
    for (int lane = 0; lane < 4; ++lane)
      if (mask & (1 << lane)) {
        t.lanes[mask][2 * out] = 2 * lane;
        t.lanes[mask][2 * out + 1] = 2 * lane + 1;
        ++out;
      }
    for (; out < 4; ++out)
      t.lanes[mask][2 * out] = t.lanes[mask][2 * out + 1] = 0;
  }
  return t;
}
inline constexpr LeftPackTable4d left_pack_table4d = make_left_pack_table4d();

/// Candidates p = p0 .. p1 - 1 of a run of bins: atom j = srt[p] at xb[3p], xb[3p + 1], xb[3p + 2].
/// A candidate with lo <= j <= hi is skipped (atom i itself, or a pair the half stencil leaves to
/// j). Every other is written to row as (j << shift) | code, at row[m], and m advances past those
/// with ((xi - x_j) - t)^2 < rl2, the three squares added as (x^2 + y^2) + z^2: the scalar loop's
/// entries and test. Four are written at a time, so what lies past the kept ones differs (the
/// caller reads only the first m). Stops where four would not fit below `room`; reads the four
/// rows from p while p + 4 <= rows (the last four, beyond p1, masked). Returns the first candidate
/// not taken, for the caller's scalar loop.
BATON_TARGET_AVX2 inline int append_candidates_avx2(const int* srt, const double* xb, int p0,
                                                    int p1, int rows, const double* xi,
                                                    const double* t, double rl2, int code,
                                                    int shift, int lo, int hi, int* row, int& m,
                                                    int room) {
  const __m256d xi0 = _mm256_set1_pd(xi[0]), xi1 = _mm256_set1_pd(xi[1]),
                xi2 = _mm256_set1_pd(xi[2]);
  const __m256d t0 = _mm256_set1_pd(t[0]), t1 = _mm256_set1_pd(t[1]), t2 = _mm256_set1_pd(t[2]);
  const __m256d limit = _mm256_set1_pd(rl2);
  const __m128i low = _mm_set1_epi32(lo), high = _mm_set1_epi32(hi), image = _mm_set1_epi32(code);
  const __m128i bits = _mm_cvtsi32_si128(shift);
  int p = p0, n = m;
  while (p < p1 && p + 4 <= rows && n + 4 <= room) {
    // Four atoms' x, y, z (x0 y0 z0 x1 | y1 z1 x2 y2 | z2 x3 y3 z3) to one register per axis.
    const double* q = xb + 3 * static_cast<std::size_t>(p);
    const __m256d a = _mm256_loadu_pd(q), b = _mm256_loadu_pd(q + 4), c = _mm256_loadu_pd(q + 8);
    const __m256d u = _mm256_permute2f128_pd(a, b, 0x30);  // x0 y0 x2 y2
    const __m256d v = _mm256_permute2f128_pd(a, c, 0x21);  // z0 x1 z2 x3
    const __m256d w = _mm256_permute2f128_pd(b, c, 0x30);  // y1 z1 y3 z3
    const __m256d x = _mm256_shuffle_pd(u, v, 0xA), y = _mm256_shuffle_pd(u, w, 0x5),
                  z = _mm256_shuffle_pd(v, w, 0xA);
    const __m256d d0 = _mm256_sub_pd(_mm256_sub_pd(xi0, x), t0);
    const __m256d d1 = _mm256_sub_pd(_mm256_sub_pd(xi1, y), t1);
    const __m256d d2 = _mm256_sub_pd(_mm256_sub_pd(xi2, z), t2);
    const __m256d r2 = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(d0, d0), _mm256_mul_pd(d1, d1)),
                                     _mm256_mul_pd(d2, d2));
    const int inside = _mm256_movemask_pd(_mm256_cmp_pd(r2, limit, _CMP_LT_OQ));
    const __m128i j = _mm_loadu_si128(reinterpret_cast<const __m128i*>(srt + p));
    const __m128i kept = _mm_or_si128(_mm_cmpgt_epi32(j, high), _mm_cmpgt_epi32(low, j));
    const int left = p1 - p;  // the lanes within the bin
    const int mask =
        inside & _mm_movemask_ps(_mm_castsi128_ps(kept)) & (left >= 4 ? 15 : (1 << left) - 1);
    const __m128i entries = _mm_or_si128(_mm_sll_epi32(j, bits), image);
    const __m128i packed = _mm_shuffle_epi8(
        entries, _mm_load_si128(reinterpret_cast<const __m128i*>(left_pack_table.bytes[mask])));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(row + n), packed);
    n += left_pack_table.count[mask];
    p += left >= 4 ? 4 : left;
  }
  m = n;
  return p;
}

/// The lanes of v that `lanes` (a row of left_pack_table4d) picks, to the front.
BATON_TARGET_AVX2 inline __m256d left_pack4d_avx2(__m256d v, __m256i lanes) {
  return _mm256_castps_pd(_mm256_permutevar8x32_ps(_mm256_castpd_ps(v), lanes));
}

/// Three doubles at each of p[0..4) (x, y, z) to one register per axis.
BATON_TARGET_AVX2 inline void load_xyz4_avx2(const double* const* p, __m256d& x, __m256d& y,
                                             __m256d& z) {
  const __m256d xy02 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p[0])),
                                            _mm_loadu_pd(p[2]), 1);  // x0 y0 x2 y2
  const __m256d xy13 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p[1])),
                                            _mm_loadu_pd(p[3]), 1);  // x1 y1 x3 y3
  x = _mm256_unpacklo_pd(xy02, xy13);
  y = _mm256_unpackhi_pd(xy02, xy13);
  const __m128d z01 = _mm_loadh_pd(_mm_load_sd(p[0] + 2), p[1] + 2);
  const __m128d z23 = _mm_loadh_pd(_mm_load_sd(p[2] + 2), p[3] + 2);
  z = _mm256_insertf128_pd(_mm256_castpd128_pd256(z01), z23, 1);
}

/// Atom i's list entries row[m], row[m + 1], ... ((j << shift) | image code) as a block of pairs
/// within the cutoff (each_pair_block): the displacement d = (x_i - x_j) - t, t = image[code]
/// (Plain: d = x_i - x_j, no image), r2 = (dx^2 + dy^2) + dz^2, and j, written at bx[n], by[n],
/// bz[n], br2[n], bj[n], n advancing past those with r2 < rc2: the scalar fill's values and
/// order. Four at a time while m + 4 <= count and n + 4 <= size (the block's room; what lies past
/// n is not read). Returns the first entry not taken, for the caller's scalar fill.
template <bool Plain>
BATON_TARGET_AVX2 inline int fill_pairs_avx2(const int* row, int m, int count, int shift,
                                             const double* xp, const double* image,
                                             const double* xi, double rc2, double* bx, double* by,
                                             double* bz, double* br2, int* bj, int& n, int size) {
  const __m256d xi0 = _mm256_set1_pd(xi[0]), xi1 = _mm256_set1_pd(xi[1]),
                xi2 = _mm256_set1_pd(xi[2]), limit = _mm256_set1_pd(rc2);
  const __m128i bits = _mm_cvtsi32_si128(shift);
  const int code_mask = (1 << shift) - 1;
  int k = n;
  for (; m + 4 <= count && k + 4 <= size; m += 4) {
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + m));
    const __m128i j = _mm_sra_epi32(e, bits);
    const double* at[4];
    for (int l = 0; l < 4; ++l)
      at[l] = xp + 3 * static_cast<std::size_t>(row[m + l] >> shift);
    __m256d x, y, z;
    load_xyz4_avx2(at, x, y, z);
    __m256d d0 = _mm256_sub_pd(xi0, x), d1 = _mm256_sub_pd(xi1, y), d2 = _mm256_sub_pd(xi2, z);
    if constexpr (!Plain) {
      for (int l = 0; l < 4; ++l)
        at[l] = image + 3 * (row[m + l] & code_mask);
      __m256d t0, t1, t2;
      load_xyz4_avx2(at, t0, t1, t2);
      d0 = _mm256_sub_pd(d0, t0);
      d1 = _mm256_sub_pd(d1, t1);
      d2 = _mm256_sub_pd(d2, t2);
    }
    const __m256d r2 = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(d0, d0), _mm256_mul_pd(d1, d1)),
                                     _mm256_mul_pd(d2, d2));
    const int mask = _mm256_movemask_pd(_mm256_cmp_pd(r2, limit, _CMP_LT_OQ));
    const __m256i lanes =
        _mm256_load_si256(reinterpret_cast<const __m256i*>(left_pack_table4d.lanes[mask]));
    _mm256_storeu_pd(bx + k, left_pack4d_avx2(d0, lanes));
    _mm256_storeu_pd(by + k, left_pack4d_avx2(d1, lanes));
    _mm256_storeu_pd(bz + k, left_pack4d_avx2(d2, lanes));
    _mm256_storeu_pd(br2 + k, left_pack4d_avx2(r2, lanes));
    _mm_storeu_si128(
        reinterpret_cast<__m128i*>(bj + k),
        _mm_shuffle_epi8(
            j, _mm_load_si128(reinterpret_cast<const __m128i*>(left_pack_table.bytes[mask]))));
    k += left_pack_table.count[mask];
  }
  n = k;
  return m;
}

}  // namespace baton::dynamics::detail
#endif
