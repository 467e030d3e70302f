// workspace_tour: per-rank records in a shared directory, read back from any rank, then removed.
//   mpiexec -n 3 workspace_tour [ROOT]     (ROOT: a directory every rank reaches; default ".")
#include <Kokkos_Core.hpp>
#include <baton/baton.hpp>
#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  try {
    baton::Runtime runtime(argc, argv);
    const baton::Communicator& world = runtime.world();
    const int me = world.rank();
    const std::string root = argc > 1 ? argv[1] : ".";

    // <root>/baton-<job id>/tour/: the Slurm job and step where there is one, else a random id.
    baton::WorkspaceOptions options;
    options.name = "tour";
    baton::Workspace ws(world, root, options);

    // Each rank's record: a config text and named Views (any memory space).
    baton::Record mine;
    mine.config = "{\"rank\": " + std::to_string(me) +
                  ", \"temperature\": " + std::to_string(300 + 10 * me) + "}";
    Kokkos::View<double**> positions("positions", me + 1, 3);
    Kokkos::deep_copy(positions, 0.5 * me);
    mine.views.add("positions", positions);
    ws.publish(mine);  // written atomically, then a barrier: every record is there now

    // Any rank reads any rank's record.
    const int next = (me + 1) % world.size();
    const baton::Record theirs = ws.read_from(next).value();
    const auto their_positions = theirs.views.get<Kokkos::View<double**>>("positions");
    std::printf("rank %d read rank %d: %s, %zu positions\n", me, next, theirs.config.c_str(),
                their_positions.extent(0));

    // Rank 0 collects them all (a missing record would be std::nullopt).
    const auto all = ws.read_all(0);
    if (me == 0) {
      std::size_t rows = 0;
      for (const auto& record : all)
        rows += record ? record->views.get<Kokkos::View<double**>>("positions").extent(0) : 0;
      std::printf("rank 0 collected %zu records, %zu positions in all\n", all.size(), rows);
    }

    // A name that could leave the job's directory is refused, alike on every rank.
    try {
      baton::WorkspaceOptions bad;
      bad.name = "../escape";
      baton::Workspace escape(world, root, bad);
    } catch (const baton::CollectiveError& e) {
      if (me == 0)
        std::printf("refused: %s\n", e.what());
    }

    // Remove this job's files (collective; another job's files are never touched).
    ws.remove();
    if (me == 0)
      std::printf("removed %s\n", ws.directory().c_str());
    return 0;
  } catch (const baton::Error& e) {
    std::fprintf(stderr, "workspace_tour: %s\n", e.what());
    return 1;
  }
}
