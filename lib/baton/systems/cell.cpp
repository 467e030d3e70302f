#include "baton/systems/cell.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace baton::systems {

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
  // Of the cell scaled to its largest entry, then scaled back: the products of a cell with
  // entries of 1e100 would overflow (widths inf / inf, or v / inf = 0).
  double scale = 0;
  for (double c : h)
    scale = std::max(scale, std::abs(c));
  if (!(scale > 0) || !std::isfinite(scale))
    scale = 1;
  std::array<double, 9> u{};
  for (std::size_t k = 0; k < 9; ++k)
    u[k] = h[k] / scale;
  const double v = cell_volume(u);
  return {scale * (v / norm(cross(&u[3], &u[6]))), scale * (v / norm(cross(&u[6], &u[0]))),
          scale * (v / norm(cross(&u[0], &u[3])))};
}

std::string cell_problem(const HostSystem& s) {
  const bool periodic = s.pbc[0] || s.pbc[1] || s.pbc[2];
  if (!s.has_cell())
    return periodic ? "has a periodic axis but no cell" : "";
  for (double c : s.cell)
    if (!std::isfinite(c))
      return "has a cell with a non-finite entry";
  for (int k = 0; k < 3; ++k) {
    const double* a = &s.cell[static_cast<std::size_t>(3 * k)];
    const double m = std::max({std::abs(a[0]), std::abs(a[1]), std::abs(a[2])});
    const double length = m > 0 ? m * std::hypot(a[0] / m, a[1] / m, a[2] / m) : 0;
    if (s.pbc[static_cast<std::size_t>(k)] && length > max_cell_length) {
      std::ostringstream out;
      out.precision(6);
      out << "has a periodic cell vector "
          << "abc"[k] << " of length " << length << ", longer than " << max_cell_length
          << ": atoms moved by whole cell vectors would be"
          << " rounded to about " << length * 0x1p-53
          << " length units, too coarse for the forces (docs/dynamics.md, \"Periodic cells\")";
      return out.str();
    }
  }
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

std::optional<std::array<double, 6>> stress(const HostSystem& s, double mvv2e) {
  const double volume = cell_volume(s.cell);
  if (!(s.pbc[0] && s.pbc[1] && s.pbc[2]) || !(volume > 0) || !std::isfinite(volume) ||
      !std::all_of(s.virial.begin(), s.virial.end(), [](double w) { return std::isfinite(w); }))
    return std::nullopt;
  std::array<double, 6> kinetic{};
  if (!s.velocities.empty()) {
    const int a[6] = {0, 1, 2, 0, 0, 1}, b[6] = {0, 1, 2, 1, 2, 2};
    for (std::size_t i = 0; i < s.size(); ++i) {
      const double m = s.masses.empty() ? 1.0 : s.masses[i];
      const double* v = &s.velocities[3 * i];
      for (int c = 0; c < 6; ++c)
        kinetic[c] += m * v[a[c]] * v[b[c]];
    }
  }
  std::array<double, 6> out{};
  for (int c = 0; c < 6; ++c)
    out[c] = -(s.virial[c] + mvv2e * kinetic[c]) / volume;
  return out;
}

double pressure(const std::array<double, 6>& stress) {
  return -(stress[0] + stress[1] + stress[2]) / 3;
}

}  // namespace baton::systems
