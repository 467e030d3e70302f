#pragma once
// Filling and checking 2-D Views in any memory space from a function of (row, column), for tests.
#include <Kokkos_Core.hpp>
#include <cstddef>

namespace baton::test {

/// v(i, j) = f(i, j), through a host mirror.
template <class V, class F>
void fill(const V& v, F f) {
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < v.extent(0); ++i)
    for (std::size_t j = 0; j < v.extent(1); ++j)
      h(i, j) = f(i, j);
  Kokkos::deep_copy(v, h);
}

/// How many v(i, j) differ from f(i, j).
template <class V, class F>
int count_wrong(const V& v, F f) {
  auto h = Kokkos::create_mirror_view(v);
  Kokkos::deep_copy(h, v);
  int wrong = 0;
  for (std::size_t i = 0; i < v.extent(0); ++i)
    for (std::size_t j = 0; j < v.extent(1); ++j)
      wrong += h(i, j) != f(i, j);
  return wrong;
}

}  // namespace baton::test
