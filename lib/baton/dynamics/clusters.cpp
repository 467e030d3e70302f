#include <baton/core/error.hpp>
#include <baton/dynamics/clusters.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

namespace baton::dynamics {
namespace {

// a * b rounded to double and kept apart from any following addition: a compiler may not fuse it
// into an FMA, so every platform computes the same bits.
double product(double a, double b) {
  volatile double p = a * b;
  return p;
}

using Vec = std::array<double, 3>;

// The 12 vertices of an icosahedron with circumradius 1: the cyclic permutations of
// (0, +-1, +-phi), scaled. Only sqrt is used, which IEEE 754 rounds exactly.
std::array<Vec, 12> icosahedron_vertices() {
  const double phi = (1.0 + std::sqrt(5.0)) / 2.0;
  const double norm = std::sqrt(1.0 + product(phi, phi));
  const double a = 1.0 / norm, b = phi / norm;
  std::array<Vec, 12> v{};
  int n = 0;
  for (const double s1 : {-1.0, 1.0})
    for (const double s2 : {-1.0, 1.0}) {
      v[n++] = {0.0, s1 * a, s2 * b};
      v[n++] = {s1 * a, s2 * b, 0.0};
      v[n++] = {s2 * b, 0.0, s1 * a};
    }
  return v;
}

double distance2(const Vec& p, const Vec& q) {
  double d = 0;
  for (int k = 0; k < 3; ++k)
    d += (p[k] - q[k]) * (p[k] - q[k]);
  return d;
}

// Vertex pairs (edges) and triples (faces) of the icosahedron, in index order.
struct Topology {
  std::array<Vec, 12> v = icosahedron_vertices();
  std::vector<std::array<int, 2>> edges;
  std::vector<std::array<int, 3>> faces;
  Topology() {
    double shortest = 4.0;
    for (int i = 0; i < 12; ++i)
      for (int j = i + 1; j < 12; ++j)
        shortest = std::min(shortest, distance2(v[i], v[j]));
    const auto near = [&](int i, int j) {
      return std::abs(distance2(v[i], v[j]) - shortest) < 1e-9;
    };
    for (int i = 0; i < 12; ++i)
      for (int j = i + 1; j < 12; ++j) {
        if (!near(i, j))
          continue;
        edges.push_back({i, j});
        for (int k = j + 1; k < 12; ++k)
          if (near(i, k) && near(j, k))
            faces.push_back({i, j, k});
      }
  }
};

// Appends the site d * (wa * A + wb * B + wc * C) of shell wa + wb + wc.
void add_site(std::vector<double>& out, double d, const Vec& a, double wa, const Vec& b, double wb,
              const Vec& c, double wc) {
  for (int k = 0; k < 3; ++k) {
    const double sum = product(wa, a[k]) + product(wb, b[k]);
    out.push_back(product(d, sum + product(wc, c[k])));
  }
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// 64 random bits that depend only on (seed, system, index).
std::uint64_t hash(std::uint64_t seed, std::uint64_t system, std::uint64_t index) {
  return splitmix64(splitmix64(splitmix64(seed) ^ system) ^ index);
}

// A double in [0, 1) from the top 53 bits (exact).
double unit(std::uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

// `what` starts with the public name that checks, "baton::dynamics::<function or class>".
void check_size(int n_atoms, const char* what) {
  if (n_atoms < 1 || n_atoms > max_cluster_atoms)
    throw Error(std::string(what) + ": a cluster needs 1 to " + std::to_string(max_cluster_atoms) +
                " atoms, got " + std::to_string(n_atoms));
}

void check_positive(double value, const char* what) {
  if (!(value > 0) || !std::isfinite(value))
    throw Error(std::string(what) + " must be positive and finite, got " + std::to_string(value));
}

void check_amplitude(double value, const char* what) {
  if (!(value >= 0) || !std::isfinite(value))
    throw Error(std::string(what) + " must be >= 0 and finite, got " + std::to_string(value));
}

}  // namespace

std::vector<double> mackay_icosahedron(int n_atoms, double nn_distance) {
  check_size(n_atoms, "baton::dynamics::mackay_icosahedron");
  check_positive(nn_distance, "baton::dynamics::mackay_icosahedron: nn_distance");
  static const Topology t;
  const Vec zero{};
  std::vector<double> xyz = {0.0, 0.0, 0.0};
  const std::size_t wanted = 3 * static_cast<std::size_t>(n_atoms);
  for (int shell = 1; xyz.size() < wanted; ++shell) {
    for (const Vec& vertex : t.v)
      add_site(xyz, nn_distance, vertex, shell, zero, 0, zero, 0);
    for (const auto& [a, b] : t.edges)
      for (int j = 1; j < shell; ++j)
        add_site(xyz, nn_distance, t.v[a], shell - j, t.v[b], j, zero, 0);
    for (const auto& [a, b, c] : t.faces)
      for (int i = 1; i < shell; ++i)
        for (int j = 1; i + j < shell; ++j)
          add_site(xyz, nn_distance, t.v[a], shell - i - j, t.v[b], i, t.v[c], j);
  }
  xyz.resize(wanted);
  return xyz;
}

systems::HostSystem perturbed_cluster(int n_atoms, std::int64_t id, std::uint64_t seed,
                                      double amplitude, double nn_distance) {
  check_amplitude(amplitude, "baton::dynamics::perturbed_cluster: amplitude");
  systems::HostSystem system;
  system.id = id;
  system.positions = mackay_icosahedron(n_atoms, nn_distance);
  system.species.assign(static_cast<std::size_t>(n_atoms), "Ar");
  for (std::size_t c = 0; c < system.positions.size(); ++c) {
    const double u = unit(hash(seed, static_cast<std::uint64_t>(id), 1 + c));
    system.positions[c] += product(amplitude, 2.0 * u - 1.0);  // 2u - 1 is exact
  }
  return system;
}

void check_cluster_spec(const ClusterSpec& spec) {
  if (spec.count < 0)
    throw Error("baton::dynamics::ClusterSpec: count must be >= 0, got " +
                std::to_string(spec.count));
  if (spec.sizes.empty())
    throw Error("baton::dynamics::ClusterSpec: sizes must not be empty");
  for (const int size : spec.sizes)
    check_size(size, "baton::dynamics::ClusterSpec: sizes");
  check_amplitude(spec.amplitude, "baton::dynamics::ClusterSpec: amplitude");
  check_positive(spec.nn_distance, "baton::dynamics::ClusterSpec: nn_distance");
}

systems::HostSystem generated_cluster(const ClusterSpec& spec, std::int64_t i) {
  const std::uint64_t pick = hash(spec.seed, static_cast<std::uint64_t>(i), 0) % spec.sizes.size();
  return perturbed_cluster(spec.sizes[pick], i, spec.seed, spec.amplitude, spec.nn_distance);
}

std::vector<systems::HostSystem> generate_clusters(const ClusterSpec& spec) {
  check_cluster_spec(spec);
  std::vector<systems::HostSystem> systems;
  systems.reserve(static_cast<std::size_t>(spec.count));
  for (int i = 0; i < spec.count; ++i)
    systems.push_back(generated_cluster(spec, i));
  return systems;
}

}  // namespace baton::dynamics
