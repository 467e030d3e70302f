// Dynamics: Baton's stages beside LAMMPS on the same systems, both run here, in this run. Every
// rank runs Baton's cases alone (a per-rank figure); rank 0 runs LAMMPS first (found on PATH, one
// core) and prints. Without LAMMPS, Baton's figures are printed alone. --rounds R runs each case R
// times, LAMMPS then Baton in turns (the medians, the median ratio and the ratios' range);
// --cases names the cases to run.
//
// Cases (atom-steps per second, higher is better; ratio = Baton / LAMMPS):
//   fire_lj55     200 perturbed LJ55 clusters relaxed with FIRE (LAMMPS: all in one open box, one
//                 minimisation of the lot, min_style fire, ftol 1e-6)
//   nve_lj55      the same clusters, 200 NVE steps (dt 0.005, from T = 0.1)
//   langevin_lj55 the same, 200 Langevin steps (T 0.1, friction 1; LAMMPS: fix langevin + nve),
//                 and step_cost_vs_nve: a Langevin step's time over an NVE step's
//   csvr_lj55     the same, 200 CSVR steps (T 0.1, tau 0.5), and its step_cost_vs_nve (Baton alone:
//                 Debian's LAMMPS lacks fix temp/csvr, which is in its EXTRA-FIX package)
//   npt_lj256x16  16 LJ liquid cells of 256 atoms (density 0.8442, T 1.44), 200 C-rescale NPT
//                 steps (P0 2.5, tau_p 1), its step_cost_vs_nve (NVE on the same batch) and its
//                 list_builds per system (Baton alone: the cost of cells that change every step)
//   nve_lj_liquid LAMMPS' bench/in.lj: 32,000 atoms, fcc at density 0.8442, rc 2.5, skin 0.3,
//   T 1.44,
//                 100 steps
//   nve_cu_eam    LAMMPS' bench/in.eam: Cu fcc, 32,000 atoms, Cu_u3.eam, skin 1 A, 300 K (here with
//                 5% jitter), dt 1 fs, 100 steps
//   nve_cu108x256 256 jittered Cu cells of 108 atoms, 100 NVE steps each: Baton runs them as one
//                 batch; LAMMPS one after another in one process (its whole run, reading included)
#include <mpi.h>
#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <baton/collectives/collectives.hpp>
#include <baton/dynamics/clusters.hpp>
#include <baton/dynamics/crescale.hpp>
#include <baton/dynamics/csvr.hpp>
#include <baton/dynamics/eam.hpp>
#include <baton/dynamics/fire.hpp>
#include <baton/dynamics/langevin.hpp>
#include <baton/dynamics/lattice.hpp>
#include <baton/dynamics/model.hpp>
#include <baton/dynamics/verlet.hpp>
#include <baton/models/torch_model.hpp>
#include <baton/systems/host_transfer.hpp>
#include <baton/systems/lammps_data.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "lammps.hpp"
#include "measure.hpp"

namespace bench {

namespace {

namespace bd = baton::dynamics;
namespace bs = baton::systems;

constexpr const char* eam_file = "/usr/share/lammps/potentials/Cu_u3.eam";

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

bs::SystemsBatch load(const std::vector<bs::HostSystem>& systems) {
  int atoms = 0;
  for (const auto& s : systems)
    atoms += static_cast<int>(s.size());
  bs::SystemsBatch batch({static_cast<int>(systems.size()), atoms}, 1);
  bs::SpeciesTable species;
  bs::append_systems(batch, systems, species);
  return batch;
}

long total_steps(const bs::SystemsBatch& batch) {
  const auto steps = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.steps);
  long sum = 0;
  for (int s = 0; s < batch.num_systems(); ++s)
    sum += static_cast<long>(steps(s));
  return sum;
}

// Median seconds over the repeats (after a warm-up) of `stage` taking a fresh batch of `systems`
// in and advancing them by up to `max_steps`; `steps` gets the batch's total steps of the last,
// and `builds` (when given) the neighbour lists `lists` built in the last.
double time_stage(const Settings& settings, baton::dynamics::Stage& stage,
                  const std::vector<bs::HostSystem>& systems, int max_steps, long& steps,
                  const bd::NeighbourLists* lists = nullptr, double* builds = nullptr) {
  std::vector<double> seconds;
  for (int r = 0; r < settings.repeats + 1; ++r) {
    bs::SystemsBatch batch = load(systems);
    Kokkos::fence();
    const std::int64_t built = lists ? lists->builds() : 0;
    const double start = MPI_Wtime();
    stage.enter(batch, 0, batch.num_systems());
    stage.advance(batch, max_steps);
    Kokkos::fence();
    if (r > 0)
      seconds.push_back(MPI_Wtime() - start);
    steps = total_steps(batch);
    if (lists && builds)
      *builds = static_cast<double>(lists->builds() - built);
  }
  return median(seconds);
}

// The threads (on a GPU, the concurrency) of Kokkos' default execution space on this rank.
int threads_per_rank() {
  return static_cast<int>(Kokkos::DefaultExecutionSpace().concurrency());
}

// One case of `rounds` rounds beside LAMMPS: each side's median rate, the median of the rounds'
// ratios and their range (ratio 0: no LAMMPS figure, as on ranks other than 0).
struct Compared {
  double baton = 0, lammps = 0, ratio = 0, ratio_min = 0, ratio_max = 0;
  int rounds = 1;
};

Compared figures(double baton, double lammps) {
  Compared c;
  c.baton = baton;
  c.lammps = lammps;
  if (lammps > 0)
    c.ratio = c.ratio_min = c.ratio_max = baton / lammps;
  return c;
}

// `rounds` times LAMMPS' rate (lammps(), 0 without it), then Baton's (baton()), in turns, so that
// both sides of a ratio share the machine's state of the moment (a machine whose speed drifts
// moves the ratios' range, not one side's median alone).
Compared compare_rounds(int rounds, const std::function<double()>& lammps,
                        const std::function<double()>& baton) {
  std::vector<double> b, l, r;
  for (int k = 0; k < rounds; ++k) {
    l.push_back(lammps());
    b.push_back(baton());
    if (l.back() > 0)
      r.push_back(b.back() / l.back());
  }
  Compared c = figures(median(b), median(l));
  c.rounds = rounds;
  if (r.size() == b.size()) {
    c.ratio = median(r);
    c.ratio_min = *std::min_element(r.begin(), r.end());
    c.ratio_max = *std::max_element(r.begin(), r.end());
  } else {
    c.lammps = c.ratio = 0;
  }
  return c;
}

void print_compared(const baton::Communicator& comm, const Settings& settings,
                    const std::string& op, const char* metric, const Compared& c) {
  if (comm.rank() != 0)
    return;
  if (settings.json) {
    char ref[64] = "null", rat[64] = "null", lo[64] = "null", hi[64] = "null";
    if (c.ratio > 0) {
      std::snprintf(ref, sizeof ref, "%.6g", c.lammps);
      std::snprintf(rat, sizeof rat, "%.4f", c.ratio);
      std::snprintf(lo, sizeof lo, "%.4f", c.ratio_min);
      std::snprintf(hi, sizeof hi, "%.4f", c.ratio_max);
    }
    std::printf(
        "{\"op\": \"%s\", \"metric\": \"%s\", \"ranks\": %d, \"space\": \"%s\", "
        "\"threads\": %d, \"rounds\": %d, \"baton\": %.6g, \"lammps\": %s, \"ratio\": %s, "
        "\"ratio_min\": %s, \"ratio_max\": %s}\n",
        op.c_str(), metric, comm.size(), Kokkos::DefaultExecutionSpace::name(), threads_per_rank(),
        c.rounds, c.baton, ref, rat, lo, hi);
  } else if (c.ratio > 0 && c.rounds > 1) {
    std::printf("%-14s %-18s %14.4g %14.4g %8.3f  %.3f-%.3f\n", op.c_str(), metric, c.baton,
                c.lammps, c.ratio, c.ratio_min, c.ratio_max);
  } else if (c.ratio > 0) {
    std::printf("%-14s %-18s %14.4g %14.4g %8.3f\n", op.c_str(), metric, c.baton, c.lammps,
                c.ratio);
  } else {
    std::printf("%-14s %-18s %14.4g %14s %8s\n", op.c_str(), metric, c.baton, "-", "-");
  }
  std::fflush(stdout);
}

void print_row(const baton::Communicator& comm, const Settings& settings, const std::string& op,
               const char* metric, double value, double lammps) {
  print_compared(comm, settings, op, metric, figures(value, lammps));
}

// One large system through `stage` (100 steps): its rate; `builds` gets the lists it built.
template <class Stage>
double one_system_rate(const Settings& settings, Stage& stage, const bs::HostSystem& system,
                       double& builds) {
  long steps = 0;
  const double s =
      time_stage(settings, stage, {system}, 100, steps, &stage.neighbour_lists(), &builds);
  return static_cast<double>(system.size()) * static_cast<double>(steps) / s;
}

// The same, printed alone: its rate and the lists it built.
template <class Stage>
void time_one_system(const baton::Communicator& comm, const Settings& settings, const char* op,
                     Stage& stage, const bs::HostSystem& system) {
  double builds = 0;
  print_row(comm, settings, op, "atom_steps_per_s",
            one_system_rate(settings, stage, system, builds), 0);
  print_row(comm, settings, op, "list_builds", builds, 0);
}

// 200 perturbed LJ55 clusters, and the same as one LAMMPS system: each cluster moved to a point of
// a grid 15 sigma apart (further than the cutoff), in an open box.
std::vector<bs::HostSystem> lj55_clusters() {
  std::vector<bs::HostSystem> out;
  for (int id = 0; id < 200; ++id)
    out.push_back(bd::perturbed_cluster(55, id, 1, 0.05, 1.122462048309373));
  return out;
}

bs::HostSystem side_by_side(const std::vector<bs::HostSystem>& clusters) {
  bs::HostSystem all;
  for (std::size_t k = 0; k < clusters.size(); ++k) {
    const double at[3] = {15.0 * (k % 6), 15.0 * (k / 6 % 6), 15.0 * (k / 36)};
    for (std::size_t i = 0; i < clusters[k].size(); ++i) {
      all.species.push_back(clusters[k].species[i]);
      for (std::size_t d = 0; d < 3; ++d)
        all.positions.push_back(clusters[k].positions[3 * i + d] + at[d]);
    }
  }
  return all;
}

// A system with Maxwell-Boltzmann velocities drawn by Baton (so LAMMPS starts from the same state).
bs::HostSystem with_velocities(bs::HostSystem s, double temperature, const bd::Units& units) {
  bs::SystemsBatch batch = load({s});
  bd::draw_velocities(batch, 0, 1, temperature, 12345, units);
  bs::SpeciesTable species;
  species.index(s.species.front());
  bs::HostSystem out = bs::copy_systems_to_host(batch, {0}, species)[0];
  out.cell = s.cell;
  out.pbc = s.pbc;
  return out;
}

double lammps_rate(const Lammps::Result& r) {
  double atom_steps = 0, seconds = 0;
  for (const auto& loop : r.loops) {
    atom_steps += static_cast<double>(loop.atoms) * static_cast<double>(loop.steps);
    seconds += loop.seconds;
  }
  return seconds > 0 ? atom_steps / seconds : 0;
}

std::string lj_lines(double cutoff, bool shift) {
  return "pair_style lj/cut " + std::to_string(cutoff) + "\npair_coeff 1 1 1.0 1.0 " +
         std::to_string(cutoff) + (shift ? "\npair_modify shift yes\n" : "\n");
}

}  // namespace

void run_dynamics(const baton::Communicator& comm, const Settings& settings) {
  const Lammps lammps;
  const bool have_eam = access(eam_file, R_OK) == 0;
  std::string dir;
  if (comm.rank() == 0 && lammps.found()) {
    std::string name = (std::filesystem::temp_directory_path() / "baton-bench-XXXXXX").string();
    if (mkdtemp(name.data()))  // a fresh directory of our own for LAMMPS' files
      dir = name;
  }
  const bool with_lammps = !dir.empty();
  const int rounds = settings.rounds;
  if (comm.rank() == 0 && !settings.json) {
    std::printf(
        "dynamics: Baton per rank (Kokkos %s, %d threads; median of %d) beside LAMMPS (%s, one "
        "thread), atom-steps per second; ratio = baton / lammps (higher is better)\n",
        Kokkos::DefaultExecutionSpace::name(), threads_per_rank(), settings.repeats,
        with_lammps ? lammps.executable().c_str() : "not found on PATH: Baton alone");
    if (rounds > 1)
      std::printf(
          "%d rounds of LAMMPS then Baton per case: the medians of each side, the rounds' median "
          "ratio and their range\n",
          rounds);
    std::printf("%-14s %-18s %14s %14s %8s%s\n", "op", "metric", "baton", "lammps", "ratio",
                rounds > 1 ? "  range" : "");
    std::printf("%s\n", std::string(72, '-').c_str());
  }
  const auto wanted = [&](const char* op) {
    return settings.cases.empty() ||
           std::find(settings.cases.begin(), settings.cases.end(), op) != settings.cases.end();
  };
  // LAMMPS runs on rank 0 while the others wait, so that it does not share the cores with Baton.
  const auto on_lammps = [&](const std::function<double()>& run) {
    double rate = 0;
    if (with_lammps)
      rate = run();
    baton::barrier(comm);
    return rate;
  };
  // One LAMMPS run of `input` (in `dir`), rated from its Loop time lines: a round's LAMMPS side.
  const auto lammps_case = [&](const char* name, std::string input) -> std::function<double()> {
    return [&, name, input = std::move(input)] {
      return on_lammps([&] { return lammps_rate(lammps.run(dir, name, input)); });
    };
  };

  // Clusters: FIRE and NVE.
  const std::vector<bs::HostSystem> clusters = lj55_clusters();
  bd::LennardJones lj3;
  lj3.cutoff = 3.0;
  const std::string lj55_setup =
      "units lj\natom_style atomic\nboundary f f f\nread_data lj55.data\n" + lj_lines(3.0, true) +
      "neighbor 0.3 bin\nneigh_modify every 1 delay 0 check yes\n";
  if (with_lammps)
    bs::write_lammps_data(dir + "/lj55.data", side_by_side(clusters), 20);
  if (wanted("fire_lj55")) {
    bd::FireStage fire(lj3);
    long fire_steps = 0;
    const Compared c = compare_rounds(
        rounds,
        lammps_case("fire_lj55",
                    lj55_setup + "min_style fire\nminimize 0.0 1.0e-6 100000 1000000\n"),
        [&] {
          const double s = time_stage(settings, fire, clusters, 1 << 30, fire_steps);
          return 55.0 * fire_steps / s;
        });
    print_row(comm, settings, "fire_lj55", "mean_steps", fire_steps / 200.0, 0);
    print_compared(comm, settings, "fire_lj55", "atom_steps_per_s", c);
  }

  // NVE, and the thermostats on the same batch: Langevin (BAOAB; LAMMPS: fix langevin + fix nve)
  // and CSVR, with what their step costs against an NVE step (the medians of Baton's seconds per
  // step over the rounds).
  bd::VerletOptions nve;
  nve.steps = 200;
  nve.temperature = 0.1;
  bd::VerletStage lj55_nve(lj3, nve);
  std::vector<double> nve_per_step;  // Baton's seconds per system-step, one per timing
  const auto nve_rate = [&] {
    long steps = 0;
    const double s = time_stage(settings, lj55_nve, clusters, 200, steps);
    nve_per_step.push_back(s / steps);
    return 55.0 * steps / s;
  };
  if (wanted("nve_lj55")) {
    const Compared c = compare_rounds(
        rounds,
        lammps_case("nve_lj55", lj55_setup + "velocity all create 0.1 4928459 loop geom\n"
                                             "fix 1 all nve\ntimestep 0.005\nrun 200\n"),
        nve_rate);
    print_compared(comm, settings, "nve_lj55", "atom_steps_per_s", c);
  }
  // A thermostat's step against an NVE step (NVE timed here when its own row was not asked for).
  const auto step_cost = [&](const char* op, const std::vector<double>& per_step) {
    if (nve_per_step.empty())
      nve_rate();
    print_row(comm, settings, op, "step_cost_vs_nve", median(per_step) / median(nve_per_step), 0);
  };
  if (wanted("langevin_lj55")) {
    bd::LangevinOptions langevin;
    langevin.steps = 200;
    langevin.temperature = 0.1;
    bd::LangevinStage lj55_langevin(lj3, langevin);
    std::vector<double> per_step;
    const Compared c = compare_rounds(
        rounds,
        lammps_case("langevin_lj55", lj55_setup +
                                         "velocity all create 0.1 4928459 loop geom\n"
                                         "fix 1 all nve\nfix 2 all langevin 0.1 0.1 1.0 48279\n"
                                         "timestep 0.005\nrun 200\n"),
        [&] {
          long steps = 0;
          const double s = time_stage(settings, lj55_langevin, clusters, 200, steps);
          per_step.push_back(s / steps);
          return 55.0 * steps / s;
        });
    print_compared(comm, settings, "langevin_lj55", "atom_steps_per_s", c);
    step_cost("langevin_lj55", per_step);
  }
  if (wanted("csvr_lj55")) {
    bd::CsvrOptions csvr;
    csvr.steps = 200;
    csvr.temperature = 0.1;
    csvr.tau = 0.5;
    // Debian's LAMMPS has no fix temp/csvr (the EXTRA-FIX package): Baton's figure alone.
    bd::CsvrStage lj55_csvr(lj3, csvr);
    long steps = 0;
    const double s = time_stage(settings, lj55_csvr, clusters, 200, steps);
    print_row(comm, settings, "csvr_lj55", "atom_steps_per_s", 55.0 * steps / s, 0);
    step_cost("csvr_lj55", {s / steps});
  }

  // NPT on a batch of small liquid cells: every step changes every cell (Baton alone).
  if (wanted("npt_lj256x16")) {
    bd::LennardJones lj;
    lj.cutoff = 2.5;
    std::vector<bs::HostSystem> cells;
    for (int k = 0; k < 16; ++k)
      cells.push_back(bd::fcc_crystal({4, 4, 4}, std::cbrt(4 / 0.8442), "Ar", k, 0.05, 5));
    bd::VerletOptions nve_cells;
    nve_cells.steps = 200;
    nve_cells.temperature = 1.44;
    bd::CrescaleOptions npt;
    npt.steps = 200;
    npt.temperature = 1.44;
    npt.pressure = 2.5;
    bd::VerletStage nve_stage(lj, nve_cells);
    bd::CrescaleStage npt_stage(lj, npt);
    long nve_cell_steps = 0, npt_steps = 0;
    double builds = 0;
    const double nve_cell_s = time_stage(settings, nve_stage, cells, 200, nve_cell_steps);
    const double npt_s = time_stage(settings, npt_stage, cells, 200, npt_steps,
                                    &npt_stage.neighbour_lists(), &builds);
    print_row(comm, settings, "npt_lj256x16", "atom_steps_per_s", 256.0 * npt_steps / npt_s, 0);
    print_row(comm, settings, "npt_lj256x16", "step_cost_vs_nve",
              (npt_s / npt_steps) / (nve_cell_s / nve_cell_steps), 0);
    print_row(comm, settings, "npt_lj256x16", "list_builds", builds / 16, 0);
  }

  // Periodic: the LJ liquid of bench/in.lj, 32,000 atoms.
  if (wanted("nve_lj_liquid")) {
    bd::LennardJones lj;
    lj.cutoff = 2.5;
    lj.shift = false;
    bd::VerletOptions p;
    p.steps = 100;
    const bs::HostSystem liquid = with_velocities(
        bd::fcc_crystal({20, 20, 20}, std::cbrt(4 / 0.8442), "Ar", 1), 1.44, bd::Units::lj());
    if (with_lammps)
      bs::write_lammps_data(dir + "/liquid.data", liquid);
    bd::VerletStage stage(lj, p);
    double builds = 0;
    const Compared c = compare_rounds(
        rounds,
        lammps_case("nve_lj_liquid",
                    "units lj\natom_style atomic\nread_data liquid.data\n" + lj_lines(2.5, false) +
                        "neighbor 0.3 bin\nneigh_modify delay 0 every 20 check no\nfix 1 all nve\n"
                        "timestep 0.005\nrun 100\n"),
        [&] { return one_system_rate(settings, stage, liquid, builds); });
    print_compared(comm, settings, "nve_lj_liquid", "atom_steps_per_s", c);
    print_row(comm, settings, "nve_lj_liquid", "list_builds", builds, 0);
  }

  // Copper with EAM: one crystal of 32,000 atoms, and 256 cells of 108 atoms.
  if (have_eam && (wanted("nve_cu_eam") || wanted("nve_cu108x256"))) {
    const bd::Eam eam(eam_file);
    bd::VerletOptions p;
    p.units = bd::Units::metal();
    p.dt = 0.001;
    p.steps = 100;
    p.neighbours.skin = 1.0;  // bench/in.eam's
    const std::string eam_setup = "units metal\natom_style atomic\n";
    const std::string eam_run = "pair_style eam\npair_coeff 1 1 " + std::string(eam_file) +
                                "\nneighbor 1.0 bin\nfix 1 all nve\ntimestep 0.001\nrun 100\n";
    const auto copper = [&](int n, std::int64_t id) {
      bs::HostSystem s = bd::fcc_crystal({n, n, n}, 3.615, "Cu", id, 0.05, 3);
      s.masses.assign(s.size(), eam.mass("Cu"));
      return with_velocities(s, 300, p.units);
    };
    bd::VerletStage stage(eam, p);
    if (wanted("nve_cu_eam")) {
      const bs::HostSystem crystal = copper(20, 1);
      if (with_lammps)
        bs::write_lammps_data(dir + "/cu.data", crystal);
      double builds = 0;
      const Compared c = compare_rounds(
          rounds, lammps_case("nve_cu_eam", eam_setup + "read_data cu.data\n" + eam_run),
          [&] { return one_system_rate(settings, stage, crystal, builds); });
      print_compared(comm, settings, "nve_cu_eam", "atom_steps_per_s", c);
      print_row(comm, settings, "nve_cu_eam", "list_builds", builds, 0);
    }
    if (wanted("nve_cu108x256")) {
      std::vector<bs::HostSystem> cells;
      for (int k = 0; k < 256; ++k)
        cells.push_back(copper(3, k));
      std::string input;
      if (with_lammps)
        for (int k = 0; k < 256; ++k) {
          bs::write_lammps_data(dir + "/cell" + std::to_string(k) + ".data",
                                cells[static_cast<std::size_t>(k)]);
          input +=
              "clear\n" + eam_setup + "read_data cell" + std::to_string(k) + ".data\n" + eam_run;
        }
      const Compared c = compare_rounds(
          rounds,
          [&] {
            // The whole process: 256 setups and runs, one after another, as a script would do.
            return on_lammps([&] {
              return 256.0 * 108 * 100 / lammps.run(dir, "nve_cu108x256", input).wall_seconds;
            });
          },
          [&] {
            long steps = 0;
            const double s = time_stage(settings, stage, cells, 100, steps);
            return 108.0 * steps / s;
          });
      print_compared(comm, settings, "nve_cu108x256", "atom_steps_per_s", c);
    }
  } else if (!have_eam && comm.rank() == 0 && !settings.json) {
    std::printf("(no %s: the EAM cases are skipped; Debian: lammps-data)\n", eam_file);
  }
  if (with_lammps) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
}

namespace {
constexpr const char* case_names[] = {"fire_lj55",  "nve_lj55",     "langevin_lj55",
                                      "csvr_lj55",  "npt_lj256x16", "nve_lj_liquid",
                                      "nve_cu_eam", "nve_cu108x256"};
}  // namespace

std::vector<std::string> split_cases(const std::string& list) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= list.size() && !list.empty()) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    out.push_back(list.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

bool is_dynamics_case(const std::string& name) {
  for (const char* c : case_names)
    if (name == c)
      return true;
  return false;
}

std::string dynamics_cases() {
  std::string out;
  for (const char* c : case_names)
    out += (out.empty() ? "" : ", ") + std::string(c);
  return out;
}

// baton-bench scale: Baton alone at the sizes a GPU is judged at (no LAMMPS beside it: those sizes
// are beyond a serial LAMMPS run in a bench), per rank. Cases with more atoms than --max-atoms are
// skipped, so that a CPU can run the small end.
//   nve_lj55_bN    N = 10^3, 10^4, 10^5 perturbed LJ55 clusters (rc 3), 100 NVE steps each
//   nve_lj_32k     bench/in.lj's liquid (as nve_lj_liquid): 32,000 atoms, 100 NVE steps
//   fire_lj_32k    FIRE on that fcc lattice with 5% jitter, 32,000 atoms, 100 FIRE steps
//   nve_lj_1m      bench/in.lj's liquid at 64^3 unit cells: 1,048,576 atoms, 100 NVE steps
void run_scale(const baton::Communicator& comm, const Settings& settings) {
  if (comm.rank() == 0 && !settings.json) {
    std::printf(
        "scale: Baton per rank alone (Kokkos %s, concurrency %d; median of %d), atom-steps per "
        "second; cases over --max-atoms %ld are skipped\n",
        Kokkos::DefaultExecutionSpace::name(), threads_per_rank(), settings.repeats,
        settings.max_atoms);
    std::printf("%-14s %-18s %14s %14s %8s\n", "op", "metric", "baton", "-", "-");
    std::printf("%s\n", std::string(72, '-').c_str());
  }
  const auto fits = [&](const char* op, long atoms) {
    if (atoms <= settings.max_atoms)
      return true;
    if (comm.rank() == 0 && !settings.json)
      std::printf("%-14s skipped: %ld atoms > --max-atoms\n", op, atoms);
    return false;
  };
  // Batches first: on a GPU they are the quick rows, and a run cut short still has them.
  bd::LennardJones lj3;
  lj3.cutoff = 3.0;
  bd::VerletOptions clusters_nve;
  clusters_nve.steps = 100;
  clusters_nve.temperature = 0.1;
  bd::VerletStage batch_stage(lj3, clusters_nve);
  for (const long n : {1000L, 10000L, 100000L}) {
    const std::string op = "nve_lj55_b" + std::to_string(n);
    if (!fits(op.c_str(), 55 * n))
      continue;
    std::vector<bs::HostSystem> batch;
    batch.reserve(static_cast<std::size_t>(n));
    for (long id = 0; id < n; ++id)
      batch.push_back(bd::perturbed_cluster(55, id, 1, 0.05, 1.122462048309373));
    long steps = 0;
    const double s = time_stage(settings, batch_stage, batch, 100, steps);
    print_row(comm, settings, op, "atom_steps_per_s", 55.0 * static_cast<double>(steps) / s, 0);
  }
  const double density_a = std::cbrt(4 / 0.8442);  // bench/in.lj's fcc at density 0.8442
  bd::LennardJones lj;
  lj.cutoff = 2.5;
  lj.shift = false;
  bd::VerletOptions nve;
  nve.steps = 100;
  const auto liquid_row = [&](int n, const char* op) {
    if (!fits(op, 4L * n * n * n))
      return;
    const bs::HostSystem liquid =
        with_velocities(bd::fcc_crystal({n, n, n}, density_a, "Ar", 1), 1.44, bd::Units::lj());
    bd::VerletStage stage(lj, nve);
    time_one_system(comm, settings, op, stage, liquid);
  };
  liquid_row(20, "nve_lj_32k");
  if (fits("fire_lj_32k", 32000)) {
    bd::FireStage fire(lj);
    long steps = 0;
    const double s = time_stage(
        settings, fire, {bd::fcc_crystal({20, 20, 20}, density_a, "Ar", 1, 0.05, 7)}, 100, steps);
    print_row(comm, settings, "fire_lj_32k", "atom_steps_per_s", 32000.0 * steps / s, 0);
  }
  liquid_row(64, "nve_lj_1m");  // last: the longest
}

// baton-bench models: a TorchScript model's NVE steps beside a built-in potential's, per rank.
//   nve_lj55_torch  --lj-model (Lennard-Jones, rc 2.5, shifted: tests/models/make_models.py lj.pt)
//                   on 64 LJ55 clusters, 100 steps, beside the built-in LennardJones on the same
//                   batch: the model path's cost (ratio = model / built-in; lower is slower)
//   nve_model_bN    --model (any energy-only model) on N = 1, 4, 16, 64 LJ55 clusters,
//                   100 steps: throughput against batch size
void run_models(const baton::Communicator& comm, const Settings& settings) {
  if (comm.rank() == 0 && !settings.json) {
    std::printf(
        "models: TorchScript models per rank (median of %d), atom-steps per second; ratio = model "
        "/ built-in on the same batch\n",
        settings.repeats);
    std::printf("%-14s %-18s %14s %14s %8s\n", "op", "metric", "model", "built-in", "ratio");
    std::printf("%s\n", std::string(72, '-').c_str());
  }
  std::vector<bs::HostSystem> clusters = lj55_clusters();
  clusters.resize(64);
  bd::VerletOptions nve;
  nve.steps = 100;
  nve.temperature = 0.1;
  const auto load_model = [](const std::string& file) {
    baton::models::TorchOptions options;
    options.file = file;
    return bd::Model(baton::models::load_torch_model(options));
  };
  const auto rate = [&](bd::Stage& stage, const std::vector<bs::HostSystem>& systems) {
    long steps = 0;
    const double seconds = time_stage(settings, stage, systems, 100, steps);
    return 55.0 * static_cast<double>(steps) / seconds;
  };
  if (!settings.lj_model.empty()) {
    bd::LennardJones lj;
    lj.cutoff = 2.5;
    bd::VerletStage<bd::LennardJones> builtin(lj, nve);
    bd::VerletStage<bd::Model> model(load_model(settings.lj_model), nve);
    const double reference = rate(builtin, clusters);
    print_row(comm, settings, "nve_lj55_torch", "atom_steps_per_s", rate(model, clusters),
              reference);
  }
  if (!settings.model.empty()) {
    bd::VerletStage<bd::Model> model(load_model(settings.model), nve);
    for (const int n : {1, 4, 16, 64}) {
      const std::vector<bs::HostSystem> batch(clusters.begin(), clusters.begin() + n);
      print_row(comm, settings, "nve_model_b" + std::to_string(n), "atom_steps_per_s",
                rate(model, batch), 0);
    }
  }
}

}  // namespace bench
