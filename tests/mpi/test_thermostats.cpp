// Thermostats against the canonical ensemble: the kinetic energy's mean and variance over a batch
// of independent periodic Lennard-Jones systems match N_f kT / 2 and N_f (kT)^2 / 2 within three
// standard errors. The standard errors come from the spread between the systems (independent by
// construction: their own velocities and noise), not from assumed autocorrelation times. Langevin
// (BAOAB) checks the mean temperature of a batch of clusters, with its error bar stated there.
#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <baton/dynamics/clusters.hpp>
#include <baton/dynamics/csvr.hpp>
#include <baton/dynamics/langevin.hpp>
#include <baton/dynamics/lattice.hpp>
#include <baton/dynamics/lennard_jones.hpp>
#include <baton/dynamics/nose_hoover.hpp>
#include <baton/dynamics/random.hpp>
#include <baton/dynamics/verlet.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dynamics_batch.hpp"
#include "estimate.hpp"
#include "mpi_doctest.hpp"

namespace bd = baton::dynamics;
namespace bs = baton::systems;
using baton::test::Batch;
using baton::test::Estimate;
using baton::test::estimate;

namespace {

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

TEST_CASE("normal_quantile: Phi of it is p, to rounding, from the far tails to the middle") {
  // Phi(x) = erfc(-x / sqrt 2) / 2 (the C library's erfc, independent of AS 241). Relative error
  // at most 1e-13 in p, for p from 1e-16 to 0.99 (AS 241's 1e-16 in x is |x|^2 times that in p
  // in the far tail), and exact symmetry for the uniforms random_normal3 draws, (k + 1/2) / 2^52:
  // x(1 - u) = -x(u); the smallest and largest of them give finite values.
  double worst = 0;
  for (double p = 1e-16; p < 0.99; p = p < 0.5 ? p * 1.37 : p + 0.0123) {
    const double x = bd::detail::normal_quantile(p);
    worst = std::max(worst, std::abs(0.5 * std::erfc(-x / std::sqrt(2.0)) - p) / p);
  }
  INFO("largest relative error in p: " << worst);
  CHECK(worst < 1e-13);
  CHECK(bd::detail::normal_quantile(0.5) == 0.0);
  for (std::uint64_t k : {std::uint64_t{0}, std::uint64_t{1} << 40, (std::uint64_t{1} << 51) - 7}) {
    const double u = bd::detail::to_open_unit(k << 12);
    const double w = bd::detail::to_open_unit(((std::uint64_t{1} << 52) - 1 - k) << 12);
    CHECK(u + w == 1.0);
    CHECK(bd::detail::normal_quantile(w) == -bd::detail::normal_quantile(u));
    CHECK(std::isfinite(bd::detail::normal_quantile(u)));
  }
}

TEST_CASE("log_positive: the C library's log to within one unit in the last place") {
  // The normal quantile's tails take ln of p or 1 - p in [1.1e-16, 0.075]; log_positive is for
  // any positive normal double. Checked on 200,000 values spread over each range (geometric
  // steps, so every binade and mantissa region is hit): at most 1 ulp apart from std::log, and
  // exact at 1 and at powers of 2 (ln 2^e = e ln 2 to rounding: within 1 ulp).
  const auto ulps = [](double a, double b) {
    return std::abs(a - b) / (std::nextafter(std::abs(b), 1e308) - std::abs(b));
  };
  double worst_tail = 0, worst_all = 0;
  for (double x = 1.1e-16; x <= 0.075; x *= 1.000367)
    worst_tail = std::max(worst_tail, ulps(bd::detail::log_positive(x), std::log(x)));
  for (double x = 1e-300; x < 1e300; x *= 1.00697)
    worst_all = std::max(worst_all, ulps(bd::detail::log_positive(x), std::log(x)));
  INFO("largest difference: " << worst_tail << " ulp in the tails' range, " << worst_all
                              << " ulp over 1e-300 to 1e300");
  CHECK(worst_tail <= 1.0);
  CHECK(worst_all <= 1.0);
  CHECK(bd::detail::log_positive(1.0) == 0.0);
  for (int e = -1000; e <= 1000; e += 37)
    CHECK(ulps(bd::detail::log_positive(std::ldexp(1.0, e)), std::log(std::ldexp(1.0, e))) <= 1.0);
}

TEST_CASE("random_normal3_block gives random_normal3's numbers, bit for bit, tails included") {
  const std::uint64_t key = bd::random_key(5, 3, 9);
  int differ = 0, tails = 0;
  double out[3 * bd::normal3_block];
  for (const int n : {bd::normal3_block, 1, 17}) {
    for (std::int64_t first = 0; first < 4000; first += n) {
      bd::random_normal3_block(key, first, n, out);
      for (int k = 0; k < n; ++k) {
        const bd::Normal3 z = bd::random_normal3(key, first + k);
        const double c[3] = {z.x, z.y, z.z};
        for (int d = 0; d < 3; ++d) {
          differ += out[3 * k + d] == c[d] ? 0 : 1;
          tails += std::abs(c[d]) > 1.4395 ? 1 : 0;  // |p - 1/2| > 0.425
        }
      }
    }
  }
  CHECK(differ == 0);
  CHECK(tails > 1000);  // the tails' path was taken (about 15% of 3 x 3 x 4000 draws)
}

TEST_CASE("Langevin's host block step gives the per-atom (device) step's numbers, bit for bit") {
  // 50 atoms of mixed masses, 3 of them fixed, through LangevinUpdate::baoa_block (the host's
  // path) and through baoa with random_normal3 per atom (the GPU's): the same positions and
  // velocities, bit for bit; with AVX2 (where the CPU has it) the same again.
  bd::LangevinOptions o;
  o.temperature = 0.7;
  o.friction = 2.0;
  const bd::LangevinUpdate u(o);
  const int n = 50;
  const std::uint64_t key = bd::random_key(11, 2, 40);
  std::vector<double> x(3 * n), v(3 * n), f(3 * n), m(n), moves(n);
  for (int i = 0; i < n; ++i) {
    m[i] = 1.0 + 0.37 * (i % 5);
    moves[i] = i % 17 == 3 ? 0.0 : 1.0;
    for (int d = 0; d < 3; ++d) {
      x[3 * i + d] = 0.1 * i + d;
      v[3 * i + d] = moves[i] * std::sin(1.3 * i + d);
      f[3 * i + d] = moves[i] * std::cos(0.7 * i - d);  // a fixed atom: no force (stages zero it)
    }
  }
  auto x_atom = x, v_atom = v, x_block = x, v_block = v;
  for (int i = 0; i < n; ++i) {
    const bd::Normal3 z = bd::random_normal3(key, 7 + i);
    const double noise[3] = {z.x, z.y, z.z};
    u.baoa(m[i], moves[i], noise, &x_atom[3 * i], &v_atom[3 * i], &f[3 * i]);
  }
  u.baoa_block(key, 7, n, x_block.data(), v_block.data(), f.data(), m.data(), moves.data());
  CHECK(x_block == x_atom);
  CHECK(v_block == v_atom);
  for (int i = 0; i < n; ++i)
    if (moves[i] == 0.0)
      for (int d = 0; d < 3; ++d)
        CHECK(v_block[3 * i + d] == 0.0);  // a fixed atom gets no noise: it stays put
#if BATON_AVX2_DISPATCH
  if (bd::detail::host_has_avx2()) {
    auto x2 = x, v2 = v;
    u.baoa_block_avx2(key, 7, n, x2.data(), v2.data(), f.data(), m.data(), moves.data());
    CHECK(x2 == x_atom);
    CHECK(v2 == v_atom);
  }
#endif
}

TEST_CASE("random_normal3: three independent standard normals per atom, within 3 standard errors") {
  // 60000 atoms' draws (key: seed 5, system 3, step 9). For each component the mean's standard
  // error is 1/sqrt(n), the variance's sqrt(2/n), the fourth moment's sqrt(96/n) (it is 3), a
  // correlation's 1/sqrt(n), and that of a product of squares sqrt(8/n) (it is 1 for independent
  // normals); the fraction beyond 2 and 3 standard deviations (both sides, Phi from erfc) has
  // the binomial standard error sqrt(P (1 - P) / n).
  const int n = 60000;
  const std::uint64_t key = bd::random_key(5, 3, 9);
  double m[3] = {0, 0, 0}, m2[3] = {0, 0, 0}, m4[3] = {0, 0, 0}, xy = 0, xz = 0, yz = 0;
  double xxyy = 0, xxzz = 0, yyzz = 0, beyond2[3] = {0, 0, 0}, beyond3[3] = {0, 0, 0};
  for (int a = 0; a < n; ++a) {
    const bd::Normal3 z = bd::random_normal3(key, a);
    const double c[3] = {z.x, z.y, z.z};
    for (int d = 0; d < 3; ++d) {
      m[d] += c[d] / n;
      m2[d] += c[d] * c[d] / n;
      m4[d] += c[d] * c[d] * c[d] * c[d] / n;
      beyond2[d] += std::abs(c[d]) > 2 ? 1.0 / n : 0.0;
      beyond3[d] += std::abs(c[d]) > 3 ? 1.0 / n : 0.0;
    }
    xy += z.x * z.y / n;
    xz += z.x * z.z / n;
    yz += z.y * z.z / n;
    xxyy += z.x * z.x * z.y * z.y / n;
    xxzz += z.x * z.x * z.z * z.z / n;
    yyzz += z.y * z.y * z.z * z.z / n;
  }
  const double p2 = std::erfc(2 / std::sqrt(2.0)), p3 = std::erfc(3 / std::sqrt(2.0));
  for (int d = 0; d < 3; ++d) {
    INFO("component " << d << ": mean " << m[d] << ", second moment " << m2[d] << ", fourth "
                      << m4[d] << ", beyond 2 " << beyond2[d] << " (" << p2 << "), beyond 3 "
                      << beyond3[d] << " (" << p3 << ")");
    CHECK(std::abs(m[d]) <= 3 / std::sqrt(double(n)));
    CHECK(std::abs(m2[d] - 1) <= 3 * std::sqrt(2.0 / n));
    CHECK(std::abs(m4[d] - 3) <= 3 * std::sqrt(96.0 / n));
    CHECK(std::abs(beyond2[d] - p2) <= 3 * std::sqrt(p2 * (1 - p2) / n));
    CHECK(std::abs(beyond3[d] - p3) <= 3 * std::sqrt(p3 * (1 - p3) / n));
  }
  INFO("correlations xy " << xy << ", xz " << xz << ", yz " << yz);
  CHECK(std::abs(xy) <= 3 / std::sqrt(double(n)));
  CHECK(std::abs(xz) <= 3 / std::sqrt(double(n)));
  CHECK(std::abs(yz) <= 3 / std::sqrt(double(n)));
  INFO("products of squares xxyy " << xxyy << ", xxzz " << xxzz << ", yyzz " << yyzz);
  CHECK(std::abs(xxyy - 1) <= 3 * std::sqrt(8.0 / n));
  CHECK(std::abs(xxzz - 1) <= 3 * std::sqrt(8.0 / n));
  CHECK(std::abs(yyzz - 1) <= 3 * std::sqrt(8.0 / n));
}

namespace {

/// The liquid of the canonical tests: LJ systems of 108 atoms (fcc 3x3x3 at density 0.8442,
/// melting at T = 1), lattice jitter seeds 1, 2, ...
std::vector<bs::HostSystem> liquid(int systems) {
  const double a = std::cbrt(4 / 0.8442);
  std::vector<bs::HostSystem> input;
  for (int s = 0; s < systems; ++s)
    input.push_back(
        bd::fcc_crystal({3, 3, 3}, a, "Ar", s, 0.02, static_cast<std::uint64_t>(s + 1)));
  return input;
}

/// Runs `stage` on `b` for `warmup` steps, then takes `samples` samples `every` steps apart of
/// each system's kinetic energy, calling `also(b)` at each sample; checks the mean and variance
/// of the kinetic energy against the canonical N_f T / 2 and N_f T^2 / 2 within 3 standard errors
/// (from the spread between the systems). N_f: 3 * 108 - 3 unless given.
template <class Also>
void check_canonical(bd::Stage& stage, Batch& b, double temperature, int warmup, int samples,
                     int every, const std::string& name, Also also, double nf = 3 * 108 - 3) {
  const int systems = b.batch.num_systems();
  stage.enter(b.batch, 0, systems);
  stage.advance(b.batch, warmup);
  std::vector<std::vector<double>> k(static_cast<std::size_t>(systems));
  for (int n = 0; n < samples; ++n) {
    stage.advance(b.batch, every);
    const std::vector<double> now = kinetic(b);
    for (int s = 0; s < systems; ++s)
      k[static_cast<std::size_t>(s)].push_back(now[static_cast<std::size_t>(s)]);
    also(b);
  }
  std::vector<double> means;
  for (const auto& ks : k)
    means.push_back(estimate(ks).mean);
  const Estimate mean = estimate(means);
  // Each system's variance about the grand mean: about its own mean, it would come out low by the
  // variance of that mean, which the samples' correlation makes a few percent here.
  std::vector<double> variances;
  for (const auto& ks : k) {
    double v = 0;
    for (double x : ks)
      v += (x - mean.mean) * (x - mean.mean) / static_cast<double>(ks.size());
    variances.push_back(v);
  }
  const Estimate variance = estimate(variances);
  const double want_mean = nf * temperature / 2, want_variance = nf * temperature * temperature / 2;
  MESSAGE(name << " kinetic energy: mean " << mean.mean << " +- " << mean.error << " (canonical "
               << want_mean << "), variance " << variance.mean << " +- " << variance.error
               << " (canonical " << want_variance << ")");
  CHECK(std::abs(mean.mean - want_mean) <= 3 * mean.error);
  CHECK(std::abs(variance.mean - want_variance) <= 3 * variance.error);
  CHECK(variance.error < 0.1 * want_variance);  // error bars that resolve a wrong thermostat
  for (const auto& s : b.systems())
    CHECK_FALSE(s.failed);
}

}  // namespace

TEST_CASE("Nose-Hoover chains: the canonical kinetic energy, and a conserved quantity that stays") {
  // The liquid of the CSVR test, tau 0.2, dt 0.005; 400 steps of equilibration, then 60 samples
  // 80 steps apart (0.4 time units). The conserved quantity's drift is printed (the next test
  // checks it).
  bd::NoseHooverOptions p;
  p.dt = 0.005;
  p.steps = 400 + 60 * 80;
  p.temperature = 1.0;
  p.tau = 0.2;
  p.seed = 2024;
  bd::LennardJones lj;
  lj.cutoff = 2.5;
  bd::NoseHooverStage<bd::LennardJones> stage(lj, p);
  const bd::NoseHooverUpdate& update = stage.update();
  Batch b(liquid(32));
  const auto conserved = [&](const Batch& batch) {
    const auto scratch =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.batch.scratch);
    std::vector<double> h;
    const auto systems = batch.systems();
    const std::vector<double> ke = kinetic(batch);
    for (std::size_t s = 0; s < systems.size(); ++s) {
      const double state[4] = {scratch(s, 0), scratch(s, 1), scratch(s, 2), scratch(s, 3)};
      h.push_back(systems[s].energy + ke[s] +
                  update.thermostat_energy(state, 3 * static_cast<int>(systems[s].size()) - 3));
    }
    return h;
  };
  std::vector<double> first;
  double drift = 0;
  check_canonical(stage, b, 1.0, 400, 60, 80, "Nose-Hoover", [&](const Batch& now) {
    const std::vector<double> h = conserved(now);
    if (first.empty())
      first = h;
    for (std::size_t s = 0; s < h.size(); ++s)
      drift = std::max(drift, std::abs(h[s] - first[s]) / 108);
  });
  MESSAGE("Nose-Hoover: largest drift of the conserved quantity " << drift << " per atom");
}

TEST_CASE("Nose-Hoover chains: the conserved quantity drifts only as velocity Verlet's energy") {
  // 8 of the liquid's systems, 4 time units at dt 0.005 and at dt 0.0025, T 1, tau 0.2: the
  // largest drift per atom of E_pot + E_kin + the thermostats' energy must be at most 8 times that
  // of E_pot + E_kin under NVE at the same dt (the LJ forces jump at the cutoff, so NVE drifts
  // too), and shrink at least 2.5 times when dt halves (second order: 4 times). A thermostat energy
  // that left out a term drifts as much as the kinetic energy it exchanges, at any dt.
  bd::LennardJones lj;
  lj.cutoff = 2.5;
  const std::vector<bs::HostSystem> input = liquid(8);
  double previous = 0;
  for (const double dt : {0.005, 0.0025}) {
    const int steps = static_cast<int>(std::lround(4.0 / dt));
    bd::VerletOptions v;
    v.dt = dt;
    v.steps = steps + 10;
    v.temperature = 1.0;
    bd::VerletStage<bd::LennardJones> nve(lj, v);
    bd::NoseHooverOptions p;
    p.dt = dt;
    p.steps = steps + 10;
    p.temperature = 1.0;
    p.tau = 0.2;
    bd::NoseHooverStage<bd::LennardJones> nh(lj, p);
    const auto total = [&](const Batch& b, bool thermostat) {
      const auto scratch =
          Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.batch.scratch);
      const auto systems = b.systems();
      const std::vector<double> ke = kinetic(b);
      std::vector<double> h;
      for (std::size_t s = 0; s < systems.size(); ++s) {
        const double state[4] = {scratch(s, 0), scratch(s, 1), scratch(s, 2), scratch(s, 3)};
        const double here = systems[s].energy + ke[s] +
                            (thermostat ? nh.update().thermostat_energy(state, 3 * 108 - 3) : 0.0);
        // The stage reports it (SystemsBatch::conserved, the results' `conserved` key): the
        // drifts below are of what it reports.
        CHECK(systems[s].conserved == doctest::Approx(here).epsilon(1e-12));
        h.push_back(systems[s].conserved);
      }
      return h;
    };
    const auto drift = [&](bd::Stage& stage, bool thermostat) {
      Batch b(input);
      stage.enter(b.batch, 0, 8);
      stage.advance(b.batch, 10);
      const std::vector<double> h0 = total(b, thermostat);
      stage.advance(b.batch, steps);
      const std::vector<double> h1 = total(b, thermostat);
      double d = 0;
      for (std::size_t s = 0; s < h0.size(); ++s)
        d = std::max(d, std::abs(h1[s] - h0[s]) / 108);
      return d;
    };
    const double d_nve = drift(nve, false), d_nh = drift(nh, true);
    MESSAGE("dt " << dt << ": drift per atom, NVE " << d_nve << ", Nose-Hoover " << d_nh);
    CHECK(d_nh <= 8 * d_nve);
    if (previous > 0)
      CHECK(d_nh <= previous / 2.5);
    previous = d_nh;
  }
}

TEST_CASE("CSVR samples the canonical kinetic energy: mean and variance within 3 standard errors") {
  // The 32 liquid systems; CSVR seed 2024, tau 0.1, dt 0.005. 400 steps of equilibration, then
  // one sample every 50 steps (0.25 time units, against tau = 0.1) for 4000 steps: 80 samples per
  // system. N_f = 3 * 108 - 3 = 321 (the centre of mass does not move).
  bd::CsvrOptions p;
  p.dt = 0.005;
  p.steps = 400 + 80 * 50;
  p.temperature = 1.0;
  p.tau = 0.1;
  p.seed = 2024;
  bd::LennardJones lj;
  lj.cutoff = 2.5;
  bd::CsvrStage<bd::LennardJones> stage(lj, p);
  Batch b(liquid(32));
  check_canonical(stage, b, 1.0, 400, 80, 50, "CSVR", [](const Batch&) {});
}

TEST_CASE("Langevin: mean kinetic temperature matches the bath") {
  // 48 LJ13 clusters (half with mass 2), T = 0.1, gamma = 1, seed 11: after 2000 steps of
  // equilibration, 8000 steps sampled every 10. The kinetic energy decorrelates in about
  // 1/(2 gamma) = 100 steps, so the mean has ~3840 independent samples of relative spread
  // sqrt(2/39): standard error ~0.37%; the check is 3 of them.
  bd::LangevinOptions p;
  p.dt = 0.005;
  p.temperature = 0.1;
  p.friction = 1.0;
  p.steps = 10000;
  p.seed = 11;
  bd::LangevinStage langevin({}, p);
  std::vector<bs::HostSystem> in;
  for (int id = 0; id < 48; ++id) {
    in.push_back(bd::perturbed_cluster(13, id, 42, 0.05, baton::test::lj_nn));
    if (id % 2)
      in.back().masses.assign(13, 2.0);
  }
  Batch b(in);
  langevin.enter(b.batch, 0, b.batch.num_systems());
  langevin.advance(b.batch, 2000);
  double sum = 0;
  long samples = 0;
  while (!b.all_finished()) {
    langevin.advance(b.batch, 10);
    for (const auto& s : b.systems()) {
      double k = 0;
      for (std::size_t i = 0; i < s.velocities.size(); ++i)
        k += 0.5 * (s.masses.empty() ? 1.0 : s.masses[i / 3]) * s.velocities[i] * s.velocities[i];
      sum += 2 * k / (3.0 * static_cast<double>(s.size()));
      ++samples;
    }
  }
  const double t = sum / static_cast<double>(samples);
  MESSAGE("Langevin mean kinetic temperature " << t << " (target 0.1, error " << 100 * (t / 0.1 - 1)
                                               << "%)");
  CHECK(std::abs(t / 0.1 - 1) < 3 * 0.0037);
  for (auto s : b.steps())
    CHECK(s == 10000);
}

TEST_CASE("CSVR with fixed atoms: N_f = 3 N_moving, and the fixed atoms stay where they are") {
  // The liquid's 32 systems stretched 5x (pairs 5.6 sigma apart, beyond the 2.5 cutoff): no
  // forces, so between rescalings the kinetic energy is constant and CSVR alone sets its
  // distribution, the canonical one of the N_f it uses. 12 of each system's 108 atoms are fixed
  // (every ninth): N_f = 3 * 96 = 288, mean 144 and variance 144 at T = 1 (with N_f = 321 they
  // would be 160.5, 34 standard errors away). CSVR seed 2025, tau 0.1, dt 0.005, samples every
  // 50 steps. (In the dense liquid itself, with the fixed atoms pinning it, the mean came out
  // 0.3-0.6% low over four seeds, 0.2 to 3 standard errors, where Langevin gave 144.0: not
  // understood, and not what this test asserts.) This seed's mean here comes out about 2 standard
  // errors low; the rescaling formula and chi_squared() iterated alone on the kinetic energy, with
  // the same keys, give the same numbers, and over 20 other seeds their mean is 0.75 standard
  // errors from N_f T / 2: the draw of this seed, not a bias.
  bd::CsvrOptions p;
  p.dt = 0.005;
  p.steps = 400 + 80 * 50;
  p.temperature = 1.0;
  p.tau = 0.1;
  p.seed = 2025;
  bd::LennardJones lj;
  lj.cutoff = 2.5;
  bd::CsvrStage<bd::LennardJones> stage(lj, p);
  std::vector<bs::HostSystem> in = liquid(32);
  for (bs::HostSystem& s : in) {
    for (double& x : s.positions)
      x *= 5;
    for (double& c : s.cell)
      c *= 5;
    s.move_mask.assign(s.size(), true);
    for (std::size_t i = 0; i < s.size(); i += 9)
      s.move_mask[i] = false;
  }
  Batch b(in);
  check_canonical(
      stage, b, 1.0, 400, 80, 50, "CSVR, 12 of 108 atoms fixed", [](const Batch&) {}, 3 * 96);
  const std::vector<bs::HostSystem> out = b.systems();
  for (std::size_t s = 0; s < out.size(); ++s) {
    CHECK(out[s].move_mask == in[s].move_mask);
    for (std::size_t i = 0; i < in[s].size(); i += 9)
      for (std::size_t d = 0; d < 3; ++d) {
        CHECK(out[s].positions[3 * i + d] == in[s].positions[3 * i + d]);
        CHECK(out[s].velocities[3 * i + d] == 0.0);
      }
  }
}
