#include "options.hpp"

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

namespace pipeline_app {

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

namespace {

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
    else if (name == "nvt" && o.thermostat == "csvr")
      p = p | pl::make_stage<dyn::CsvrStage>(cap, potential, o.csvr);
    else if (name == "nvt" && o.thermostat == "nose-hoover")
      p = p | pl::make_stage<dyn::NoseHooverStage>(cap, potential, o.nose_hoover);
    else if (name == "nvt") {  // --thermostat langevin
      dyn::LangevinOptions nvt = o.langevin;
      nvt.steps = o.nvt_steps;
      p = p | pl::make_stage<dyn::LangevinStage>(cap, potential, nvt);
    } else if (name == "npt" && o.barostat == "mtk")
      p = p | pl::make_stage<dyn::MtkStage>(cap, potential, o.mtk);
    else if (name == "npt")
      p = p | pl::make_stage<dyn::CrescaleStage>(cap, potential, o.npt);
    else
      throw app::UsageError("--stages: unknown stage '" + name +
                            "' (choose from fire, langevin, nve, nvt, npt)");
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

}  // namespace

FilePotential FilePotential::load(const Options& o) {
  FilePotential file;
  if (o.potential == "eam") {
    try {  // every rank reads the file once
      file.eam.emplace(o.potential_file);
    } catch (const baton::Error& e) {
      throw app::UsageError(std::string("--potential-file: ") + e.what());
    }
  } else if (o.potential == "torch") {
    std::vector<std::string> names;
    std::stringstream list(o.model_species);
    for (std::string name; std::getline(list, name, ',');)
      if (!name.empty())
        names.push_back(name);
    try {
      file.torch = baton::models::load_torch_model({o.model, o.model_cutoff, names});
    } catch (const baton::Error& e) {
      throw app::UsageError(std::string("--model: ") + e.what());
    }
    file.model = file.torch;
    std::shared_ptr<dyn::BatchModel> pair;
    if (o.model_plus == "lj")
      pair = std::make_shared<dyn::PairModel<dyn::LennardJones>>(o.lj);
    else if (o.model_plus == "morse")
      pair = std::make_shared<dyn::PairModel<dyn::Morse>>(o.morse);
    if (pair)
      file.model = std::make_shared<dyn::SumModel>(
          std::vector<std::shared_ptr<dyn::BatchModel>>{file.torch, pair});
  }
  return file;
}

std::vector<std::string> FilePotential::species() const {
  if (eam)
    return eam->elements();
  if (torch)
    return torch->type_names();
  return {};
}

// The stages of --stages over the potential of --potential (`file`: eam's or torch's).
pl::Pipeline build_pipeline(const Options& o, const FilePotential& file) {
  if (o.potential == "lj")
    return build_pipeline(o, o.lj);
  if (o.potential == "morse")
    return build_pipeline(o, o.morse);
  if (o.potential == "torch")
    return build_pipeline(o, dyn::Model(file.model, o.model_per_system, o.model_max_edges));
  return build_pipeline(o, file.eam.value());
}

// --units auto: metal for EAM (its files are in metal units), lj otherwise. Options the user did
// not give get the unit system's defaults (time steps in ps, temperatures in K for metal).
dyn::Units resolve_units(Options& o, const po::variables_map& vm) {
  app::require(o.units == "auto" || o.units == "lj" || o.units == "metal", "units",
               "must be auto, lj or metal, not '" + o.units + "'");
  app::require(o.potential != "eam" || o.units != "lj", "units",
               "lj contradicts --potential eam: LAMMPS' EAM files are in metal units (eV, A, amu); "
               "give --units metal or leave it at auto");
  const bool metal_potential = o.potential == "eam" || o.potential == "torch";
  const std::string name = o.units != "auto" ? o.units : metal_potential ? "metal" : "lj";
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
    unless_given("thermostat-tau", o.csvr.tau, 0.1);
  }
  o.fire.units = o.langevin.units = o.nve.units = o.csvr.units = o.nose_hoover.units = o.npt.units =
      units;
  o.fire.neighbours.skin = o.langevin.neighbours.skin = o.nve.neighbours.skin =
      o.csvr.neighbours.skin = o.nose_hoover.neighbours.skin = o.npt.neighbours.skin = o.skin;
  return units;
}

void resolve_cell(Options& o, const dyn::Units& units) {
  using Strain = dyn::CellRelaxation::Strain;
  app::require_finite(o.pressure, "pressure");
  app::require(o.cell_strain == "any" || o.cell_strain == "hydrostatic" ||
                   o.cell_strain == "constant-volume",
               "cell-strain",
               "must be any, hydrostatic or constant-volume, not '" + o.cell_strain + "'");
  app::require(
      o.cell_mask.size() == 6 && o.cell_mask.find_first_not_of("01") == std::string::npos,
      "cell-mask",
      "must be six 0s and 1s (xx yy zz yz xz xy; 0 holds that strain), not '" + o.cell_mask + "'");
  const bool touched = o.cell_strain != "any" || o.cell_mask != "111111";
  app::require(o.relax_cell || !touched, "relax-cell",
               "--cell-strain and --cell-mask act on the fire stage's cell: give --relax-cell "
               "too");
  dyn::CellRelaxation& c = o.fire.cell;
  c.enabled = o.relax_cell;
  c.set_pressure(o.pressure / units.nktv2p);
  // The npt stage: the same target; the compressibility from 1 / (the unit system's pressure
  // unit) to length^3 / energy.
  app::require_finite(o.npt_compressibility, "compressibility");
  app::require(o.npt_compressibility >= 0, "compressibility",
               "must be greater than 0 (or 0: the unit system's default)");
  app::require_finite(o.npt.tau_p, "barostat-period");
  app::require(o.npt.tau_p > 0, "barostat-period", "must be greater than 0");
  app::require(o.barostat == "crescale" || o.barostat == "mtk", "barostat",
               "must be crescale or mtk, not '" + o.barostat + "'");
  using Coupling = dyn::MtkOptions::Coupling;
  app::require(o.npt_coupling == "iso" || o.npt_coupling == "aniso" || o.npt_coupling == "tri",
               "npt-coupling", "must be iso, aniso or tri, not '" + o.npt_coupling + "'");
  app::require(o.npt_coupling != "tri" || o.barostat == "mtk", "npt-coupling",
               "crescale moves the volume (iso) or the three lengths (aniso), not the tilts: give "
               "--barostat mtk for tri");
  app::require(o.npt_compressibility == 0 || o.barostat == "crescale", "compressibility",
               "acts on --barostat crescale, not on mtk (--barostat-period sets its barostat's "
               "mass)");
  o.npt.pressure = o.pressure / units.nktv2p;
  o.mtk.pressure = o.npt.pressure;
  o.mtk.tau_p = o.npt.tau_p;
  o.npt.coupling = o.npt_coupling == "aniso" ? dyn::CrescaleOptions::Coupling::aniso
                                             : dyn::CrescaleOptions::Coupling::iso;
  o.mtk.coupling = o.npt_coupling == "tri"     ? Coupling::tri
                   : o.npt_coupling == "aniso" ? Coupling::aniso
                                               : Coupling::iso;
  o.npt.compressibility =
      (o.npt_compressibility > 0 ? o.npt_compressibility : (units.name == "metal" ? 1e-6 : 0.1)) *
      units.nktv2p;
  c.strain = o.cell_strain == "hydrostatic"       ? Strain::hydrostatic
             : o.cell_strain == "constant-volume" ? Strain::constant_volume
                                                  : Strain::any;
  for (std::size_t k = 0; k < 6; ++k)
    c.mask[k] = o.cell_mask[k] == '1';
  app::require(c.strain != Strain::constant_volume || o.cell_mask.compare(0, 3, "111") == 0,
               "cell-mask",
               "must leave xx, yy and zz free (111...) with --cell-strain "
               "constant-volume");
}

void resolve_fire(Options& o, const po::variables_map& vm) {
  app::require(o.fire_variant == "fire" || o.fire_variant == "fire2", "fire-variant",
               "must be fire or fire2, not '" + o.fire_variant + "'");
  app::require(o.fire_unconverged == "fail" || o.fire_unconverged == "continue", "fire-unconverged",
               "must be fail or continue, not '" + o.fire_unconverged + "'");
  app::require_finite(o.fire.energy_change, "fire-energy-change");
  app::require(o.fire.energy_change >= 0, "fire-energy-change", "must be 0 (off) or more");
  app::require(o.fire.energy_steps >= 1, "fire-energy-steps", "must be at least 1");
  app::require_finite(o.fire.max_step, "fire-max-step");
  app::require(o.fire.max_step > 0, "fire-max-step", "must be greater than 0");
  o.fire.fail_unconverged = o.fire_unconverged == "fail";
  if (o.fire_variant == "fire2") {
    const bool dt_max_given = vm.count("fire-dt-max") != 0 && !vm["fire-dt-max"].defaulted();
    const double dt_max = o.fire.dt_max;
    o.fire = dyn::FireOptions::fire2(o.fire.dt, o.fire);
    if (dt_max_given)
      o.fire.dt_max = dt_max;
  }
}

// The potential's options, checked before the stages (which check them again) are built, so that
// an error names the option. Throws app::UsageError.
void check_potential_options(const Options& o) {
  // The nvt stage's options too: its stage checks them when built, without the option's name.
  app::require(
      o.thermostat == "csvr" || o.thermostat == "nose-hoover" || o.thermostat == "langevin",
      "thermostat", "must be csvr, nose-hoover or langevin, not '" + o.thermostat + "'");
  app::require_finite(o.csvr.tau, "thermostat-tau");
  app::require(o.csvr.tau > 0, "thermostat-tau", "must be greater than 0");
  app::require(o.nvt_steps >= 1, "nvt-steps", "must be at least 1");
  app::require(o.potential == "lj" || o.potential == "morse" || o.potential == "eam" ||
                   o.potential == "torch",
               "potential",
               "unknown potential '" + o.potential + "' (choose from lj, morse, eam, torch)");
  if (o.potential == "torch") {
    app::require(baton::models::torch_enabled(), "potential",
                 "torch: this baton-pipeline was built without libtorch; install it (Debian: "
                 "apt-get install libtorch-dev) and configure Baton with -DBATON_ENABLE_TORCH=ON "
                 "(Spack: baton+torch)");
    app::require(!o.model.empty(), "model",
                 "--potential torch needs --model FILE (a TorchScript model file)");
    app::require_input_file(o.model, "model");
    app::require(!o.input.empty(), "input",
                 "--potential torch needs --input (an extended XYZ file of the systems; the "
                 "built-in clusters are Lennard-Jones clusters)");
    app::require(o.model_plus == "none" || o.model_plus == "lj" || o.model_plus == "morse",
                 "model-plus", "must be none, lj or morse, not '" + o.model_plus + "'");
    app::require(o.model_plus == "none" || o.lj.cutoff > 0, "cutoff",
                 "--model-plus needs a pair cutoff greater than 0");
    app::require_finite(o.model_cutoff, "model-cutoff");
    app::require(o.model_cutoff >= 0, "model-cutoff", "must be 0 (the model's r_max) or more");
    app::require_finite(o.model_memory, "model-memory");
    app::require(o.model_memory >= 0, "model-memory", "must be 0 (automatic) or more MB");
  }
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
  const bool fire_touched =
      o.fire_variant != "fire" || o.fire_unconverged != "fail" || o.fire.energy_change != 0;
  app::require(!fire_touched || uses("fire"), "fire-variant",
               "--fire-variant, --fire-unconverged and --fire-energy-change act on the fire stage, "
               "but --stages has no fire stage");
  app::require(!o.relax_cell || uses("fire"), "relax-cell",
               "relaxes the fire stage's cells, but --stages has no fire stage");
  app::require(o.pressure == 0 || o.relax_cell || uses("npt"), "pressure",
               "is the target of fire --relax-cell and of the npt stage, and the run has neither");
  app::require(!uses("npt") || o.npt.steps >= 1, "npt-steps", "must be at least 1");
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
  app::require(o.checkpoint_every >= 0, "checkpoint-every", "must be 0 (none) or more");
  app::require(o.checkpoint_every == 0 || o.output != "none", "checkpoint-every",
               "needs an --output file (the checkpoints go beside its FILE.part)");
  if (o.output != "none")
    app::require_output_file(o.output, "output");
  for (const auto& [path, name] : {std::pair{o.json, "json"}, {o.csv, "csv"}, {o.trace, "trace"}}) {
    if (!path.empty())
      app::require_output_file(path, name);
  }
  // No output over an input or over another output: every file the run writes, checked now.
  std::vector<app::FileRole> inputs, outputs;
  for (const auto& [path, name] : {std::pair{o.input, "input"},
                                   {o.potential_file, "potential-file"},
                                   {o.model, "model"},
                                   {o.config, "config"}})
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

namespace {

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
                                                "checkpoint-every",
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
                                                "model-memory",
                                                "steps-per-call",
                                                "help"};
  return std::find(neutral.begin(), neutral.end(), option) == neutral.end();
}

}  // namespace

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
  if (!o.model.empty())
    run.emplace_back("model-content", file_identity(o.model, "model"));
  return run;
}

pl::DriverOptions build_settings(const Options& o) {
  pl::DriverOptions settings;
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

void declare_options(po::options_description& options, Options& o) {
  // clang-format off
  options.add_options()
    ("config", po::value<std::string>(), "read options from this file too (name = value lines)")
    ("stages", app::value(&o.stages, std::string("fire,langevin,nve")), "stages in order: fire, langevin, nve, nvt, npt")
    ("input", po::value(&o.input), "extended XYZ file of initial systems (default: built-in LJ clusters)")
    ("systems", app::value(&o.systems, 200), "built-in input: number of clusters (>= 1)")
    ("sizes", app::value(&o.sizes, std::string("13,55")), "built-in input: cluster sizes to draw from")
    ("seed", app::value(&o.seed, std::uint64_t{1}), "built-in input: random seed")
    ("amplitude", app::value(&o.amplitude, 0.05), "built-in input: perturbation (sigma, >= 0)")
    ("output", app::value(&o.output, std::string("baton-pipeline.xyz")), "results file (extended XYZ; not the input), or none; written as systems finish to FILE.part, renamed to FILE when the run completes")
    ("resume", po::bool_switch(&o.resume), "go on from an unfinished run's FILE.part (exit 5 after SIGTERM/SIGINT, or a killed run): its systems are not run again, and running systems with a checkpoint (--checkpoint-every) go on from it, to the same results bit for bit; refused (exit 2) when FILE.part was written with another input or options, naming what differs; without FILE.part every system runs")
    ("checkpoint-every", app::value(&o.checkpoint_every, 0L), "every N dynamics steps, each rank writes the whole state of its running systems to FILE.part.ckpt.<rank> (atomically), for --resume to go on from; removed when the run completes (0: none)")
    ("potential", app::value(&o.potential, std::string("lj")), "potential: lj (Lennard-Jones), morse, eam (with --potential-file), or torch (a TorchScript model, --model)")
    ("model", po::value(&o.model), "torch: the TorchScript model file (docs/models.md); species and cutoff come from it")
    ("model-cutoff", app::value(&o.model_cutoff, 0.0), "torch: the model's cutoff, when its file has no r_max (0: the file's)")
    ("model-plus", app::value(&o.model_plus, std::string("none")), "torch: a pair term added to the model: none, lj (--epsilon, --sigma, --cutoff) or morse (--morse-*, --cutoff); each term gets the pairs within its own cutoff")
    ("model-per-system", po::bool_switch(&o.model_per_system), "torch: call the model on one system at a time, for a model whose numbers for a system depend on the other systems of its call (results then independent of the batch and the rank count); slower")
    ("model-memory", app::value(&o.model_memory, 0.0), "torch: MB of memory per rank for one model call, which sets the edges per call and the stages' atom capacity (docs/models.md); 0: the node's available memory shared among its ranks, on the host")
    ("model-species", po::value(&o.model_species), "torch: the model's species names in its atom_types order, comma-separated, when its file has no type_names")
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
    ("fire-max-step", app::value(&o.fire.max_step, o.fire.max_step), "fire: largest atom move per step (length unit, > 0)")
    ("fire-variant", app::value(&o.fire_variant, std::string("fire")), "fire: fire (Bitzek et al. 2006, with FIRE 2.0's half step back) or fire2 (FIRE 2.0, Guenole et al. 2020, as LAMMPS' min_style fire; its parameters: --fire-dt-max 10 x --fire-dt unless given, n_min 20, alpha 0.25, dt never below 0.02 x --fire-dt, at most 2000 uphill steps in a row)")
    ("fire-unconverged", app::value(&o.fire_unconverged, std::string("fail")), "fire: a system that stops without converging (--fire-max-steps, or FIRE 2.0's uphill limit) fails (\"not converged within its step budget\"; later stages pass it on untouched, exit 4), or, with continue, goes on as it is")
    ("fire-energy-change", app::value(&o.fire.energy_change, 0.0), "fire: converged also needs the energy per atom to change by at most this over the last --fire-energy-steps steps (energy unit; 0: off)")
    ("fire-energy-steps", app::value(&o.fire.energy_steps, 10), "fire: the window of --fire-energy-change (>= 1)")
    ("relax-cell", po::bool_switch(&o.relax_cell), "fire: relax the cell of every periodic system too, to --pressure (variable-cell FIRE; docs/dynamics.md); converged when the largest atom force and the largest row of (virial - volume x pressure) / atoms are both at most --fmax")
    ("pressure", app::value(&o.pressure, 0.0), "fire --relax-cell and npt: the target pressure, hydrostatic, in the unit system's pressure unit (metal: bar, as LAMMPS; lj: epsilon / sigma^3)")
    ("npt-steps", app::value(&o.npt.steps, 1000L), "npt: steps per system (>= 1); velocities drawn at --temperature on entry; the temperature held by CSVR (crescale) or a Nose-Hoover chain (mtk), time constant --thermostat-tau")
    ("barostat", app::value(&o.barostat, std::string("crescale")), "npt: crescale (stochastic cell rescaling, Bernetti and Bussi 2020; iso or aniso) or mtk (Martyna-Tobias-Klein with Nose-Hoover chains, as LAMMPS' fix npt; deterministic)")
    ("npt-coupling", app::value(&o.npt_coupling, std::string("iso")), "npt: iso (the volume), aniso (the three lengths, each toward --pressure) or tri (mtk only: also the tilts, toward zero shear stress), as fix npt's keywords, along each cell's own axes (a, b's part normal to a, their normal: x, y, z for a cell in LAMMPS' orientation)")
    ("barostat-period", app::value(&o.npt.tau_p, 1.0), "npt: the barostat's time constant tau_p (crescale) or period (mtk: LAMMPS' Pdamp) (> 0; time units: metal ps)")
    ("compressibility", app::value(&o.npt_compressibility, 0.0), "npt: an estimate of the isothermal compressibility, 1 / the pressure unit (metal: 1/bar); it sets how fast the volume follows, not what is sampled; 0: lj 0.1, metal 1e-6 /bar")
    ("cell-strain", app::value(&o.cell_strain, std::string("any")), "fire --relax-cell: how the cell may deform: any, hydrostatic (shape kept), constant-volume")
    ("cell-mask", app::value(&o.cell_mask, std::string("111111")), "fire --relax-cell: six 0/1 flags, xx yy zz yz xz xy (ASE's Voigt order); 0 holds that strain component")
    ("dt", app::value(&o.langevin.dt, 0.005), "langevin and nve: time step (> 0)")
    ("temperature", app::value(&o.langevin.temperature, 0.1), "langevin: bath temperature (>= 0)")
    ("friction", app::value(&o.langevin.friction, 1.0), "langevin: friction (> 0)")
    ("langevin-steps", app::value(&o.langevin.steps, 1000), "langevin: steps per system (>= 1)")
    ("nve-steps", app::value(&o.nve.steps, 1000), "nve: steps per system (>= 1)")
    ("nve-temperature", app::value(&o.nve.temperature, -1.0), "nve: draw velocities at this temperature (< 0: keep)")
    ("nvt-steps", app::value(&o.nvt_steps, 1000L), "nvt: steps per system (>= 1)")
    ("thermostat", app::value(&o.thermostat, std::string("csvr")), "nvt: csvr (stochastic velocity rescaling, Bussi et al. 2007), nose-hoover (a chain of two, as LAMMPS' fix nvt; deterministic) -- both draw velocities at --temperature on entry -- or langevin (as the langevin stage, --friction)")
    ("thermostat-tau", app::value(&o.csvr.tau, 0.5), "nvt with csvr or nose-hoover: the thermostat's time constant (> 0; metal default 0.1 ps)")
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
}

}  // namespace pipeline_app
