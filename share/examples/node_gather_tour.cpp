// node_gather_tour: every rank gives a config (JSON text) and named Views; the first rank of the
// group gets them all, through node shared memory where the ranks share its node. World rank 1
// has nothing to give and appears as an empty entry.
//   mpiexec -n 4 ./node_gather_tour          srun -n 4 --mpi=pmix ./node_gather_tour
#include <baton/baton.hpp>
#include <baton/shm/gather.hpp>

#include <Kokkos_Core.hpp>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

namespace {

// What world rank `rank` gives in round `round`: its settings and rank + 1 energies.
baton::Record piece(int rank, int round) {
  baton::Record record;
  if (rank == 1)
    return record;  // nothing: an empty config and no Views
  record.config =
      "{\"rank\": " + std::to_string(rank) + ", \"round\": " + std::to_string(round) + "}";
  Kokkos::View<double*, Kokkos::HostSpace> energies("energies", rank + 1);
  Kokkos::deep_copy(energies, -1.0 * rank - 0.5 * round);
  record.views.add("energies", energies);  // a snapshot: energies may change afterwards
  return record;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    baton::Runtime runtime(argc, argv);
    const baton::Communicator& world = runtime.world();
    std::vector<int> everyone(static_cast<std::size_t>(world.size()));
    std::iota(everyone.begin(), everyone.end(), 0);
    const baton::Group group(world, everyone);

    // One gather: on the first rank one entry per member, in group order; elsewhere nothing.
    const std::vector<baton::GatherEntry> once =
        baton::gather_to_first(group, piece(world.rank(), 0));
    for (const baton::GatherEntry& entry : once) {
      if (entry.empty()) {
        std::printf("group rank %d: nothing\n", entry.rank);
        continue;
      }
      const auto energies = entry.record.views.get<Kokkos::View<double*>>("energies");
      std::printf("group rank %d: %s, %zu energies\n", entry.rank, entry.record.config.c_str(),
                  energies.extent(0));
    }

    // Repeated gathers: a NodeGather keeps its shared memory from one gather to the next.
    baton::NodeGather gather(group);
    for (int round = 1; round <= 3; ++round) {
      const std::vector<baton::GatherEntry> entries = gather.gather(piece(world.rank(), round));
      if (!gather.is_first())
        continue;
      int empty = 0;
      std::size_t count = 0;
      double sum = 0;
      for (const baton::GatherEntry& entry : entries) {
        empty += entry.empty();
        if (entry.empty())
          continue;
        const auto energies = Kokkos::create_mirror_view_and_copy(
            Kokkos::HostSpace(), entry.record.views.get<Kokkos::View<double*>>("energies"));
        for (std::size_t i = 0; i < energies.extent(0); ++i)
          sum += energies(i);
        count += energies.extent(0);
      }
      std::printf("round %d: %zu records (%d empty), %zu energies, sum %.1f\n", round,
                  entries.size(), empty, count, sum);
    }
    return 0;
  } catch (const baton::Error& e) {
    std::fprintf(stderr, "node_gather_tour: %s\n", e.what());
    return 1;
  }
}
