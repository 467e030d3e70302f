// baton-pipeline: batches of Lennard-Jones clusters through stages of dynamics (FIRE relaxation,
// Langevin, NVE), the stages spread over MPI ranks, finished systems handed from rank to rank.
//   mpiexec -n 2 baton-pipeline                      (built-in example: 200 perturbed LJ clusters)
//   srun -n 4 baton-pipeline --stages fire,nve --input start.xyz --output done.xyz
// Every option can also come from a config file (--config run.cfg, lines "fmax = 1e-5").
#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <baton/baton.hpp>
#include <baton/dynamics/clusters.hpp>
#include <baton/dynamics/fire.hpp>
#include <baton/dynamics/langevin.hpp>
#include <baton/dynamics/verlet.hpp>
#include <baton/dynamics/xyz.hpp>
#include <baton/pipeline/driver.hpp>
#include <baton/pipeline/summary.hpp>
#include <baton/timing/report.hpp>
#include <boost/program_options.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

namespace po = boost::program_options;
namespace dyn = baton::dynamics;
namespace pl = baton::pipeline;

namespace {

struct Options {
  std::string stages, input, output, mode, progress, ranks_per_stage, sizes, json, csv, trace;
  int systems = 0, steps_per_call = 0, capacity_systems = 0, capacity_atoms = 0, overflow = 0;
  std::uint64_t seed = 0;
  double amplitude = 0;
  bool synchronized = false, debug = false, no_shift = false;
  dyn::LennardJones lj;
  dyn::FireParams fire;
  dyn::LangevinParams langevin;
  dyn::VerletParams nve;
};

std::vector<int> int_list(const std::string& text, const char* what) {
  std::vector<int> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    std::size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size())
      throw baton::Error(std::string("--") + what + ": '" + item + "' is not an integer");
    out.push_back(v);
  }
  return out;
}

pl::Pipeline build_pipeline(const Options& o) {
  const dyn::BatchCapacity cap{o.capacity_systems, o.capacity_atoms};
  pl::Pipeline p;
  std::stringstream in(o.stages);
  for (std::string name; std::getline(in, name, ',');) {
    if (name == "fire")
      p = p | pl::make_stage<dyn::FireStage>(cap, o.lj, o.fire);
    else if (name == "langevin")
      p = p | pl::make_stage<dyn::LangevinStage>(cap, o.lj, o.langevin);
    else if (name == "nve")
      p = p | pl::make_stage<dyn::VerletStage>(cap, o.lj, o.nve);
    else
      throw baton::Error("--stages: unknown stage '" + name +
                         "' (choose from fire, langevin, nve)");
  }
  if (p.size() == 0)
    throw baton::Error("--stages: give at least one stage, e.g. fire,langevin,nve");
  return p;
}

// An error every rank throws alike, printed by rank 0 only.
struct SharedError : baton::Error {
  using baton::Error::Error;
};

// Rank 0 reads or generates the input; every rank learns whether that worked.
std::vector<dyn::HostSystem> load_input(const baton::Communicator& world, const Options& o) {
  std::vector<dyn::HostSystem> systems;
  std::string problem;
  if (world.rank() == 0) {
    try {
      if (!o.input.empty()) {
        systems = dyn::read_xyz_file(o.input);
      } else {
        dyn::ClusterSpec spec;
        spec.count = o.systems;
        spec.seed = o.seed;
        spec.sizes = int_list(o.sizes, "sizes");
        spec.amplitude = o.amplitude;
        systems = dyn::generate_clusters(spec);
      }
    } catch (const std::exception& e) {
      problem = e.what();
    }
  }
  int length = static_cast<int>(problem.size());
  baton::check_mpi(MPI_Bcast(&length, 1, MPI_INT, 0, world.raw()), "MPI_Bcast", world.raw());
  if (length > 0) {
    problem.resize(static_cast<std::size_t>(length));
    baton::check_mpi(MPI_Bcast(problem.data(), length, MPI_CHAR, 0, world.raw()), "MPI_Bcast",
                     world.raw());
    throw SharedError(problem);
  }
  return systems;
}

pl::Settings build_settings(const Options& o) {
  pl::Settings settings;
  settings.mode = pl::parse_comm_mode(o.mode);
  settings.steps_per_call = o.steps_per_call;
  settings.synchronized = o.synchronized;
  settings.debug = o.debug;
  if (o.overflow > 0)
    settings.overflow = {o.overflow, o.overflow * 64};
  if (!o.ranks_per_stage.empty())
    settings.ranks_per_stage = int_list(o.ranks_per_stage, "ranks-per-stage");
  return settings;
}

int run(const baton::Communicator& world, const Options& o, const pl::Pipeline& pipeline,
        const pl::Settings& settings) {
  const std::vector<dyn::HostSystem> input = load_input(world, o);

  // A progress line only where rank 0 writes to a terminal (or when asked).
  int progress = o.progress == "on" ? 1 : o.progress == "off" ? 0 : isatty(STDOUT_FILENO);
  baton::check_mpi(MPI_Bcast(&progress, 1, MPI_INT, 0, world.raw()), "MPI_Bcast", world.raw());

  pl::Driver driver(world, pipeline, settings);
  driver.track_progress(progress != 0);
  driver.setup(input);
  if (world.rank() == 0) {
    std::cout << "baton-pipeline: " << driver.input_count() << " systems through " << o.stages
              << " on " << world.size() << (world.size() == 1 ? " rank" : " ranks") << ", "
              << pl::to_string(settings.mode) << " hand-offs\n"
              << driver.plan().describe(pipeline.names()) << std::flush;
  }
  baton::check_mpi(MPI_Barrier(world.raw()), "MPI_Barrier", world.raw());
  const double start = baton::TimerRegistry::now();
  driver.start_clock(start);
  double last_print = start;
  auto show = [&](bool force) {
    const double now = baton::TimerRegistry::now();
    if (progress && world.rank() == 0 && (force || now - last_print > 0.25)) {
      std::printf("\r  %ld/%ld systems finished, %.1f systems/s   ", driver.finished_count(),
                  driver.input_count(), driver.finished_count() / (now - start));
      std::fflush(stdout);
      last_print = now;
    }
  };
  driver.run([&] { show(false); });
  if (progress && world.rank() == 0)
    show(true), std::printf("\n");

  const pl::RunSummary summary = pl::summarize(driver, 0);
  const auto records = baton::gather_records(driver.communicator(), driver.timers(), 0);
  std::vector<dyn::HostSystem> results = driver.gather_results(0);
  if (world.rank() != 0)
    return 0;
  std::cout << "\n" << pl::format_summary(summary);
  baton::TimeInfo info = baton::time_info(records);
  baton::LoadImbalance imbalance = baton::load_imbalance(records);
  // Ranks run different stages for different numbers of steps by design: the reports' warnings
  // about steps missing on some ranks and uneven iteration counts say nothing new here.
  info.warnings.clear();
  imbalance.warnings.clear();
  std::cout << "\n(each rank runs its own stages and number of steps: a step appears only on the "
               "ranks that ran it, and averages use each rank's own iterations)\n"
            << baton::format_time_info(info) << "\n"
            << baton::format_load_imbalance(imbalance);
  if (!o.json.empty())
    baton::write_json(o.json, info, imbalance);
  if (!o.csv.empty())
    baton::write_csv(o.csv, imbalance);
  if (!o.trace.empty())
    baton::write_chrome_trace(o.trace, records);
  double lowest = 0;
  for (const dyn::HostSystem& s : results)
    lowest = std::min(lowest, s.energy);
  if (o.output != "none") {
    dyn::write_xyz_file(o.output, results, pipeline.names());
    std::cout << "\nresults: " << o.output << " (" << results.size() << " systems, lowest energy "
              << lowest << ")\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  baton::Runtime runtime(argc, argv);
  const baton::Communicator world = baton::Communicator::duplicate(MPI_COMM_WORLD);
  Options o;
  std::string config;
  pl::Pipeline pipeline;
  pl::Settings settings;
  po::options_description opts("baton-pipeline options");
  // clang-format off
  opts.add_options()
    ("help,h", "show this help")
    ("config", po::value(&config), "read options from this file too (name = value lines)")
    ("stages", po::value(&o.stages)->default_value("fire,langevin,nve"), "stages in order: fire, langevin, nve")
    ("input", po::value(&o.input), "extended XYZ file of initial systems (default: built-in LJ clusters)")
    ("systems", po::value(&o.systems)->default_value(200), "built-in input: number of clusters")
    ("sizes", po::value(&o.sizes)->default_value("13,55"), "built-in input: cluster sizes to draw from")
    ("seed", po::value(&o.seed)->default_value(1), "built-in input: random seed")
    ("amplitude", po::value(&o.amplitude)->default_value(0.05), "built-in input: perturbation (sigma)")
    ("output", po::value(&o.output)->default_value("baton-pipeline.xyz"), "results file (extended XYZ), or none")
    ("epsilon", po::value(&o.lj.epsilon)->default_value(1.0), "LJ epsilon")
    ("sigma", po::value(&o.lj.sigma)->default_value(1.0), "LJ sigma")
    ("cutoff", po::value(&o.lj.cutoff)->default_value(3.0), "LJ cutoff (0: none)")
    ("no-shift", po::bool_switch(&o.no_shift), "do not shift the LJ energy to 0 at the cutoff")
    ("fmax", po::value(&o.fire.fmax)->default_value(1e-6), "fire: converged at this largest force")
    ("fire-dt", po::value(&o.fire.dt)->default_value(o.fire.dt), "fire: initial time step")
    ("fire-dt-max", po::value(&o.fire.dt_max)->default_value(o.fire.dt_max), "fire: largest time step")
    ("fire-max-steps", po::value(&o.fire.max_steps)->default_value(o.fire.max_steps), "fire: step budget")
    ("dt", po::value(&o.langevin.dt)->default_value(0.005), "langevin and nve: time step")
    ("temperature", po::value(&o.langevin.temperature)->default_value(0.1), "langevin: bath temperature")
    ("friction", po::value(&o.langevin.friction)->default_value(1.0), "langevin: friction")
    ("langevin-steps", po::value(&o.langevin.steps)->default_value(1000), "langevin: steps per system")
    ("nve-steps", po::value(&o.nve.steps)->default_value(1000), "nve: steps per system")
    ("nve-temperature", po::value(&o.nve.temperature)->default_value(-1.0), "nve: draw velocities at this temperature (< 0: keep)")
    ("capacity-systems", po::value(&o.capacity_systems)->default_value(32), "batch capacity of every stage, systems")
    ("capacity-atoms", po::value(&o.capacity_atoms)->default_value(4096), "batch capacity of every stage, atoms")
    ("overflow", po::value(&o.overflow)->default_value(0), "overflow sink per rank, systems (0: none)")
    ("mode", po::value(&o.mode)->default_value("fully_async"), "hand-offs: sync, async_recv, fully_async")
    ("steps-per-call", po::value(&o.steps_per_call)->default_value(10), "dynamics steps per pipeline step")
    ("ranks-per-stage", po::value(&o.ranks_per_stage), "e.g. 1,2,1 (default: automatic)")
    ("synchronized", po::bool_switch(&o.synchronized), "barrier after every step (debugging)")
    ("debug", po::bool_switch(&o.debug), "log every hand-off (rank, tag, counts) to stderr")
    ("progress", po::value(&o.progress)->default_value("auto"), "progress line on rank 0: auto (terminal), on, off")
    ("json", po::value(&o.json), "write the timing reports as JSON")
    ("csv", po::value(&o.csv), "write the load-imbalance table as CSV")
    ("trace", po::value(&o.trace), "write a Chrome trace (chrome://tracing, Perfetto)");
  // clang-format on
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, opts), vm);
    if (vm.count("config")) {
      std::ifstream file(vm["config"].as<std::string>());
      if (!file)
        throw baton::Error("--config: cannot open '" + vm["config"].as<std::string>() + "'");
      po::store(po::parse_config_file(file, opts), vm);
    }
    po::notify(vm);
    if (vm.count("help")) {
      if (world.rank() == 0)
        std::cout << opts << "\n";
      return 0;
    }
    o.lj.shift = !o.no_shift;
    o.nve.dt = o.langevin.dt;
    o.nve.seed = o.langevin.seed = o.seed;
    pipeline = build_pipeline(o);
    settings = build_settings(o);
  } catch (const std::exception& e) {
    if (world.rank() == 0)
      std::cerr << "baton-pipeline: " << e.what() << " (see --help)\n";
    return 2;
  }
  try {
    return run(world, o, pipeline, settings);
  } catch (const SharedError& e) {
    if (world.rank() == 0)
      std::cerr << "baton-pipeline: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "baton-pipeline (rank " << world.rank() << "): error: " << e.what() << "\n";
    return 1;
  }
}
