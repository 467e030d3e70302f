#include "hypergrid.hpp"

#include <cmath>

namespace replay {

bool has_modes(const Grid& g) {
  for (int x = 0; x < g.side; ++x) {
    if (in_band(x, g.side))
      return true;
  }
  return false;
}

namespace {
// Kokkos' math functions moved from Kokkos::Experimental to Kokkos in 3.7.
KOKKOS_INLINE_FUNCTION double exp_(double x) {
#if KOKKOS_VERSION >= 30700
  return Kokkos::exp(x);
#else
  return Kokkos::Experimental::exp(x);
#endif
}

// SplitMix64: a counter-based generator, so each (seed, iteration, sample, step) has its own
// number.
KOKKOS_INLINE_FUNCTION std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
KOKKOS_INLINE_FUNCTION double uniform(std::uint64_t seed, std::uint64_t a, std::uint64_t b,
                                      std::uint64_t c) {
  const std::uint64_t z = mix(seed ^ mix(a ^ mix(b ^ mix(c))));
  return (z >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
}
}  // namespace

void sample(const Grid& g, const Kokkos::View<const double*>& theta, std::uint64_t seed,
            int iteration, const Kokkos::View<int**>& states, const Kokkos::View<double**>& grads) {
  const int dims = g.dims;
  const int side = g.side;
  Kokkos::parallel_for(
      "replay::sample", Kokkos::RangePolicy<>(0, states.extent(0)), KOKKOS_LAMBDA(const int n) {
        for (int i = 0; i <= dims; ++i)
          grads(n, i) = 0;
        for (int i = 0; i < dims; ++i)
          states(n, i) = 0;
        for (int step = 0;; ++step) {
          // softmax over the allowed actions: increments of coordinates below side-1, and stop
          double total = 0;
          for (int i = 0; i <= dims; ++i) {
            if (i == dims || states(n, i) < side - 1)
              total += exp_(theta(i));
          }
          const double u =
              uniform(seed, static_cast<std::uint64_t>(iteration), static_cast<std::uint64_t>(n),
                      static_cast<std::uint64_t>(step)) *
              total;
          int action = dims;
          double acc = 0;
          for (int i = 0; i <= dims; ++i) {
            if (i < dims && states(n, i) >= side - 1)
              continue;
            acc += exp_(theta(i));
            if (u < acc) {
              action = i;
              break;
            }
          }
          // d log pi / d theta_j = [j == action] - pi_j over the allowed actions
          for (int i = 0; i <= dims; ++i) {
            if (i == dims || states(n, i) < side - 1)
              grads(n, i) -= exp_(theta(i)) / total;
          }
          grads(n, action) += 1;
          if (action == dims)
            break;
          states(n, action) += 1;
        }
      });
  Kokkos::fence();
}

void score(const Grid& g, const Kokkos::View<const int**>& states,
           const Kokkos::View<double*>& rewards) {
  Kokkos::parallel_for(
      "replay::score", Kokkos::RangePolicy<>(0, states.extent(0)), KOKKOS_LAMBDA(const int n) {
        rewards(n) = reward(Kokkos::subview(states, n, Kokkos::ALL()), g);
      });
  Kokkos::fence();
}

void update(const Kokkos::View<double*>& theta, const Kokkos::View<const double**>& grads,
            const Kokkos::View<const double*>& rewards, double rate) {
  const int n = static_cast<int>(rewards.extent(0));
  if (n == 0)
    return;
  double mean = 0;
  Kokkos::parallel_reduce(
      "replay::mean", Kokkos::RangePolicy<>(0, n),
      KOKKOS_LAMBDA(const int k, double& s) { s += rewards(k); }, mean);
  mean /= n;
  for (std::size_t i = 0; i < theta.extent(0); ++i) {
    double g = 0;
    Kokkos::parallel_reduce(
        "replay::gradient", Kokkos::RangePolicy<>(0, n),
        KOKKOS_LAMBDA(const int k, double& s) { s += (rewards(k) - mean) * grads(k, i); }, g);
    auto t = Kokkos::subview(theta, i);
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), t);
    h() += rate * g / n;
    Kokkos::deep_copy(t, h);
  }
}

}  // namespace replay
