#pragma once
/// \file
/// Embedded-atom-method (EAM) potentials read from LAMMPS' tabulated files into spline tables that
/// reproduce LAMMPS' own interpolation (PairEAM::interpolate and the lookups of PairEAM::compute),
/// and a host reference evaluation of energy and forces for small isolated clusters.
///
/// Files: DYNAMO funcfl (`pair_style eam`, *.eam, one element) and setfl (`pair_style eam/alloy`,
/// *.eam.alloy, any number of elements). Units are the file's: LAMMPS `units metal` (eV, Angstrom,
/// amu) for every file LAMMPS ships.
///
/// Energy: E = sum_i F_a(i)(rho_i) + sum_{i<j} phi_a(i)a(j)(r_ij), rho_i = sum_{j != i}
/// rho_a(j)(r_ij), over pairs with r_ij^2 < cutoff^2. Each function is a table on a uniform grid
/// (value m at x = m * delta, m = 0 .. n-1) turned into one cubic per interval:
///
///   row k (0 <= k < n) holds c[0..6] for x in [k delta, (k+1) delta], with p = x/delta - k:
///     value      = ((c[3] p + c[4]) p + c[5]) p + c[6]
///     derivative = (c[0] p + c[1]) p + c[2]        (d value / dx, already divided by delta)
///
/// Row k is LAMMPS' spline[k+1] (LAMMPS counts from 1); the coefficients are computed with LAMMPS'
/// arithmetic, operation for operation, from the values LAMMPS tabulates: a setfl file's values as
/// they are; a funcfl file's re-sampled the way LAMMPS does it (eam_funcfl_regrid(): the same
/// values up to a rounding, less the last point). The lookups eam_r_site() and eam_rho_site()
/// below reproduce LAMMPS' arithmetic too (p = x * (1/delta) + 1, truncation, the clamps), and so
/// do eam_spline_value(), eam_spline_derivative() and eam_embedding(). Against LAMMPS 29 Sep 2021
/// (tests/eam/compare_lammps.py) energies, forces, per-atom energies and virials agree to a few
/// 1e-15 relative.

#include <Kokkos_Macros.hpp>

#include <array>
#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

namespace baton::systems {
struct HostSystem;
}  // namespace baton::systems

namespace baton::dynamics {

/// The most points a table of an EAM file may have (nrho and nr); larger headers are rejected
/// before anything is allocated. LAMMPS' files have at most 10001.
inline constexpr int max_eam_table_points = 10000000;

/// Coefficients per spline row (LAMMPS' 7: three of the derivative, four of the value).
inline constexpr int eam_spline_width = 7;

/// An EAM potential as spline tables in flat arrays, ready to be copied into Kokkos Views
/// (e.g. View<double*[7]> of n_elements * nrho rows for frho_spline) by the force kernel.
///
/// Layout (all row-major, eam_spline_width = 7 doubles per row, row k as described in the file
/// comment, i.e. LAMMPS' spline[k+1]):
///   frho_spline[(e * nrho + k) * 7 + c]  F_e(rho), embedding energy of element e
///   rhor_spline[(e * nr + k) * 7 + c]    rho_e(r), density that an atom of element e gives
///   z2r_spline[(pair_index(a, b) * nr + k) * 7 + c]  r * phi_ab(r), LAMMPS' z2r (symmetric)
/// Index helpers: frho_row(), rhor_row(), z2r_row() give the offset of a row's c[0].
struct EamTables {
  enum class Format { funcfl, setfl };

  std::string source;  ///< the path read (or the source name given to the stream readers)
  Format format = Format::setfl;

  int n_elements = 0;
  /// Element names: setfl's line 4; for funcfl the symbol of the file's atomic number ("Cu" for 29;
  /// the number itself, as text, when it is not 1..118).
  std::vector<std::string> elements;
  std::vector<int> atomic_numbers;        ///< as the file gives them (setfl: often 1 or 0)
  std::vector<double> masses;             ///< amu (the file's; LAMMPS sets the atom masses from it)
  std::vector<double> lattice_constants;  ///< informational (NaN where the line leaves it out)
  std::vector<std::string> lattice_types;  ///< informational ("" where the line leaves it out)

  /// Points of F(rho) in the tables: rho = k * drho, k = 0 .. nrho-1. setfl: the file's nrho;
  /// funcfl: the file's less one (LAMMPS' grid, see eam_funcfl_regrid()).
  int nrho = 0;
  double drho = 0;  ///< spacing of F(rho)
  /// Points of rho(r) and r*phi(r) in the tables: r = k * dr, k = 0 .. nr-1 (funcfl: the file's
  /// nr less one, as nrho).
  int nr = 0;
  double dr = 0;     ///< spacing of rho(r) and r*phi(r)
  double rdrho = 0;  ///< 1.0 / drho, as LAMMPS computes it (lookups multiply by it)
  double rdr = 0;    ///< 1.0 / dr, as LAMMPS computes it
  /// (nrho_file - 1) * drho, from the file's nrho (LAMMPS' rhomax): past it F(rho) continues
  /// linearly, F(rho) = F(end) + F'(end) (rho - rhomax). setfl: the last tabulated point. funcfl:
  /// one spacing past it; in between, LAMMPS' lookup holds F at its end value and F' at its end
  /// slope (so there the force is not the energy's gradient: a LAMMPS quirk kept on purpose).
  double rhomax = 0;
  double cutoff = 0;          ///< the file's cutoff: pairs with r^2 < cutoff_squared interact
  double cutoff_squared = 0;  ///< cutoff * cutoff (LAMMPS' cutforcesq)

  std::vector<double> frho_spline;  ///< n_elements * nrho * 7
  std::vector<double> rhor_spline;  ///< n_elements * nr * 7
  std::vector<double> z2r_spline;   ///< n_pairs() * nr * 7

  /// Pairs (a, b) with a >= b: n_elements (n_elements + 1) / 2.
  int n_pairs() const noexcept { return n_elements * (n_elements + 1) / 2; }
  /// LAMMPS' z2r index of the element pair (a, b), symmetric: i (i + 1) / 2 + j with i = max(a, b)
  /// and j = min(a, b).
  static constexpr int pair_index(int a, int b) noexcept {
    return a >= b ? a * (a + 1) / 2 + b : b * (b + 1) / 2 + a;
  }
  std::size_t frho_row(int element, int k) const noexcept {
    return (static_cast<std::size_t>(element) * nrho + k) * eam_spline_width;
  }
  std::size_t rhor_row(int element, int k) const noexcept {
    return (static_cast<std::size_t>(element) * nr + k) * eam_spline_width;
  }
  std::size_t z2r_row(int a, int b, int k) const noexcept {
    return (static_cast<std::size_t>(pair_index(a, b)) * nr + k) * eam_spline_width;
  }

  /// The index of element `name` (exact match). Throws baton::Error "baton::dynamics::EamTables:
  /// element 'Xx' is not in <source> (it has Cu, Ni)" when the file does not have it.
  int element_index(const std::string& name) const;
};

/// Reads a DYNAMO funcfl file (LAMMPS `pair_style eam`, one file for all atom types): line 1 a
/// comment; line 2 "Z mass lattice-constant lattice-type" (Z and mass required); line 3 "nrho drho
/// nr dr cutoff"; then nrho values of F(rho), nr of Z(r) and nr of rho(r), any number per line.
/// The tables are LAMMPS': each re-sampled by eam_funcfl_regrid() (nrho - 1 and nr - 1 points),
/// and the pair table r phi(r) = 27.2 * 0.529 * Z(r)^2 (Hartree * Bohr, in eV Angstrom).
///
/// Throws baton::Error "baton::dynamics::read_eam_funcfl: <path>:<line>: <what>" for a file that
/// cannot be opened, is truncated (saying how many values were expected and found), has a token
/// that is not a number (or not a finite one), numbers after the last table, nrho or nr below 6 or
/// above max_eam_table_points, drho, dr, cutoff or mass not positive, or a cutoff beyond the
/// file's r table: cutoff > nr * dr, i.e. more than one spacing past the file's last point (one
/// spacing is tolerated, as several of LAMMPS' files need it). LAMMPS itself does not check the
/// cutoff; beyond a table's last point its lookup holds the last interval's end value and end
/// slope, and so does eam_r_site().
EamTables read_eam_funcfl(const std::string& path);

/// Reads a DYNAMO setfl file (LAMMPS `pair_style eam/alloy`): lines 1-3 comments; line 4
/// "N El1 ... ElN"; line 5 "nrho drho nr dr cutoff"; for each element a line "Z mass
/// lattice-constant lattice-type" (Z and mass required), nrho values of F(rho) and nr of rho(r);
/// then for i = 0..N-1, j = 0..i, nr values of r * phi_ij(r). Values run any number per line, but
/// each element line starts a line of its own. The tables hold the file's values. Errors as
/// read_eam_funcfl() (named "baton::dynamics::read_eam_setfl"; nrho and nr at least 5), and for
/// element names that are missing or repeated.
EamTables read_eam_setfl(const std::string& path);

/// The same readers on a stream; `source_name` stands for the path in messages and in
/// EamTables::source.
EamTables read_eam_funcfl(std::istream& in, const std::string& source_name);
EamTables read_eam_setfl(std::istream& in, const std::string& source_name);

/// read_eam_setfl() for names ending ".eam.alloy" or ".alloy", read_eam_funcfl() for ".eam" (case
/// ignored), with messages named "baton::dynamics::read_eam_file"; anything else (".eam.fs"
/// included: Finnis-Sinclair files are not supported) throws baton::Error.
EamTables read_eam_file(const std::string& path);

/// LAMMPS' PairEAM::interpolate: the n x 7 spline rows (row k = LAMMPS' spline[k+1]) of values
/// f[0..n-1] spaced `delta` apart. Needs n >= 5 and delta > 0 (throws baton::Error otherwise).
std::vector<double> eam_spline(const std::vector<double>& f, double delta);

/// LAMMPS' re-sampling of a funcfl table (PairEAM::file2array) onto its own grid: n = (int)
/// ((n_file - 1) * delta / delta + 0.5) points, i.e. one fewer than the file's (LAMMPS drops the
/// last point of a funcfl file's tables), at (m - 1) * delta, m = 1..n, by four-point Lagrange
/// interpolation of the file's values. The values are the file's up to a rounding wherever
/// (m - 1) * delta / delta is not exactly m - 1 (about 1e-13 relative at a few dozen of
/// Cu_u3.eam's points). read_eam_funcfl() applies it to F(rho), Z(r) and rho(r) so that its tables
/// are LAMMPS'. Needs n_file >= 5, delta > 0.
std::vector<double> eam_funcfl_regrid(const std::vector<double>& values, double delta);

/// Where x lands in a table: the row (0-based) and the fraction p of the interval.
struct EamSite {
  int row;
  double p;
};

namespace detail {
/// static_cast<int>(p) (truncation, as LAMMPS), with p first held to [-1e9, n] so that the cast is
/// defined for any p (NaN included); the row chosen is LAMMPS' wherever LAMMPS' own cast is
/// defined.
KOKKOS_INLINE_FUNCTION int eam_truncate(double p, int n) {
  return p < n ? (p > -1e9 ? static_cast<int>(p) : -1000000000) : n;
}
}  // namespace detail

/// LAMMPS' lookup for r (0 <= r; rows of rho(r) and z2r): p = r * rdr + 1, m = (int) p, m =
/// min(m, nr - 1), p -= m, p = min(p, 1); row m - 1.
KOKKOS_INLINE_FUNCTION EamSite eam_r_site(double r, double rdr, int nr) {
  double p = r * rdr + 1.0;
  int m = detail::eam_truncate(p, nr);
  m = m < nr - 1 ? m : nr - 1;
  p -= m;
  p = p < 1.0 ? p : 1.0;
  return EamSite{m - 1, p};
}

/// LAMMPS' lookup for rho (rows of F(rho)): as eam_r_site() with m = max(1, min(m, nrho - 1)).
KOKKOS_INLINE_FUNCTION EamSite eam_rho_site(double rho, double rdrho, int nrho) {
  double p = rho * rdrho + 1.0;
  int m = detail::eam_truncate(p, nrho);
  m = m < nrho - 1 ? m : nrho - 1;
  m = m > 1 ? m : 1;
  p -= m;
  p = p < 1.0 ? p : 1.0;
  return EamSite{m - 1, p};
}

/// The value of the cubic in the 7 coefficients `c` of one row at p.
KOKKOS_INLINE_FUNCTION double eam_spline_value(const double* c, double p) {
  return ((c[3] * p + c[4]) * p + c[5]) * p + c[6];
}

/// The derivative (per unit x) of the cubic in the 7 coefficients `c` of one row at p.
KOKKOS_INLINE_FUNCTION double eam_spline_derivative(const double* c, double p) {
  return (c[0] * p + c[1]) * p + c[2];
}

/// Embedding energy F(rho) of one atom and fp = F'(rho), LAMMPS' way: `frho` points at the
/// element's row 0 (frho_spline.data() + frho_row(e, 0)); above rhomax the energy gains
/// fp * (rho - rhomax).
KOKKOS_INLINE_FUNCTION double eam_embedding(const double* frho, double rho, double rdrho, int nrho,
                                            double rhomax, double& fp) {
  const EamSite s = eam_rho_site(rho, rdrho, nrho);
  const double* c = frho + static_cast<std::size_t>(s.row) * eam_spline_width;
  fp = eam_spline_derivative(c, s.p);
  double f = eam_spline_value(c, s.p);
  if (rho > rhomax)
    f += fp * (rho - rhomax);
  return f;
}

/// What eam_compute_host() gives for one cluster.
struct EamHostResult {
  double energy = 0;            ///< embedding_energy + pair_energy
  double embedding_energy = 0;  ///< sum_i F(rho_i)
  double pair_energy = 0;       ///< sum_{i<j} phi(r_ij)
  std::vector<double> forces;   ///< 3 N: fx fy fz per atom
  std::vector<double> rho;      ///< N: the host density of each atom
  std::vector<double> fp;       ///< N: F'(rho_i)
  /// N: F(rho_i) + half of each of i's pair energies (LAMMPS' `compute pe/atom`).
  std::vector<double> atom_energy;
  /// Sum over pairs of r_ij (x) F_ij, xx yy zz xy xz yz (SystemForces' convention).
  std::array<double, 6> virial{};
  double fmax = 0;  ///< largest atom force norm
};

/// Reference EAM energy and forces of an isolated cluster (no cell, no periodic images; every pair
/// once, no neighbor list), following LAMMPS' PairEAM::compute step for step: for r^2 <
/// cutoff_squared, rho_i += rho_a(j)(r); fp_i = F'(rho_i); phi = z2r(r)/r; phip = z2r'(r)/r -
/// phi/r; psip = fp_i rho_a(j)'(r) + fp_j rho_a(i)'(r) + phip; F_i += (x_i - x_j) (-psip / r).
/// `positions` holds 3 N coordinates, `elements` N element indices of `tables`. Throws baton::Error
/// ("baton::dynamics::eam_compute_host: ...") for mismatched sizes, an element index out of range,
/// or a non-finite coordinate.
EamHostResult eam_compute_host(const EamTables& tables, const std::vector<double>& positions,
                               const std::vector<int>& elements);

/// eam_compute_host() for a systems::HostSystem: species labels are element names of `tables`. The
/// system must not have a cell (throws baton::Error otherwise: the reference handles clusters
/// only).
EamHostResult eam_compute_host(const EamTables& tables, const systems::HostSystem& system);

/// The energy of eam_compute_host(); `forces` receives its 3 N forces.
double eam_energy_host(const EamTables& tables, const std::vector<double>& positions,
                       const std::vector<int>& elements, std::vector<double>& forces);

}  // namespace baton::dynamics
