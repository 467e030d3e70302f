// baton-bench: Baton beside raw MPI on the same buffers, in the same run.
//   mpiexec -n 2 baton-bench p2p | collectives | all [--json] [--repeats N] [--max-bytes B]
//   baton-bench dynamics [--json] [--repeats N]: LJ kernels beside LAMMPS, per rank
//   mpiexec -n 2 baton-bench pipeline: a hand-off beside raw MPI; fire | nve efficiency per mode
#include <baton/runtime/runtime.hpp>
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <string>

#include "measure.hpp"

namespace po = boost::program_options;

namespace bench {
void run_dynamics(const baton::Communicator& comm, const Settings& settings);  // bench_dynamics.cpp
void run_pipeline(const baton::Communicator& comm, const Settings& settings);  // bench_pipeline.cpp
}  // namespace bench

int main(int argc, char** argv) {
  bench::Settings settings;
  std::string what;
  po::options_description options("baton-bench: Baton against raw MPI (ratio = baton_us / mpi_us)");
  options.add_options()("help,h", "print this help")(
      "what", po::value<std::string>(&what)->default_value("all"),
      "p2p, collectives, all (those two), dynamics or pipeline")(
      "json", po::bool_switch(&settings.json), "one JSON object per line instead of a table")(
      "repeats", po::value<int>(&settings.repeats)->default_value(settings.repeats),
      "median over this many repeats")(
      "seconds",
      po::value<double>(&settings.seconds_per_repeat)->default_value(settings.seconds_per_repeat),
      "target duration of one repeat")(
      "min-bytes", po::value<std::size_t>(&settings.min_bytes)->default_value(settings.min_bytes),
      "smallest message")(
      "max-bytes", po::value<std::size_t>(&settings.max_bytes)->default_value(settings.max_bytes),
      "largest message");
  po::positional_options_description positional;
  positional.add("what", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv)
                  .options(options)
                  .positional(positional)
                  .allow_unregistered()
                  .run(),
              vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "baton-bench: " << e.what() << '\n' << options;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << options;
    return 0;
  }
  if (what != "p2p" && what != "collectives" && what != "all" && what != "dynamics" &&
      what != "pipeline") {
    std::cerr << "baton-bench: unknown benchmark '" << what
              << "' (p2p, collectives, all, dynamics or pipeline)\n";
    return 2;
  }
  if (settings.repeats < 1 || settings.seconds_per_repeat <= 0 ||
      settings.min_bytes > settings.max_bytes) {
    std::cerr << "baton-bench: --repeats >= 1, --seconds > 0 and --min-bytes <= --max-bytes\n";
    return 2;
  }
  try {
    baton::Runtime runtime(argc, argv);
    const baton::Communicator& world = runtime.world();
    if (what == "pipeline") {
      bench::run_pipeline(world, settings);
      return 0;
    }
    if (what == "dynamics") {
      bench::run_dynamics(world, settings);
      return 0;
    }
    bench::print_header(world, settings);
    if (what == "p2p" || what == "all")
      bench::run_p2p(world, settings);
    if (what == "collectives" || what == "all")
      bench::run_collectives(world, settings);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "baton-bench: " << e.what() << '\n';
    return 1;
  }
}
