// baton-replay: a small distributed sampler that uses every role of a baton::DistributedContext.
// Agents sample a D-dimensional hypergrid with a Kokkos kernel and a learned policy and send their
// batches to their replay-buffer manager, which stores and scores them, replies, and reports newly
// found modes to the coordinator; the coordinator keeps the global set and syncs the managers.
//   mpiexec -n 5 baton-replay --buffers 1 --mode late        srun -n 8 baton-replay --buffers 2
#include <Kokkos_Core.hpp>
#include <baton/baton.hpp>
#include <baton/timing/report.hpp>
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>

#include "replay.hpp"

namespace po = boost::program_options;

namespace {

struct Files {
  std::string json, csv, trace;
};

// Sum of a value over all ranks of `role`, on rank 0 of `world`.
long sum_over(const baton::Communicator& world, long mine) {
  Kokkos::View<long*, Kokkos::HostSpace> v("v", 1);
  v(0) = mine;
  baton::all_reduce(world, v, baton::ReduceOp::sum);
  return v(0);
}

int report(const baton::DistributedContext& ctx, const replay::Settings& s,
           const replay::Outcome& out, const baton::TimerRegistry& timers, const Files& files) {
  const baton::Communicator& world = ctx.world();
  const int total_modes = 1 << s.grid.dims;
  // Mode sets: the coordinator's, and the union of the buffers' (or of agents without a buffer).
  Kokkos::View<int*, Kokkos::HostSpace> from_coordinator("coordinator", total_modes),
      from_buffers("buffers", total_modes);
  for (int m : out.modes)
    (ctx.role() == baton::Role::coordinator ? from_coordinator : from_buffers)(m) = 1;
  baton::all_reduce(world, from_coordinator, baton::ReduceOp::max);
  baton::all_reduce(world, from_buffers, baton::ReduceOp::max);
  int coordinator_count = 0, union_count = 0, differ = 0;
  for (int m = 0; m < total_modes; ++m) {
    coordinator_count += from_coordinator(m);
    union_count += from_buffers(m);
    differ += from_coordinator(m) != from_buffers(m);
  }
  const long sent = sum_over(world, out.batches_sent);
  const long scored = sum_over(world, out.batches_scored);
  const long syncs = sum_over(world, out.syncs_received);
  const long mismatches = sum_over(world, out.mismatches);
  // Messages and bytes per role.
  long per_role[3][2] = {};
  const int role = static_cast<int>(ctx.role());
  for (int r = 0; r < 3; ++r) {
    per_role[r][0] = sum_over(world, r == role ? out.messages : 0);
    per_role[r][1] = sum_over(world, r == role ? out.bytes : 0);
  }
  const auto records = baton::gather_records(world, timers, 0);
  if (world.rank() != 0)
    return 0;

  const auto& layout = ctx.layout();
  const bool has_coordinator = layout.has_coordinator();
  std::printf(
      "baton-replay: %d ranks (%zu agents, %d buffer%s, %s), hypergrid %dD side %d, mode %s\n",
      world.size(), layout.agents().size(), layout.buffer_count(),
      layout.buffer_count() == 1 ? "" : "s", has_coordinator ? "coordinator" : "no coordinator",
      s.grid.dims, s.grid.side, replay::to_string(s.mode));
  std::printf("modes found: %d of %d\n", has_coordinator ? coordinator_count : union_count,
              total_modes);
  if (has_coordinator) {
    std::printf("modes: coordinator %d, union of buffers %d, %s\n", coordinator_count, union_count,
                differ == 0 ? "identical sets" : "DIFFERENT sets");
  }
  std::printf("batches: sent %ld, scored %ld, expected %ld\n", sent, scored,
              static_cast<long>(layout.agents().size()) * s.iterations);
  if (layout.buffer_count() > 0) {
    std::printf("per agent: %s\n", mismatches == 0
                                       ? "every batch scored exactly once"
                                       : "SOME AGENTS' BATCHES NOT SCORED EXACTLY ONCE");
  }
  std::printf("syncs received by buffers: %ld\n", syncs);
  const char* names[3] = {"agent", "buffer", "coordinator"};
  std::printf("%-12s %10s %14s\n", "role", "messages", "bytes");
  for (int r = 0; r < 3; ++r)
    std::printf("%-12s %10ld %14ld\n", names[r], per_role[r][0], per_role[r][1]);
  // Reports per role: agents and buffers time different steps, and imbalance matters within a role.
  for (int r = 0; r < 3; ++r) {
    std::vector<baton::RankRecord> of_role;
    for (const auto& record : records) {
      if (static_cast<int>(layout.role(record.rank)) == r)
        of_role.push_back(record);
    }
    if (of_role.empty())
      continue;
    std::printf("\n== %s ranks\n%s\n%s", names[r],
                baton::format_time_info(baton::time_info(of_role)).c_str(),
                baton::format_load_imbalance(baton::load_imbalance(of_role)).c_str());
  }
  // Files: every rank's record (the trace shows all roles on one timeline).
  const auto info = baton::time_info(records);
  const auto imbalance = baton::load_imbalance(records);
  if (!files.json.empty())
    baton::write_json(files.json, info, imbalance);
  if (!files.csv.empty())
    baton::write_csv(files.csv, imbalance);
  if (!files.trace.empty())
    baton::write_chrome_trace(files.trace, records);
  const bool consistent = (!has_coordinator || differ == 0) &&
                          (layout.buffer_count() == 0 || (sent == scored && mismatches == 0));
  return consistent ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  replay::Settings s;
  baton::ContextOptions ctx_options;
  ctx_options.buffers = 1;
  ctx_options.coordinator = true;
  std::string mode = "blocking";
  std::string thread_level = "funneled";
  Files files;
  po::options_description options(
      "baton-replay: a distributed hypergrid sampler with agents, replay buffers and a "
      "coordinator");
  options.add_options()("help,h", "print this help")(
      "dims", po::value<int>(&s.grid.dims)->default_value(s.grid.dims),
      "hypergrid dimension D (1 to 16)")(
      "side", po::value<int>(&s.grid.side)->default_value(s.grid.side), "hypergrid side H")(
      "r0", po::value<double>(&s.grid.r0)->default_value(s.grid.r0), "reward R0")(
      "r1", po::value<double>(&s.grid.r1)->default_value(s.grid.r1), "reward R1")(
      "r2", po::value<double>(&s.grid.r2)->default_value(s.grid.r2), "reward R2")(
      "batch", po::value<int>(&s.batch)->default_value(s.batch), "states per batch")(
      "iterations", po::value<int>(&s.iterations)->default_value(s.iterations),
      "batches per agent")("learning-rate",
                           po::value<double>(&s.learning_rate)->default_value(s.learning_rate),
                           "policy step size")(
      "seed", po::value<std::uint64_t>(&s.seed)->default_value(s.seed), "random seed")(
      "mode", po::value<std::string>(&mode)->default_value(mode),
      "agent send mode: blocking, late (scores collected one round late) or nonblocking")(
      "buffers", po::value<int>(&ctx_options.buffers)->default_value(1), "replay-buffer ranks")(
      "coordinator", po::value<bool>(&ctx_options.coordinator)->default_value(true),
      "use a coordinator rank (last rank)")(
      "agent-groups", po::value<int>(&ctx_options.agent_groups)->default_value(1),
      "agent groups (policy averaged within each)")(
      "sync-every", po::value<int>(&s.sync_every)->default_value(s.sync_every),
      "coordinator syncs after this many mode reports")("json", po::value<std::string>(&files.json),
                                                        "write the timing reports as JSON here")(
      "csv", po::value<std::string>(&files.csv), "write the load-imbalance table as CSV here")(
      "trace", po::value<std::string>(&files.trace),
      "write a Chrome trace-event timeline here (Perfetto)")(
      "thread-level", po::value<std::string>(&thread_level)->default_value(thread_level),
      "MPI thread level");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(options).allow_unregistered().run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "baton-replay: " << e.what() << '\n' << options;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << options;
    return 0;
  }
  try {
    s.mode = replay::parse_mode(mode);
    if (s.grid.dims < 1 || s.grid.dims > 16 || s.grid.side < 2 || s.batch < 1 || s.iterations < 0 ||
        s.sync_every < 1) {
      throw baton::Error(
          "baton-replay: need 1 <= dims <= 16, side >= 2, batch >= 1, iterations >= 0, sync-every "
          ">= 1");
    }
    if (!replay::has_modes(s.grid)) {
      throw baton::Error("baton-replay: side " + std::to_string(s.grid.side) +
                         " puts no integer point in the reward band, so there are no modes");
    }
    baton::RuntimeOptions runtime_options;
    runtime_options.thread_level = baton::parse_thread_level(thread_level.c_str());
    baton::Runtime runtime(argc, argv, runtime_options);
    baton::DistributedContext ctx(runtime.world(), ctx_options);
    if (runtime.world().rank() == 0 && !ctx.layout().warning().empty()) {
      std::fprintf(stderr, "baton-replay: %s\n", ctx.layout().warning().c_str());
    }
    baton::TimerRegistry timers;
    baton::barrier(ctx.world());
    timers.reset_origin();
    replay::Outcome out;
    switch (ctx.role()) {
      case baton::Role::agent:
        out = replay::run_agent(ctx, s, timers);
        break;
      case baton::Role::buffer:
        out = replay::run_buffer(ctx, s, timers);
        break;
      case baton::Role::coordinator:
        out = replay::run_coordinator(ctx, s, timers);
        break;
    }
    return report(ctx, s, out, timers, files);
  } catch (const std::exception& e) {
    std::cerr << "baton-replay: " << e.what() << '\n';
    return 1;
  }
}
