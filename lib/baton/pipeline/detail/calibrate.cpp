#include "baton/pipeline/detail/calibrate.hpp"

#include <Kokkos_Core.hpp>
#include <cstdint>

#include "baton/systems/host_transfer.hpp"
#include "baton/timing/timers.hpp"

namespace baton::pipeline::detail {

namespace {

// Sum over the batch of atoms * steps taken so far.
double atom_steps(const systems::SystemsBatch& batch) {
  const auto steps = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.steps);
  systems::count_host_sync();
  const std::vector<int> atoms = batch.count_on_host();
  double sum = 0;
  for (std::size_t s = 0; s < atoms.size(); ++s)
    sum += static_cast<double>(steps(s)) * atoms[s];
  return sum;
}

}  // namespace

std::vector<double> seconds_per_atom_step(const std::vector<StageSpec>& specs,
                                          const std::vector<systems::HostSystem>& sample,
                                          int steps_per_call, double seconds) {
  std::vector<double> out;
  const int k = static_cast<int>(specs.size());
  for (const StageSpec& spec : specs) {
    std::unique_ptr<dynamics::Stage> stage = spec.make();
    systems::SystemsBatch batch(spec.capacity, k);
    systems::SpeciesTable species;
    systems::append_systems(batch, sample, species);
    stage->enter(batch, 0, batch.num_systems());
    Kokkos::fence();
    const double t0 = TimerRegistry::now();
    double elapsed = 0;
    for (int call = 0; call < 1000 && elapsed < seconds; ++call) {
      stage->advance(batch, steps_per_call);
      Kokkos::fence();
      elapsed = TimerRegistry::now() - t0;
      const std::vector<int> status = batch.status_on_host();
      bool active = false;
      for (int s : status)
        active = active || s == static_cast<int>(systems::SystemStatus::active);
      if (!active)
        break;
    }
    const double done = atom_steps(batch);
    out.push_back(done > 0 ? elapsed / done : 0.0);
  }
  return out;
}

}  // namespace baton::pipeline::detail
