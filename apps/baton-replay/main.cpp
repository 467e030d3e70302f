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
#include <limits>
#include <optional>

#include "../common/app.hpp"
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
  // The first update, over all agents, after which the policy was not finite (0: none diverged).
  Kokkos::View<long*, Kokkos::HostSpace> first_bad("diverged", 1);
  first_bad(0) = out.diverged_at >= 0 ? -out.diverged_at : std::numeric_limits<long>::min();
  baton::all_reduce(world, first_bad, baton::ReduceOp::max);
  const long diverged_at = first_bad(0) == std::numeric_limits<long>::min() ? 0 : -first_bad(0);
  // Messages and bytes per role.
  long per_role[3][2] = {};
  const int role = static_cast<int>(ctx.role());
  for (int r = 0; r < 3; ++r) {
    per_role[r][0] = sum_over(world, r == role ? out.messages : 0);
    per_role[r][1] = sum_over(world, r == role ? out.bytes : 0);
  }
  const auto records = baton::gather_records(world, timers, 0);
  const auto& layout = ctx.layout();
  const bool has_coordinator = layout.has_coordinator();
  const bool consistent = (!has_coordinator || differ == 0) &&
                          (layout.buffer_count() == 0 || (sent == scored && mismatches == 0));
  if (diverged_at > 0) {  // no result: the policy's numbers broke
    if (world.rank() == 0)
      std::fprintf(stderr,
                   "baton-replay: error: the policy diverged: a logit was not finite after update "
                   "%ld (--learning-rate %g is too large for these rewards); no modes are "
                   "reported\n",
                   diverged_at, s.learning_rate);
    return app::exit_failure;
  }
  const int code = consistent ? app::exit_ok : app::exit_inconsistent;
  if (world.rank() != 0)
    return code;

  std::printf(
      "baton-replay: %d ranks (%zu agents, %d buffer%s, %s), hypergrid %dD side %d, mode %s\n",
      world.size(), layout.agents().size(), layout.buffer_count(),
      layout.buffer_count() == 1 ? "" : "s", has_coordinator ? "coordinator" : "no coordinator",
      s.grid.dims, s.grid.side, replay::to_string(s.mode));
  std::printf("modes found: %d of %d\n", has_coordinator ? coordinator_count : union_count,
              total_modes);
  if (has_coordinator) {
    std::printf("modes: coordinator %d, union of %s %d, %s\n", coordinator_count,
                layout.buffer_count() > 0 ? "buffers" : "agents", union_count,
                differ == 0 ? "identical sets" : "DIFFERENT sets");
  }
  std::printf("batches: sent %ld, scored %ld, expected %ld\n", sent, scored,
              static_cast<long>(layout.agents().size()) * s.iterations);
  if (layout.buffer_count() > 0) {
    std::printf("per agent: %s\n", mismatches == 0
                                       ? "every batch scored exactly once"
                                       : "SOME AGENTS' BATCHES NOT SCORED EXACTLY ONCE");
  }
  std::printf("syncs received by %s: %ld\n", layout.buffer_count() > 0 ? "buffers" : "agents",
              syncs);
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
    if (of_role.empty() || baton::time_info(of_role).steps.empty())
      continue;  // no rank of this role, or one that timed nothing (a coordinator without buffers)
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
  if (!consistent) {
    std::fprintf(stderr, "baton-replay: inconsistent result: %s (exit code 3)\n",
                 differ != 0 ? "the coordinator's modes differ from the union of the scorers' modes"
                             : "some batches were not scored exactly once");
  }
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  replay::Settings s;
  baton::ContextOptions ctx_options;
  ctx_options.buffers = 1;
  ctx_options.coordinator = true;
  std::string mode = "blocking";
  Files files;
  app::AppSpec spec{"baton-replay", po::options_description("Options"), {}, "", "", "thread-level"};
  spec.usage =
      "baton-replay: a distributed hypergrid sampler with agents, replay buffers and a "
      "coordinator\n  mpiexec -n 5 baton-replay --buffers 1 --mode late        srun -n 8 "
      "baton-replay --buffers 2\n\n";
  // clang-format off
  spec.options.add_options()
    ("dims", app::value(&s.grid.dims, s.grid.dims), "hypergrid dimension D (1 to 16)")
    ("side", app::value(&s.grid.side, s.grid.side), "hypergrid side H (>= 2)")
    ("r0", app::value(&s.grid.r0, s.grid.r0), "reward R0")
    ("r1", app::value(&s.grid.r1, s.grid.r1), "reward R1")
    ("r2", app::value(&s.grid.r2, s.grid.r2), "reward R2")
    ("batch", app::value(&s.batch, s.batch), "states per batch (>= 1)")
    ("iterations", app::value(&s.iterations, s.iterations), "batches per agent (>= 0)")
    ("learning-rate", app::value(&s.learning_rate, s.learning_rate), "policy step size (finite)")
    ("seed", app::value(&s.seed, s.seed), "random seed")
    ("mode", app::value(&mode, mode), "agent send mode: blocking, late (scores collected one round late) or nonblocking")
    ("buffers", app::value(&ctx_options.buffers, 1), "replay-buffer ranks (>= 0)")
    ("coordinator", app::value(&ctx_options.coordinator, true), "use a coordinator rank (last rank)")
    ("agent-groups", app::value(&ctx_options.agent_groups, 1), "agent groups (policy averaged within each)")
    ("sync-every", app::value(&s.sync_every, s.sync_every), "coordinator syncs after this many mode reports (>= 1)")
    ("json", po::value(&files.json), "write the timing reports as JSON here")
    ("csv", po::value(&files.csv), "write the load-imbalance table as CSV here")
    ("trace", po::value(&files.trace), "write a Chrome trace-event timeline here (Perfetto)")
    ("thread-level", po::value<std::string>()->default_value("funneled"), "MPI thread level: single, funneled, serialized, multiple")
    ("fault-drop-count", po::bool_switch(&s.drop_first_count), "testing: managers miscount one batch, so the run ends inconsistent (exit 3)");
  // clang-format on
  return app::run(
      argc, argv, std::move(spec), [&](baton::Runtime& runtime, const po::variables_map&) {
        std::optional<baton::DistributedContext> ctx;
        baton::on_every_rank(
            runtime.world(),
            [&] {
              s.mode = replay::parse_mode(mode);
              app::require(s.grid.dims >= 1 && s.grid.dims <= 16, "dims", "must be 1 to 16");
              app::require(s.grid.side >= 2, "side", "must be at least 2");
              app::require(s.batch >= 1, "batch", "must be at least 1");
              app::require(s.iterations >= 0, "iterations", "must be 0 or more");
              app::require(s.sync_every >= 1, "sync-every", "must be at least 1");
              app::require_finite(s.learning_rate, "learning-rate");
              app::require_finite(s.grid.r0, "r0");
              app::require_finite(s.grid.r1, "r1");
              app::require_finite(s.grid.r2, "r2");
              app::require(replay::has_modes(s.grid), "side",
                           std::to_string(s.grid.side) +
                               " puts no integer point in the reward band, so there are no modes");
              for (const auto& [path, name] :
                   {std::pair{files.json, "json"}, {files.csv, "csv"}, {files.trace, "trace"}}) {
                if (!path.empty())
                  app::require_output_file(path, name);
              }
              try {
                ctx.emplace(runtime.world(), ctx_options);
              } catch (const baton::Error& e) {
                throw app::UsageError(e.what());  // a layout the world size cannot hold
              }
            },
            app::exit_usage);
        if (runtime.world().rank() == 0 && !ctx->layout().warning().empty())
          std::fprintf(stderr, "baton-replay: %s\n", ctx->layout().warning().c_str());
        baton::TimerRegistry timers;
        baton::barrier(ctx->world());
        timers.reset_origin();
        replay::Outcome out;
        switch (ctx->role()) {
          case baton::Role::agent:
            out = replay::run_agent(*ctx, s, timers);
            break;
          case baton::Role::buffer:
            out = replay::run_buffer(*ctx, s, timers);
            break;
          case baton::Role::coordinator:
            out = replay::run_coordinator(*ctx, s, timers);
            break;
        }
        return report(*ctx, s, out, timers, files);
      });
}
