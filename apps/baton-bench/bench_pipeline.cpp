// The pipeline: one hand-off of 32 LJ55 systems beside raw MPI on the same packed buffers, then
// fire | nve on 200 perturbed LJ55 clusters over all ranks in each communication mode: efficiency
// against the bound of the slowest segment, communication and waiting shares, throughput.
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <baton/dynamics/clusters.hpp>
#include <baton/dynamics/fire.hpp>
#include <baton/dynamics/verlet.hpp>
#include <baton/pipeline/driver.hpp>
#include <baton/pipeline/summary.hpp>
#include <baton/systems/codec.hpp>
#include <baton/systems/host_transfer.hpp>
#include <baton/transport/view_message.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "measure.hpp"

namespace bench {

namespace {

namespace bd = baton::dynamics;
namespace bs = baton::systems;
namespace bp = baton::pipeline;

std::vector<bs::HostSystem> clusters(int count) {
  std::vector<bs::HostSystem> out;
  for (int id = 0; id < count; ++id)
    out.push_back(bd::perturbed_cluster(55, id, 1, 0.05, 1.122462048309373));
  return out;
}

// A hand-off of 32 LJ55 systems 0 -> 1 and back (pack, two View messages, unpack), beside raw
// MPI_Send/MPI_Recv of the same packed buffers: received allocating (recv_view), and posted into
// buffers as the pipeline's links do (irecv_upto).
void handoff(const baton::Communicator& comm, const Settings& settings) {
  bs::SystemsBatch batch({32, 32 * 55}, 2);
  bs::SpeciesTable species;
  bs::append_systems(batch, clusters(32), species);
  std::vector<int> all(32);
  for (int i = 0; i < 32; ++i)
    all[static_cast<std::size_t>(i)] = i;
  const bs::PackedSystems packed = bs::pack_systems(batch, all);
  const std::size_t bytes = (packed.ints.extent(0) + packed.reals.extent(0)) * 8;
  auto ints = packed.ints;
  auto reals = packed.reals;
  const int me = comm.rank();
  const int peer = 1 - me;
  using IntView = decltype(ints);
  using RealView = decltype(reals);
  auto baton_iteration = [&] {
    auto one_way = [&](bool sending) {
      if (sending) {
        const bs::PackedSystems w = bs::pack_systems(batch, all);
        baton::send_view(comm, w.ints, peer, 5);
        baton::send_view(comm, w.reals, peer, 5);
        batch.remove(all);
      } else {
        bs::PackedSystems w;
        w.ints = baton::recv_view<IntView>(comm, peer, 5);
        w.reals = baton::recv_view<RealView>(comm, peer, 5);
        bs::unpack_systems(batch, w);
      }
    };
    one_way(me == 0);
    one_way(me == 1);
  };
  auto mpi_iteration = [&] {
    auto one_way = [&](bool sending) {
      if (sending) {
        MPI_Send(ints.data(), static_cast<int>(ints.extent(0)), MPI_INT64_T, peer, 6, comm.raw());
        MPI_Send(reals.data(), static_cast<int>(reals.extent(0)), MPI_DOUBLE, peer, 6, comm.raw());
      } else {
        MPI_Recv(ints.data(), static_cast<int>(ints.extent(0)), MPI_INT64_T, peer, 6, comm.raw(),
                 MPI_STATUS_IGNORE);
        MPI_Recv(reals.data(), static_cast<int>(reals.extent(0)), MPI_DOUBLE, peer, 6, comm.raw(),
                 MPI_STATUS_IGNORE);
      }
    };
    one_way(me == 0);
    one_way(me == 1);
  };
  // Rank 1 starts empty: the batch moves back and forth.
  if (me == 1)
    batch.remove(all);
  // As the pipeline's links receive: posted receives into buffers bounded by the credit.
  IntView int_buffer("ints", ints.extent(0));
  RealView real_buffer("reals", reals.extent(0));
  auto posted_iteration = [&] {
    auto one_way = [&](bool sending) {
      if (sending) {
        const bs::PackedSystems w = bs::pack_systems(batch, all);
        baton::send_view(comm, w.ints, peer, 7);
        baton::send_view(comm, w.reals, peer, 7);
        batch.remove(all);
      } else {
        auto i = baton::irecv_upto(comm, int_buffer, peer, 7);
        auto r = baton::irecv_upto(comm, real_buffer, peer, 7);
        bs::PackedSystems w;
        w.ints = i.wait();
        w.reals = r.wait();
        bs::unpack_systems(batch, w);
      }
    };
    one_way(me == 0);
    one_way(me == 1);
  };
  print_header(comm, settings);
  print(comm, settings,
        compare(comm, settings, "handoff_32_lj55", bytes, baton_iteration, mpi_iteration, 2));
  print(
      comm, settings,
      compare(comm, settings, "handoff_32_lj55_posted", bytes, posted_iteration, mpi_iteration, 2));
}

}  // namespace

void run_pipeline(const baton::Communicator& world, const Settings& settings) {
  if (world.size() == 2) {
    const baton::Communicator pair = world.split(0, world.rank());
    handoff(pair, settings);
  }
  const std::vector<bs::HostSystem> input = clusters(200);
  bd::FireOptions fire;
  bd::VerletOptions nve;
  const bd::LennardJones lj{1.0, 1.0, 3.0, true};
  const bs::BatchCapacity cap{32, 32 * 55};
  const bp::Pipeline pipeline =
      bp::make_stage<bd::FireStage>(cap, lj, fire) | bp::make_stage<bd::VerletStage>(cap, lj, nve);
  if (world.rank() == 0 && !settings.json)
    std::printf(
        "\nfire | nve, 200 LJ55 clusters (cutoff 3.0), batches of 32, 10 steps per call\n"
        "%-12s %5s %8s %10s %10s %10s %10s %10s %12s %12s\n",
        "mode", "ranks", "wall_s", "systems/s", "bound/s", "efficiency", "max_comm", "max_wait",
        "fire_as/s/rk", "nve_as/s/rk");
  for (bp::CommMode mode :
       {bp::CommMode::sync, bp::CommMode::async_recv, bp::CommMode::fully_async}) {
    std::vector<bp::RunSummary> runs;
    for (int r = 0; r < std::max(1, settings.repeats / 2); ++r) {
      bp::DriverOptions s;
      s.mode = mode;
      bp::Driver driver(world, pipeline, s);
      driver.setup(world.rank() == 0 ? input : std::vector<bs::HostSystem>{});
      driver.run();
      runs.push_back(bp::summarize(driver, 0));
    }
    if (world.rank() != 0)
      continue;
    // The median run by efficiency.
    std::sort(runs.begin(), runs.end(), [](const bp::RunSummary& a, const bp::RunSummary& b) {
      return a.efficiency < b.efficiency;
    });
    const bp::RunSummary& m = runs[runs.size() / 2];
    double comm = 0, wait = 0;
    for (const bp::SegmentSummary& g : m.segments) {
      comm = std::max(comm, g.comm_share);
      wait = std::max(wait, g.wait_share);
    }
    const double fire_rate = m.stages[0].atom_steps_per_second();
    const double nve_rate = m.stages[1].atom_steps_per_second();
    if (settings.json)
      std::printf(
          "{\"op\":\"pipeline_fire_nve\",\"mode\":\"%s\",\"ranks\":%d,\"wall_s\":%.4f,"
          "\"systems_per_s\":%.2f,\"bound_per_s\":%.2f,\"efficiency\":%.4f,"
          "\"max_comm_share\":%.4f,\"max_wait_share\":%.4f,"
          "\"fire_atom_steps_per_s\":%.4g,\"nve_atom_steps_per_s\":%.4g}\n",
          m.mode.c_str(), m.world, m.wall, m.throughput, m.bound, m.efficiency, comm, wait,
          fire_rate, nve_rate);
    else
      std::printf("%-12s %5d %8.3f %10.1f %10.1f %10.3f %9.1f%% %9.1f%% %12.3e %12.3e\n",
                  m.mode.c_str(), m.world, m.wall, m.throughput, m.bound, m.efficiency, 100 * comm,
                  100 * wait, fire_rate, nve_rate);
  }
}

}  // namespace bench
