// baton-pipeline: batches of atomic systems (clusters or periodic cells; Lennard-Jones, Morse or
// EAM) through stages of dynamics (FIRE relaxation, Langevin, NVE), the stages spread over MPI
// ranks, finished systems handed from rank to rank.
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
#include "stop.hpp"

namespace po = boost::program_options;
namespace dyn = baton::dynamics;
namespace sys = baton::systems;
namespace pl = baton::pipeline;

namespace {

struct Options {
  std::string stages, input, output, mode, progress, ranks_per_stage, sizes, json, csv, trace;
  std::string stage_ranks, stage_modes, spill;
  int overflow_host = 0;
  std::string potential, potential_file, units;
  int systems = 0, steps_per_call = 0, capacity_systems = 0, capacity_atoms = 0, overflow = 0;
  double progress_seconds = 10;
  double skin = -1;  ///< neighbour-list skin; < 0: the unit system's default
  std::uint64_t seed = 0;
  double amplitude = 0;
  bool synchronized = false, debug = false, no_shift = false, resume = false, log_finished = false;
  std::string snapshots, config;
  long snapshot_every = 100;
  dyn::LennardJones lj;
  dyn::Morse morse;
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
    app::require(used != 0 && used == item.size(), what, "'" + item + "' is not an integer");
    out.push_back(v);
  }
  return out;
}

// --stage-ranks "0,3;1;2": the ranks of each stage.
std::vector<std::vector<int>> stage_map(const Options& o) {
  std::vector<std::vector<int>> map;
  std::stringstream groups(o.stage_ranks);
  for (std::string group; std::getline(groups, group, ';');)
    map.push_back(int_list(group, "stage-ranks"));
  return map;
}

template <class Potential>
pl::Pipeline build_pipeline(const Options& o, const Potential& potential) {
  const sys::BatchCapacity cap{o.capacity_systems, o.capacity_atoms};
  pl::Pipeline p;
  std::stringstream in(o.stages);
  for (std::string name; std::getline(in, name, ',');) {
    if (name == "fire")
      p = p | pl::make_stage<dyn::FireStage>(cap, potential, o.fire);
    else if (name == "langevin")
      p = p | pl::make_stage<dyn::LangevinStage>(cap, potential, o.langevin);
    else if (name == "nve")
      p = p | pl::make_stage<dyn::VerletStage>(cap, potential, o.nve);
    else
      throw app::UsageError("--stages: unknown stage '" + name +
                            "' (choose from fire, langevin, nve)");
  }
  app::require(p.size() > 0, "stages", "give at least one stage, e.g. fire,langevin,nve");
  if (o.stage_modes.empty())
    return p;
  std::vector<std::string> modes;
  std::stringstream list(o.stage_modes);
  for (std::string m; std::getline(list, m, ',');)
    modes.push_back(m);
  app::require(
      modes.size() == p.size(), "stage-modes",
      "'" + o.stage_modes + "' must give " + std::to_string(p.size()) + " modes, one per stage");
  pl::Pipeline out;
  for (std::size_t s = 0; s < p.size(); ++s) {
    pl::StageSpec spec = p.stages()[s];
    try {
      spec.mode = pl::parse_comm_mode(modes[s]);
    } catch (const baton::Error& e) {
      throw app::UsageError(std::string("--stage-modes: ") + e.what());
    }
    out = out | spec;
  }
  return out;
}

// The stages of --stages over the potential of --potential (`eam`: the one read from its file).
pl::Pipeline build_pipeline(const Options& o, const std::optional<dyn::Eam>& eam) {
  if (o.potential == "lj")
    return build_pipeline(o, o.lj);
  if (o.potential == "morse")
    return build_pipeline(o, o.morse);
  return build_pipeline(o, eam.value());
}

// --units auto: metal for EAM (its files are in metal units), lj otherwise. Options the user did
// not give get the unit system's defaults (time steps in ps, temperatures in K for metal).
dyn::Units resolve_units(Options& o, const po::variables_map& vm) {
  app::require(o.units == "auto" || o.units == "lj" || o.units == "metal", "units",
               "must be auto, lj or metal, not '" + o.units + "'");
  app::require(o.potential != "eam" || o.units != "lj", "units",
               "lj contradicts --potential eam: LAMMPS' EAM files are in metal units (eV, A, amu); "
               "give --units metal or leave it at auto");
  const std::string name = o.units != "auto" ? o.units : o.potential == "eam" ? "metal" : "lj";
  const dyn::Units units = dyn::Units::named(name);
  if (name == "metal") {
    const auto unless_given = [&](const char* option, auto& value, auto metal_default) {
      if (vm.count(option) == 0 || vm[option].defaulted())
        value = metal_default;
    };
    unless_given("fire-dt", o.fire.dt, 0.001);
    unless_given("fire-dt-max", o.fire.dt_max, 0.01);
    unless_given("dt", o.langevin.dt, 0.001);
    unless_given("temperature", o.langevin.temperature, 300.0);
  }
  o.fire.units = o.langevin.units = o.nve.units = units;
  o.fire.neighbours.skin = o.langevin.neighbours.skin = o.nve.neighbours.skin = o.skin;
  return units;
}

// The potential's options, checked before the stages (which check them again) are built, so that
// an error names the option. Throws app::UsageError.
void check_potential_options(const Options& o) {
  app::require(o.potential == "lj" || o.potential == "morse" || o.potential == "eam", "potential",
               "unknown potential '" + o.potential + "' (choose from lj, morse, eam)");
  if (o.potential == "eam") {
    app::require(!o.potential_file.empty(), "potential-file",
                 "--potential eam needs a potential file (LAMMPS' *.eam or *.eam.alloy)");
    app::require_input_file(o.potential_file, "potential-file");
    app::require(!o.input.empty(), "input",
                 "--potential eam needs --input (an extended XYZ file of the systems; the "
                 "built-in clusters are Lennard-Jones clusters)");
  }
  for (const auto& [v, name] : {std::pair{o.lj.epsilon, "epsilon"}, {o.lj.sigma, "sigma"}}) {
    app::require_finite(v, name);
    app::require(v > 0, name, "must be greater than 0");
  }
  for (const auto& [v, name] : {std::pair{o.morse.depth, "morse-depth"},
                                {o.morse.alpha, "morse-alpha"},
                                {o.morse.r0, "morse-r0"}}) {
    app::require_finite(v, name);
    app::require(v > 0, name, "must be greater than 0");
  }
  app::require_finite(o.lj.cutoff, "cutoff");
  app::require(o.lj.cutoff >= 0, "cutoff", "must be 0 (none) or more");
  app::require_finite(o.skin, "skin");
}

// Every option checked before any work: ranges, finite numbers, files that exist or can be written,
// and an output that is not the input. Throws app::UsageError.
void check_options(const Options& o, const pl::Pipeline& pipeline, int world_size) {
  const std::vector<std::string> names = pipeline.names();
  const auto uses = [&](const char* stage) {
    return std::find(names.begin(), names.end(), stage) != names.end();
  };
  app::require(!o.input.empty() || o.systems >= 1, "systems", "must be at least 1");
  app::require_finite(o.amplitude, "amplitude");
  app::require(o.amplitude >= 0, "amplitude", "must be 0 or more");
  app::require_finite(o.fire.fmax, "fmax");
  app::require(o.fire.fmax >= 0, "fmax", "must be 0 or more");
  app::require_finite(o.fire.dt, "fire-dt");
  app::require(o.fire.dt > 0, "fire-dt", "must be greater than 0");
  app::require_finite(o.fire.dt_max, "fire-dt-max");
  app::require(o.fire.dt_max >= o.fire.dt, "fire-dt-max", "must be at least --fire-dt");
  app::require(o.fire.max_steps >= 1, "fire-max-steps", "must be at least 1");
  app::require_finite(o.langevin.dt, "dt");
  app::require(o.langevin.dt > 0, "dt", "must be greater than 0");
  app::require_finite(o.langevin.temperature, "temperature");
  app::require(o.langevin.temperature >= 0, "temperature", "must be 0 or more");
  app::require_finite(o.langevin.friction, "friction");
  app::require(o.langevin.friction > 0, "friction", "must be greater than 0");
  app::require(!uses("langevin") || o.langevin.steps >= 1, "langevin-steps", "must be at least 1");
  app::require(!uses("nve") || o.nve.steps >= 1, "nve-steps", "must be at least 1");
  app::require_finite(o.nve.temperature, "nve-temperature");
  app::require(o.capacity_systems >= 1, "capacity-systems", "must be at least 1");
  app::require(o.capacity_atoms >= 1, "capacity-atoms", "must be at least 1");
  app::require(o.overflow >= 0 && o.overflow <= std::numeric_limits<int>::max() / 64, "overflow",
               "must be 0 (none) to " + std::to_string(std::numeric_limits<int>::max() / 64));
  app::require(o.overflow_host >= 0 && o.overflow_host <= std::numeric_limits<int>::max() / 64,
               "overflow-host",
               "must be 0 (none) to " + std::to_string(std::numeric_limits<int>::max() / 64));
  if (!o.spill.empty())
    app::require_output_file(o.spill + "/baton-spill.check", "spill");
  app::require(o.steps_per_call >= 1, "steps-per-call", "must be at least 1");
  app::require(o.snapshot_every >= 1, "snapshot-every", "must be at least 1");
  if (!o.snapshots.empty())
    app::require_output_file(o.snapshots + ".x.rank0.xyz", "snapshots");
  if (!o.ranks_per_stage.empty()) {
    const std::vector<int> ranks = int_list(o.ranks_per_stage, "ranks-per-stage");
    int sum = 0;
    for (int r : ranks) {
      app::require(r >= 1, "ranks-per-stage", "every stage needs at least 1 rank");
      sum += r;
    }
    app::require(ranks.size() == pipeline.size() && sum == world_size, "ranks-per-stage",
                 "'" + o.ranks_per_stage + "' must give " + std::to_string(pipeline.size()) +
                     " counts (one per stage) adding up to the " + std::to_string(world_size) +
                     " ranks");
  }
  if (!o.stage_ranks.empty()) {
    app::require(o.ranks_per_stage.empty(), "stage-ranks",
                 "give it or --ranks-per-stage, not both");
    try {
      pl::plan_ranks_explicit(world_size, static_cast<int>(pipeline.size()), stage_map(o));
    } catch (const baton::Error& e) {
      throw app::UsageError("--stage-ranks: '" + o.stage_ranks + "': " + e.what());
    }
  }
  app::require(o.progress == "auto" || o.progress == "on" || o.progress == "off", "progress",
               "must be auto, on or off, not '" + o.progress + "'");
  app::require_finite(o.progress_seconds, "progress-seconds");
  app::require(o.progress_seconds > 0, "progress-seconds", "must be greater than 0");
  if (!o.input.empty())
    app::require_input_file(o.input, "input");
  app::require(!o.resume || o.output != "none", "resume", "needs an --output file to go on from");
  if (o.output != "none")
    app::require_output_file(o.output, "output");
  for (const auto& [path, name] : {std::pair{o.json, "json"}, {o.csv, "csv"}, {o.trace, "trace"}}) {
    if (!path.empty())
      app::require_output_file(path, name);
  }
  // No output over an input or over another output: every file the run writes, checked now.
  std::vector<app::FileRole> inputs, outputs;
  for (const auto& [path, name] :
       {std::pair{o.input, "input"}, {o.potential_file, "potential-file"}, {o.config, "config"}})
    if (!path.empty())
      inputs.push_back({path, name});
  if (o.output != "none") {
    outputs.push_back({o.output, "output"});
    outputs.push_back({o.output + pl::XyzFileSink::partial_suffix, "output"});
  }
  for (const auto& [path, name] : {std::pair{o.json, "json"}, {o.csv, "csv"}, {o.trace, "trace"}})
    if (!path.empty())
      outputs.push_back({path, name});
  if (!o.snapshots.empty())
    for (const std::string& stage : names)
      for (int rank = 0; rank < world_size; ++rank)
        outputs.push_back({pl::XyzSnapshots::file_name(o.snapshots, stage, rank), "snapshots"});
  app::require_distinct_files(inputs, outputs);
}

// What is wrong with one input system before it runs, or "" (and, with an EAM file, it gets the
// file's masses when it has none).
std::string input_problem(sys::HostSystem& s, const Options& o,
                          const std::optional<dyn::Eam>& eam) {
  std::string problem = sys::host_system_problem(s);
  if (problem.empty()) {  // a cell too small for the cutoff, found now rather than mid-run
    const double cutoff = eam ? eam->tables().cutoff : o.lj.cutoff > 0 ? o.lj.cutoff : INFINITY;
    const std::string small = sys::cutoff_problem(s.cell, sys::pbc_bits(s.pbc), cutoff);
    if (!small.empty())
      problem = "needs a larger cell: " + small;
  }
  if (problem.empty() && eam) {  // every element known to the file; masses from it
    const auto& known = eam->elements();
    for (const std::string& e : s.species)
      if (problem.empty() && std::find(known.begin(), known.end(), e) == known.end()) {
        std::string list;
        for (const std::string& k : known)
          list += (list.empty() ? "" : ", ") + k;
        problem = "has element '" + e + "', which " + o.potential_file + " does not have (it has " +
                  list + ")";
      }
    if (problem.empty() && s.masses.empty())
      for (const std::string& e : s.species)
        s.masses.push_back(eam->mass(e));
  }
  return problem;
}

// The size and a hash (FNV-1a, 64 bits) of a file's bytes, as "<bytes> bytes, fnv1a64 <hex>".
std::string file_identity(const std::string& path, const char* option) {
  std::ifstream in(path, std::ios::binary);
  app::require(static_cast<bool>(in), option, "cannot read '" + path + "'");
  std::uint64_t hash = 14695981039346656037ull, bytes = 0;
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const std::streamsize n = in.gcount();
    for (std::streamsize i = 0; i < n; ++i) {
      hash ^= static_cast<unsigned char>(buffer[static_cast<std::size_t>(i)]);
      hash *= 1099511628211ull;
    }
    bytes += static_cast<std::uint64_t>(n);
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return std::to_string(bytes) + " bytes, fnv1a64 " + hex;
}

// Options that do not change any system's result: where outputs go, reports, the rank layout and
// the hand-offs (results are identical across rank counts, modes and capacities).
bool changes_results(const std::string& option) {
  static const std::vector<std::string> neutral{"output",
                                                "resume",
                                                "config",
                                                "progress",
                                                "progress-seconds",
                                                "json",
                                                "csv",
                                                "trace",
                                                "snapshots",
                                                "snapshot-every",
                                                "log-finished",
                                                "synchronized",
                                                "debug",
                                                "mode",
                                                "stage-modes",
                                                "ranks-per-stage",
                                                "stage-ranks",
                                                "overflow",
                                                "overflow-host",
                                                "spill",
                                                "capacity-systems",
                                                "capacity-atoms",
                                                "steps-per-call",
                                                "help"};
  return std::find(neutral.begin(), neutral.end(), option) == neutral.end();
}

// What makes this run's results what they are: Baton's version, every option that changes results
// (given or defaulted), and the identity of the input and potential files. Written into the
// results file's first frame; --resume goes on only from a file with the same description.
pl::RunDescription describe_run(const Options& o, const po::variables_map& vm) {
  pl::RunDescription run{{"baton", BATON_VERSION_STRING}};
  for (const auto& [name, entry] : vm) {
    if (!changes_results(name))
      continue;
    const boost::any& v = entry.value();
    std::string text;
    if (const auto* x = boost::any_cast<std::string>(&v))
      text = *x;
    else if (const auto* d = boost::any_cast<double>(&v))
      text = app::shortest(*d);
    else if (const auto* i = boost::any_cast<int>(&v))
      text = std::to_string(*i);
    else if (const auto* l = boost::any_cast<long>(&v))
      text = std::to_string(*l);
    else if (const auto* u = boost::any_cast<std::uint64_t>(&v))
      text = std::to_string(*u);
    else if (const auto* b = boost::any_cast<bool>(&v))
      text = *b ? "true" : "false";
    else
      throw baton::Error("baton-pipeline: option --" + name + " has a type describe_run lacks");
    run.emplace_back(name, text);
  }
  if (!o.input.empty())
    run.emplace_back("input-file", file_identity(o.input, "input"));
  if (!o.potential_file.empty())
    run.emplace_back("potential-file-content", file_identity(o.potential_file, "potential-file"));
  return run;
}

// Rank 0's input and output. The input is streamed: an input file is read one frame at a time
// twice, first to check every frame before any work (exit 2 naming the frame), then by the run.
struct Input {
  std::unique_ptr<pl::SystemSource> source;
  std::unique_ptr<pl::XyzFileSink> file;  // unless --output none
  std::int64_t resumed = 0;               // systems an earlier run finished (--resume)
};

// Checks every frame of --input; returns the source that streams it, passing over `done`.
std::unique_ptr<pl::SystemSource> open_input_file(const Options& o,
                                                  const std::optional<dyn::Eam>& eam,
                                                  const std::vector<std::int64_t>& done) {
  std::vector<std::int64_t> ids;
  std::int64_t largest = 0, count = 0;
  sys::SpeciesTable labels;  // in order of first use, so that every rank names them
  try {
    sys::XyzReader reader(o.input);
    while (std::optional<sys::HostSystem> s = reader.next()) {
      const std::string problem = input_problem(*s, o, eam);
      app::require(problem.empty(), "input",
                   "'" + o.input + "' frame " + std::to_string(reader.frames()) + " (system " +
                       std::to_string(s->id) + ") " + problem);
      ids.push_back(s->id);
      for (const std::string& label : s->species)
        labels.index(label);
      largest = std::max<std::int64_t>(largest, static_cast<std::int64_t>(s->size()));
      count += std::binary_search(done.begin(), done.end(), s->id) ? 0 : 1;
    }
  } catch (const app::UsageError&) {
    throw;
  } catch (const baton::Error& e) {
    throw app::UsageError(std::string("--input: ") + e.what());
  }
  app::require(!ids.empty(), "input", "'" + o.input + "' holds no systems");
  std::sort(ids.begin(), ids.end());
  const auto twice = std::adjacent_find(ids.begin(), ids.end());
  app::require(twice == ids.end(), "input",
               "'" + o.input + "': system_id " +
                   (twice == ids.end() ? "" : std::to_string(*twice)) +
                   " is in more than one frame (ids name the results)");
  auto check = [&o, &eam](sys::HostSystem& s) { return input_problem(s, o, eam); };
  return std::make_unique<pl::XyzFileSource>(o.input, check, done, count, largest, labels.names());
}

// The built-in clusters, generated one at a time as the run takes them, passing over `done`.
std::unique_ptr<pl::SystemSource> built_in_input(const Options& o,
                                                 const std::vector<std::int64_t>& done) {
  dyn::ClusterSpec spec;
  spec.count = o.systems;
  spec.seed = o.seed;
  spec.sizes = int_list(o.sizes, "sizes");
  spec.amplitude = o.amplitude;
  try {
    dyn::check_cluster_spec(spec);
  } catch (const baton::Error& e) {
    throw app::UsageError(e.what());
  }
  const std::int64_t largest = *std::max_element(spec.sizes.begin(), spec.sizes.end());
  const auto skipped = std::count_if(done.begin(), done.end(),
                                     [&](std::int64_t id) { return id >= 0 && id < spec.count; });
  auto next = [spec, done, i = std::int64_t{0}]() mutable -> std::optional<sys::HostSystem> {
    for (; i < spec.count; ++i)
      if (!std::binary_search(done.begin(), done.end(), i))
        return dyn::generated_cluster(spec, i++);
    return std::nullopt;
  };
  return std::make_unique<pl::FunctionSource>(next, spec.count - skipped, largest,
                                              std::vector<std::string>{"Ar"});
}

// Rank 0 opens the output (with --resume, the unfinished run's FILE.part, after checking that it is
// this run's) and then the input; every rank learns whether that worked (exit code 2 if not).
Input open_input(const baton::Communicator& world, const Options& o, const pl::Pipeline& pipeline,
                 const std::optional<dyn::Eam>& eam, const po::variables_map& vm) {
  Input in;
  baton::on_every_rank(
      world,
      [&] {
        if (world.rank() != 0)
          return;
        std::vector<std::int64_t> done;  // what an earlier run finished (--resume)
        if (o.output != "none") {
          const std::string part = o.output + pl::XyzFileSink::partial_suffix;
          app::require(o.resume || ::access(part.c_str(), F_OK) != 0, "output",
                       "'" + part +
                           "' holds the results of an unfinished run: give --resume to go on "
                           "from them, or move it away");
          // A fresh FILE.part is removed again if a check below fails (no result written).
          try {
            in.file = std::make_unique<pl::XyzFileSink>(o.output, pipeline.names(), o.resume,
                                                        describe_run(o, vm));
          } catch (const baton::Error& e) {
            throw app::UsageError(std::string(o.resume ? "--resume: " : "--output: ") + e.what());
          }
          done = in.file->done_ids();
          in.resumed = static_cast<std::int64_t>(done.size());
          if (o.resume && !in.file->resumed_from_part())
            std::cout << "baton-pipeline: --resume: no unfinished run in '" << part
                      << "', so every system runs\n";
        }
        in.source = o.input.empty() ? built_in_input(o, done) : open_input_file(o, eam, done);
      },
      app::exit_usage);
  return in;
}

// Rank 0: counts the results and their lowest energy, and passes them on to the file (if any).
class Results : public pl::ResultSink {
 public:
  explicit Results(pl::XyzFileSink* file) : file_(file) {}
  void write(const std::vector<sys::HostSystem>& systems) override {
    for (const sys::HostSystem& s : systems) {
      ++count;
      if (s.failed)
        ++failed;
      else
        lowest = std::min(lowest, s.energy);
    }
    if (file_ != nullptr) {
      stop::WriteGuard guard;  // a signal during the write is handled after it
      file_->write(systems);
      guard.written(file_->in_file());
    }
  }
  void finish() override {
    if (file_ != nullptr)
      file_->finish();
  }
  /// Forgets the file (before it is closed and removed).
  void detach() noexcept { file_ = nullptr; }
  long count = 0, failed = 0;
  double lowest = 0;

 private:
  pl::XyzFileSink* file_;
};

pl::Settings build_settings(const Options& o) {
  pl::Settings settings;
  settings.mode = pl::parse_comm_mode(o.mode);
  settings.steps_per_call = o.steps_per_call;
  settings.synchronized = o.synchronized;
  settings.debug = o.debug;
  if (o.overflow > 0)
    settings.overflow = {o.overflow, o.overflow * 64};
  if (o.overflow_host > 0)
    settings.host_overflow = {o.overflow_host, o.overflow_host * 64};
  settings.spill_directory = o.spill;
  if (!o.ranks_per_stage.empty())
    settings.ranks_per_stage = int_list(o.ranks_per_stage, "ranks-per-stage");
  settings.stage_ranks = stage_map(o);
  if (!o.snapshots.empty())
    settings.hooks.push_back(std::make_shared<pl::XyzSnapshots>(o.snapshots, o.snapshot_every));
  if (o.log_finished)
    settings.hooks.push_back(std::make_shared<pl::LogHook>(std::cerr));
  return settings;
}

// Progress on rank 0. A line redrawn in place (\r) only where it reaches a person: stdout and
// stderr both terminals (Open MPI gives each rank's stdout a pseudo-terminal even when the job's
// output goes to a file, but not its stderr), or --progress on. Otherwise, with auto, a plain line
// every --progress-seconds, which reads well in a log.
class Progress {
 public:
  Progress(const baton::Communicator& world, const Options& o) : seconds_(o.progress_seconds) {
    int mode = 0;  // 0 none, 1 plain lines, 2 redrawn line
    if (world.rank() == 0) {
      const bool terminal = isatty(STDOUT_FILENO) && isatty(STDERR_FILENO);
      mode = o.progress == "on" ? 2 : o.progress == "off" ? 0 : terminal ? 2 : 1;
    }
    baton::broadcast_object(world, mode, 0);
    mode_ = mode;
  }
  bool wanted() const { return mode_ != 0; }
  void start(double t) { start_ = last_ = t; }
  void show(const pl::Driver& driver, bool last) {
    if (mode_ == 0 || driver.communicator().rank() != 0)
      return;
    const double now = baton::TimerRegistry::now();
    const double every = mode_ == 2 ? 0.25 : seconds_;
    if (!last && now - last_ < every)
      return;
    last_ = now;
    const double rate = driver.finished_count() / std::max(now - start_, 1e-9);
    if (mode_ == 2) {
      std::printf("\r  %ld/%ld systems finished, %.1f systems/s   %s", driver.finished_count(),
                  driver.input_count(), rate, last ? "\n" : "");
    } else {
      std::printf("progress: %ld/%ld systems finished, %.1f systems/s, %.0f s\n",
                  driver.finished_count(), driver.input_count(), rate, now - start_);
    }
    std::fflush(stdout);
  }

 private:
  double seconds_;
  int mode_ = 0;
  double start_ = 0, last_ = 0;
};

int run(const baton::Communicator& world, const Options& o, const po::variables_map& vm,
        const pl::Pipeline& pipeline, const pl::Settings& settings,
        const std::optional<dyn::Eam>& eam) {
  Input input = open_input(world, o, pipeline, eam, vm);
  stop::install(world.rank(), input.file ? o.output + pl::XyzFileSink::partial_suffix : "",
                input.resumed);
  Results results(input.file.get());
  Progress progress(world, o);
  pl::Driver driver(world, pipeline, settings);
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
    std::cout << "\n" << driver.plan().describe(pipeline.names()) << std::flush;
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
      std::cerr << "baton-pipeline: no result was written, so no results file was kept\n";
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
    std::cout << "\n" << pl::format_summary(summary);
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
      std::cout
          << "\nfailed: " << results.failed << " of " << results.count
          << " systems (non-finite energy, forces or positions, exploded, or dissociated); they "
             "are not "
             "stepped further and are written with failed=T and their failure\n";
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
      "baton-pipeline: batches of atomic systems (clusters or periodic cells; Lennard-Jones, Morse "
      "or EAM) through stages of dynamics (FIRE, Langevin, NVE) spread over MPI ranks\n"
      "  mpiexec -n 2 baton-pipeline        (built-in example: 200 perturbed LJ clusters)\n"
      "  srun -n 4 baton-pipeline --stages fire,nve --input start.xyz --output done.xyz\n"
      "Every option can also come from --config FILE (lines \"fmax = 1e-5\"). All options are "
      "checked before any work.\n\n";
  // clang-format off
  spec.options.add_options()
    ("config", po::value<std::string>(), "read options from this file too (name = value lines)")
    ("stages", app::value(&o.stages, std::string("fire,langevin,nve")), "stages in order: fire, langevin, nve")
    ("input", po::value(&o.input), "extended XYZ file of initial systems (default: built-in LJ clusters)")
    ("systems", app::value(&o.systems, 200), "built-in input: number of clusters (>= 1)")
    ("sizes", app::value(&o.sizes, std::string("13,55")), "built-in input: cluster sizes to draw from")
    ("seed", app::value(&o.seed, std::uint64_t{1}), "built-in input: random seed")
    ("amplitude", app::value(&o.amplitude, 0.05), "built-in input: perturbation (sigma, >= 0)")
    ("output", app::value(&o.output, std::string("baton-pipeline.xyz")), "results file (extended XYZ; not the input), or none; written as systems finish to FILE.part, renamed to FILE when the run completes")
    ("resume", po::bool_switch(&o.resume), "go on from an unfinished run's FILE.part (exit 5 after SIGTERM/SIGINT, or a killed run): its systems are not run again; refused (exit 2) when FILE.part was written with another input or options, naming what differs; without FILE.part every system runs")
    ("potential", app::value(&o.potential, std::string("lj")), "potential: lj (Lennard-Jones), morse, or eam (with --potential-file)")
    ("potential-file", po::value(&o.potential_file), "eam: LAMMPS potential file, *.eam (funcfl) or *.eam.alloy (setfl); masses come from it when the input has none")
    ("units", app::value(&o.units, std::string("auto")), "unit system: lj, metal (eV, A, amu, ps, K), or auto (metal for eam, else lj); metal changes the defaults of --fire-dt (0.001), --fire-dt-max (0.01), --dt (0.001) and --temperature (300)")
    ("epsilon", app::value(&o.lj.epsilon, 1.0), "lj: epsilon (> 0)")
    ("sigma", app::value(&o.lj.sigma, 1.0), "lj: sigma (> 0)")
    ("morse-depth", app::value(&o.morse.depth, 1.0), "morse: well depth D0 (> 0)")
    ("morse-alpha", app::value(&o.morse.alpha, 6.0), "morse: width alpha (> 0, 1 / length)")
    ("morse-r0", app::value(&o.morse.r0, 1.12), "morse: equilibrium distance r0 (> 0)")
    ("cutoff", app::value(&o.lj.cutoff, 3.0), "pair cutoff (0: none)")
    ("skin", app::value(&o.skin, -1.0), "neighbour lists (systems of 64 atoms and more): pairs listed up to cutoff + skin, rebuilt when an atom moved more than skin / 2; negative: the unit system's default (lj 0.3, metal 2 A)")
    ("no-shift", po::bool_switch(&o.no_shift), "do not shift the pair energy to 0 at the cutoff")
    ("fmax", app::value(&o.fire.fmax, 1e-6), "fire: converged at this largest force (>= 0)")
    ("fire-dt", app::value(&o.fire.dt, o.fire.dt), "fire: initial time step (> 0)")
    ("fire-dt-max", app::value(&o.fire.dt_max, o.fire.dt_max), "fire: largest time step (>= fire-dt)")
    ("fire-max-steps", app::value(&o.fire.max_steps, o.fire.max_steps), "fire: step budget (>= 1)")
    ("dt", app::value(&o.langevin.dt, 0.005), "langevin and nve: time step (> 0)")
    ("temperature", app::value(&o.langevin.temperature, 0.1), "langevin: bath temperature (>= 0)")
    ("friction", app::value(&o.langevin.friction, 1.0), "langevin: friction (> 0)")
    ("langevin-steps", app::value(&o.langevin.steps, 1000), "langevin: steps per system (>= 1)")
    ("nve-steps", app::value(&o.nve.steps, 1000), "nve: steps per system (>= 1)")
    ("nve-temperature", app::value(&o.nve.temperature, -1.0), "nve: draw velocities at this temperature (< 0: keep)")
    ("capacity-systems", app::value(&o.capacity_systems, 32), "batch capacity of every stage, systems (>= 1)")
    ("capacity-atoms", app::value(&o.capacity_atoms, 4096), "batch capacity of every stage, atoms (>= 1)")
    ("overflow", app::value(&o.overflow, 0), "overflow chain, first link: a device batch per rank, systems (0: none, or the next stage's capacity when the later links are given)")
    ("overflow-host", app::value(&o.overflow_host, 0), "overflow chain, second link: a host buffer per rank, systems (0: none)")
    ("spill", po::value(&o.spill), "overflow chain, last link: a spill file per rank in this directory (removed at the end)")
    ("mode", app::value(&o.mode, std::string("async_recv")), "hand-offs: sync, async_recv, fully_async")
    ("steps-per-call", app::value(&o.steps_per_call, 10), "dynamics steps per pipeline step (>= 1)")
    ("ranks-per-stage", po::value(&o.ranks_per_stage), "e.g. 1,2,1: one count per stage, adding up to the ranks (default: automatic)")
    ("stage-ranks", po::value(&o.stage_ranks), "explicit rank -> stage map, e.g. 0,3;1;2: stage 0 on ranks 0 and 3, stage 1 on rank 1, stage 2 on rank 2 (every rank once; rank 0 on stage 0)")
    ("stage-modes", po::value(&o.stage_modes), "hand-off mode per stage, e.g. sync,async_recv,fully_async (the links into each stage; default: --mode for all)")
    ("snapshots", po::value(&o.snapshots), "trajectory snapshots: every --snapshot-every pipeline steps, each stage's running systems are appended to PREFIX.<stage>.rank<r>.xyz")
    ("snapshot-every", app::value(&o.snapshot_every, 100L), "pipeline steps between snapshots (>= 1)")
    ("log-finished", po::bool_switch(&o.log_finished), "log a line per system finishing each stage (rank, stage, id, steps, energy or failure) to stderr")
    ("synchronized", po::bool_switch(&o.synchronized), "barrier after every step (debugging)")
    ("debug", po::bool_switch(&o.debug), "log every hand-off (rank, tag, counts) to stderr")
    ("progress", app::value(&o.progress, std::string("auto")), "progress on rank 0: auto (a line redrawn on a terminal, else a plain line every --progress-seconds), on (redrawn line), off")
    ("progress-seconds", app::value(&o.progress_seconds, 10.0), "auto progress in a log: seconds between lines")
    ("json", po::value(&o.json), "write the timing reports as JSON")
    ("csv", po::value(&o.csv), "write the load-imbalance table as CSV")
    ("trace", po::value(&o.trace), "write a Chrome trace (chrome://tracing, Perfetto)");
  // clang-format on
  return app::run(argc, argv, std::move(spec),
                  [&](baton::Runtime& runtime, const po::variables_map& vm) {
                    const baton::Communicator& world = runtime.world();
                    pl::Pipeline pipeline;
                    pl::Settings settings;
                    std::optional<dyn::Eam> eam;
                    baton::on_every_rank(
                        world,
                        [&] {
                          if (vm.count("config") != 0)
                            o.config = vm["config"].as<std::string>();
                          o.lj.shift = o.morse.shift = !o.no_shift;
                          o.morse.cutoff = o.lj.cutoff;
                          o.nve.dt = o.langevin.dt;
                          o.nve.seed = o.langevin.seed = o.seed;
                          check_potential_options(o);
                          resolve_units(o, vm);
                          if (o.potential == "eam") {
                            try {  // every rank reads the file once
                              eam.emplace(o.potential_file);
                            } catch (const baton::Error& e) {
                              throw app::UsageError(std::string("--potential-file: ") + e.what());
                            }
                          }
                          pipeline = build_pipeline(o, eam);
                          check_options(o, pipeline, world.size());
                          try {
                            settings = build_settings(o);
                            if (eam)
                              settings.species = eam->elements();
                          } catch (const baton::Error& e) {
                            throw app::UsageError(std::string("--mode: ") + e.what());
                          }
                        },
                        app::exit_usage);
                    return run(world, o, vm, pipeline, settings, eam);
                  });
}
