// What a model call takes: the edges of systems (count_edges) and the memory per atom and per
// edge of a call (probe_memory), both through the stages' own neighbour lists and gathering.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "baton/core/error.hpp"
#include "baton/dynamics/model.hpp"
#include "baton/dynamics/potential.hpp"
#include "baton/dynamics/team.hpp"
#include "baton/systems/host_transfer.hpp"

namespace baton::dynamics {

namespace {

using ExecPolicy = Kokkos::RangePolicy<detail::ExecutionSpace>;

/// Bytes per atom and per edge of Baton's own gathered buffers (ModelWorkspace: positions, species,
/// system index, edge offsets and forces per atom; two indices and a shift per edge), times the
/// room grow_view() keeps for growth.
constexpr double growth = 1.5;
constexpr double baton_per_atom = growth * (3 * 8 + 8 + 8 + 8 + 3 * 8);
constexpr double baton_per_edge = growth * (2 * 8 + 3 * 8);

/// A batch holding `systems` (a species table of their own: a model needs only valid indices).
systems::SystemsBatch batch_of(const std::vector<systems::HostSystem>& systems) {
  std::int64_t atoms = 0;
  for (const systems::HostSystem& s : systems) {
    const std::string problem = systems::host_system_problem(s);
    if (!problem.empty())
      throw Error("baton::dynamics: system " + std::to_string(s.id) + " " + problem);
    atoms += static_cast<std::int64_t>(s.size());
  }
  if (atoms > std::numeric_limits<int>::max())
    throw Error("baton::dynamics: " + std::to_string(atoms) + " atoms in one batch");
  systems::SystemsBatch batch({static_cast<int>(std::max<std::size_t>(systems.size(), 1)),
                               static_cast<int>(std::max<std::int64_t>(atoms, 1))},
                              0);
  systems::SpeciesTable species;
  systems::append_systems(batch, systems, species);
  return batch;
}

/// `s` stretched by `factor` about its centre (a cluster) or with its cell (periodic).
systems::HostSystem stretched(const systems::HostSystem& s, double factor) {
  systems::HostSystem out = s;
  double centre[3] = {0, 0, 0};
  const std::size_t n = s.size();
  if (!s.has_cell())
    for (std::size_t i = 0; i < n; ++i)
      for (int d = 0; d < 3; ++d)
        centre[d] += s.positions[3 * i + d] / static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d)
      out.positions[3 * i + d] = centre[d] + factor * (s.positions[3 * i + d] - centre[d]);
  for (double& c : out.cell)
    c *= factor;
  return out;
}

/// Peak bytes of one model call on `systems` (Baton's buffers and, when counted, the model's
/// own), and the call's atoms and edges. A first call on the same systems warms the model up.
struct Call {
  double bytes = 0;
  std::int64_t atoms = 0, edges = 0;
  bool counted = false;
};
Call measure(BatchModel& model, const std::vector<systems::HostSystem>& systems) {
  systems::SystemsBatch batch = batch_of(systems);
  NeighbourLists lists{NeighbourOptions{}};
  const double rc = model.cutoff();
  lists.prepare(batch, rc * rc, 0.0);
  detail::ModelWorkspace work;
  const int n = batch.num_systems();
  const auto& selected = work.selection(n);
  Kokkos::deep_copy(selected, 1);
  work.evaluate(model, batch, selected, lists);  // warm-up
  Kokkos::deep_copy(selected, 1);
  Kokkos::fence();
  model.begin_memory_count();
  work.evaluate(model, batch, selected, lists);
  Kokkos::fence();
  const std::int64_t own = model.end_memory_count();
  Call c;
  c.atoms = batch.num_atoms();
  c.edges = work.last_edges();
  c.counted = own >= 0;
  c.bytes = static_cast<double>(std::max<std::int64_t>(own, 0)) +
            baton_per_atom * static_cast<double>(c.atoms) +
            baton_per_edge * static_cast<double>(c.edges);
  return c;
}

std::string bytes_text(double b) {
  const char* unit[] = {"B", "kB", "MB", "GB", "TB"};
  int u = 0;
  while (b >= 1000 && u < 4) {
    b /= 1000;
    ++u;
  }
  char text[32];
  std::snprintf(text, sizeof text, b < 10 && u > 0 ? "%.1f %s" : "%.0f %s", b, unit[u]);
  return text;
}

}  // namespace

std::int64_t ModelMemory::edge_capacity(double budget, std::int64_t atoms) const {
  const double room = (1 - headroom) * budget - static_cast<double>(state) - fixed -
                      per_atom * static_cast<double>(atoms);
  if (!(room >= 0))
    return -1;
  if (!(per_edge > 0))
    return std::numeric_limits<std::int64_t>::max();
  const double edges = std::floor(room / per_edge);
  return edges >= 9e18 ? std::numeric_limits<std::int64_t>::max()
                       : static_cast<std::int64_t>(edges);
}

std::string ModelMemory::describe() const {
  return "state " + bytes_text(static_cast<double>(state)) + ", " + bytes_text(fixed) +
         " per call, " + bytes_text(per_atom) + " per atom, " + bytes_text(per_edge) + " per edge" +
         (model_counted ? "" : " (Baton's buffers only: the model does not count)");
}

ModelMemory probe_memory(BatchModel& model, const systems::HostSystem& sample, int copies) {
  if (copies < 1)
    throw Error("baton::dynamics::probe_memory: copies is " + std::to_string(copies) +
                "; give 1 or more");
  const std::vector<systems::HostSystem> one(static_cast<std::size_t>(copies), sample);
  std::vector<systems::HostSystem> two = one;
  two.insert(two.end(), one.begin(), one.end());
  const std::vector<systems::HostSystem> sparse(static_cast<std::size_t>(copies),
                                                stretched(sample, 1.3));
  const Call a = measure(model, one), b = measure(model, two), c = measure(model, sparse);
  ModelMemory m;
  m.state = model.state_bytes();
  m.model_counted = a.counted && b.counted && c.counted;
  // bytes = fixed + per_atom * atoms + per_edge * edges: b doubles both, c has fewer edges.
  const double slope = b.bytes - a.bytes;  // per_atom * atoms + per_edge * edges of `one`
  const double na = static_cast<double>(a.atoms), ea = static_cast<double>(a.edges);
  const double fewer = static_cast<double>(a.edges - c.edges);
  if (a.edges > 0 && fewer >= 0.1 * ea) {
    m.per_edge = std::max(0.0, (a.bytes - c.bytes) / fewer);
    m.per_atom = std::max(0.0, (slope - m.per_edge * ea) / na);
  } else if (a.edges > 0) {  // edges and atoms not separable: all of it per edge
    m.per_edge = std::max(0.0, slope / ea);
  } else {
    m.per_atom = std::max(0.0, slope / na);
  }
  m.per_atom = std::max(m.per_atom, baton_per_atom);
  m.per_edge = std::max(m.per_edge, baton_per_edge);
  m.fixed = std::max(0.0, a.bytes - m.per_atom * na - m.per_edge * ea);
  return m;
}

std::vector<std::int64_t> count_edges(const std::vector<systems::HostSystem>& systems,
                                      double cutoff) {
  if (!(cutoff > 0) || !std::isfinite(cutoff))
    throw Error("baton::dynamics::count_edges: the cutoff is " + std::to_string(cutoff) +
                ", but it must be positive and finite");
  std::vector<std::int64_t> out;
  out.reserve(systems.size());
  constexpr std::size_t chunk_systems = 4096;
  constexpr std::int64_t chunk_atoms = 1 << 20;
  std::size_t first = 0;
  while (first < systems.size()) {  // chunks of at most chunk_systems systems, chunk_atoms atoms
    std::size_t last = first;
    std::int64_t atoms = 0;
    while (
        last < systems.size() && last - first < chunk_systems &&
        (last == first || atoms + static_cast<std::int64_t>(systems[last].size()) <= chunk_atoms))
      atoms += static_cast<std::int64_t>(systems[last++].size());
    const std::vector<systems::HostSystem> part(systems.begin() + static_cast<long>(first),
                                                systems.begin() + static_cast<long>(last));
    systems::SystemsBatch batch = batch_of(part);
    NeighbourLists lists{NeighbourOptions{}};
    const double rc2 = cutoff * cutoff;
    lists.prepare(batch, rc2, 0.0);
    const int n = batch.num_systems();
    Kokkos::View<std::int64_t*, systems::SystemsBatch::memory_space> counts(
        "baton::dynamics::count_edges", static_cast<std::size_t>(n));
    const detail::NeighbourData data = lists.data();
    const auto x = batch.positions;
    const auto offset = batch.offset;
    const auto count = batch.count;
    const auto cells = batch.cell;
    const auto pbc = batch.pbc;
    const auto id = batch.id;
    Kokkos::parallel_for(
        "baton::dynamics::count_edges", detail::system_teams(n),
        KOKKOS_LAMBDA(const detail::TeamMember& team) {
          const int s = team.league_rank();
          const int begin = offset(s), end = offset(s) + count(s);
          const systems::CellImage cell = systems::make_cell_image(&cells(s, 0), pbc(s));
          // every pair within the cutoff, whether the list fits or not (bins then)
          detail::with_system_pairs<false>(
              team, data, s, id(s), x, begin, end, cell, [&](const auto& pairs) {
                const double m = detail::team_sum(team, begin, end, [&](int i) {
                  double k = 0;
                  pairs.template each<false>(i, [&](int, double dx, double dy, double dz) {
                    if (dx * dx + dy * dy + dz * dz < rc2)
                      k += 1;
                  });
                  return k;
                });
                Kokkos::single(Kokkos::PerTeam(team),
                               [&]() { counts(s) = static_cast<std::int64_t>(m); });
              });
        });
    const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), counts);
    for (int s = 0; s < n; ++s)
      out.push_back(host(s));
    first = last;
  }
  return out;
}

}  // namespace baton::dynamics
