#pragma once
/// \file
/// Counter-based random numbers for kernels: every value is a hash of its key (seed, system id,
/// step, atom, component), so a system's stream depends on nothing else (not on rank, thread, batch
/// slot or the order of draws). Also the few math functions kernels need, across Kokkos versions.

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstring>

namespace baton::dynamics {

namespace detail {

// Kokkos' math functions moved out of Kokkos::Experimental in 3.7.
#if KOKKOS_VERSION >= 30700
namespace kmath = Kokkos;
#else
namespace kmath = Kokkos::Experimental;
#endif

KOKKOS_INLINE_FUNCTION double math_sqrt(double x) {
  return kmath::sqrt(x);
}
KOKKOS_INLINE_FUNCTION double math_log(double x) {
  return kmath::log(x);
}
KOKKOS_INLINE_FUNCTION double math_cos(double x) {
  return kmath::cos(x);
}
KOKKOS_INLINE_FUNCTION double math_sin(double x) {
  return kmath::sin(x);
}
KOKKOS_INLINE_FUNCTION double math_exp(double x) {
  return kmath::exp(x);
}
KOKKOS_INLINE_FUNCTION double math_cbrt(double x) {
  return kmath::cbrt(x);
}

/// splitmix64's finaliser (Steele, Lea, Flood 2014): a bijective 64-bit mix.
KOKKOS_INLINE_FUNCTION std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// 53 random bits as a double in [0, 1).
KOKKOS_INLINE_FUNCTION double to_unit(std::uint64_t bits) {
  return static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0);
}

/// 52 random bits k as (k + 1/2) / 2^52: a double in (0, 1), never 0 or 1, exactly symmetric
/// about 1/2 (1 - u is exact and another such value).
KOKKOS_INLINE_FUNCTION double to_open_unit(std::uint64_t bits) {
  return (static_cast<double>(bits >> 12) + 0.5) * (1.0 / 4503599627370496.0);
}

/// c[0] r^7 + c[1] r^6 + ... + c[7], by Estrin's scheme: four independent pairs, then two
/// levels, where Horner's rule is a chain of seven (the chain's latency is what a draw costs).
KOKKOS_FORCEINLINE_FUNCTION double poly7(const double (&c)[8], double r) {
  const double r2 = r * r, r4 = r2 * r2;
  const double hi = (c[0] * r + c[1]) * r2 + (c[2] * r + c[3]);
  const double lo = (c[4] * r + c[5]) * r2 + (c[6] * r + c[7]);
  return hi * r4 + lo;
}

/// The standard normal distribution's quantile x, Phi(x) = p, for p in (0, 1), in Wichura's
/// algorithm AS 241 (PPND16; Applied Statistics 37, 477, 1988): ratios of polynomials good to
/// about 1e-16. In two parts, so that several draws can share the first: normal_central() for
/// |p - 1/2| <= 0.425, normal_tail() (a logarithm and a square root) for the rest.
KOKKOS_FORCEINLINE_FUNCTION double normal_central(double q) {  // q = p - 1/2
  const double a[8] = {2.5090809287301226727e+3, 3.3430575583588128105e+4, 6.7265770927008700853e+4,
                       4.5921953931549871457e+4, 1.3731693765509461125e+4, 1.9715909503065514427e+3,
                       1.3314166789178437745e+2, 3.3871328727963666080e+0};
  const double b[8] = {5.2264952788528545610e+3, 2.8729085735721942674e+4,
                       3.9307895800092710610e+4, 2.1213794301586595867e+4,
                       5.3941960214247511077e+3, 6.8718700749205790830e+2,
                       4.2313330701600911252e+1, 1.0};
  const double r = 0.180625 - q * q;
  return q * poly7(a, r) / poly7(b, r);
}
/// The bits of x, and the double of bits b.
KOKKOS_INLINE_FUNCTION std::uint64_t bits_of(double x) {
  std::uint64_t b = 0;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
KOKKOS_INLINE_FUNCTION double double_of(std::uint64_t b) {
  double x = 0;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

/// ln x for a positive normal double x, to within about one unit in the last place, in integer
/// and arithmetic operations only (no branch, no library call): the same bits on every platform,
/// and loops over it vectorise. x = 2^e m with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s) with
/// s = (m - 1) / (m + 1), |s| < 0.172, as its series to s^21 (the next term is below 1e-17 of the
/// sum), and e ln 2 in two parts (the first exact). (The arrangement of the sums is fdlibm's.)
KOKKOS_INLINE_FUNCTION double log_positive(double x) {
  const std::uint64_t b = bits_of(x);
  const std::uint64_t mant = b & 0x000FFFFFFFFFFFFFull;
  // 1 when m's mantissa is at least sqrt(2)'s (0x6A09E667F3BCD): then m is halved, e raised.
  const std::uint64_t big = (mant + 0x00095F619980C433ull) >> 52;
  const int e = static_cast<int>((b >> 52) & 0x7FF) - 1023 + static_cast<int>(big);
  const double f = double_of(mant | ((1023 - big) << 52)) - 1.0;
  const double s = f / (2.0 + f);
  const double z = s * s;
  double p = 1.0 / 21;
  p = p * z + 1.0 / 19;
  p = p * z + 1.0 / 17;
  p = p * z + 1.0 / 15;
  p = p * z + 1.0 / 13;
  p = p * z + 1.0 / 11;
  p = p * z + 1.0 / 9;
  p = p * z + 1.0 / 7;
  p = p * z + 1.0 / 5;
  p = p * z + 1.0 / 3;
  const double ln2_hi = 0x1.62e42p-1;           // ln 2's leading 21 bits: e ln2_hi is exact
  const double ln2_lo = 0x1.fdf473de6af28p-22;  // ln 2 - ln2_hi
  // ln m = 2 s + 2 s z p = f - (f^2/2 - s (f^2/2 + 2 z p)) (as 2 s = f - s f): f is exact and
  // the rest a small correction, which keeps the error within an ulp near m = 1 too.
  const double hfsq = 0.5 * f * f;
  const double r = 2.0 * z * p;
  return e * ln2_hi - ((hfsq - (s * (hfsq + r) + e * ln2_lo)) - f);
}

/// a where q's sign bit is set (q < 0), b otherwise; no comparison, so loops over it vectorise.
KOKKOS_INLINE_FUNCTION double where_negative(double q, double a, double b) {
  const std::uint64_t m = std::uint64_t{0} - (bits_of(q) >> 63);
  return double_of((bits_of(a) & m) | (bits_of(b) & ~m));
}

/// normal_tail in three steps, for loops that vectorise the first two: tail_r(p) = sqrt(-ln
/// min(p, 1 - p)); for r <= 5 the quantile is tail_near(q, r) (q = p - 1/2), beyond (p within
/// 1.4e-11 of 0 or 1) tail_far(q, r).
KOKKOS_INLINE_FUNCTION double tail_r(double p) {
  return math_sqrt(-log_positive(where_negative(p - 0.5, p, 1.0 - p)));
}
KOKKOS_INLINE_FUNCTION double tail_near(double q, double r) {
  const double c[8] = {7.74545014278341407640e-4, 2.27238449892691845833e-2,
                       2.41780725177450611770e-1, 1.27045825245236838258e+0,
                       3.64784832476320460504e+0, 5.76949722146069140550e+0,
                       4.63033784615654529590e+0, 1.42343711074968357734e+0};
  const double d[8] = {1.05075007164441684324e-9, 5.47593808499534494600e-4,
                       1.51986665636164571966e-2, 1.48103976427480074590e-1,
                       6.89767334985100004550e-1, 1.67638483018380384940e+0,
                       2.05319162663775882187e+0, 1.0};
  const double x = poly7(c, r - 1.6) / poly7(d, r - 1.6);
  return double_of(bits_of(x) ^ (bits_of(q) & 0x8000000000000000ull));  // q < 0: -x
}
KOKKOS_INLINE_FUNCTION double tail_far(double q, double r) {
  const double e[8] = {2.01033439929228813265e-7, 2.71155556874348757815e-5,
                       1.24266094738807843860e-3, 2.65321895265761230930e-2,
                       2.96560571828504891230e-1, 1.78482653991729133580e+0,
                       5.46378491116411436990e+0, 6.65790464350110377720e+0};
  const double f[8] = {2.04426310338993978564e-15, 1.42151175831644588870e-7,
                       1.84631831751005468180e-5,  7.86869131145613259100e-4,
                       1.48753612908506148525e-2,  1.36929880922735805310e-1,
                       5.99832206555887937690e-1,  1.0};
  const double x = poly7(e, r - 5.0) / poly7(f, r - 5.0);
  return double_of(bits_of(x) ^ (bits_of(q) & 0x8000000000000000ull));
}
KOKKOS_INLINE_FUNCTION double normal_tail(double p) {
  const double r = tail_r(p);
  return r <= 5.0 ? tail_near(p - 0.5, r) : tail_far(p - 0.5, r);
}
/// normal_central or normal_tail, as p asks.
KOKKOS_INLINE_FUNCTION double normal_quantile(double p) {
  const double q = p - 0.5;
  return q <= 0.425 && q >= -0.425 ? normal_central(q) : normal_tail(p);
}

}  // namespace detail

/// The first three fields of a key (seed, system, step), mixed in turn: computed once per system
/// and step, then extended per atom (random_bits, random_normal3).
KOKKOS_INLINE_FUNCTION std::uint64_t random_key(std::uint64_t seed, std::int64_t system,
                                                std::int64_t step) {
  std::uint64_t h = detail::mix64(seed);
  h = detail::mix64(h ^ static_cast<std::uint64_t>(system));
  return detail::mix64(h ^ static_cast<std::uint64_t>(step));
}

/// 64 random bits for the key (seed, system, step, atom, component); each field is mixed in turn,
/// so keys that differ in any field give unrelated bits.
KOKKOS_INLINE_FUNCTION std::uint64_t random_bits(std::uint64_t seed, std::int64_t system,
                                                 std::int64_t step, std::int64_t atom,
                                                 int component) {
  const std::uint64_t h =
      detail::mix64(random_key(seed, system, step) ^ static_cast<std::uint64_t>(atom));
  return detail::mix64(h ^ static_cast<std::uint64_t>(component));
}

/// A uniform double in [0, 1) for the key.
KOKKOS_INLINE_FUNCTION double random_uniform(std::uint64_t seed, std::int64_t system,
                                             std::int64_t step, std::int64_t atom, int component) {
  return detail::to_unit(random_bits(seed, system, step, atom, component));
}

/// A standard normal for the key (Box-Muller from two uniforms derived from the key's bits).
KOKKOS_INLINE_FUNCTION double random_normal(std::uint64_t seed, std::int64_t system,
                                            std::int64_t step, std::int64_t atom, int component) {
  const std::uint64_t h = random_bits(seed, system, step, atom, component);
  const double u1 = 1.0 - detail::to_unit(detail::mix64(h ^ 0x1ull));  // (0, 1]: log is finite
  const double u2 = detail::to_unit(detail::mix64(h ^ 0x2ull));
  return detail::math_sqrt(-2.0 * detail::math_log(u1)) * detail::math_cos(6.283185307179586 * u2);
}

/// Three standard normals for one atom, from the key of its system and step (random_key) and its
/// index: three uniforms from one hash chain (the atom's hash, then one mix per component), each
/// through the normal quantile (detail::normal_quantile: exact to about 1e-16, no trigonometry,
/// a logarithm for 15% of the draws), so about half a logarithm per atom where Box-Muller takes
/// two and a cosine and a sine (the Langevin O step's cost).
struct Normal3 {
  double x, y, z;
};
KOKKOS_INLINE_FUNCTION Normal3 random_normal3(std::uint64_t key, std::int64_t atom) {
  const std::uint64_t a = detail::mix64(key ^ static_cast<std::uint64_t>(atom));
  const double u[3] = {detail::to_open_unit(detail::mix64(a ^ 0x1ull)),
                       detail::to_open_unit(detail::mix64(a ^ 0x2ull)),
                       detail::to_open_unit(detail::mix64(a ^ 0x3ull))};
  // The central part for all three (no branch, so their polynomials overlap), then the tails.
  double x[3];
  bool tails = false;
  for (int d = 0; d < 3; ++d) {
    x[d] = detail::normal_central(u[d] - 0.5);
    tails = tails || u[d] - 0.5 > 0.425 || u[d] - 0.5 < -0.425;
  }
  if (tails)
    for (int d = 0; d < 3; ++d)
      if (u[d] - 0.5 > 0.425 || u[d] - 0.5 < -0.425)
        x[d] = detail::normal_tail(u[d]);
  return {x[0], x[1], x[2]};
}

/// Atoms per random_normal3_block.
inline constexpr int normal3_block = 64;

/// random_normal3 for the atoms first, ..., first + n - 1 (n <= normal3_block) of one key: atom
/// first + k gets out[3 k], out[3 k + 1], out[3 k + 2], the same numbers as random_normal3 gives,
/// made in loops of their own: the hashes, then the central parts of all 3 n draws (vectorised by
/// the host's compiler), then the tails (about 15% of draws), found without a branch. For a host
/// thread that works a block of atoms at a time; where random_normal3 branches on whether one of
/// an atom's three draws is in a tail (39% of atoms, at random), this mispredicts nothing.
KOKKOS_FORCEINLINE_FUNCTION void random_normal3_block(std::uint64_t key, std::int64_t first, int n,
                                                      double* out) {
  double u[3 * normal3_block];
  int tail[3 * normal3_block];
  for (int k = 0; k < n; ++k) {
    const std::uint64_t a = detail::mix64(key ^ static_cast<std::uint64_t>(first + k));
    for (int d = 0; d < 3; ++d)
      u[3 * k + d] = detail::to_open_unit(detail::mix64(a ^ static_cast<std::uint64_t>(d + 1)));
  }
  const int m = 3 * n;
  for (int c = 0; c < m; ++c)
    out[c] = detail::normal_central(u[c] - 0.5);
  // Which draws are in a tail, |u - 1/2| > 0.425: the sign of 0.425 - |u - 1/2| (a loop that
  // vectorises), then their list.
  for (int c = 0; c < m; ++c) {
    const double a = detail::double_of(detail::bits_of(u[c] - 0.5) & 0x7FFFFFFFFFFFFFFFull);
    tail[c] = static_cast<int>(detail::bits_of(0.425 - a) >> 63);
  }
  int tails = 0;
  for (int c = 0; c < m; ++c) {
    const int in = tail[c];
    tail[tails] = c;
    tails += in;
  }
  // The tails in loops of their own: gathered, then sqrt(-ln) and the near formula for all (they
  // vectorise), then the few beyond r = 5, then put in place.
  double p[3 * normal3_block], r[3 * normal3_block];
  for (int t = 0; t < tails; ++t)
    p[t] = u[tail[t]];
  for (int t = 0; t < tails; ++t)
    r[t] = detail::tail_r(p[t]);
  for (int t = 0; t < tails; ++t)
    p[t] = detail::tail_near(p[t] - 0.5, r[t]);
  for (int t = 0; t < tails; ++t)
    if (r[t] > 5.0)
      p[t] = detail::tail_far(u[tail[t]] - 0.5, r[t]);
  for (int t = 0; t < tails; ++t)
    out[tail[t]] = p[t];
}

}  // namespace baton::dynamics
