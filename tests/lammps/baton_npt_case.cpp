// baton_npt_case EAM_FILE SYSTEMS WARMUP STEPS EVERY: Cu (the EAM file's first element), fcc 3x3x3
// of a = 3.615 A (108 atoms), at 300 K and 1 bar with Baton's npt stage (C-rescale with CSVR: tau
// 0.1 ps, tau_p 1 ps, compressibility 1.1 A^3/eV, dt 0.001 ps), SYSTEMS independent copies
// (their own velocities and noise). After WARMUP steps, the volume every EVERY steps for STEPS
// steps. Prints, for tests/lammps/compare_npt.py:
//   volume <mean volume per atom> <its standard error>
//   compressibility <var V / (kT <V>), 1/bar> <its standard error>
// with standard errors from the spread between the systems.
#include <Kokkos_Core.hpp>
#include <baton/dynamics/crescale.hpp>
#include <baton/dynamics/eam.hpp>
#include <baton/dynamics/lattice.hpp>
#include <baton/systems/cell.hpp>
#include <baton/systems/host_transfer.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

namespace bd = baton::dynamics;
namespace bs = baton::systems;

namespace {

/// Mean and standard error of independent values.
void estimate(const std::vector<double>& x, double& mean, double& error) {
  mean = 0;
  for (double v : x)
    mean += v / static_cast<double>(x.size());
  double s2 = 0;
  for (double v : x)
    s2 += (v - mean) * (v - mean) / static_cast<double>(x.size() - 1);
  error = std::sqrt(s2 / static_cast<double>(x.size()));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s EAM_FILE SYSTEMS WARMUP STEPS EVERY\n", argv[0]);
    return 2;
  }
  Kokkos::ScopeGuard kokkos(argc, argv);
  try {
    const bd::Eam eam(argv[1]);
    const int systems = std::atoi(argv[2]), warmup = std::atoi(argv[3]);
    const int steps = std::atoi(argv[4]), every = std::atoi(argv[5]);
    const std::string element = eam.elements().front();
    std::vector<bs::HostSystem> in;
    int atoms = 0;
    for (int s = 0; s < systems; ++s) {
      in.push_back(bd::fcc_crystal({3, 3, 3}, 3.615, element, s));
      in.back().masses.assign(in.back().size(), eam.mass(element));
      atoms += static_cast<int>(in.back().size());
    }
    bd::CrescaleOptions p;
    p.units = bd::Units::metal();
    p.dt = 0.001;
    p.temperature = 300;
    p.tau = 0.1;
    p.pressure = 1 / p.units.nktv2p;
    p.tau_p = 1;
    p.compressibility = 1.1;
    p.seed = 2026;
    p.neighbours.all_pairs_below = 200;  // the cell changes every step: all pairs beat lists here
    p.steps = warmup + steps;
    bd::CrescaleStage<bd::Eam> npt(eam, p);
    bs::SpeciesTable species;
    bs::SystemsBatch batch({systems, atoms}, 1);
    bs::append_systems(batch, in, species);
    npt.enter(batch, 0, systems);
    npt.advance(batch, warmup);
    std::vector<int> slots;
    for (int s = 0; s < systems; ++s)
      slots.push_back(s);
    std::vector<std::vector<double>> volumes(static_cast<std::size_t>(systems));
    for (int k = 0; k < steps / every; ++k) {
      npt.advance(batch, every);
      const std::vector<bs::HostSystem> now = bs::copy_systems_to_host(batch, slots, species);
      for (std::size_t s = 0; s < now.size(); ++s) {
        if (now[s].failed)
          throw std::runtime_error("system " + std::to_string(s) + " failed: " + now[s].failure);
        volumes[s].push_back(bs::cell_volume(now[s].cell) / static_cast<double>(now[s].size()));
      }
    }
    std::vector<double> means;
    for (const auto& v : volumes) {
      double m = 0;
      for (double x : v)
        m += x / static_cast<double>(v.size());
      means.push_back(m);
    }
    double mean = 0, mean_error = 0;
    estimate(means, mean, mean_error);
    // Each system's variance of V (total, N atoms) about the grand mean, over kT <V>: 1/bar.
    const double kt = p.units.boltz * p.temperature, n = 108;
    std::vector<double> kappa;
    for (const auto& v : volumes) {
      double var = 0;
      for (double x : v)
        var += (x - mean) * (x - mean) * n * n / static_cast<double>(v.size());
      kappa.push_back(var / (kt * mean * n) / p.units.nktv2p);
    }
    double k = 0, k_error = 0;
    estimate(kappa, k, k_error);
    std::printf("volume %.10g %.10g\ncompressibility %.6g %.6g\n", mean, mean_error, k, k_error);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "baton_npt_case: %s\n", e.what());
    return 1;
  }
  return 0;
}
