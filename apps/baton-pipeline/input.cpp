#include "input.hpp"

#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <baton/baton.hpp>
#include <baton/dynamics/clusters.hpp>
#include <baton/dynamics/eam.hpp>
#include <baton/dynamics/fire.hpp>
#include <baton/dynamics/langevin.hpp>
#include <baton/dynamics/model.hpp>
#include <baton/dynamics/verlet.hpp>
#include <baton/pipeline/driver.hpp>
#include <baton/pipeline/hooks.hpp>
#include <baton/pipeline/sink.hpp>
#include <baton/pipeline/source.hpp>
#include <baton/pipeline/summary.hpp>
#include <baton/systems/cell.hpp>
#include <baton/systems/elements.hpp>
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

namespace pipeline_app {

namespace {

// What is wrong with one input system before it runs, or "" (and, with an EAM file, it gets the
// file's masses when it has none; with a TorchScript model in metal units, the elements' standard
// masses).
std::string input_problem(sys::HostSystem& s, const Options& o, const FilePotential& file) {
  std::string problem = sys::host_system_problem(s);
  if (problem.empty()) {  // a cell too small for the cutoff, found now rather than mid-run
    const double cutoff = file.eam          ? file.eam->tables().cutoff
                          : file.model      ? file.model->cutoff()
                          : o.lj.cutoff > 0 ? o.lj.cutoff
                                            : INFINITY;
    const std::string small = sys::cutoff_problem(s.cell, sys::pbc_bits(s.pbc), cutoff);
    if (!small.empty())
      problem = "needs a larger cell: " + small;
  }
  const std::vector<std::string> known = file.species();
  if (problem.empty() && !known.empty()) {  // every species known to the file
    const std::string& path = file.eam ? o.potential_file : o.model;
    for (const std::string& e : s.species)
      if (problem.empty() && std::find(known.begin(), known.end(), e) == known.end()) {
        std::string list;
        for (const std::string& k : known)
          list += (list.empty() ? "" : ", ") + k;
        problem = std::string(file.eam ? "has element '" : "has species '") + e + "', which " +
                  path + " does not have (it has " + list + ")";
      }
  }
  if (problem.empty() && s.masses.empty() && file.eam)
    for (const std::string& e : s.species)
      s.masses.push_back(file.eam->mass(e));
  if (problem.empty() && s.masses.empty() && file.torch && o.fire.units.name == "metal") {
    for (const std::string& e : s.species) {
      const double m = sys::standard_atomic_mass(e);
      if (std::isnan(m) && problem.empty())
        problem = "has no masses and species '" + e +
                  "' is not an element symbol: give a masses column (a TorchScript model "
                  "carries no masses)";
      s.masses.push_back(m);
    }
    if (!problem.empty())
      s.masses.clear();
  }
  return problem;
}

// Adds the edges of `systems` at the model's cutoff to `scan`, and empties `systems`.
void scan_edges(std::vector<sys::HostSystem>& systems, const FilePotential& file, EdgeScan& scan) {
  if (systems.empty())
    return;
  const std::vector<std::int64_t> edges = dyn::count_edges(systems, file.model->cutoff());
  for (std::size_t i = 0; i < systems.size(); ++i) {
    const sys::HostSystem& s = systems[i];
    const auto atoms = static_cast<std::int64_t>(s.size());
    scan.density =
        std::max(scan.density, static_cast<double>(edges[i]) / static_cast<double>(atoms));
    scan.largest = std::max(scan.largest, atoms);
    if (edges[i] > scan.most || scan.densest.size() == 0) {
      scan.most = edges[i];
      scan.most_id = s.id;
      scan.most_atoms = atoms;
      scan.densest = s;
    }
  }
  systems.clear();
}

// Checks every frame of --input; returns the source that streams it, passing over `done`. With a
// model, counts every system's edges into `scan`.
std::unique_ptr<pl::SystemSource> open_input_file(const Options& o, const FilePotential& file,
                                                  const std::vector<std::int64_t>& done,
                                                  EdgeScan& scan) {
  std::vector<std::int64_t> ids;
  std::int64_t largest = 0, count = 0;
  sys::SpeciesTable labels;              // in order of first use, so that every rank names them
  std::vector<sys::HostSystem> pending;  // for the edge count, a chunk at a time
  try {
    sys::XyzReader reader(o.input);
    while (std::optional<sys::HostSystem> s = reader.next()) {
      const std::string problem = input_problem(*s, o, file);
      app::require(problem.empty(), "input",
                   "'" + o.input + "' frame " + std::to_string(reader.frames()) + " (system " +
                       std::to_string(s->id) + ") " + problem);
      ids.push_back(s->id);
      for (const std::string& label : s->species)
        labels.index(label);
      largest = std::max<std::int64_t>(largest, static_cast<std::int64_t>(s->size()));
      count += std::binary_search(done.begin(), done.end(), s->id) ? 0 : 1;
      if (file.model) {
        pending.push_back(std::move(*s));
        if (pending.size() == 1024)
          scan_edges(pending, file, scan);
      }
    }
    scan_edges(pending, file, scan);
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
  auto check = [&o, &file](sys::HostSystem& s) { return input_problem(s, o, file); };
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

}  // namespace

// Rank 0, before any work: with --resume, the checkpoints of running systems of the unfinished
// run (FILE.part.ckpt and FILE.part.ckpt.<rank>; refused, exit 2, when damaged or another run's),
// the most advanced of each system that FILE.part (when there is one) does not hold. They are
// written together to FILE.part.ckpt (atomically) and the numbered files removed, so that this
// run's ranks write theirs afresh and a later --resume still finds every checkpoint. Without
// --resume, checkpoints there are refused as FILE.part is (exit 2): nothing is removed unasked.
static std::shared_ptr<pl::Checkpoints> resume_checkpoints(const std::string& prefix,
                                                           const std::string& run,
                                                           const std::vector<std::int64_t>& done,
                                                           bool resuming) {
  const std::vector<std::string> files = pl::checkpoint_files(prefix);
  if (!resuming) {
    app::require(files.empty(), "output",
                 "'" + (files.empty() ? prefix : files.front()) +
                     "' holds checkpoints of an unfinished run: give --resume to go on from "
                     "them, or move it away");
    return nullptr;
  }
  auto all = std::make_shared<pl::Checkpoints>();
  for (const std::string& f : files) {
    try {
      all->add(pl::read_checkpoints(f, run));
    } catch (const baton::Error& e) {
      throw app::UsageError(std::string("--resume: ") + e.what() +
                            "; move it away to run its systems from the start");
    }
  }
  all->erase(done);
  for (const std::string& f : pl::checkpoint_temporaries(prefix))  // what a kill cut short
    std::remove(f.c_str());
  if (files.empty())
    return nullptr;
  const std::vector<pl::SystemCheckpoint> merged = all->all();
  try {
    pl::write_checkpoints(prefix, run, merged);
  } catch (const baton::Error& e) {
    throw app::UsageError(std::string("--resume: ") + e.what());
  }
  for (const std::string& f : files)
    if (f != prefix)
      std::remove(f.c_str());
  if (!merged.empty()) {
    std::int64_t steps = 0, entering = 0;
    for (const pl::SystemCheckpoint& c : merged) {
      steps += c.steps;
      entering += c.entering ? 1 : 0;
    }
    std::cout << "baton-pipeline: --resume: " << merged.size()
              << " running systems go on from their checkpoints (" << steps
              << " steps already taken in their stages; " << entering
              << " of them waiting to enter their next stage)\n";
  }
  return all;
}

// Rank 0 opens the output (with --resume, the unfinished run's FILE.part, after checking that it is
// this run's) and then the input; every rank learns whether that worked (exit code 2 if not).
Input open_input(const baton::Communicator& world, const Options& o, const pl::Pipeline& pipeline,
                 const FilePotential& file, const po::variables_map& vm) {
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
          const pl::RunDescription run = describe_run(o, vm);  // hashes the input files
          try {
            in.file = std::make_unique<pl::XyzFileSink>(o.output, pipeline.names(), o.resume, run,
                                                        o.fire.units.mvv2e);
          } catch (const baton::Error& e) {
            throw app::UsageError(std::string(o.resume ? "--resume: " : "--output: ") + e.what());
          }
          done = in.file->done_ids();
          in.resumed = static_cast<std::int64_t>(done.size());
          in.checkpoint_run = pl::encode_run(run);
          in.resume =
              resume_checkpoints(part + checkpoint_suffix, in.checkpoint_run, done, o.resume);
          if (o.resume && !in.file->resumed_from_part())
            std::cout << "baton-pipeline: --resume: no unfinished run in '" << part
                      << "', so every system runs"
                      << (in.resume ? ", from its checkpoint where it has one\n" : "\n");
        }
        in.source =
            o.input.empty() ? built_in_input(o, done) : open_input_file(o, file, done, in.edges);
      },
      app::exit_usage);
  return in;
}

}  // namespace pipeline_app
