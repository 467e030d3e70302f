#include "baton/dynamics/neighbours.hpp"

#include <cmath>
#include <string>

#include "baton/core/error.hpp"
#include "baton/dynamics/detail/checks.hpp"

namespace baton::dynamics {

void validate(const NeighbourOptions& s) {
  using detail::require;
  const char* who = "baton::dynamics::NeighbourOptions";
  require(who, "skin", s.skin, std::isfinite(s.skin), "finite (< 0: the unit system's default)");
  require(who, "all_pairs_below", s.all_pairs_below, s.all_pairs_below >= 0, ">= 0");
  require(who, "max_neighbours", s.max_neighbours, s.max_neighbours >= 1, ">= 1");
}

NeighbourLists::NeighbourLists(NeighbourOptions settings) : settings_(settings) {
  validate(settings_);
}

namespace detail {
void check_list_rows(long long atom_rows) {
  if (atom_rows > max_list_rows)
    throw Error("baton::dynamics::NeighbourLists: a batch of " + std::to_string(atom_rows) +
                " atom rows; neighbour lists index at most " + std::to_string(max_list_rows) +
                " (split the batch)");
}
}  // namespace detail

void NeighbourLists::prepare(const systems::SystemsBatch& batch, double cutoff_squared,
                             double skin) {
  const systems::BatchCapacity cap = batch.capacity();
  const bool resized = cap.atoms != atom_capacity_ || cap.systems != system_capacity_;
  if (cap.atoms > detail::max_list_rows)
    for (int slot = 0; slot < batch.num_systems(); ++slot)
      if (batch.host_slots()[static_cast<std::size_t>(slot)].count >= settings_.all_pairs_below) {
        detail::check_list_rows(cap.atoms);  // a system that uses a list: refused
        break;
      }
  if (resized) {
    using D = detail::NeighbourData;
    const int atoms = cap.atoms, systems = cap.systems;
    data_.list = D::view<int**>("baton::neighbours::list", atoms, data_.capacity);
    data_.num = D::view<int*>("baton::neighbours::num", atoms);
    data_.plain = D::view<int*>("baton::neighbours::plain", atoms);
    data_.bin_of = D::view<int*>("baton::neighbours::bin_of", atoms);
    data_.bin_start = D::view<int*>("baton::neighbours::bin_start", atoms);
    data_.bin_fill = D::view<int*>("baton::neighbours::bin_fill", atoms);
    data_.sorted = D::view<int*>("baton::neighbours::sorted", atoms);
    data_.whole = D::view<double* [3]>("baton::neighbours::whole", atoms);
    data_.x_now = D::view<double* [3]>("baton::neighbours::x_now", atoms);
    data_.x_bin = D::view<double* [3]>("baton::neighbours::x_bin", atoms);
    data_.along_atom = D::view<double*>("baton::neighbours::along_atom", atoms);
    data_.along_sorted = D::view<double*>("baton::neighbours::along_sorted", atoms);
    data_.key = D::view<int* [7]>("baton::neighbours::key", systems);
    data_.key_id = D::view<std::int64_t*>("baton::neighbours::key_id", systems);
    data_.call_first = D::view<std::int64_t*>("baton::neighbours::call_first", systems);
    if (data_.builds.data() == nullptr)
      data_.builds = D::view<std::int64_t>("baton::neighbours::builds");
    atom_capacity_ = atoms;
    system_capacity_ = systems;
  }
  const void* which = batch.list_origin.data();
  if (cutoff_squared != cutoff_squared_ || skin != skin_ || which != batch_) {
    if (!resized)
      Kokkos::deep_copy(data_.key, 0);  // another batch's slots may hold systems with equal keys
    batch_ = which;
    const double rl = std::sqrt(cutoff_squared) + skin;
    data_.list_cutoff2 = rl * rl;
    data_.half_skin2 = 0.25 * skin * skin;
    cutoff_squared_ = cutoff_squared;
    skin_ = skin;
  }
  data_.x_ref = batch.list_origin;
  data_.origin_built = batch.list_built;
  data_.origin_cell = batch.list_cell;
  data_.needed = batch.list_overflow;
  data_.max_capacity = settings_.max_neighbours;
  data_.all_pairs_below = settings_.all_pairs_below;
  if (batch.list_overflow_deferred())
    grow_to(batch.noted_list_overflow());
}

bool NeighbourLists::grow() {
  if (data_.needed.data() == nullptr)
    return false;
  int needed = 0;
  Kokkos::deep_copy(needed, data_.needed);
  systems::count_host_sync();
  return grow_to(needed);
}

bool NeighbourLists::grow(const systems::SystemsBatch& batch, int first, int n) {
  for (int s = first; s < first + n; ++s)
    if (data_.used_for(batch.host_slots()[static_cast<std::size_t>(s)].count))
      return grow();
  return false;  // all pairs everywhere: no list was built, none can have overflowed
}

bool NeighbourLists::grow_after_call(const systems::SystemsBatch& batch) {
  if (batch.list_overflow_deferred())
    return false;
  return grow(batch, 0, batch.num_systems());
}

bool NeighbourLists::grow_to(int needed) {
  if (needed <= data_.capacity || data_.needed.data() == nullptr)
    return false;
  // Room for the density to rise a little before the next growth.
  const long long room = needed + needed / 4 + 8;
  const int capacity =
      static_cast<int>(room < settings_.max_neighbours ? room : settings_.max_neighbours);
  try {
    data_.list =
        detail::NeighbourData::view<int**>("baton::neighbours::list", atom_capacity_, capacity);
  } catch (const std::exception& e) {
    throw Error("baton::dynamics::NeighbourLists: cannot allocate lists of " +
                std::to_string(capacity) + " neighbours for " + std::to_string(atom_capacity_) +
                " atoms (" + e.what() +
                "); lower NeighbourOptions::max_neighbours or the batch's "
                "atom capacity");
  }
  data_.capacity = capacity;
  Kokkos::deep_copy(data_.key, 0);
  Kokkos::deep_copy(data_.needed, 0);
  return true;
}

void NeighbourLists::begin_call(const systems::SystemsBatch& batch, double cutoff_squared,
                                double skin) {
  prepare(batch, cutoff_squared, skin);
  // On the batch's execution space, in order with the calls' kernels: no synchronisation.
  Kokkos::deep_copy(systems::SystemsBatch::execution_space(), data_.call_first, batch.steps);
}

void NeighbourLists::reserve_team_acc(int threads, int atoms) {
  const std::size_t width =
      static_cast<std::size_t>(detail::team_acc_width) * static_cast<std::size_t>(atoms) +
      detail::team_acc_sums;
  if (data_.team_acc.extent(0) >= static_cast<std::size_t>(threads) &&
      data_.team_acc.extent(1) >= width)
    return;
  try {
    data_.team_acc = detail::NeighbourData::view<double**>(
        Kokkos::view_alloc("baton::neighbours::team_acc", Kokkos::WithoutInitializing),
        static_cast<std::size_t>(threads), width);
  } catch (const std::exception& e) {
    throw Error("baton::dynamics::NeighbourLists: cannot allocate the accumulators of " +
                std::to_string(threads) + " threads for a system of " + std::to_string(atoms) +
                " atoms (" + e.what() + ")");
  }
}

std::int64_t NeighbourLists::builds() const {
  std::int64_t n = 0;
  if (data_.builds.data() != nullptr) {
    Kokkos::deep_copy(n, data_.builds);
    systems::count_host_sync();
  }
  return n;
}

}  // namespace baton::dynamics
