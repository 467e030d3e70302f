// Dynamics kernels: FIRE and NVE on 200 perturbed LJ55 Mackay icosahedra (LJ cutoff 3.0, shifted),
// each figure beside LAMMPS on the same setup. Every rank runs the suite alone (a per-rank figure);
// rank 0 prints.
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <baton/dynamics/clusters.hpp>
#include <baton/dynamics/fire.hpp>
#include <baton/dynamics/host_transfer.hpp>
#include <baton/dynamics/verlet.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "measure.hpp"

namespace bench {

namespace {

namespace bd = baton::dynamics;

constexpr int n_systems = 200;
constexpr int n_atoms = 55;
constexpr double cutoff = 3.0;
constexpr long nve_steps = 200;

// LAMMPS (pair lj/cut 3.0 with pair_modify shift yes, min_style fire / fix nve) on this machine,
// one core, the same 200 clusters.
constexpr double lammps_fire_atom_steps = 5.3e6;
constexpr double lammps_nve_atom_steps = 8.8e6;
constexpr double lammps_nve_pairs = 1.9e8;

std::vector<bd::HostSystem> clusters() {
  std::vector<bd::HostSystem> out;
  for (int id = 0; id < n_systems; ++id)
    out.push_back(bd::perturbed_cluster(n_atoms, id, 1, 0.05, 1.122462048309373));
  return out;
}

bd::SystemsBatch load(const std::vector<bd::HostSystem>& systems) {
  bd::SystemsBatch batch({n_systems, n_systems * n_atoms}, 1);
  bd::SpeciesTable species;
  bd::append_systems(batch, systems, species);
  return batch;
}

// Pairs closer than the cutoff, summed over the batch's systems (host).
double pairs_within_cutoff(const bd::SystemsBatch& batch) {
  const auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.positions);
  const auto offset = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.offset);
  const auto count = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.count);
  double pairs = 0;
  for (int s = 0; s < batch.num_systems(); ++s)
    for (int i = offset(s); i < offset(s) + count(s); ++i)
      for (int j = i + 1; j < offset(s) + count(s); ++j) {
        double r2 = 0;
        for (int d = 0; d < 3; ++d)
          r2 += (x(i, d) - x(j, d)) * (x(i, d) - x(j, d));
        pairs += r2 < cutoff * cutoff ? 1 : 0;
      }
  return pairs;
}

long total_steps(const bd::SystemsBatch& batch) {
  const auto steps = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.steps);
  long sum = 0;
  for (int s = 0; s < batch.num_systems(); ++s)
    sum += static_cast<long>(steps(s));
  return sum;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

void print_row(const baton::Communicator& comm, const Settings& settings, const char* op,
               const char* metric, double value, double reference) {
  if (comm.rank() != 0)
    return;
  const double ratio = reference > 0 ? value / reference : 0;
  if (settings.json) {
    char ref[64] = "null", rat[64] = "null";
    if (reference > 0) {
      std::snprintf(ref, sizeof ref, "%.6g", reference);
      std::snprintf(rat, sizeof rat, "%.4f", ratio);
    }
    std::printf(
        "{\"op\": \"%s\", \"metric\": \"%s\", \"ranks\": %d, \"systems\": %d, \"atoms\": %d, "
        "\"value\": %.6g, \"lammps\": %s, \"ratio\": %s}\n",
        op, metric, comm.size(), n_systems, n_atoms, value, ref, rat);
  } else if (reference > 0) {
    std::printf("%-12s %-22s %14.4g %14.4g %8.3f\n", op, metric, value, reference, ratio);
  } else {
    std::printf("%-12s %-22s %14.4g %14s %8s\n", op, metric, value, "-", "-");
  }
  std::fflush(stdout);
}

}  // namespace

void run_dynamics(const baton::Communicator& comm, const Settings& settings) {
  bd::LennardJones lj;
  lj.cutoff = cutoff;
  lj.shift = true;
  const std::vector<bd::HostSystem> systems = clusters();
  if (comm.rank() == 0 && !settings.json) {
    std::printf(
        "dynamics: %d perturbed LJ%d icosahedra, cutoff %.1f shifted, per rank, median of %d; "
        "ratio = baton / LAMMPS (higher is better)\n",
        n_systems, n_atoms, cutoff, settings.repeats);
    std::printf("%-12s %-22s %14s %14s %8s\n", "op", "metric", "baton", "lammps", "ratio");
    std::printf("%s\n", std::string(74, '-').c_str());
  }

  // FIRE from the perturbed clusters to fmax 1e-6: wall time includes entry (first forces).
  bd::FireStage fire(lj);
  std::vector<double> fire_seconds;
  long fire_steps = 0;
  for (int r = 0; r < settings.repeats + 1; ++r) {  // the first run warms up
    bd::SystemsBatch batch = load(systems);
    Kokkos::fence();
    const double start = MPI_Wtime();
    fire.enter(batch, 0, batch.num_systems());
    fire.advance(batch, static_cast<int>(std::min<long>(fire.step_limit(), 1L << 30)));
    Kokkos::fence();
    if (r > 0)
      fire_seconds.push_back(MPI_Wtime() - start);
    fire_steps = total_steps(batch);
  }
  const double fire_s = median(fire_seconds);
  print_row(comm, settings, "fire_lj55", "wall_s", fire_s, 0);
  print_row(comm, settings, "fire_lj55", "total_steps", static_cast<double>(fire_steps), 0);
  print_row(comm, settings, "fire_lj55", "mean_steps", static_cast<double>(fire_steps) / n_systems,
            0);
  print_row(comm, settings, "fire_lj55", "atom_steps_per_s", fire_steps * n_atoms / fire_s,
            lammps_fire_atom_steps);

  // NVE: nve_steps velocity-Verlet steps (dt 0.005) from T = 0.1 velocities; entry not timed.
  bd::VerletParams params;
  params.steps = nve_steps;
  params.temperature = 0.1;
  bd::VerletStage nve(lj, params);
  std::vector<double> nve_seconds;
  double pairs = 0;
  for (int r = 0; r < settings.repeats + 1; ++r) {
    bd::SystemsBatch batch = load(systems);
    nve.enter(batch, 0, batch.num_systems());
    const double pairs_before = pairs_within_cutoff(batch);
    Kokkos::fence();
    const double start = MPI_Wtime();
    nve.advance(batch, static_cast<int>(nve_steps));
    Kokkos::fence();
    if (r > 0)
      nve_seconds.push_back(MPI_Wtime() - start);
    pairs = 0.5 * (pairs_before + pairs_within_cutoff(batch));  // per step, start and end mean
  }
  const double nve_s = median(nve_seconds);
  const double atom_steps = static_cast<double>(n_systems) * n_atoms * nve_steps;
  print_row(comm, settings, "nve_lj55", "atom_steps_per_s", atom_steps / nve_s,
            lammps_nve_atom_steps);
  print_row(comm, settings, "nve_lj55", "pairs_per_s", pairs * nve_steps / nve_s, lammps_nve_pairs);
}

}  // namespace bench
