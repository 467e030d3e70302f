#pragma once
// baton-pipeline's options: what they hold, how they are declared, checked and turned into a
// pipeline, its settings and the run description --resume compares.

#include <baton/baton.hpp>
#include <baton/dynamics/crescale.hpp>
#include <baton/dynamics/csvr.hpp>
#include <baton/dynamics/mtk.hpp>
#include <baton/dynamics/nose_hoover.hpp>
#include <baton/models/torch_model.hpp>
#include <boost/program_options.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pipeline_app {

namespace po = boost::program_options;

struct Options {
  std::string stages, input, output, mode, progress, ranks_per_stage, sizes, json, csv, trace;
  std::string stage_ranks, stage_modes, spill;
  int overflow_host = 0;
  std::string potential, potential_file, units;
  std::string model, model_species;  ///< --potential torch: the TorchScript file, species names
  std::string model_plus = "none";   ///< a pair term added to the model: none, lj or morse
  double model_cutoff = 0;           ///< > 0: overrides the model's r_max
  bool model_per_system = false;     ///< one system per model call
  double model_memory = 0;           ///< MB per rank for a model call; 0: auto
  std::int64_t model_max_edges = 0;  ///< set by the run (model_capacity.hpp): edges per call
  int systems = 0, steps_per_call = 0, capacity_systems = 0, capacity_atoms = 0, overflow = 0;
  double progress_seconds = 10;
  double skin = -1;  ///< neighbour-list skin; < 0: the unit system's default
  std::uint64_t seed = 0;
  double amplitude = 0;
  bool synchronized = false, debug = false, no_shift = false, resume = false, log_finished = false;
  long checkpoint_every = 0;  ///< dynamics steps between checkpoints of running systems (0: none)
  std::string snapshots, config;
  long snapshot_every = 100;
  baton::dynamics::LennardJones lj;
  baton::dynamics::Morse morse;
  baton::dynamics::FireOptions fire;
  bool relax_cell = false;                ///< fire relaxes the cells too
  std::string fire_variant = "fire";      ///< fire or fire2 (FIRE 2.0)
  std::string fire_unconverged = "fail";  ///< fail or continue
  double pressure = 0;                    ///< its target, in the unit system's pressure unit
  std::string cell_strain = "any";        ///< any, hydrostatic or constant-volume
  std::string cell_mask = "111111";       ///< the strain components that may change (Voigt order)
  baton::dynamics::LangevinOptions langevin;
  baton::dynamics::VerletOptions nve;
  std::string thermostat = "csvr";    ///< the nvt stage's thermostat: csvr or langevin
  long nvt_steps = 1000;              ///< the nvt stage's steps per system
  baton::dynamics::CsvrOptions csvr;  ///< nvt with csvr (dt, temperature, seed: from the others)
  baton::dynamics::NoseHooverOptions nose_hoover;  ///< nvt with nose-hoover (the same)
  baton::dynamics::CrescaleOptions npt;  ///< npt (dt, temperature, tau, seed: from the others)
  std::string barostat = "crescale";     ///< npt's barostat: crescale or mtk
  std::string npt_coupling = "iso";      ///< mtk's strains: iso, aniso or tri
  baton::dynamics::MtkOptions mtk;       ///< npt with mtk (from npt's, and --npt-coupling)
  double npt_compressibility = 0;        ///< in 1 / the pressure unit; 0: the units' default
};

/// "1,2,3" as integers; a bad item throws app::UsageError naming --`what`.
std::vector<int> int_list(const std::string& text, const char* what);
/// Declares every option of the command line (and config file) into `options`, bound to `o`.
void declare_options(po::options_description& options, Options& o);
/// A potential read from a file: EAM tables (--potential eam) or a TorchScript model (torch).
struct FilePotential {
  std::optional<baton::dynamics::Eam> eam;
  std::shared_ptr<baton::models::TorchModel> torch;
  /// What the stages run for torch: the model, or the model plus --model-plus's pair term.
  std::shared_ptr<baton::dynamics::BatchModel> model;
  /// Reads the file of --potential eam or torch on this rank (app::UsageError naming the option).
  static FilePotential load(const Options& o);
  /// The species it knows, in its order (empty: any, for lj and morse).
  std::vector<std::string> species() const;
};

/// Checks the potential's options (names the option). Throws app::UsageError.
void check_potential_options(const Options& o);
/// --units auto: metal for EAM, lj otherwise; options not given get the unit system's defaults.
baton::dynamics::Units resolve_units(Options& o, const po::variables_map& vm);
/// --relax-cell, --pressure (converted from the unit system's pressure unit), --cell-strain and
/// --cell-mask into o.fire.cell. Throws app::UsageError naming the option.
void resolve_cell(Options& o, const baton::dynamics::Units& units);
/// --fire-variant (fire2: FIRE 2.0's parameters where not given), --fire-unconverged and the energy
/// criterion into o.fire. Throws app::UsageError naming the option.
void resolve_fire(Options& o, const po::variables_map& vm);
/// The stages of --stages over the potential of --potential (`file`: eam's or torch's).
baton::pipeline::Pipeline build_pipeline(const Options& o, const FilePotential& file);
/// Every option checked before any work. Throws app::UsageError.
void check_options(const Options& o, const baton::pipeline::Pipeline& pipeline, int world_size);
/// The driver's settings from the options.
baton::pipeline::DriverOptions build_settings(const Options& o);
/// What makes this run's results what they are (written into the results file; --resume compares).
baton::pipeline::RunDescription describe_run(const Options& o, const po::variables_map& vm);

}  // namespace pipeline_app
