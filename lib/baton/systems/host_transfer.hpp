#pragma once
/// \file
/// Moving systems between the host (HostSystem) and a SystemsBatch.

#include <string>
#include <vector>

#include "baton/systems/host_system.hpp"
#include "baton/systems/systems_batch.hpp"

namespace baton::systems {

/// What is wrong with a system as input ("has no atoms", "has 3 atoms but 6 position, ..."), or ""
/// when it can be loaded: at least one atom, 3 positions per atom, and velocities and masses either
/// absent or one set per atom.
std::string host_system_problem(const HostSystem& s);

/// Appends `systems` to the batch as Active (Finished: a failed system, which no stage steps),
/// steps 0, scratch 0 (velocities 0 and masses 1 where the system has none; stage_steps copied,
/// missing entries 0). Throws baton::Error naming the sizes if they do not fit.
void append_systems(SystemsBatch& batch, const std::vector<HostSystem>& systems,
                    SpeciesTable& species);

/// Copies the systems in `slots` to the host (forces are not copied; energy, fmax, stage_steps
/// are).
std::vector<HostSystem> copy_systems_to_host(const SystemsBatch& batch,
                                             const std::vector<int>& slots,
                                             const SpeciesTable& species);

}  // namespace baton::systems
