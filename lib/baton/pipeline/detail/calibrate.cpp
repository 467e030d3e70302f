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
    const auto any_active = [&] {
      for (int s : batch.status_on_host())
        if (s == static_cast<int>(systems::SystemStatus::active))
          return true;
      return false;
    };
    // One step untimed first: a GPU loads a kernel's code at its first launch, and a stage sizes
    // its lists and scratch at its first call; neither is what a step costs. (Timed all the same
    // when that one step finished every system.)
    const double w0 = TimerRegistry::now();
    stage->advance(batch, 1);
    Kokkos::fence();
    const double warm_up = TimerRegistry::now() - w0;
    const double before = atom_steps(batch);
    if (!any_active()) {
      out.push_back(before > 0 ? warm_up / before : 0.0);
      continue;
    }
    const double t0 = TimerRegistry::now();
    double elapsed = 0;
    for (int call = 0; call < 1000 && elapsed < seconds; ++call) {
      stage->advance(batch, steps_per_call);
      Kokkos::fence();
      elapsed = TimerRegistry::now() - t0;
      if (!any_active())
        break;
    }
    const double done = atom_steps(batch) - before;
    out.push_back(done > 0 ? elapsed / done : 0.0);
  }
  return out;
}

}  // namespace baton::pipeline::detail
