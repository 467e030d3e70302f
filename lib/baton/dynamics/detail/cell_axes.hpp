#pragma once
/// \file
/// A cell's own axes, for the barostats that act along them (MTK's aniso and tri, C-rescale's
/// aniso): e1 along a, e2 along b's part normal to a, e3 = e1 x e2.

#include <Kokkos_Core.hpp>

#include "baton/dynamics/random.hpp"

namespace baton::dynamics::detail {

/// A cell's own axes as the rows of a rotation R (x' = R x). In them the cell is in LAMMPS' form,
/// rows (ax 0 0), (bx by 0), (cx cy cz); for a cell already in that form (a along x, b in the xy
/// plane, ax and by > 0) R is exactly the identity. Default: the identity.
struct CellAxes {
  double r[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  /// R t R^T of a symmetric tensor t (xx yy zz xy xz yz), in place.
  KOKKOS_INLINE_FUNCTION void rotate(double* t) const {
    const double m[9] = {t[0], t[3], t[4], t[3], t[1], t[5], t[4], t[5], t[2]};
    double rm[9];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        rm[3 * i + j] = r[3 * i] * m[j] + r[3 * i + 1] * m[3 + j] + r[3 * i + 2] * m[6 + j];
    const int pairs[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {0, 2}, {1, 2}};
    for (int c = 0; c < 6; ++c) {
      const int i = pairs[c][0], j = pairs[c][1];
      t[c] = rm[3 * i] * r[3 * j] + rm[3 * i + 1] * r[3 * j + 1] + rm[3 * i + 2] * r[3 * j + 2];
    }
  }
  /// `to` = R v (into the axes).
  KOKKOS_INLINE_FUNCTION void in(const double* v, double* to) const {
    for (int k = 0; k < 3; ++k)
      to[k] = r[3 * k] * v[0] + r[3 * k + 1] * v[1] + r[3 * k + 2] * v[2];
  }
  /// `to` = R^T v (back out of them).
  KOKKOS_INLINE_FUNCTION void out(const double* v, double* to) const {
    for (int d = 0; d < 3; ++d)
      to[d] = r[d] * v[0] + r[3 + d] * v[1] + r[6 + d] * v[2];
  }
};

/// The axes of the cell `h` (rows a, b, c).
KOKKOS_INLINE_FUNCTION void cell_axes(const double* h, CellAxes& axes) {
  double* r = axes.r;
  const double na = math_sqrt(h[0] * h[0] + h[1] * h[1] + h[2] * h[2]);
  for (int d = 0; d < 3; ++d)
    r[d] = h[d] / na;
  const double ba = h[3] * r[0] + h[4] * r[1] + h[5] * r[2];
  double u[3];
  for (int d = 0; d < 3; ++d)
    u[d] = h[3 + d] - ba * r[d];
  const double nu = math_sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
  for (int d = 0; d < 3; ++d)
    r[3 + d] = u[d] / nu;
  r[6] = r[1] * r[5] - r[2] * r[4];
  r[7] = r[2] * r[3] - r[0] * r[5];
  r[8] = r[0] * r[4] - r[1] * r[3];
}

}  // namespace baton::dynamics::detail
