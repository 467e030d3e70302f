#pragma once
/// \file
/// Counter-based random numbers for kernels: every value is a hash of its key (seed, system id,
/// step, atom, component), so a system's stream depends on nothing else (not on rank, thread, batch
/// slot or the order of draws). Also the few math functions kernels need, across Kokkos versions.

#include <Kokkos_Core.hpp>
#include <cstdint>

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
/// index: two Box-Muller pairs, keyed (atom, 0) and (atom, 1), of which the second's sine is
/// unused. Two logarithms and one hash chain per atom, where three random_normal calls take three
/// and three chains (the Langevin O step's cost).
struct Normal3 {
  double x, y, z;
};
KOKKOS_INLINE_FUNCTION Normal3 random_normal3(std::uint64_t key, std::int64_t atom) {
  const std::uint64_t a = detail::mix64(key ^ static_cast<std::uint64_t>(atom));
  const std::uint64_t h0 = detail::mix64(a), h1 = detail::mix64(a ^ 0x1ull);
  const double r0 =
      detail::math_sqrt(-2.0 * detail::math_log(1.0 - detail::to_unit(detail::mix64(h0 ^ 0x1ull))));
  const double t0 = 6.283185307179586 * detail::to_unit(detail::mix64(h0 ^ 0x2ull));
  const double r1 =
      detail::math_sqrt(-2.0 * detail::math_log(1.0 - detail::to_unit(detail::mix64(h1 ^ 0x1ull))));
  const double t1 = 6.283185307179586 * detail::to_unit(detail::mix64(h1 ^ 0x2ull));
  return {r0 * detail::math_cos(t0), r0 * detail::math_sin(t0), r1 * detail::math_cos(t1)};
}

}  // namespace baton::dynamics
