#include "model_capacity.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "../common/app.hpp"

namespace pipeline_app {

namespace {

/// MemAvailable of /proc/meminfo in bytes, or 0 when it cannot be read.
double available_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:")
      return kb * 1024;
  return 0;
}

std::string megabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g MB", bytes / 1e6);
  return text;
}

}  // namespace

ModelCapacity size_model_calls(const baton::Communicator& world, const Options& o,
                               const FilePotential& file, const EdgeScan& scan) {
  const int node_ranks = world.split_node().size();
  ModelCapacity c;
  c.capacity_atoms = o.capacity_atoms;
  baton::on_every_rank(
      world,
      [&] {
        if (world.rank() != 0)
          return;
        constexpr bool on_host =
            Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                       baton::systems::SystemsBatch::memory_space>::accessible;
        double budget = o.model_memory * 1e6;
        std::string source = "--model-memory";
        if (budget == 0 && on_host) {
          budget = available_memory() / node_ranks;
          source = "the node's available memory over its " + std::to_string(node_ranks) +
                   (node_ranks == 1 ? " rank" : " ranks");
        }
        std::ostringstream d;
        if (scan.densest.size() == 0) {
          c.description = "model calls: no input system to measure\n";
          return;
        }
        dyn::ModelMemory m;
        try {
          // 4 copies of a small system, fewer of a large one (the largest probe call has twice
          // the copies: never more than twice the larger of 20,000 atoms and that system)
          const auto copies = static_cast<int>(
              std::clamp<std::int64_t>(20000 / std::max<std::int64_t>(scan.most_atoms, 1), 1, 4));
          m = dyn::probe_memory(*file.model, scan.densest, copies);
        } catch (const std::exception& e) {
          throw app::UsageError(std::string("--model: measuring its memory on system ") +
                                std::to_string(scan.most_id) + ": " + e.what());
        }
        d << "model memory (measured on system " << scan.most_id << ", " << scan.most_atoms
          << " atoms, " << scan.most << " edges): " << m.describe() << "\n";
        char density[32];
        std::snprintf(density, sizeof density, "%.1f", scan.density);
        if (budget <= 0) {
          d << "model calls: no memory budget on the device (give --model-memory MB to size "
               "them); input up to "
            << density << " edges per atom\n";
          c.description = d.str();
          return;
        }
        const std::int64_t edges = m.edge_capacity(budget, o.capacity_atoms);
        app::require(edges >= 0, "model-memory",
                     megabytes(budget) + " per rank (" + source + ") cannot hold a model call of " +
                         std::to_string(o.capacity_atoms) +
                         " atoms (--capacity-atoms) with half of it kept free: give more memory "
                         "or fewer atoms");
        app::require(scan.most <= edges, "model-memory",
                     "system " + std::to_string(scan.most_id) + " has " +
                         std::to_string(scan.most) + " edges within the model's cutoff, but " +
                         megabytes(budget) + " per rank (" + source + ") allows " +
                         std::to_string(edges) +
                         " edges in one call, with half of it kept free: give more memory");
        c.max_edges = edges;
        // Systems as dense as the densest input fill a call's edges at this many atoms.
        if (scan.density > 0 &&
            scan.density * static_cast<double>(o.capacity_atoms) > static_cast<double>(edges))
          c.capacity_atoms = static_cast<int>(
              std::max<double>(static_cast<double>(scan.largest),
                               std::floor(static_cast<double>(edges) / scan.density)));
        d << "model calls: " << megabytes(budget) << " per rank (" << source
          << "), half kept free: at most " << edges << " edges per call; input up to " << density
          << " edges per atom, so " << c.capacity_atoms << " atoms per stage batch"
          << (c.capacity_atoms < o.capacity_atoms
                  ? " (of --capacity-atoms " + std::to_string(o.capacity_atoms) + ")"
                  : std::string())
          << "\n";
        c.description = d.str();
      },
      app::exit_usage);
  std::vector<std::int64_t> sizes{c.max_edges, c.capacity_atoms};
  baton::broadcast_object(world, sizes, 0);
  c.max_edges = sizes[0];
  c.capacity_atoms = static_cast<int>(sizes[1]);
  return c;
}

}  // namespace pipeline_app
