#include "baton/systems/host_transfer.hpp"

#include "baton/systems/codec.hpp"

#include <string>
#include <utility>

#include "baton/core/error.hpp"
#include "baton/systems/cell.hpp"

namespace baton::systems {

std::string host_system_problem(const HostSystem& s) {
  const std::size_t n = s.size();
  if (n == 0)
    return "has no atoms";
  if (const std::string cell = cell_problem(s); !cell.empty())
    return cell;
  if (s.positions.size() != 3 * n || (!s.velocities.empty() && s.velocities.size() != 3 * n) ||
      (!s.masses.empty() && s.masses.size() != n) ||
      (!s.move_mask.empty() && s.move_mask.size() != n))
    return "has " + std::to_string(n) + " atoms but " + std::to_string(s.positions.size()) +
           " position, " + std::to_string(s.velocities.size()) + " velocity, " +
           std::to_string(s.masses.size()) + " mass and " + std::to_string(s.move_mask.size()) +
           " move_mask values";
  return "";
}

void append_systems(SystemsBatch& batch, const std::vector<HostSystem>& systems,
                    SpeciesTable& species) {
  const int n = static_cast<int>(systems.size());
  long atoms = 0;
  for (const HostSystem& s : systems) {
    const std::string problem = host_system_problem(s);
    if (!problem.empty())
      throw Error("baton::systems::append_systems: system " + std::to_string(s.id) + " " + problem);
    atoms += static_cast<long>(s.size());
  }
  const BatchCapacity room = batch.free();
  if (n > room.systems || atoms > room.atoms)
    throw Error("baton::systems::append_systems: " + std::to_string(n) + " systems of " +
                std::to_string(atoms) + " atoms do not fit the " + std::to_string(room.systems) +
                " free system slots and " + std::to_string(room.atoms) + " free atom rows");
  if (n == 0)
    return;
  // Through the systems codec (wire.hpp), the one format systems take outside a batch.
  const HostPacked w = encode_host_systems(systems, species, batch.num_stages());
  unpack_systems(batch, to_device(w, "baton::append"));
}

std::vector<HostSystem> copy_systems_to_host(const SystemsBatch& batch,
                                             const std::vector<int>& slots,
                                             const SpeciesTable& species) {
  for (int s : slots)
    if (s < 0 || s >= batch.num_systems())
      throw Error("baton::systems::copy_systems_to_host: slot " + std::to_string(s) +
                  " is not in use (" + std::to_string(batch.num_systems()) + " systems)");
  const HostPacked w = to_host(pack_systems(batch, slots));
  return decode_host_systems(w.ints.data(), w.ints.size(), w.reals.data(), w.reals.size(), species);
}

}  // namespace baton::systems
