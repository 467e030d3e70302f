// The host's all-pairs loop in lanes for small systems (dynamics/potential.hpp,
// small_pair_forces): the same forces and energy as one loop over the pairs within the cutoff (to
// rounding: only the order of the sums differs), nothing from pairs at or beyond the cutoff or from
// the padding after the last atom, and the same bits from its AVX2 copy as from the generic one.
#include <doctest/doctest.h>

#include <baton/dynamics/lennard_jones.hpp>
#include <baton/dynamics/potential.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace bd = baton::dynamics;
namespace bdd = baton::dynamics::detail;

namespace baton_test {

// n atoms in a ball of radius 0.75 n^(1/3), at least 0.9 apart, in rows [first, first + n) of a
// batch of first + n + 2 rows (seed `seed`).
std::vector<double> cluster(int first, int n, unsigned seed) {
  std::mt19937 gen(seed);
  const double radius = 0.75 * std::cbrt(double(n)) + 0.5;
  std::uniform_real_distribution<double> u(-radius, radius);
  std::vector<double> x(3 * (first + n + 2), 0.0);
  for (int k = 0; k < n;) {
    const double a = u(gen), b = u(gen), c = u(gen);
    if (a * a + b * b + c * c > radius * radius)
      continue;
    bool apart = true;
    for (int m = 0; m < k && apart; ++m) {
      const double* p = &x[3 * (first + m)];
      apart = (a - p[0]) * (a - p[0]) + (b - p[1]) * (b - p[1]) + (c - p[2]) * (c - p[2]) > 0.81;
    }
    if (!apart)
      continue;
    x[3 * (first + k)] = a;
    x[3 * (first + k) + 1] = b;
    x[3 * (first + k) + 2] = c;
    ++k;
  }
  return x;
}

// One loop over the pairs j > i closer than the cutoff, in long double.
void one_loop(const bd::LennardJones::Kernel& k, const std::vector<double>& x, int begin, int end,
              std::vector<long double>& f, long double& e) {
  f.assign(x.size(), 0.0L);
  e = 0;
  for (int i = begin; i < end; ++i)
    for (int j = i + 1; j < end; ++j) {
      double d[3];
      for (int c = 0; c < 3; ++c)
        d[c] = x[3 * i + c] - x[3 * j + c];
      const double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
      if (!(r2 < k.cutoff_squared()))
        continue;
      double pe = 0, s = 0;
      k.pair(0, 0, r2, pe, s);
      e += pe;
      for (int c = 0; c < 3; ++c) {
        f[3 * i + c] += static_cast<long double>(s) * d[c];
        f[3 * j + c] -= static_cast<long double>(s) * d[c];
      }
    }
}

}  // namespace baton_test

TEST_CASE("pairs: keep_below keeps a value exactly when r2 < rc2, without a comparison") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(bdd::keep_below(2.5, 1.0, 9.0) == 2.5);
  CHECK(bdd::keep_below(-2.5, 8.999999999999998, 9.0) == -2.5);
  CHECK(bdd::keep_below(2.5, 9.0, 9.0) == 0.0);  // at the cutoff: out, as r2 < rc2 says
  CHECK(bdd::keep_below(2.5, 9.000000000000002, 9.0) == 0.0);
  CHECK(bdd::keep_below(2.5, 1e300, inf) == 2.5);  // no cutoff
  CHECK(bdd::keep_below(2.5, 0.0, -1.0) == 0.0);   // padding
  // Whatever is dropped, inf or NaN, becomes +0.
  const double dropped_inf = bdd::keep_below(inf, 10.0, 9.0);
  const double dropped_nan = bdd::keep_below(nan, 10.0, 9.0);
  CHECK(dropped_inf == 0.0);
  CHECK(dropped_nan == 0.0);
  CHECK(!std::signbit(dropped_nan));
  CHECK(std::isinf(bdd::keep_below(inf, 0.0, 9.0)));  // an overlap inside the cutoff stays
}

TEST_CASE("pairs: small_pair_forces gives one loop's forces and energy, to rounding") {
  bd::LennardJones cut_lj;
  cut_lj.cutoff = 3.0;
  bd::LennardJones no_cutoff;  // every pair interacts
  for (const auto& lj : {cut_lj, no_cutoff}) {
    const auto k = lj.kernel();
    for (const int n : {1, 2, 3, 7, 8, 9, 17, 55, 63, bdd::small_pairs_max}) {
      const int first = 5;
      const auto x = baton_test::cluster(first, n, 17u + static_cast<unsigned>(n));
      std::vector<int> species(x.size() / 3, 0);
      std::vector<long double> want;
      long double e_want = 0;
      baton_test::one_loop(k, x, first, first + n, want, e_want);
      const double untouched = -7.25;
      std::vector<double> f(x.size(), untouched);
      double e = 0;
      bdd::small_pair_forces(k, species.data(), x.data(), f.data(), first, first + n, e);
      CAPTURE(n);
      CAPTURE(lj.cutoff);
      // Forces of a few units each; the sums of up to 63 terms differ only in their order.
      long double scale = 1;
      for (const long double w : want)
        scale = std::fmax(scale, std::fabs(w));
      for (int r = 0; r < first + n + 2; ++r)
        for (int c = 0; c < 3; ++c) {
          CAPTURE(r);
          if (r < first || r >= first + n)
            CHECK(f[3 * r + c] == untouched);
          else
            CHECK(std::fabs(f[3 * r + c] - want[3 * r + c]) <= 1e-12L * scale);
        }
      CHECK(std::fabs(e - e_want) <= 1e-12L * std::fmax(1.0L, std::fabs(e_want)));

#if BATON_AVX2_DISPATCH
      if (bdd::host_has_avx2()) {
        std::vector<double> f2(x.size(), untouched);
        double e2 = 1;
        bdd::small_pair_forces_avx2(k, species.data(), x.data(), f2.data(), first, first + n, e2);
        CHECK(std::memcmp(f.data(), f2.data(), f.size() * sizeof(double)) == 0);
        CHECK(std::memcmp(&e, &e2, sizeof e) == 0);
      }
#endif
    }
  }
}

TEST_CASE("pairs: small_pair_forces of a system with no atoms reads and writes nothing") {
  bd::LennardJones lj;
  const auto k = lj.kernel();
  const std::vector<double> x = {0, 0, 0, 1, 0, 0};  // two rows; the empty system starts after them
  const std::vector<int> species(2, 0);
  std::vector<double> f(6, 3.0);
  double e = 1;
  bdd::small_pair_forces(k, species.data(), x.data(), f.data(), 2, 2, e);
  CHECK(e == 0.0);
  CHECK(f == std::vector<double>(6, 3.0));
}

TEST_CASE("pairs: small_pair_forces leaves out pairs at and beyond the cutoff") {
  bd::LennardJones lj;
  lj.cutoff = 3.0;
  const auto k = lj.kernel();
  // Atoms 0 and 1 exactly at the cutoff (r^2 = 9), 1 and 2 at 1.5, atom 3 far from all.
  const std::vector<double> x = {0, 0, 0, 3, 0, 0, 4.5, 0, 0, 0, 40, 0};
  const std::vector<int> species(4, 0);
  std::vector<double> f(12, 1.0);
  double e = 0;
  bdd::small_pair_forces(k, species.data(), x.data(), f.data(), 0, 4, e);
  double pe = 0, s = 0;
  k.pair(0, 0, 2.25, pe, s);
  CHECK(e == pe);
  for (int c = 0; c < 3; ++c) {
    CHECK(f[c] == 0.0);
    CHECK(f[9 + c] == 0.0);
  }
  CHECK(f[3] == -s * 1.5);
  CHECK(f[6] == s * 1.5);
}
