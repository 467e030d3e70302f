// baton-pipeline: batches of atomic systems (clusters or periodic cells; Lennard-Jones, Morse,
// EAM or a TorchScript model) through stages of dynamics (FIRE relaxation, Langevin, NVE), the
// stages spread over MPI ranks, finished systems handed from rank to rank.
//   mpiexec -n 2 baton-pipeline                      (built-in example: 200 perturbed LJ clusters)
//   srun -n 4 baton-pipeline --stages fire,nve --input start.xyz --output done.xyz
// Every option can also come from a config file (--config run.cfg, lines "fmax = 1e-5").

#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <baton/baton.hpp>
#include <baton/dynamics/clusters.hpp>
#include <baton/dynamics/eam.hpp>
#include <baton/dynamics/fire.hpp>
#include <baton/dynamics/langevin.hpp>
#include <baton/dynamics/verlet.hpp>
#include <baton/pipeline/driver.hpp>
#include <baton/pipeline/hooks.hpp>
#include <baton/pipeline/sink.hpp>
#include <baton/pipeline/source.hpp>
#include <baton/pipeline/summary.hpp>
#include <baton/systems/cell.hpp>
#include <baton/systems/host_transfer.hpp>
#include <baton/systems/xyz.hpp>
#include <baton/timing/report.hpp>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>

#include "../common/app.hpp"
#include "input.hpp"
#include "model_capacity.hpp"
#include "options.hpp"
#include "progress.hpp"
#include "stop.hpp"

namespace po = boost::program_options;
namespace dyn = baton::dynamics;
namespace sys = baton::systems;
namespace pl = baton::pipeline;

using namespace pipeline_app;

namespace {

int run(const baton::Communicator& world, const Options& o, const po::variables_map& vm,
        pl::Pipeline& pipeline, const pl::DriverOptions& settings, const FilePotential& file) {
  Input input = open_input(world, o, pipeline, file, vm);
  ModelCapacity model_calls;
  if (file.model) {  // the model's calls sized by its memory: edges per call, atoms per batch
    model_calls = size_model_calls(world, o, file, input.edges);
    Options sized = o;
    sized.model_max_edges = model_calls.max_edges;
    sized.capacity_atoms = model_calls.capacity_atoms;
    pipeline = build_pipeline(sized, file);
  }
  stop::install(world.rank(), input.file ? o.output + pl::XyzFileSink::partial_suffix : "",
                input.resumed, o.checkpoint_every > 0 || input.resume != nullptr);
  Results results(input.file.get());
  Progress progress(world, o);
  // Exact restarts: checkpoints beside FILE.part, named for this run on every rank.
  pl::DriverOptions with_checkpoints = settings;
  if (o.output != "none") {
    baton::broadcast_object(world, input.checkpoint_run, 0);
    with_checkpoints.checkpoint_prefix =
        o.output + pl::XyzFileSink::partial_suffix + checkpoint_suffix;
    with_checkpoints.checkpoint_every = o.checkpoint_every;
    with_checkpoints.checkpoint_run = input.checkpoint_run;
    with_checkpoints.resume = input.resume;
  }
  pl::Driver driver(world, pipeline, with_checkpoints);
  driver.write_results_to(&results);
  // setup() checks the settings against the input on every rank alike (capacities, the plan).
  baton::on_every_rank(
      world,
      [&] {
        pl::FunctionSource none([] { return std::optional<sys::HostSystem>(); });
        driver.setup(input.source ? *input.source : none);
      },
      app::exit_usage);
  if (world.rank() == 0) {
    std::cout << "baton-pipeline: " << driver.input_count() << " systems through " << o.stages
              << " on " << world.size() << (world.size() == 1 ? " rank" : " ranks") << ", "
              << pl::to_string(settings.mode) << " hand-offs";
    if (input.resumed > 0)
      std::cout << " (" << input.resumed << " finished by an earlier run, in " << o.output
                << pl::XyzFileSink::partial_suffix << ")";
    std::cout << "\n"
              << model_calls.description << driver.plan().describe(pipeline.names()) << std::flush;
  }
  baton::barrier(world);
  const double start = baton::TimerRegistry::now();
  driver.start_clock(start);
  progress.start(start);
  try {
    driver.run([&] { progress.show(driver, false); });
  } catch (const std::exception& e) {
    // The run is over: from here a signal (mpiexec ending the job once a rank has exited) just
    // ends the process, with no word about results that would no longer be true.
    stop::uninstall();
    // run() throws on every rank when any rank fails: agree on one message, printed once.
    // FILE.part stays only when it holds results (this run's or an earlier run's); an empty one is
    // removed now, before any rank exits and mpiexec ends this one.
    if (world.rank() == 0 && input.file && input.file->in_file() > 0) {
      std::cerr << "baton-pipeline: the " << input.file->in_file()
                << " results finished so far are in " << o.output << pl::XyzFileSink::partial_suffix
                << " (--resume goes on from them)\n";
    } else if (world.rank() == 0 && input.file) {
      results.detach();
      input.file.reset();  // removes the empty FILE.part
      std::cerr << "baton-pipeline: no result was written, so no results file was kept"
                << (o.checkpoint_every > 0 || input.resume
                        ? " (the running systems' checkpoints, where written, are kept for "
                          "--resume)\n"
                        : "\n");
    }
    baton::agree_on_failure(world, e.what(), app::exit_failure);
  }
  stop::uninstall();  // the results are complete (FILE.part renamed): a signal now loses nothing
  progress.show(driver, true);

  const pl::RunSummary summary = pl::summarize(driver, 0);
  const auto records = baton::gather_records(driver.communicator(), driver.timers(), 0);
  baton::on_every_rank(world, [&] {
    if (world.rank() != 0)
      return;
    std::cout << "\n" << pl::format_summary(summary) << model_calls.description;
    baton::TimeInfo info = baton::time_info(records);
    baton::LoadImbalance imbalance = baton::load_imbalance(records);
    // Ranks run different stages for different numbers of steps by design: the reports' warnings
    // about steps missing on some ranks and uneven iteration counts say nothing new here.
    info.warnings.clear();
    imbalance.warnings.clear();
    std::cout << "\n(each rank runs its own stages and number of steps: a step appears only on the "
                 "ranks that ran it, and averages use each rank's own iterations"
              << (driver.timers().dropped_iterations() > 0
                      ? "; a long run's reports cover the first " +
                            std::to_string(settings.timer_iterations) + " iterations of each step"
                      : std::string())
              << ")\n"
              << baton::format_time_info(info) << "\n"
              << baton::format_load_imbalance(imbalance);
    if (!o.json.empty())
      baton::write_json(o.json, info, imbalance);
    if (!o.csv.empty())
      baton::write_csv(o.csv, imbalance);
    if (!o.trace.empty())
      baton::write_chrome_trace(o.trace, records);
    if (results.failed > 0)  // not a failed run: the other systems' results stand
      std::cout << "\nfailed: " << results.failed << " of " << results.count
                << " systems (non-finite energy, forces or positions, exploded, dissociated, or "
                   "more edges than a model call may have); they are not stepped further and are "
                   "written with failed=T and their failure\n";
    if (input.file)
      std::cout << "\nresults: " << o.output << " (" << results.count + input.resumed
                << " systems, lowest energy " << results.lowest
                << (input.resumed > 0 ? " of the " + std::to_string(results.count) + " run now"
                                      : std::string())
                << ")\n";
  });
  int failed = results.failed > 0 ? 1 : 0;
  baton::broadcast_object(world, failed, 0);
  return failed != 0 ? app::exit_systems_failed : app::exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  app::AppSpec spec{"baton-pipeline", po::options_description("Options"), {}, "config", "", ""};
  spec.usage =
      "baton-pipeline: batches of atomic systems (clusters or periodic cells; Lennard-Jones, "
      "Morse, "
      "EAM or a TorchScript model) through stages of dynamics (FIRE, Langevin, NVE) spread over "
      "MPI ranks\n"
      "  mpiexec -n 2 baton-pipeline        (built-in example: 200 perturbed LJ clusters)\n"
      "  srun -n 4 baton-pipeline --stages fire,nve --input start.xyz --output done.xyz\n"
      "Every option can also come from --config FILE (lines \"fmax = 1e-5\"). All options are "
      "checked before any work.\n\n";
  declare_options(spec.options, o);
  return app::run(
      argc, argv, std::move(spec), [&](baton::Runtime& runtime, const po::variables_map& vm) {
        const baton::Communicator& world = runtime.world();
        pl::Pipeline pipeline;
        pl::DriverOptions settings;
        FilePotential file;
        baton::on_every_rank(
            world,
            [&] {
              if (vm.count("config") != 0)
                o.config = vm["config"].as<std::string>();
              o.lj.shift = o.morse.shift = !o.no_shift;
              o.morse.cutoff = o.lj.cutoff;
              o.nve.seed = o.langevin.seed = o.csvr.seed = o.nose_hoover.seed = o.npt.seed = o.seed;
              check_potential_options(o);
              resolve_cell(o, resolve_units(o, vm));
              resolve_fire(o, vm);  // after the unit system's --fire-dt
              // after the unit system's defaults (metal: --dt 0.001, --temperature 300)
              o.nve.dt = o.csvr.dt = o.nose_hoover.dt = o.npt.dt = o.langevin.dt;
              o.csvr.temperature = o.nose_hoover.temperature = o.npt.temperature =
                  o.langevin.temperature;
              o.csvr.steps = o.nose_hoover.steps = o.nvt_steps;
              o.nose_hoover.tau = o.npt.tau = o.csvr.tau;
              // npt with --barostat mtk: npt's dt, steps, temperature, tau, seed, units, skin
              static_cast<baton::dynamics::ThermostatOptions&>(o.mtk) = o.npt;
              file = FilePotential::load(o);
              pipeline = build_pipeline(o, file);
              check_options(o, pipeline, world.size());
              try {
                settings = build_settings(o);
                if (!file.species().empty())
                  settings.species = file.species();
              } catch (const baton::Error& e) {
                throw app::UsageError(std::string("--mode: ") + e.what());
              }
            },
            app::exit_usage);
        return run(world, o, vm, pipeline, settings, file);
      });
}
