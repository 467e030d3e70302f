#pragma once
/// \file
/// EAM's spline lookups four pairs at a time for AVX2 (team.hpp, BATON_AVX2_DISPATCH): the host's
/// one-thread loop over a list (Eam::Kernel::block_densities and block_pair_terms) takes them for
/// pairs whose two atoms are of one element. Every lane does the scalar code's operations in the
/// scalar code's order (eam_r_site(), eam_spline_value(), eam_spline_derivative(); nothing fused),
/// so both give the same bits (tests/unit/test_eam_tables.cpp).

#include "baton/dynamics/eam_tables.hpp"
#include "baton/dynamics/team.hpp"

#if BATON_AVX2_DISPATCH
#include <immintrin.h>

namespace baton::dynamics::detail {

/// Four coefficients of four rows: out[q] holds table[at[l] + o + q] in lane l. Each row's four
/// are one load, then a transpose (this machine's vgatherdpd was slower than the scalar code).
BATON_TARGET_AVX2 inline void eam_rows4_avx2(const double* table, const int* at, int o,
                                             __m256d* out) {
  const __m256d r0 = _mm256_loadu_pd(table + at[0] + o), r1 = _mm256_loadu_pd(table + at[1] + o);
  const __m256d r2 = _mm256_loadu_pd(table + at[2] + o), r3 = _mm256_loadu_pd(table + at[3] + o);
  const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
  const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
  out[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
  out[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
  out[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
  out[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}

/// eam_r_site() of four distances: each row's first coefficient (row * eam_spline_width) into
/// at[0..4), and p.
BATON_TARGET_AVX2 inline __m256d eam_r_sites_avx2(__m256d r, double rdr, int nr, int* at) {
  const __m256d q = _mm256_add_pd(_mm256_mul_pd(r, _mm256_set1_pd(rdr)), _mm256_set1_pd(1.0));
  // eam_truncate(q, nr) = q < nr ? (q > -1e9 ? trunc(q) : -1e9) : nr (NaN: nr), the choice made
  // in doubles so that the one conversion is exact where the scalar code's is.
  const __m256d n = _mm256_set1_pd(static_cast<double>(nr)), low = _mm256_set1_pd(-1e9);
  __m256d held = _mm256_blendv_pd(low, q, _mm256_cmp_pd(q, low, _CMP_GT_OQ));
  held = _mm256_blendv_pd(n, held, _mm256_cmp_pd(q, n, _CMP_LT_OQ));
  const __m128i m = _mm_min_epi32(_mm256_cvttpd_epi32(held), _mm_set1_epi32(nr - 1));
  _mm_storeu_si128(
      reinterpret_cast<__m128i*>(at),
      _mm_mullo_epi32(_mm_sub_epi32(m, _mm_set1_epi32(1)), _mm_set1_epi32(eam_spline_width)));
  // p = q - m, then p < 1 ? p : 1 (min_pd gives its second operand for NaN, as the scalar test).
  return _mm256_min_pd(_mm256_sub_pd(q, _mm256_cvtepi32_pd(m)), _mm256_set1_pd(1.0));
}

/// eam_spline_value() at four rows.
BATON_TARGET_AVX2 inline __m256d eam_values_avx2(const double* table, const int* at, __m256d p) {
  __m256d c[4];  // c3, c4, c5, c6
  eam_rows4_avx2(table, at, 3, c);
  const __m256d v = _mm256_add_pd(_mm256_mul_pd(c[0], p), c[1]);
  return _mm256_add_pd(_mm256_mul_pd(_mm256_add_pd(_mm256_mul_pd(v, p), c[2]), p), c[3]);
}

/// eam_spline_derivative() at four rows.
BATON_TARGET_AVX2 inline __m256d eam_derivatives_avx2(const double* table, const int* at,
                                                      __m256d p) {
  __m256d c[4];  // c0, c1, c2 (c3 unused)
  eam_rows4_avx2(table, at, 0, c);
  return _mm256_add_pd(_mm256_mul_pd(_mm256_add_pd(_mm256_mul_pd(c[0], p), c[1]), p), c[2]);
}

/// rho(r[k]) for k in [0, n4), n4 a multiple of 4, from one element's rho(r) table (row 0 at
/// `rho`): Eam::Kernel::density().
BATON_NOINLINE BATON_TARGET_AVX2 inline void eam_densities_avx2(const double* rho, double rdr,
                                                                int nr, const double* r, int n4,
                                                                double* out) {
  for (int k = 0; k < n4; k += 4) {
    alignas(16) int at[4];
    const __m256d p = eam_r_sites_avx2(_mm256_loadu_pd(r + k), rdr, nr, at);
    _mm256_storeu_pd(out + k, eam_values_avx2(rho, at, p));
  }
}

/// Eam::Kernel::block_pair_terms() for k in [0, n4), n4 a multiple of 4, where atom i and every
/// j[k] are of one element: its rho(r) table at `rho`, its r phi(r) table at `z2`; F'(rho) of atom
/// j at fp[2 j] (AtomScratch's column 1), of atom i fpi.
BATON_NOINLINE BATON_TARGET_AVX2 inline void eam_pair_terms_avx2(
    const double* rho, const double* z2, double rdr, int nr, const double* fp, double fpi,
    const int* j, const double* r, int n4, double* s, double* phi) {
  const __m256d one = _mm256_set1_pd(1.0), sign = _mm256_set1_pd(-0.0);
  const __m256d vfpi = _mm256_set1_pd(fpi);
  for (int k = 0; k < n4; k += 4) {
    const __m256d rk = _mm256_loadu_pd(r + k);
    alignas(16) int at[4];
    const __m256d p = eam_r_sites_avx2(rk, rdr, nr, at);
    const __m256d rhop = eam_derivatives_avx2(rho, at, p);
    const __m256d z2p = eam_derivatives_avx2(z2, at, p);
    const __m256d z2v = eam_values_avx2(z2, at, p);
    const __m256d recip = _mm256_div_pd(one, rk);
    const __m256d ph = _mm256_mul_pd(z2v, recip);
    const __m256d php = _mm256_sub_pd(_mm256_mul_pd(z2p, recip), _mm256_mul_pd(ph, recip));
    const __m256d fpj =
        _mm256_setr_pd(fp[2 * j[k]], fp[2 * j[k + 1]], fp[2 * j[k + 2]], fp[2 * j[k + 3]]);
    // -(fpi rho'_j + fp_j rho'_i + phi') / r, with rho'_i = rho'_j (one element).
    const __m256d sum =
        _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(vfpi, rhop), _mm256_mul_pd(fpj, rhop)), php);
    _mm256_storeu_pd(s + k, _mm256_mul_pd(_mm256_xor_pd(sum, sign), recip));
    _mm256_storeu_pd(phi + k, ph);
  }
}

}  // namespace baton::dynamics::detail
#endif
