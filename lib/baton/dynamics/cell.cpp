#include "baton/dynamics/cell.hpp"

#include <cmath>
#include <sstream>

namespace baton::dynamics {

namespace {

std::array<double, 3> cross(const double* u, const double* v) {
  return {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
}

double norm(const std::array<double, 3>& u) {
  return std::sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
}

}  // namespace

double cell_volume(const std::array<double, 9>& h) {
  const auto bc = cross(&h[3], &h[6]);
  return std::abs(h[0] * bc[0] + h[1] * bc[1] + h[2] * bc[2]);
}

std::array<double, 3> cell_widths(const std::array<double, 9>& h) {
  const double v = cell_volume(h);
  return {v / norm(cross(&h[3], &h[6])), v / norm(cross(&h[6], &h[0])),
          v / norm(cross(&h[0], &h[3]))};
}

std::string cell_problem(const HostSystem& s) {
  const bool periodic = s.pbc[0] || s.pbc[1] || s.pbc[2];
  if (!s.has_cell())
    return periodic ? "has a periodic axis but no cell" : "";
  for (double c : s.cell)
    if (!std::isfinite(c))
      return "has a cell with a non-finite entry";
  const double v = cell_volume(s.cell);
  if (!(v > 0) || !std::isfinite(v))
    return "has a cell of zero volume";
  return "";
}

std::string cutoff_problem(const std::array<double, 9>& h, int pbc_bits, double cutoff) {
  if (pbc_bits == 0)
    return "";
  std::ostringstream out;
  out.precision(6);
  if (!std::isfinite(cutoff)) {
    out << "is periodic, but the potential has no cutoff";
    return out.str();
  }
  const auto w = cell_widths(h);
  for (int k = 0; k < 3; ++k) {
    if (((pbc_bits >> k) & 1) && 2 * cutoff > w[static_cast<std::size_t>(k)]) {
      out << "cutoff " << cutoff << " is more than half the cell's width " << w[k] << " along "
          << "abc"[k] << " (widths " << w[0] << ", " << w[1] << ", " << w[2] << ")";
      return out.str();
    }
  }
  return "";
}

void wrap_positions(HostSystem& s) {
  const int bits = pbc_bits(s.pbc);
  if (bits == 0 || !s.has_cell())
    return;
  const CellImage c = make_cell_image(s.cell.data(), bits);
  for (std::size_t i = 0; i + 2 < s.positions.size(); i += 3) {
    double* x = &s.positions[i];
    for (int k = 0; k < 3; ++k) {
      // Shift by whole cell vectors, so an atom already inside keeps its exact coordinates.
      const double f = x[0] * c.inv[k] + x[1] * c.inv[3 + k] + x[2] * c.inv[6 + k];
      const double shift = c.periodic[k] ? std::floor(f) : 0.0;
      if (shift != 0)
        for (int d = 0; d < 3; ++d)
          x[d] -= shift * c.h[3 * k + d];
    }
  }
}

}  // namespace baton::dynamics
