#include "baton/dynamics/eam.hpp"

#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "baton/core/error.hpp"

namespace baton::dynamics {

namespace {

template <class T>
Kokkos::View<const T*, systems::SystemsBatch::memory_space> to_device(const std::vector<T>& host,
                                                                      const std::string& label) {
  Kokkos::View<T*, systems::SystemsBatch::memory_space> d(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "baton::eam::" + label), host.size());
  Kokkos::deep_copy(
      d, Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
             host.data(), host.size()));
  return d;
}

}  // namespace

namespace detail {

EamPairRoom eam_pair_room_host(std::size_t pairs, std::size_t atoms) {
  struct Buffer {
    std::vector<double> dx, dy, dz, r;
    std::vector<int> j, count;
  };
  static thread_local Buffer b;
  const std::size_t n = pairs < eam_cached_pairs_max ? pairs : eam_cached_pairs_max;
  // Called inside a parallel region, where an exception would end the process: a room that cannot
  // be had is no room (every pair is filled again), and what was held goes back.
  try {
    if (b.j.size() < n) {
      for (std::vector<double>* v : {&b.dx, &b.dy, &b.dz, &b.r})
        v->resize(n);
      b.j.resize(n);
    }
    if (b.count.size() < atoms)
      b.count.resize(atoms);
  } catch (const std::exception&) {
    b = Buffer{};
    return EamPairRoom{};
  }
  return EamPairRoom{
      b.dx.data(), b.dy.data(), b.dz.data(), b.r.data(), b.j.data(), b.count.data(), n};
}

}  // namespace detail

Eam::Eam(const std::string& path, std::vector<std::string> species)
    : tables_(std::make_shared<const EamTables>(read_eam_file(path))) {
  const EamTables& t = *tables_;
  if (species.empty())
    species = t.elements;
  std::vector<int> element;
  for (const std::string& s : species)
    element.push_back(t.element_index(s));  // throws naming the file and its elements
  kernel_.frho = to_device(t.frho_spline, "frho");
  kernel_.rhor = to_device(t.rhor_spline, "rhor");
  kernel_.z2r = to_device(t.z2r_spline, "z2r");
  kernel_.element = to_device(element, "element");
  kernel_.n_elements = t.n_elements;
  kernel_.n_species = static_cast<int>(element.size());
  kernel_.nrho = t.nrho;
  kernel_.nr = t.nr;
  kernel_.rdrho = t.rdrho;
  kernel_.rdr = t.rdr;
  kernel_.rhomax = t.rhomax;
  kernel_.rc2 = t.cutoff_squared;
}

double Eam::mass(const std::string& element) const {
  return tables_->masses[static_cast<std::size_t>(tables_->element_index(element))];
}

}  // namespace baton::dynamics
