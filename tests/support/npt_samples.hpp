#pragma once
// What the barostat tests (test_barostats: C-rescale; test_mtk: MTK) sample of an NPT run: per
// system and sample the volume, the kinetic energy and the pressure tensor (LJ units, masses 1).

#include <doctest/doctest.h>

#include <baton/dynamics/stage.hpp>
#include <baton/systems/cell.hpp>
#include <vector>

#include "dynamics_batch.hpp"

namespace baton::test {

/// Per system and sample: volume, kinetic energy, and configurational + kinetic pressure, its
/// trace / 3 and its tensor (xx yy zz xy xz yz).
struct Sample {
  double volume, kinetic, pressure;
  double tensor[6];
};
inline Sample sample(const bs::HostSystem& s) {
  Sample out{bs::cell_volume(s.cell), 0, 0, {0, 0, 0, 0, 0, 0}};
  const int pairs[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {0, 2}, {1, 2}};
  for (int c = 0; c < 6; ++c) {
    double k = 0;  // masses 1, LJ units
    for (std::size_t i = 0; i < s.size(); ++i)
      k += s.velocities[3 * i + pairs[c][0]] * s.velocities[3 * i + pairs[c][1]];
    out.tensor[c] = (k + s.virial[c]) / out.volume;
    if (c < 3)
      out.kinetic += 0.5 * k;
  }
  out.pressure = (out.tensor[0] + out.tensor[1] + out.tensor[2]) / 3;
  return out;
}

/// Runs `stage` on `b`: `warmup` steps, then `samples` samples `every` steps apart of each system.
inline std::vector<std::vector<Sample>> run_samples(bd::Stage& stage, Batch& b, int warmup,
                                                    int samples, int every) {
  stage.enter(b.batch, 0, b.batch.num_systems());
  stage.advance(b.batch, warmup);
  std::vector<std::vector<Sample>> out(static_cast<std::size_t>(b.batch.num_systems()));
  for (int n = 0; n < samples; ++n) {
    stage.advance(b.batch, every);
    const std::vector<bs::HostSystem> now = b.systems();
    for (std::size_t s = 0; s < now.size(); ++s) {
      REQUIRE_FALSE(now[s].failed);
      out[s].push_back(sample(now[s]));
    }
  }
  return out;
}

/// Per system, the mean of f over its samples.
template <class F>
std::vector<double> means(const std::vector<std::vector<Sample>>& samples, F f) {
  std::vector<double> out;
  for (const auto& system : samples) {
    double m = 0;
    for (const Sample& x : system)
      m += f(x) / static_cast<double>(system.size());
    out.push_back(m);
  }
  return out;
}

}  // namespace baton::test
