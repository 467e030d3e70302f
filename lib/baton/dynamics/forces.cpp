#include "baton/dynamics/forces.hpp"

#include <array>
#include <cmath>
#include <string>
#include <utility>

#include "baton/dynamics/cell.hpp"

namespace baton::dynamics::detail {

void check_cutoff(const SystemsBatch& batch, int first, int n, double cutoff_squared) {
  const auto slots = std::make_pair(first, first + n);
  const auto pbc =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Kokkos::subview(batch.pbc, slots));
  count_host_sync();
  bool any = false;
  for (int k = 0; k < n; ++k)
    any = any || pbc(k) != 0;
  if (!any)
    return;  // clusters only: one copy of n integers
  const auto cell = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace(), Kokkos::subview(batch.cell, slots, Kokkos::ALL));
  const auto status = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(),
                                                          Kokkos::subview(batch.status, slots));
  const auto id =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Kokkos::subview(batch.id, slots));
  for (int read = 0; read < 3; ++read)  // cell, status, id
    count_host_sync();
  const double cutoff = std::sqrt(cutoff_squared);
  for (int k = 0; k < n; ++k) {
    if (pbc(k) == 0 || status(k) != static_cast<int>(SystemStatus::Active))
      continue;
    std::array<double, 9> h{};
    for (int j = 0; j < 9; ++j)
      h[static_cast<std::size_t>(j)] = cell(k, j);
    const std::string problem = cutoff_problem(h, pbc(k), cutoff);
    if (!problem.empty())
      throw Error("baton::dynamics::compute_forces: system " + std::to_string(id(k)) + ": " +
                  problem);
  }
}

}  // namespace baton::dynamics::detail
