#pragma once
// A SystemsBatch holding exactly the given systems, and what the dynamics tests read back of it.

#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <baton/dynamics/stage.hpp>
#include <baton/systems/host_transfer.hpp>
#include <baton/systems/systems_batch.hpp>
#include <cstdint>
#include <vector>

namespace baton::test {

namespace bd = baton::dynamics;
namespace bs = baton::systems;

struct Batch {
  bs::SystemsBatch batch;
  bs::SpeciesTable species;
  explicit Batch(const std::vector<bs::HostSystem>& systems) {
    int atoms = 0;
    for (const auto& s : systems)
      atoms += static_cast<int>(s.size());
    batch = bs::SystemsBatch({static_cast<int>(systems.size()), atoms}, 1);
    bs::append_systems(batch, systems, species);
  }
  std::vector<bs::HostSystem> systems() const {
    std::vector<int> slots(static_cast<std::size_t>(batch.num_systems()));
    for (std::size_t i = 0; i < slots.size(); ++i)
      slots[i] = static_cast<int>(i);
    return bs::copy_systems_to_host(batch, slots, species);
  }
  std::vector<std::int64_t> steps() const {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.steps);
    return {h.data(), h.data() + batch.num_systems()};
  }
  std::vector<double> forces() const {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.forces);
    return {h.data(), h.data() + 3 * batch.num_atoms()};
  }
  bool all_finished() const {
    const auto st = batch.status_on_host();
    return std::all_of(st.begin(), st.end(),
                       [](int s) { return s == static_cast<int>(bs::SystemStatus::finished); });
  }
};

/// The Lennard-Jones nearest-neighbour distance 2^(1/6) (sigma 1).
inline constexpr double lj_nn = 1.122462048309373;

/// Enters every system into `stage` and advances `chunk` steps at a time until all are Finished.
inline void run(bd::Stage& stage, Batch& b, int chunk) {
  stage.enter(b.batch, 0, b.batch.num_systems());
  const long calls = stage.step_limit() / chunk + 2;
  for (long k = 0; k < calls && !b.all_finished(); ++k)
    stage.advance(b.batch, chunk);
  REQUIRE(b.all_finished());
}

}  // namespace baton::test
