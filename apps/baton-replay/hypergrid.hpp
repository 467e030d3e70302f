#pragma once
// The GFlowNet hypergrid for baton-replay: states x in {0..H-1}^D, the standard reward, modes, and
// a Kokkos kernel that samples terminal states with a parametrised forward policy.
//
// Reward: R(x) = R0 + R1 * prod_i [0.25 < |x_i/(H-1) - 0.5|] + R2 * prod_i [0.3 < |x_i/(H-1) - 0.5|
// < 0.4]. Mode: the states of highest reward (every coordinate in the R2 band) fall into 2^D
// corners, one per orthant around the centre; a mode is one such corner, identified by the bitmask
// of the coordinates above the centre. A mode is found when any state of its corner is sampled.
// There are 2^D modes. (A side H whose band holds no integer point has no modes at all;
// baton-replay rejects it.)
//
// Policy: from x = 0, each step either increments one coordinate i (if x_i < H-1) or stops; the
// probabilities are softmax(theta) over the allowed actions (theta has D + 1 entries, the last for
// stop).
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <vector>

namespace replay {

struct Grid {
  int dims = 4;
  int side = 8;
  double r0 = 0.1, r1 = 0.5, r2 = 2.0;
};

KOKKOS_INLINE_FUNCTION double coordinate_distance(int x, int side) {
  const double u = static_cast<double>(x) / (side - 1) - 0.5;
  return u < 0 ? -u : u;
}

KOKKOS_INLINE_FUNCTION bool in_outer(int x, int side) {
  return coordinate_distance(x, side) > 0.25;
}
KOKKOS_INLINE_FUNCTION bool in_band(int x, int side) {
  const double d = coordinate_distance(x, side);
  return d > 0.3 && d < 0.4;
}

/// Reward of a state (coordinates x[0], x[stride], ...).
template <class Row>
KOKKOS_INLINE_FUNCTION double reward(const Row& x, const Grid& g) {
  bool outer = true, band = true;
  for (int i = 0; i < g.dims; ++i) {
    outer = outer && in_outer(x(i), g.side);
    band = band && in_band(x(i), g.side);
  }
  return g.r0 + (outer ? g.r1 : 0.0) + (band ? g.r2 : 0.0);
}

/// The mode of a state, or -1 when it is not of highest reward.
template <class Row>
KOKKOS_INLINE_FUNCTION int mode_of(const Row& x, const Grid& g) {
  int mask = 0;
  for (int i = 0; i < g.dims; ++i) {
    if (!in_band(x(i), g.side))
      return -1;
    if (2 * x(i) > g.side - 1)
      mask |= 1 << i;
  }
  return mask;
}

/// True when the grid has at least one mode (some integer x lies in the band).
bool has_modes(const Grid& g);

/// Samples `states.extent(0)` terminal states with policy `theta` (D + 1 logits), writing each
/// trajectory's gradient of log-probability with respect to theta into `grads` (N x (D+1)).
/// Trajectories use counter-based streams from (seed, iteration, sample), so results do not depend
/// on the execution space or thread count.
void sample(const Grid& g, const Kokkos::View<const double*>& theta, std::uint64_t seed,
            int iteration, const Kokkos::View<int**>& states, const Kokkos::View<double**>& grads);

/// Scores states: rewards(n) = R(states(n, :)).
void score(const Grid& g, const Kokkos::View<const int**>& states,
           const Kokkos::View<double*>& rewards);

/// theta += rate * sum_n (reward_n - mean reward) * grads(n, :) / N (a REINFORCE step with a
/// baseline).
void update(const Kokkos::View<double*>& theta, const Kokkos::View<const double**>& grads,
            const Kokkos::View<const double*>& rewards, double rate);

}  // namespace replay
