#include "baton/dynamics/host_transfer.hpp"

#include <string>
#include <utility>

#include "baton/dynamics/cell.hpp"
#include "baton/runtime/error.hpp"

namespace baton::dynamics {

namespace {

using Range = std::pair<int, int>;

// Copies a host View into rows `rows` of a device View of the same rank.
template <class Device, class Host>
void upload(const Device& dst, const Host& src, Range rows) {
  if (rows.second > rows.first)
    Kokkos::deep_copy(Kokkos::subview(dst, rows, Kokkos::ALL), src);
}

template <class Device, class Host>
void upload1(const Device& dst, const Host& src, Range rows) {
  if (rows.second > rows.first)
    Kokkos::deep_copy(Kokkos::subview(dst, rows), src);
}

}  // namespace

std::string host_system_problem(const HostSystem& s) {
  const std::size_t n = s.size();
  if (n == 0)
    return "has no atoms";
  if (const std::string cell = cell_problem(s); !cell.empty())
    return cell;
  if (s.positions.size() != 3 * n || (!s.velocities.empty() && s.velocities.size() != 3 * n) ||
      (!s.masses.empty() && s.masses.size() != n))
    return "has " + std::to_string(n) + " atoms but " + std::to_string(s.positions.size()) +
           " position, " + std::to_string(s.velocities.size()) + " velocity and " +
           std::to_string(s.masses.size()) + " mass values";
  return "";
}

void append_systems(SystemsBatch& batch, const std::vector<HostSystem>& systems,
                    SpeciesTable& species) {
  const int n = static_cast<int>(systems.size());
  long atoms = 0;
  for (const HostSystem& s : systems) {
    const std::string problem = host_system_problem(s);
    if (!problem.empty())
      throw Error("baton::dynamics::append_systems: system " + std::to_string(s.id) + " " +
                  problem);
    atoms += static_cast<long>(s.size());
  }
  const BatchCapacity room = batch.free();
  if (n > room.systems || atoms > room.atoms)
    throw Error("baton::dynamics::append_systems: " + std::to_string(n) + " systems of " +
                std::to_string(atoms) + " atoms do not fit the " + std::to_string(room.systems) +
                " free system slots and " + std::to_string(room.atoms) + " free atom rows");
  if (n == 0)
    return;
  const int s0 = batch.num_systems();
  const int a0 = batch.num_atoms();
  const int na = static_cast<int>(atoms);
  const int stages = static_cast<int>(batch.stage_steps.extent(1));

  Kokkos::View<double*[3], Kokkos::LayoutRight, Kokkos::HostSpace> pos("pos", na), vel("vel", na),
      frc("frc", na);
  Kokkos::View<double*, Kokkos::HostSpace> mass("mass", na);
  Kokkos::View<int*, Kokkos::HostSpace> spec("spec", na), sys("sys", na);
  Kokkos::View<int*, Kokkos::HostSpace> off("off", n), cnt("cnt", n), stat("stat", n);
  Kokkos::View<std::int64_t*, Kokkos::HostSpace> ids("ids", n), st("st", n);
  Kokkos::View<double*, Kokkos::HostSpace> en("en", n), fm("fm", n);
  Kokkos::View<std::int64_t**, Kokkos::LayoutRight, Kokkos::HostSpace> stage("stage", n, stages);
  Kokkos::View<double* [batch_scratch_size], Kokkos::LayoutRight, Kokkos::HostSpace> scr("scr", n);
  Kokkos::View<double* [9], Kokkos::LayoutRight, Kokkos::HostSpace> cel("cel", n);
  Kokkos::View<double* [6], Kokkos::LayoutRight, Kokkos::HostSpace> vir("vir", n);
  Kokkos::View<int*, Kokkos::HostSpace> per("per", n), bad("bad", n);
  int a = 0;
  for (int k = 0; k < n; ++k) {
    const HostSystem& s = systems[static_cast<std::size_t>(k)];
    off(k) = a0 + a;
    cnt(k) = static_cast<int>(s.size());
    stat(k) = static_cast<int>(SystemStatus::Active);
    ids(k) = s.id;
    en(k) = s.energy;
    fm(k) = s.fmax;
    for (int j = 0; j < 9; ++j)
      cel(k, j) = s.cell[static_cast<std::size_t>(j)];
    per(k) = pbc_bits(s.pbc);
    for (int j = 0; j < 6; ++j)
      vir(k, j) = s.virial[static_cast<std::size_t>(j)];
    bad(k) = s.failed ? failure_code(s.failure) : 0;
    for (int j = 0; j < stages && static_cast<std::size_t>(j) < s.stage_steps.size(); ++j)
      stage(k, j) = s.stage_steps[static_cast<std::size_t>(j)];
    for (std::size_t i = 0; i < s.size(); ++i, ++a) {
      for (int d = 0; d < 3; ++d) {
        pos(a, d) = s.positions[3 * i + static_cast<std::size_t>(d)];
        vel(a, d) = s.velocities.empty() ? 0.0 : s.velocities[3 * i + static_cast<std::size_t>(d)];
      }
      mass(a) = s.masses.empty() ? 1.0 : s.masses[i];
      spec(a) = species.index(s.species[i]);
      sys(a) = s0 + k;
    }
  }
  const Range ar{a0, a0 + na};
  const Range sr{s0, s0 + n};
  upload(batch.positions, pos, ar);
  upload(batch.velocities, vel, ar);
  upload(batch.forces, frc, ar);
  upload1(batch.masses, mass, ar);
  upload1(batch.species, spec, ar);
  upload1(batch.system_of_atom, sys, ar);
  upload1(batch.offset, off, sr);
  upload1(batch.count, cnt, sr);
  upload1(batch.status, stat, sr);
  upload1(batch.id, ids, sr);
  upload1(batch.steps, st, sr);
  upload1(batch.energy, en, sr);
  upload1(batch.fmax, fm, sr);
  upload(batch.stage_steps, stage, sr);
  upload(batch.scratch, scr, sr);
  upload(batch.cell, cel, sr);
  upload(batch.virial, vir, sr);
  upload1(batch.pbc, per, sr);
  upload1(batch.failed, bad, sr);
  Kokkos::deep_copy(Kokkos::subview(batch.list_built, sr), 0);  // no neighbour list yet
  batch.set_counts(s0 + n, a0 + na);
}

std::vector<HostSystem> copy_systems_to_host(const SystemsBatch& batch,
                                             const std::vector<int>& slots,
                                             const SpeciesTable& species) {
  auto pos = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.positions);
  auto vel = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.velocities);
  auto mass = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.masses);
  auto spec = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.species);
  auto off = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.offset);
  auto cnt = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.count);
  auto ids = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.id);
  auto en = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.energy);
  auto fm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.fmax);
  auto stage = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.stage_steps);
  auto cel = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.cell);
  auto vir = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.virial);
  auto per = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.pbc);
  auto bad = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.failed);
  std::vector<HostSystem> out;
  out.reserve(slots.size());
  for (int s : slots) {
    if (s < 0 || s >= batch.num_systems())
      throw Error("baton::dynamics::copy_systems_to_host: slot " + std::to_string(s) +
                  " is not in use (" + std::to_string(batch.num_systems()) + " systems)");
    HostSystem h;
    h.id = ids(s);
    h.energy = en(s);
    h.fmax = fm(s);
    for (int j = 0; j < 9; ++j)
      h.cell[static_cast<std::size_t>(j)] = cel(s, j);
    for (int j = 0; j < 6; ++j)
      h.virial[static_cast<std::size_t>(j)] = vir(s, j);
    for (int k = 0; k < 3; ++k)
      h.pbc[static_cast<std::size_t>(k)] = (per(s) >> k) & 1;
    h.failed = bad(s) != 0;
    h.failure = failure_text(bad(s));
    for (int j = 0; j < batch.num_stages(); ++j)
      h.stage_steps.push_back(stage(s, j));
    const int n = cnt(s);
    const int o = off(s);
    for (int i = 0; i < n; ++i) {
      h.species.push_back(species.name(spec(o + i)));
      for (int d = 0; d < 3; ++d) {
        h.positions.push_back(pos(o + i, d));
        h.velocities.push_back(vel(o + i, d));
      }
      h.masses.push_back(mass(o + i));
    }
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace baton::dynamics
