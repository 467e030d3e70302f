// baton-info: which ranks run where, which device each uses, and whether MPI is GPU-aware.
//   mpiexec -n 4 baton-info        srun -n 4 baton-info
#include <Kokkos_Core.hpp>
#include <baton/baton.hpp>
#include <baton/models/torch_model.hpp>
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "../common/app.hpp"

namespace po = boost::program_options;

namespace {

struct RankInfo {
  int node_rank;
  int node_size;
  int device_id;
  char host[MPI_MAX_PROCESSOR_NAME];
};

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  baton::check_mpi(MPI_Get_library_version(text, &length), "MPI_Get_library_version");
  std::string version(text, static_cast<std::size_t>(length));
  return version.substr(0, version.find_first_of("\n,"));
}

int run(const baton::Runtime& runtime) {
  const baton::Communicator& world = runtime.world();
  RankInfo mine{};
  mine.node_rank = runtime.node().rank();
  mine.node_size = runtime.node().size();
  mine.device_id = runtime.selected_device_id();
  int host_length = 0;
  baton::check_mpi(MPI_Get_processor_name(mine.host, &host_length), "MPI_Get_processor_name");

  std::vector<RankInfo> all(world.rank() == 0 ? world.size() : 0);
  baton::check_mpi(MPI_Gather(&mine, sizeof(RankInfo), MPI_BYTE, all.data(), sizeof(RankInfo),
                              MPI_BYTE, 0, world.raw()),
                   "MPI_Gather", world.raw());
  const baton::GpuAwareness gpu = baton::gpu_aware_mpi();
  if (world.rank() != 0)
    return 0;

  int nodes = 0;
  for (const RankInfo& r : all)
    nodes += r.node_rank == 0 ? 1 : 0;
  const std::string backend = baton::kokkos_device_backend();
  std::printf("Baton %s on %d rank%s, %d node%s\n", BATON_VERSION_STRING, world.size(),
              world.size() == 1 ? "" : "s", nodes, nodes == 1 ? "" : "s");
  std::printf("MPI:       %s (thread level %s)\n", mpi_library_version().c_str(),
              baton::to_string(runtime.thread_level()));
  std::printf("Kokkos:    %d.%d.%d, default execution space %s, device backend %s\n",
              KOKKOS_VERSION / 10000, KOKKOS_VERSION / 100 % 100, KOKKOS_VERSION % 100,
              Kokkos::DefaultExecutionSpace::name(), backend.empty() ? "none" : backend.c_str());
  std::printf("GPU-aware: %s (decided by %s)\n", gpu.aware ? "yes" : "no", gpu.decided_by.c_str());
  const char* kernels = !backend.empty() ? "GPU algorithms, on the device"
                        : BATON_DEVICE_ALGORITHMS_ON_HOST
                            ? "GPU algorithms, on the host (built with "
                              "BATON_DEVICE_ALGORITHMS_ON_HOST=ON)"
                            : "host algorithms";
  std::printf("Kernels:   %s\n", kernels);
  const std::string torch = baton::models::torch_version();
  std::printf("Models:    %s\n", torch.empty() ? "no TorchScript (built without libtorch)"
                                               : ("TorchScript through libtorch " + torch).c_str());
  const baton::CollectiveChecksDefault checks = baton::collective_checks_default();
  std::printf("Checks:    collective shape checks %s (decided by %s)\n", checks.on ? "on" : "off",
              checks.decided_by);
  std::printf("\n%5s  %-24s  %9s  %6s\n", "rank", "node", "node-rank", "device");
  for (std::size_t r = 0; r < all.size(); ++r) {
    const std::string device = all[r].device_id >= 0 ? std::to_string(all[r].device_id) : "-";
    std::printf("%5zu  %-24s  %4d/%-4d  %6s\n", r, all[r].host, all[r].node_rank, all[r].node_size,
                device.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  app::AppSpec spec{"baton-info", po::options_description("Options"), {}, "", "", "thread-level"};
  spec.usage =
      "baton-info: show ranks, nodes, devices and GPU-aware MPI\n"
      "  mpiexec -n 4 baton-info        srun -n 4 baton-info\n\n";
  spec.options.add_options()("thread-level", po::value<std::string>()->default_value("funneled"),
                             "MPI thread level to ask for: single, funneled, serialized, multiple");
  return app::run(argc, argv, std::move(spec),
                  [](baton::Runtime& runtime, const po::variables_map&) { return run(runtime); });
}
