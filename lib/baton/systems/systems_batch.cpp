#include "baton/systems/systems_batch.hpp"

#include <atomic>
#include <string>

#include "baton/core/error.hpp"

namespace baton::systems {

namespace {

template <class V>
V alloc(const char* label, int n) {
  return V(Kokkos::view_alloc(std::string("baton::batch::") + label), n);
}

std::atomic<long> bookkeeping_syncs{0};
std::atomic<long> payload_syncs{0};

}  // namespace

HostSyncs host_syncs() noexcept {
  return {bookkeeping_syncs.load(std::memory_order_relaxed),
          payload_syncs.load(std::memory_order_relaxed)};
}

void count_host_sync(SyncKind kind) noexcept {
  (kind == SyncKind::payload ? payload_syncs : bookkeeping_syncs)
      .fetch_add(1, std::memory_order_relaxed);
}

SystemsBatch::SystemsBatch(BatchCapacity capacity, int num_stages)
    : capacity_(capacity), num_stages_(num_stages) {
  if (capacity.systems < 1 || capacity.atoms < 1 || num_stages < 0)
    throw Error("baton::SystemsBatch: capacity must be at least 1 system and 1 atom (got " +
                std::to_string(capacity.systems) + " systems, " + std::to_string(capacity.atoms) +
                " atoms, " + std::to_string(num_stages) + " stages)");
  const int na = capacity.atoms;
  const int ns = capacity.systems;
  positions = alloc<view<double* [3]>>("positions", na);
  velocities = alloc<view<double* [3]>>("velocities", na);
  forces = alloc<view<double* [3]>>("forces", na);
  masses = alloc<view<double*>>("masses", na);
  species = alloc<view<int*>>("species", na);
  system_of_atom = alloc<view<int*>>("system_of_atom", na);
  atom_scratch = alloc<view<double* [2]>>("atom_scratch", na);
  list_origin = alloc<view<double* [3]>>("list_origin", na);
  offset = alloc<view<int*>>("offset", ns);
  count = alloc<view<int*>>("count", ns);
  id = alloc<view<std::int64_t*>>("id", ns);
  energy = alloc<view<double*>>("energy", ns);
  fmax = alloc<view<double*>>("fmax", ns);
  virial = alloc<view<double* [6]>>("virial", ns);
  steps = alloc<view<std::int64_t*>>("steps", ns);
  stage_steps = view<std::int64_t**>(Kokkos::view_alloc(std::string("baton::batch::stage_steps")),
                                     ns, num_stages > 0 ? num_stages : 1);
  status = alloc<view<int*>>("status", ns);
  cell = alloc<view<double* [9]>>("cell", ns);
  pbc = alloc<view<int*>>("pbc", ns);
  failed = alloc<view<int*>>("failed", ns);
  scratch = alloc<view<double* [batch_scratch_size]>>("scratch", ns);
  list_built = alloc<view<int*>>("list_built", ns);
  forces_stale = alloc<view<int*>>("forces_stale", ns);
  list_overflow = view<int>(Kokkos::view_alloc(std::string("baton::batch::list_overflow")));
}

const char* failure_text(int code) {
  switch (static_cast<Failure>(code)) {
    case Failure::none:
      return "";
    case Failure::energy:
      return "non-finite energy";
    case Failure::forces:
      return "non-finite forces";
    case Failure::exploded:
      return "exploded: an atom beyond 1e8 length units";
    case Failure::positions:
      return "non-finite positions or velocities";
    case Failure::input:
      return "failed before";
    case Failure::dissociated:
      return "dissociated: no two atoms within the cutoff";
  }
  return "failed";
}

int failure_code(const std::string& text) {
  for (int code = 1; code <= last_failure; ++code)
    if (text == failure_text(code))
      return code;
  return static_cast<int>(Failure::input);
}

void SystemsBatch::append_slots(const std::vector<HostSlot>& added) {
  long atoms = num_atoms_;
  for (const HostSlot& s : added)
    atoms += s.count;
  const long systems = num_systems_ + static_cast<long>(added.size());
  if (systems > capacity_.systems || atoms > capacity_.atoms)
    throw Error("baton::SystemsBatch::append_slots: " + std::to_string(systems) + " systems and " +
                std::to_string(atoms) + " atoms do not fit a capacity of " +
                std::to_string(capacity_.systems) + " systems and " +
                std::to_string(capacity_.atoms) + " atoms");
  host_.insert(host_.end(), added.begin(), added.end());
  num_systems_ = static_cast<int>(systems);
  num_atoms_ = static_cast<int>(atoms);
}

std::vector<int> SystemsBatch::status_on_host() const {
  std::vector<int> out(static_cast<std::size_t>(num_systems_));
  Kokkos::View<int*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(out.data(),
                                                                                   out.size());
  Kokkos::deep_copy(h, Kokkos::subview(status, std::make_pair(0, num_systems_)));
  count_host_sync();
  return out;
}

void SystemsBatch::cells_changed() {
  const auto slots = std::make_pair(0, num_systems_);
  const auto h_cell = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace(), Kokkos::subview(cell, slots, Kokkos::ALL));
  const auto h_pbc =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Kokkos::subview(pbc, slots));
  count_host_sync();
  count_host_sync();
  for (int s = 0; s < num_systems_; ++s) {
    HostSlot& h = host_[static_cast<std::size_t>(s)];
    h.pbc = h_pbc(s);
    for (std::size_t j = 0; j < 9; ++j)
      h.cell[j] = h_cell(s, static_cast<int>(j));
  }
}

std::vector<int> SystemsBatch::count_on_host() const {
  std::vector<int> out;
  out.reserve(host_.size());
  for (const HostSlot& s : host_)
    out.push_back(s.count);
  return out;
}

void SystemsBatch::remove(const std::vector<int>& slots) {
  if (slots.empty())
    return;
  // The host decides where every kept system goes (a few ints per system); kernels move the rows.
  const std::vector<int> counts = count_on_host();
  std::vector<char> gone(static_cast<std::size_t>(num_systems_), 0);
  int previous = -1;
  for (int s : slots) {
    if (s <= previous || s >= num_systems_)
      throw Error("baton::SystemsBatch::remove: slot " + std::to_string(s) +
                  " is out of order or not in use (" + std::to_string(num_systems_) + " systems)");
    gone[static_cast<std::size_t>(s)] = 1;
    previous = s;
  }
  std::vector<int> from;  // new slot -> old slot
  std::vector<int> new_offset;
  int atoms = 0;
  for (int s = 0; s < num_systems_; ++s) {
    if (gone[static_cast<std::size_t>(s)])
      continue;
    from.push_back(s);
    new_offset.push_back(atoms);
    atoms += counts[static_cast<std::size_t>(s)];
  }
  const int kept = static_cast<int>(from.size());
  std::vector<HostSlot> host_kept;
  host_kept.reserve(from.size());
  for (int s : from)
    host_kept.push_back(host_[static_cast<std::size_t>(s)]);
  const auto set_host = [&] {
    host_ = std::move(host_kept);
    num_systems_ = kept;
    num_atoms_ = atoms;
  };
  // Nothing moves below the first removed slot.
  const int first = slots.front();
  if (first == kept) {  // only trailing systems removed
    set_host();
    return;
  }
  view<int*> d_from("baton::batch::from", kept - first);
  view<int*> d_offset("baton::batch::new_offset", kept - first);
  {
    auto h_from = Kokkos::create_mirror_view(d_from);
    auto h_offset = Kokkos::create_mirror_view(d_offset);
    for (int i = first; i < kept; ++i) {
      h_from(i - first) = from[static_cast<std::size_t>(i)];
      h_offset(i - first) = new_offset[static_cast<std::size_t>(i)];
    }
    Kokkos::deep_copy(d_from, h_from);
    Kokkos::deep_copy(d_offset, h_offset);
  }
  // Moving down in place is safe only in order; copy the moved tail to scratch Views first.
  const int atom_begin = new_offset[static_cast<std::size_t>(first)];
  const int n_move_atoms = atoms - atom_begin;
  const int n_move = kept - first;
  const int stages = static_cast<int>(stage_steps.extent(1));
  SystemsBatch& b = *this;
  view<double*[3]> t_pos("t_pos", n_move_atoms), t_vel("t_vel", n_move_atoms),
      t_frc("t_frc", n_move_atoms), t_origin("t_origin", n_move_atoms);
  view<double*> t_mass("t_mass", n_move_atoms);
  view<int*> t_species("t_species", n_move_atoms), t_sys("t_sys", n_move_atoms);
  using policy = Kokkos::TeamPolicy<execution_space>;
  auto off = b.offset;
  auto cnt = b.count;
  auto pos = b.positions, vel = b.velocities, frc = b.forces, origin = b.list_origin;
  auto mass = b.masses;
  auto spec = b.species;
  Kokkos::parallel_for(
      "baton::batch::gather_moved", policy(n_move, Kokkos::AUTO),
      KOKKOS_LAMBDA(const policy::member_type& team) {
        const int k = team.league_rank();
        const int src = d_from(k);
        const int src_off = off(src);
        const int dst = d_offset(k) - atom_begin;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, cnt(src)), [&](int a) {
          for (int d = 0; d < 3; ++d) {
            t_pos(dst + a, d) = pos(src_off + a, d);
            t_vel(dst + a, d) = vel(src_off + a, d);
            t_frc(dst + a, d) = frc(src_off + a, d);
            t_origin(dst + a, d) = origin(src_off + a, d);
          }
          t_mass(dst + a) = mass(src_off + a);
          t_species(dst + a) = spec(src_off + a);
          t_sys(dst + a) = first + k;
        });
      });
  // Per-system rows: gather into temporaries, then write back.
  view<int*> s_count("s_count", n_move), s_status("s_status", n_move);
  view<std::int64_t*> s_id("s_id", n_move), s_steps("s_steps", n_move);
  view<double*> s_energy("s_energy", n_move), s_fmax("s_fmax", n_move);
  view<std::int64_t**> s_stage("s_stage", n_move, stages);
  view<double* [batch_scratch_size]> s_scratch("s_scratch", n_move);
  view<double* [6]> s_virial("s_virial", n_move);
  view<double* [9]> s_cell("s_cell", n_move);
  view<int*> s_pbc("s_pbc", n_move), s_failed("s_failed", n_move), s_built("s_built", n_move),
      s_stale("s_stale", n_move);
  auto ids = b.id;
  auto st = b.steps;
  auto en = b.energy;
  auto fm = b.fmax;
  auto stage = b.stage_steps;
  auto stat = b.status;
  auto scr = b.scratch;
  auto vir = b.virial;
  auto cel = b.cell;
  auto per = b.pbc;
  auto bad = b.failed;
  auto built = b.list_built;
  auto stale = b.forces_stale;
  Kokkos::parallel_for(
      "baton::batch::gather_systems", Kokkos::RangePolicy<execution_space>(0, n_move),
      KOKKOS_LAMBDA(int k) {
        const int src = d_from(k);
        s_count(k) = cnt(src);
        s_status(k) = stat(src);
        s_id(k) = ids(src);
        s_steps(k) = st(src);
        s_energy(k) = en(src);
        s_fmax(k) = fm(src);
        for (int j = 0; j < stages; ++j)
          s_stage(k, j) = stage(src, j);
        for (int j = 0; j < batch_scratch_size; ++j)
          s_scratch(k, j) = scr(src, j);
        for (int j = 0; j < 6; ++j)
          s_virial(k, j) = vir(src, j);
        for (int j = 0; j < 9; ++j)
          s_cell(k, j) = cel(src, j);
        s_pbc(k) = per(src);
        s_failed(k) = bad(src);
        s_built(k) = built(src);
        s_stale(k) = stale(src);
      });
  Kokkos::parallel_for(
      "baton::batch::scatter_systems", Kokkos::RangePolicy<execution_space>(0, n_move),
      KOKKOS_LAMBDA(int k) {
        const int dst = first + k;
        off(dst) = d_offset(k);
        cnt(dst) = s_count(k);
        stat(dst) = s_status(k);
        ids(dst) = s_id(k);
        st(dst) = s_steps(k);
        en(dst) = s_energy(k);
        fm(dst) = s_fmax(k);
        for (int j = 0; j < stages; ++j)
          stage(dst, j) = s_stage(k, j);
        for (int j = 0; j < batch_scratch_size; ++j)
          scr(dst, j) = s_scratch(k, j);
        for (int j = 0; j < 6; ++j)
          vir(dst, j) = s_virial(k, j);
        for (int j = 0; j < 9; ++j)
          cel(dst, j) = s_cell(k, j);
        per(dst) = s_pbc(k);
        bad(dst) = s_failed(k);
        built(dst) = s_built(k);
        stale(dst) = s_stale(k);
      });
  auto sys = b.system_of_atom;
  Kokkos::parallel_for(
      "baton::batch::scatter_atoms", Kokkos::RangePolicy<execution_space>(0, n_move_atoms),
      KOKKOS_LAMBDA(int a) {
        const int dst = atom_begin + a;
        for (int d = 0; d < 3; ++d) {
          pos(dst, d) = t_pos(a, d);
          vel(dst, d) = t_vel(a, d);
          frc(dst, d) = t_frc(a, d);
          origin(dst, d) = t_origin(a, d);
        }
        mass(dst) = t_mass(a);
        spec(dst) = t_species(a);
        sys(dst) = t_sys(a);
      });
  Kokkos::fence();
  set_host();
}

}  // namespace baton::systems
