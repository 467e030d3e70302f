#include "baton/dynamics/eam.hpp"

#include <string>
#include <utility>

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

void EamPairCache::reserve(std::size_t pairs, std::size_t atoms) {
  if (j.size() < pairs) {
    for (std::vector<double>* v : {&dx, &dy, &dz, &r})
      v->resize(pairs);
    j.resize(pairs);
  }
  if (count.size() < atoms)
    count.resize(atoms);
}

EamPairCache& eam_pair_cache() {
  static thread_local EamPairCache cache;
  return cache;
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
