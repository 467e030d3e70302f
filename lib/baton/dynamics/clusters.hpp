#pragma once
/// \file
/// Built-in input: Mackay icosahedra (Lennard-Jones cluster seeds) with small random perturbations.
/// The random numbers come from a counter-based hash of (seed, system id, coordinate), so every
/// system is the same whatever the order or number of systems generated, and on every platform.

#include <baton/systems/host_system.hpp>

#include <cstdint>
#include <vector>

namespace baton::dynamics {

/// The largest cluster mackay_icosahedron() and the generator build (30 complete shells are 94,611
/// atoms; the last shell may be partial).
inline constexpr int max_cluster_atoms = 100000;

/// The first `n_atoms` sites of a Mackay icosahedron, as 3 * n_atoms coordinates: the centre at the
/// origin, then shell by shell (shell k has 10k^2 + 2 sites: the 12 vertices at k * nn_distance
/// from the centre, then k - 1 sites on each of the 30 edges, then (k-1)(k-2)/2 inside each of the
/// 20 faces). 13, 55, 147, 309, ... atoms are complete icosahedra. Throws baton::Error unless
/// 1 <= n_atoms <= max_cluster_atoms and nn_distance is positive and finite.
std::vector<double> mackay_icosahedron(int n_atoms, double nn_distance);

/// What generate_clusters() makes.
struct ClusterSpec {
  int count = 200;                         ///< number of systems (ids 0 .. count-1)
  std::uint64_t seed = 1;                  ///< random seed
  std::vector<int> sizes = {13, 55};       ///< atom counts, one drawn uniformly per system
  double amplitude = 0.05;                 ///< each coordinate moves by up to this (sigma units)
  double nn_distance = 1.122462048309373;  ///< centre to first shell: 2^(1/6), the LJ minimum
};

/// One Mackay cluster of `n_atoms` "Ar" atoms with id `id`, each coordinate moved by a value drawn
/// uniformly from [-amplitude, amplitude) by hashing (seed, id, coordinate index).
/// Throws baton::Error for bad arguments (amplitude must be >= 0 and finite).
systems::HostSystem perturbed_cluster(int n_atoms, std::int64_t id, std::uint64_t seed,
                                      double amplitude, double nn_distance);

/// Throws baton::Error naming the bad field when the spec is invalid.
void check_cluster_spec(const ClusterSpec& spec);

/// System i of generate_clusters(spec) alone (for generating a long input one system at a time);
/// the spec must be valid (check_cluster_spec).
systems::HostSystem generated_cluster(const ClusterSpec& spec, std::int64_t i);

/// `spec.count` perturbed clusters; system i has id i and a size drawn from spec.sizes by hashing
/// (seed, i). Throws baton::Error naming the bad field when the spec is invalid.
std::vector<systems::HostSystem> generate_clusters(const ClusterSpec& spec);

}  // namespace baton::dynamics
