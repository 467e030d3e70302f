// Thermostats against the canonical ensemble: the kinetic energy's mean and variance over a batch
// of independent periodic Lennard-Jones systems match N_f kT / 2 and N_f (kT)^2 / 2 within three
// standard errors. The standard errors come from the spread between the systems (independent by
// construction: their own velocities and noise), not from assumed autocorrelation times.
#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <baton/dynamics/csvr.hpp>
#include <baton/dynamics/lattice.hpp>
#include <baton/dynamics/lennard_jones.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "dynamics_batch.hpp"
#include "mpi_doctest.hpp"

namespace bd = baton::dynamics;
namespace bs = baton::systems;
using baton::test::Batch;

namespace {

/// Mean and its standard error of `x`.
struct Estimate {
  double mean = 0, error = 0;
};
Estimate estimate(const std::vector<double>& x) {
  double m = 0;
  for (double v : x)
    m += v / static_cast<double>(x.size());
  double s2 = 0;
  for (double v : x)
    s2 += (v - m) * (v - m) / static_cast<double>(x.size() - 1);
  return {m, std::sqrt(s2 / static_cast<double>(x.size()))};
}

/// Kinetic energy of each system of `b` (masses 1, LJ units).
std::vector<double> kinetic(const Batch& b) {
  std::vector<double> out;
  for (const auto& s : b.systems()) {
    double k = 0;
    for (double v : s.velocities)
      k += 0.5 * v * v;
    out.push_back(k);
  }
  return out;
}

}  // namespace

TEST_CASE(
    "chi_squared: the mean and variance of a chi-squared distribution within 3 standard "
    "errors") {
  // 20000 deviates per case (keys: seed 7, system 1, steps 0..19999); for dof k, the mean's
  // standard error is sqrt(2 k / n) and the variance's relative one sqrt((2 + 12 / k) / n).
  const int n = 20000;
  for (const int dof : {2, 3, 17, 320}) {
    double sum = 0, sum2 = 0;
    for (int t = 0; t < n; ++t) {
      const double x = bd::chi_squared(dof, 7, 1, t);
      sum += x;
      sum2 += x * x;
    }
    const double mean = sum / n, variance = (sum2 - n * mean * mean) / (n - 1);
    INFO("dof " << dof << ": mean " << mean << ", variance " << variance);
    CHECK(std::abs(mean - dof) <= 3 * std::sqrt(2.0 * dof / n));
    CHECK(std::abs(variance / (2.0 * dof) - 1) <= 3 * std::sqrt((2 + 12.0 / dof) / n));
  }
}

TEST_CASE("CSVR samples the canonical kinetic energy: mean and variance within 3 standard errors") {
  // 64 liquid LJ systems of 108 atoms (fcc 3x3x3 at density 0.8442, melting at T = 1), seeds 1..64
  // for the lattice jitter; CSVR seed 2024, tau 0.1, dt 0.005. 400 steps of equilibration, then
  // one sample every 50 steps (0.25 time units, against tau = 0.1) for 4000 steps: 80 samples per
  // system. N_f = 3 * 108 - 3 = 321 (the centre of mass does not move).
  const int systems = 64, samples = 80, every = 50;
  const double a = std::cbrt(4 / 0.8442), temperature = 1.0;
  std::vector<bs::HostSystem> input;
  for (int s = 0; s < systems; ++s)
    input.push_back(
        bd::fcc_crystal({3, 3, 3}, a, "Ar", s, 0.02, static_cast<std::uint64_t>(s + 1)));
  bd::CsvrOptions p;
  p.dt = 0.005;
  p.steps = 400 + samples * every;
  p.temperature = temperature;
  p.tau = 0.1;
  p.seed = 2024;
  bd::LennardJones lj;
  lj.cutoff = 2.5;
  bd::CsvrStage<bd::LennardJones> stage(lj, p);
  Batch b(input);
  stage.enter(b.batch, 0, systems);
  stage.advance(b.batch, 400);
  std::vector<std::vector<double>> k(systems);
  for (int n = 0; n < samples; ++n) {
    stage.advance(b.batch, every);
    const std::vector<double> now = kinetic(b);
    for (int s = 0; s < systems; ++s)
      k[static_cast<std::size_t>(s)].push_back(now[static_cast<std::size_t>(s)]);
  }
  const double nf = 3 * 108 - 3;
  std::vector<double> means, variances;
  for (const auto& ks : k) {
    const Estimate e = estimate(ks);
    means.push_back(e.mean);
    variances.push_back(e.error * e.error * static_cast<double>(ks.size()));  // sample variance
  }
  const Estimate mean = estimate(means), variance = estimate(variances);
  const double want_mean = nf * temperature / 2, want_variance = nf * temperature * temperature / 2;
  MESSAGE("CSVR kinetic energy: mean " << mean.mean << " +- " << mean.error << " (canonical "
                                       << want_mean << "), variance " << variance.mean << " +- "
                                       << variance.error << " (canonical " << want_variance << ")");
  CHECK(std::abs(mean.mean - want_mean) <= 3 * mean.error);
  CHECK(std::abs(variance.mean - want_variance) <= 3 * variance.error);
  // The error bars resolve what a wrong thermostat gets wrong: Berendsen's variance is a few
  // percent of the canonical one.
  CHECK(variance.error < 0.1 * want_variance);
  for (const auto& s : b.systems())
    CHECK_FALSE(s.failed);
}
