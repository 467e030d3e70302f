// baton-bench: Baton beside raw MPI on the same buffers, in the same run.
//   mpiexec -n 2 baton-bench p2p | collectives | all [--json] [--repeats N] [--max-bytes B]
//   baton-bench dynamics [--json] [--repeats N] [--rounds R] [--cases A,B]: LJ and EAM kernels
//     beside LAMMPS, per rank
//   baton-bench models --lj-model LJ.pt [--model M.pt]: TorchScript models beside built-ins
//   baton-bench scale [--max-atoms N]: Baton alone at GPU sizes (32k, 1M atoms; 10^3-10^5 systems)
//   mpiexec -n 2 baton-bench pipeline: a hand-off beside raw MPI; fire | nve efficiency per mode
//   mpiexec -n 4 baton-bench shm: node gathers beside MPI_Gatherv, the broadcast queue beside
//     MPI_Bcast, symmetric Views (one-sided put + flush) beside MPI_Send/MPI_Recv
#include <baton/runtime/runtime.hpp>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "../common/app.hpp"
#include "measure.hpp"

namespace po = boost::program_options;

namespace bench {
void run_dynamics(const baton::Communicator& comm, const Settings& settings);  // bench_dynamics.cpp
void run_pipeline(const baton::Communicator& comm, const Settings& settings);  // bench_pipeline.cpp
void run_models(const baton::Communicator& comm, const Settings& settings);    // bench_dynamics.cpp
void run_scale(const baton::Communicator& comm, const Settings& settings);     // bench_dynamics.cpp
// The dynamics cases (bench_dynamics.cpp): "a,b" split at the commas (empty: none); whether a name
// is one of them; their names, comma-separated.
std::vector<std::string> split_cases(const std::string& list);
bool is_dynamics_case(const std::string& name);
std::string dynamics_cases();
}  // namespace bench

int main(int argc, char** argv) {
  bench::Settings settings;
  std::string what, cases;
  app::AppSpec spec{"baton-bench", po::options_description("Options"), {}, "", "", ""};
  spec.usage =
      "baton-bench: Baton against raw MPI on the same buffers, in the same run (ratio = baton_us / "
      "mpi_us)\n"
      "  mpiexec -n 2 baton-bench [p2p | collectives | all | dynamics | models | scale | pipeline "
      "| shm] [options]\n"
      "  p2p, all and shm need at least 2 ranks\n\n";
  // clang-format off
  spec.options.add_options()
    ("what", app::value(&what, std::string("all")), "p2p, collectives, all (those two), dynamics, models, scale (dynamics at GPU sizes, Baton alone), pipeline or shm (shared memory: node gather, broadcast queue, symmetric Views)")
    ("lj-model", po::value(&settings.lj_model), "models: a TorchScript Lennard-Jones (rc 2.5, shifted; tests/models/make_models.py writes lj.pt), timed beside the built-in one")
    ("model", po::value(&settings.model), "models: any energy-only TorchScript model, timed against batch size")
    ("max-atoms", app::value(&settings.max_atoms, settings.max_atoms), "scale: skip the cases with more atoms than this (>= 1)")
    ("json", po::bool_switch(&settings.json), "one JSON object per line instead of a table")
    ("repeats", app::value(&settings.repeats, settings.repeats), "median over this many repeats (>= 1)")
    ("rounds", app::value(&settings.rounds, settings.rounds), "dynamics: run each case this many times, LAMMPS and Baton in turns; the ratio is the rounds' median, and their range is printed (>= 1)")
    ("cases", po::value(&cases), "dynamics: only these cases, comma-separated (fire_lj55, nve_lj55, langevin_lj55, csvr_lj55, npt_lj256x16, nve_lj_liquid, nve_cu_eam, nve_cu108x256)")
    ("seconds", app::value(&settings.seconds_per_repeat, settings.seconds_per_repeat), "target duration of one repeat (> 0)")
    ("min-bytes", app::value(&settings.min_bytes, settings.min_bytes), "smallest message (>= 1)")
    ("max-bytes", app::value(&settings.max_bytes, settings.max_bytes), "largest message (>= --min-bytes)");
  // clang-format on
  spec.positional.add("what", 1);
  return app::run(
      argc, argv, std::move(spec), [&](baton::Runtime& runtime, const po::variables_map&) {
        const baton::Communicator& world = runtime.world();
        baton::on_every_rank(
            world,
            [&] {
              app::require(
                  what == "p2p" || what == "collectives" || what == "all" || what == "dynamics" ||
                      what == "models" || what == "scale" || what == "pipeline" || what == "shm",
                  "what",
                  "unknown benchmark '" + what +
                      "' (p2p, collectives, all, dynamics, models, scale, pipeline or shm)");
              app::require(
                  what != "models" || !settings.lj_model.empty() || !settings.model.empty(),
                  "lj-model", "models needs --lj-model FILE or --model FILE");
              app::require(settings.repeats >= 1, "repeats", "must be at least 1");
              app::require(settings.rounds >= 1, "rounds", "must be at least 1");
              settings.cases = bench::split_cases(cases);
              for (const std::string& c : settings.cases)
                app::require(bench::is_dynamics_case(c), "cases",
                             "unknown case '" + c + "' (" + bench::dynamics_cases() + ")");
              app::require(settings.cases.empty() || what == "dynamics", "cases",
                           "is for baton-bench dynamics");
              app::require(settings.max_atoms >= 1, "max-atoms", "must be at least 1");
              app::require(
                  std::isfinite(settings.seconds_per_repeat) && settings.seconds_per_repeat > 0,
                  "seconds", "must be a finite number > 0");
              app::require(settings.min_bytes >= 1 && settings.min_bytes <= settings.max_bytes,
                           "min-bytes", "must be at least 1 and at most --max-bytes");
              app::require(
                  settings.max_bytes <= bench::largest_message, "max-bytes",
                  "must be at most " + std::to_string(bench::largest_message) + " (1 TiB)");
              app::require(world.size() >= 2 || (what != "p2p" && what != "all" && what != "shm"),
                           "what",
                           "'" + what +
                               "' needs at least 2 ranks (ranks 0 and 1 exchange messages); run it "
                               "with mpiexec -n 2");
            },
            app::exit_usage);
        if (what == "pipeline") {
          bench::run_pipeline(world, settings);
        } else if (what == "dynamics") {
          bench::run_dynamics(world, settings);
        } else if (what == "models") {
          bench::run_models(world, settings);
        } else if (what == "scale") {
          bench::run_scale(world, settings);
        } else if (what == "shm") {
          bench::print_header(world, settings);
          bench::run_node_gather(world, settings);
          bench::run_queue(world, settings);
          bench::run_symmetric(world, settings);
        } else {
          bench::print_header(world, settings);
          if (what == "p2p" || what == "all")
            bench::run_p2p(world, settings);
          if (what == "collectives" || what == "all")
            bench::run_collectives(world, settings);
        }
        return app::exit_ok;
      });
}
