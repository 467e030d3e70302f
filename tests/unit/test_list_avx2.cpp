// A neighbour list's host loops four entries at a time for AVX2 (dynamics/detail/list_avx2.hpp):
// a build's candidates (append_candidates_avx2) and the pair loop's blocks (fill_pairs_avx2) keep
// what the scalar loops keep, in their order, with the same bits; a candidate exactly at the list
// cutoff, one that is not a number, and the atoms the half stencil leaves out are not kept.
#include <doctest/doctest.h>

#include <baton/dynamics/detail/list_avx2.hpp>
#include <baton/dynamics/neighbours.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace bdd = baton::dynamics::detail;

#if BATON_AVX2_DISPATCH
namespace {

constexpr int bits = bdd::image_bits;

// The build's scalar loop (NeighbourData::each_candidate, pruned): the entries of the candidates
// p0 .. p1 - 1 that are kept.
std::vector<int> build_scalar(const std::vector<int>& srt, const std::vector<double>& xb, int p0,
                              int p1, const double* xi, const double* t, double rl2, int code,
                              int lo, int hi) {
  std::vector<int> out;
  for (int p = p0; p < p1; ++p) {
    const int j = srt[p];
    if (j >= lo && j <= hi)
      continue;
    const double d0 = xi[0] - xb[3 * p] - t[0], d1 = xi[1] - xb[3 * p + 1] - t[1],
                 d2 = xi[2] - xb[3 * p + 2] - t[2];
    if (d0 * d0 + d1 * d1 + d2 * d2 < rl2)
      out.push_back(bdd::list_entry(j, code));
  }
  return out;
}

}  // namespace

TEST_CASE("list_avx2: a build's candidates four at a time keep the scalar loop's entries") {
  if (!bdd::host_has_avx2()) {
    MESSAGE("skipped: this CPU has no AVX2");
    return;
  }
  std::mt19937 gen(11);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  const int rows = 203;
  std::vector<double> xb(3 * rows);
  for (double& v : xb)
    v = u(gen);
  std::vector<int> srt(rows);
  for (int p = 0; p < rows; ++p)
    srt[p] = (p * 37 + 5) % rows;  // a permutation of the rows
  const double xi[3] = {0.25, -0.5, 0.125};
  const double t[3] = {0.5, 0.0, -0.25};
  const double rl2 = 2.5;
  // Candidate 7: exactly at the list cutoff (r^2 = rl2, not kept); candidate 8: not a number.
  xb[21] = xi[0] - t[0] - 1.5;
  xb[22] = xi[1] - t[1] - 0.5;
  xb[23] = xi[2] - t[2];
  REQUIRE((xi[0] - xb[21] - t[0]) * (xi[0] - xb[21] - t[0]) +
              (xi[1] - xb[22] - t[1]) * (xi[1] - xb[22] - t[1]) +
              (xi[2] - xb[23] - t[2]) * (xi[2] - xb[23] - t[2]) ==
          rl2);
  xb[24] = std::numeric_limits<double>::quiet_NaN();
  const int i = srt[40];
  struct Skip {
    int lo, hi;
  };
  // Nothing skipped; a half stencil's own bin (j <= i); a full one's (j == i).
  for (const Skip skip : {Skip{0, -1}, Skip{std::numeric_limits<int>::min(), i}, Skip{i, i}})
    for (const int p0 : {0, 1, 3, 6, 38})
      for (const int p1 : {p0, p0 + 1, p0 + 3, p0 + 4, p0 + 9, p0 + 61, rows - 2, rows})
        for (const int room : {0, 3, 4, 5, 17, 1000}) {
          if (p1 < p0 || p1 > rows)
            continue;
          CAPTURE(skip.lo);
          CAPTURE(skip.hi);
          CAPTURE(p0);
          CAPTURE(p1);
          CAPTURE(room);
          const int code = 9 * 2 + 3 * 0 + 1;
          std::vector<int> row(1000, -1);
          int m = 0;
          const int p =
              bdd::append_candidates_avx2(srt.data(), xb.data(), p0, p1, rows, xi, t, rl2, code,
                                          bits, skip.lo, skip.hi, row.data(), m, room);
          // Where it stopped: all taken, fewer than four entries' room left, or fewer than four
          // rows left to read.
          CHECK(p >= p0);
          CHECK(p <= p1);
          CHECK((p == p1 || m + 4 > room || p + 4 > rows));
          CHECK(m <= room);
          const auto want = build_scalar(srt, xb, p0, p, xi, t, rl2, code, skip.lo, skip.hi);
          REQUIRE(m == static_cast<int>(want.size()));
          CHECK(std::vector<int>(row.begin(), row.begin() + m) == want);
        }
  // The last rows: four are read only while p + 4 <= rows, so the scalar loop takes the rest.
  std::vector<int> row(64, -1);
  int m = 0;
  const int p = bdd::append_candidates_avx2(srt.data(), xb.data(), rows - 6, rows, rows, xi, t, rl2,
                                            13, bits, 0, -1, row.data(), m, 64);
  CHECK(p == rows - 2);
}

TEST_CASE("list_avx2: the pair loop's blocks four entries at a time are the scalar fill's") {
  if (!bdd::host_has_avx2()) {
    MESSAGE("skipped: this CPU has no AVX2");
    return;
  }
  std::mt19937 gen(5);
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  const int atoms = 97;
  std::vector<double> xp(3 * atoms);
  for (double& v : xp)
    v = u(gen);
  xp[3 * 50] = std::numeric_limits<double>::infinity();  // atom 50: its pairs are not kept
  // Atom 3 is i; atom 20 lies exactly at the cutoff from it (r^2 = rc2: not kept, when plain).
  const double at_i[3] = {0.25, 0.5, -0.25}, at_cutoff[3] = {-1.0, 0.5, -0.25};
  for (int k = 0; k < 3; ++k) {
    xp[9 + k] = at_i[k];
    xp[60 + k] = at_cutoff[k];
  }
  double image[bdd::image_codes][3];
  for (int c = 0; c < bdd::image_codes; ++c)
    for (int k = 0; k < 3; ++k)
      image[c][k] = c == bdd::image_codes / 2 ? 0.0
                                              : 2.0 * (((c / (k == 0   ? 9
                                                              : k == 1 ? 3
                                                                       : 1)) %
                                                        3) -
                                                       1);
  const int i = 3;
  const double xi[3] = {xp[3 * i], xp[3 * i + 1], xp[3 * i + 2]};
  const double rc2 = 1.5625;  // 1.25^2
  for (const bool plain : {true, false}) {
    std::vector<int> row;
    for (int m = 0; m < 150; ++m) {
      const int j = (m * 13 + 1) % atoms;
      const int code = plain ? bdd::image_codes / 2 : (m * 7) % bdd::image_codes;
      row.push_back(bdd::list_entry(j, code));
    }
    for (const int count : {0, 3, 4, 7, 64, 150})
      for (const int n0 : {0, 1, 30, 59, 60, 61, 64}) {
        CAPTURE(plain);
        CAPTURE(count);
        CAPTURE(n0);
        constexpr int size = 64;
        double bx[size], by[size], bz[size], br2[size];
        int bj[size];
        int n = n0;
        const int m =
            plain ? bdd::fill_pairs_avx2<true>(row.data(), 0, count, bits, xp.data(), nullptr, xi,
                                               rc2, bx, by, bz, br2, bj, n, size)
                  : bdd::fill_pairs_avx2<false>(row.data(), 0, count, bits, xp.data(), &image[0][0],
                                                xi, rc2, bx, by, bz, br2, bj, n, size);
        CHECK(m % 4 == 0);
        CHECK((m == count - count % 4 || n + 4 > size));
        CHECK(n <= size);
        // The scalar fill (each_pair_block over ListPairs::each_plain or each) of entries 0 .. m
        // - 1.
        int k = n0;
        for (int e = 0; e < m; ++e) {
          const int j = row[e] >> bits;
          const double* t = image[row[e] & ((1 << bits) - 1)];
          const double dx = plain ? xi[0] - xp[3 * j] : xi[0] - xp[3 * j] - t[0];
          const double dy = plain ? xi[1] - xp[3 * j + 1] : xi[1] - xp[3 * j + 1] - t[1];
          const double dz = plain ? xi[2] - xp[3 * j + 2] : xi[2] - xp[3 * j + 2] - t[2];
          const double r2 = dx * dx + dy * dy + dz * dz;
          if (!(r2 < rc2))
            continue;
          REQUIRE(k < n);
          CHECK(bj[k] == j);
          CHECK(std::memcmp(&bx[k], &dx, sizeof dx) == 0);
          CHECK(std::memcmp(&by[k], &dy, sizeof dy) == 0);
          CHECK(std::memcmp(&bz[k], &dz, sizeof dz) == 0);
          CHECK(std::memcmp(&br2[k], &r2, sizeof r2) == 0);
          ++k;
        }
        CHECK(k == n);
      }
  }
}
#else
TEST_CASE("list_avx2: not compiled in this build (no AVX2 copies)") {
  MESSAGE("skipped: BATON_AVX2_DISPATCH is 0 here");
}
#endif
