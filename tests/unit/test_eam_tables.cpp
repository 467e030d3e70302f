// EAM tables: LAMMPS' spline (PairEAM::interpolate), the funcfl and setfl readers, their errors,
// and the host reference's forces against its energy. The comparison with LAMMPS itself is
// tests/eam/compare_lammps.py.
#include <doctest/doctest.h>

#include <baton/core/error.hpp>
#include <baton/dynamics/detail/eam_avx2.hpp>
#include <baton/dynamics/eam.hpp>
#include <baton/dynamics/eam_tables.hpp>
#include <baton/systems/host_system.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#ifndef BATON_EAM_FUNCFL_FILE
#define BATON_EAM_FUNCFL_FILE ""
#endif
#ifndef BATON_EAM_SETFL_FILE
#define BATON_EAM_SETFL_FILE ""
#endif

namespace bd = baton::dynamics;
namespace bs = baton::systems;

namespace {

constexpr int W = bd::eam_spline_width;

std::vector<double> sample(int n, double delta, const std::function<double(double)>& f) {
  std::vector<double> v(n);
  for (int k = 0; k < n; ++k)
    v[k] = f(k * delta);
  return v;
}

// The value and derivative of spline rows `s` at x, looked up LAMMPS' way (as for r).
double value_at(const std::vector<double>& s, double x, double delta) {
  const int n = static_cast<int>(s.size()) / W;
  const bd::EamSite site = bd::eam_r_site(x, 1.0 / delta, n);
  return bd::eam_spline_value(s.data() + site.row * W, site.p);
}
double derivative_at(const std::vector<double>& s, double x, double delta) {
  const int n = static_cast<int>(s.size()) / W;
  const bd::EamSite site = bd::eam_r_site(x, 1.0 / delta, n);
  return bd::eam_spline_derivative(s.data() + site.row * W, site.p);
}

std::string number(double x) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  return buffer;
}

// Numbers five to a line, as DYNAMO writes them.
void write_values(std::ostream& out, const std::vector<double>& v) {
  for (std::size_t k = 0; k < v.size(); ++k)
    out << number(v[k]) << ((k % 5 == 4 || k + 1 == v.size()) ? "\n" : " ");
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// Smooth model functions that vanish with their first derivatives at the cutoff rc.
struct Model {
  double rc = 5.0;
  double a = 1.0;  // varies the functions between elements
  double density(double r) const {
    return r < rc ? 0.05 * a * std::exp(-0.7 * r) * (rc - r) * (rc - r) : 0.0;
  }
  double embedding(double rho) const { return -a * std::sqrt(rho + 0.05) + 0.3 * rho * rho; }
  double z(double r) const { return r < rc ? (0.4 + 0.1 * a) * (rc - r) * (rc - r) / rc : 0.0; }
  double rphi(double r) const {
    return r < rc ? r * (std::exp(-1.5 * a * (r - 2.3)) - 2 * std::exp(-0.75 * a * (r - 2.3))) *
                        (rc - r) * (rc - r) / (rc * rc)
                  : 0.0;
  }
};

// A funcfl file of `m` (Cu, Z = 29), with nrho points of F up to (nrho - 1) * drho.
std::string funcfl_text(const Model& m, int nrho, double drho, int nr, double dr, double cutoff) {
  std::ostringstream out;
  out << "synthetic funcfl for tests\n29 63.55 3.615 FCC\n"
      << nrho << " " << number(drho) << " " << nr << " " << number(dr) << " " << number(cutoff)
      << "\n";
  write_values(out, sample(nrho, drho, [&](double x) { return m.embedding(x); }));
  write_values(out, sample(nr, dr, [&](double x) { return m.z(x); }));
  write_values(out, sample(nr, dr, [&](double x) { return m.density(x); }));
  return out.str();
}

// A setfl file with one model per element.
std::string setfl_text(const std::vector<std::string>& names, const std::vector<Model>& models,
                       int nrho, double drho, int nr, double dr, double cutoff) {
  std::ostringstream out;
  out << "synthetic setfl for tests\ncomment 2\ncomment 3\n" << names.size();
  for (const auto& n : names)
    out << " " << n;
  out << "\n"
      << nrho << " " << number(drho) << " " << nr << " " << number(dr) << " " << number(cutoff)
      << "\n";
  for (std::size_t e = 0; e < models.size(); ++e) {
    out << 20 + e << " " << 50.0 + e << " 3.5 fcc\n";
    write_values(out, sample(nrho, drho, [&](double x) { return models[e].embedding(x); }));
    write_values(out, sample(nr, dr, [&](double x) { return models[e].density(x); }));
  }
  for (std::size_t i = 0; i < models.size(); ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      Model mix = models[i];
      mix.a = 0.5 * (models[i].a + models[j].a);
      write_values(out, sample(nr, dr, [&](double x) { return mix.rphi(x); }));
    }
  return out.str();
}

// Every number of a file after `skip_lines` lines, read naively (a check on the readers).
std::vector<double> naive_numbers(const std::string& path, int skip_lines) {
  std::ifstream in(path);
  std::string line;
  for (int i = 0; i < skip_lines; ++i)
    std::getline(in, line);
  std::vector<double> out;
  std::string word;
  while (in >> word)
    out.push_back(std::strtod(word.c_str(), nullptr));
  return out;
}

// Column c (6: the table values) of rows [0, n) of the spline block starting at `offset`.
std::vector<double> column(const std::vector<double>& s, std::size_t offset, int n, int c = 6) {
  std::vector<double> out(n);
  for (int k = 0; k < n; ++k)
    out[k] = s[offset + static_cast<std::size_t>(k) * W + c];
  return out;
}

// Equal to within `relative` of the larger magnitude, element by element.
bool close(const std::vector<double>& a, const std::vector<double>& b, double relative) {
  if (a.size() != b.size())
    return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (std::abs(a[k] - b[k]) > relative * std::max(std::abs(a[k]), std::abs(b[k])))
      return false;
  return true;
}

std::vector<double> slice(const std::vector<double>& v, std::size_t from, std::size_t n) {
  return std::vector<double>(v.begin() + from, v.begin() + from + n);
}

// A perturbed fcc ball of lattice constant a.
std::vector<double> fcc_ball(double a, double radius, unsigned seed) {
  std::vector<double> x;
  unsigned state = seed;
  const auto jitter = [&state]() {
    state = state * 1664525u + 1013904223u;
    return ((state >> 8) / 16777216.0 - 0.5) * 0.2;
  };
  const double basis[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
  for (int i = -3; i <= 3; ++i)
    for (int j = -3; j <= 3; ++j)
      for (int k = -3; k <= 3; ++k)
        for (const auto& b : basis) {
          const double p[3] = {(i + b[0]) * a, (j + b[1]) * a, (k + b[2]) * a};
          if (std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]) <= radius)
            for (double c : p)
              x.push_back(c + jitter());
        }
  return x;
}

// Checks forces against central differences of the energy, and their sum against zero.
void check_forces_are_gradient(const bd::EamTables& t, const std::vector<double>& x,
                               const std::vector<int>& el) {
  const bd::EamHostResult r = bd::eam_compute_host(t, x, el);
  REQUIRE(r.forces.size() == x.size());
  double fsum[3] = {0, 0, 0};
  for (std::size_t k = 0; k < x.size(); ++k)
    fsum[k % 3] += r.forces[k];
  for (double s : fsum)
    CHECK(std::abs(s) < 1e-11 * (1 + r.fmax));
  const double h = 1e-5;
  double worst = 0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    std::vector<double> plus = x, minus = x;
    plus[k] += h;
    minus[k] -= h;
    const double numeric =
        -(bd::eam_compute_host(t, plus, el).energy - bd::eam_compute_host(t, minus, el).energy) /
        (2 * h);
    worst = std::max(worst, std::abs(numeric - r.forces[k]));
  }
  INFO("largest |force + dE/dx| ", worst, " with fmax ", r.fmax);
  CHECK(worst < 1e-6 * (1 + r.fmax));
}

}  // namespace

TEST_CASE("eam_spline holds the table values and is C1 between intervals") {
  const double delta = 0.25;  // a power of 2: the lookup lands exactly on grid points
  const int n = 40;
  const auto f = [](double x) { return std::sin(1.3 * x) + 0.2 * x * x - 1.0; };
  const std::vector<double> v = sample(n, delta, f);
  const std::vector<double> s = bd::eam_spline(v, delta);
  REQUIRE(s.size() == static_cast<std::size_t>(n) * W);

  for (int k = 0; k < n; ++k)
    CHECK(s[k * W + 6] == v[k]);
  for (int k = 0; k < n - 1; ++k)
    CHECK(value_at(s, k * delta, delta) == v[k]);
  CHECK(value_at(s, (n - 1) * delta, delta) == doctest::Approx(v[n - 1]).epsilon(1e-14));

  // LAMMPS' derivative estimates (in units of the table's index).
  CHECK(s[0 * W + 5] == v[1] - v[0]);
  CHECK(s[1 * W + 5] == 0.5 * (v[2] - v[0]));
  CHECK(s[7 * W + 5] == ((v[5] - v[9]) + 8.0 * (v[8] - v[6])) / 12.0);
  CHECK(s[(n - 2) * W + 5] == 0.5 * (v[n - 1] - v[n - 3]));
  CHECK(s[(n - 1) * W + 5] == v[n - 1] - v[n - 2]);
  CHECK(s[(n - 1) * W + 3] == 0.0);
  CHECK(s[(n - 1) * W + 4] == 0.0);
  for (int k = 0; k < n; ++k) {
    CHECK(s[k * W + 2] == s[k * W + 5] / delta);
    CHECK(s[k * W + 1] == 2.0 * s[k * W + 4] / delta);
    CHECK(s[k * W + 0] == 3.0 * s[k * W + 3] / delta);
  }

  // Value and slope meet where the intervals meet.
  for (int k = 0; k + 2 < n; ++k) {
    const double* left = s.data() + k * W;
    const double* right = s.data() + (k + 1) * W;
    CHECK(bd::eam_spline_value(left, 1.0) == doctest::Approx(v[k + 1]).epsilon(1e-14));
    CHECK(bd::eam_spline_derivative(left, 1.0) ==
          doctest::Approx(bd::eam_spline_derivative(right, 0.0)).epsilon(1e-13));
  }
}

TEST_CASE("eam_spline's derivative is the derivative of its value") {
  const double delta = 0.1;
  const int n = 60;
  const auto f = [](double x) { return std::exp(-0.5 * x) * std::cos(2 * x); };
  const auto df = [](double x) {
    return std::exp(-0.5 * x) * (-0.5 * std::cos(2 * x) - 2 * std::sin(2 * x));
  };
  const std::vector<double> s = bd::eam_spline(sample(n, delta, f), delta);
  const double h = 1e-6;
  for (double x = 0.013; x < (n - 1) * delta - 0.01; x += 0.0731) {
    // inside one interval: x -+ h on the same cubic
    const double xi = (std::floor(x / delta) + 0.5) * delta;
    const double numeric = (value_at(s, xi + h, delta) - value_at(s, xi - h, delta)) / (2 * h);
    CHECK(derivative_at(s, xi, delta) == doctest::Approx(numeric).epsilon(1e-7).scale(1));
    // and close to the function's own derivative (fourth-order estimates inside)
    if (x > 3 * delta && x < (n - 4) * delta)
      CHECK(derivative_at(s, x, delta) == doctest::Approx(df(x)).epsilon(1e-4).scale(1));
  }

  // A cubic is reproduced exactly on intervals whose two ends have the five-point estimate.
  const auto cubic = [](double x) { return ((0.5 * x - 2) * x + 0.25) * x + 1; };
  const std::vector<double> c = bd::eam_spline(sample(n, delta, cubic), delta);
  for (double x = 2 * delta + 0.003; x < (n - 3) * delta; x += 0.0517)
    CHECK(value_at(c, x, delta) == doctest::Approx(cubic(x)).epsilon(1e-12).scale(1));
}

TEST_CASE("eam_funcfl_regrid gives back the values but the last, up to a rounding") {
  const auto f = [](double x) { return std::cos(x) * std::exp(-0.1 * x); };
  const std::vector<double> exact = sample(64, 0.125, f);  // (m - 1) * delta / delta exact
  CHECK(bd::eam_funcfl_regrid(exact, 0.125) == slice(exact, 0, 63));
  const std::vector<double> v = sample(300, 0.0137, f);
  const std::vector<double> g = bd::eam_funcfl_regrid(v, 0.0137);
  CHECK(close(g, slice(v, 0, 299), 1e-13));
  CHECK_THROWS_WITH_AS(bd::eam_funcfl_regrid({1, 2, 3, 4}, 0.1),
                       "baton::dynamics::eam_funcfl_regrid: needs at least 5 values and a positive "
                       "spacing (got 4 values, spacing 0.10000000000000001)",
                       baton::Error);
  CHECK_THROWS_WITH_AS(bd::eam_spline({1, 2, 3, 4, 5}, 0),
                       "baton::dynamics::eam_spline: needs at least 5 values and a positive "
                       "spacing (got 5 values, spacing 0)",
                       baton::Error);
}

TEST_CASE("lookups clamp as LAMMPS does, and F continues linearly past rhomax") {
  const int n = 10;
  bd::EamSite s = bd::eam_r_site(0.0, 2.0, n);
  CHECK(s.row == 0);
  CHECK(s.p == 0.0);
  s = bd::eam_r_site(1.25, 2.0, n);  // p = 3.5: m = 3, row 2
  CHECK(s.row == 2);
  CHECK(s.p == 0.5);
  s = bd::eam_r_site(100.0, 2.0, n);  // beyond the table: last interval, its end
  CHECK(s.row == n - 2);
  CHECK(s.p == 1.0);
  s = bd::eam_rho_site(-0.2, 2.0, n);  // below 0: the first interval, extrapolated
  CHECK(s.row == 0);
  CHECK(s.p == doctest::Approx(-0.4));
  s = bd::eam_rho_site(1e30, 2.0, n);
  CHECK(s.row == n - 2);
  CHECK(s.p == 1.0);
  s = bd::eam_rho_site(std::nan(""), 2.0, n);
  CHECK(s.row == n - 2);

  const double drho = 0.5;
  const std::vector<double> f =
      bd::eam_spline(sample(n, drho, [](double x) { return x * x; }), drho);
  const double rhomax = (n - 1) * drho;
  double fp_end = 0, fp = 0;
  const double at_end = bd::eam_embedding(f.data(), rhomax, 1 / drho, n, rhomax, fp_end);
  const double beyond = bd::eam_embedding(f.data(), rhomax + 2.0, 1 / drho, n, rhomax, fp);
  CHECK(fp == fp_end);
  CHECK(beyond == doctest::Approx(at_end + 2.0 * fp_end).epsilon(1e-14));
}

TEST_CASE("Cu_u3.eam (funcfl) from LAMMPS' potentials") {
  const std::string path = BATON_EAM_FUNCFL_FILE;
  if (path.empty()) {
    MESSAGE("skipped: LAMMPS' Cu_u3.eam was not found at configure time (Debian: lammps-data)");
    return;
  }
  const bd::EamTables t = bd::read_eam_funcfl(path);
  CHECK(t.source == path);
  CHECK(t.format == bd::EamTables::Format::funcfl);
  CHECK(t.n_elements == 1);
  CHECK(t.elements == std::vector<std::string>{"Cu"});
  CHECK(t.atomic_numbers == std::vector<int>{29});
  CHECK(t.masses == std::vector<double>{63.550});
  CHECK(t.lattice_constants == std::vector<double>{3.6150});
  CHECK(t.lattice_types == std::vector<std::string>{"FCC"});
  // LAMMPS' grid for a funcfl file: the file's, less its last point; rhomax is the file's.
  CHECK(t.nrho == 499);
  CHECK(t.drho == 5.0100200400801306e-04);
  CHECK(t.nr == 499);
  CHECK(t.dr == 1.0000000000000009e-02);
  CHECK(t.cutoff == 4.9499999999999886e+00);
  CHECK(t.cutoff_squared == t.cutoff * t.cutoff);
  CHECK(t.rdr == 1.0 / t.dr);
  CHECK(t.rdrho == 1.0 / t.drho);
  CHECK(t.rhomax == 499 * t.drho);
  CHECK(t.element_index("Cu") == 0);
  REQUIRE(t.frho_spline.size() == 499u * W);
  REQUIRE(t.rhor_spline.size() == 499u * W);
  REQUIRE(t.z2r_spline.size() == 499u * W);

  const std::vector<double> all = naive_numbers(path, 3);
  REQUIRE(all.size() == 1500);
  // LAMMPS re-samples funcfl tables onto its own grid: the file's values up to a rounding at
  // some points.
  const std::vector<double> frho = bd::eam_funcfl_regrid(slice(all, 0, 500), t.drho);
  const std::vector<double> zr = bd::eam_funcfl_regrid(slice(all, 500, 500), t.dr);
  const std::vector<double> rhor = bd::eam_funcfl_regrid(slice(all, 1000, 500), t.dr);
  CHECK(close(frho, slice(all, 0, 499), 1e-12));
  CHECK(close(zr, slice(all, 500, 499), 1e-12));
  CHECK(close(rhor, slice(all, 1000, 499), 1e-12));
  CHECK(frho != slice(all, 0, 499));  // the rounding shows at some points
  CHECK(column(t.frho_spline, 0, 499) == frho);
  CHECK(column(t.rhor_spline, 0, 499) == rhor);
  std::vector<double> z2r(499);
  for (int k = 0; k < 499; ++k)
    z2r[k] = 27.2 * 0.529 * zr[k] * zr[k];
  CHECK(column(t.z2r_spline, 0, 499) == z2r);
  CHECK(t.frho_spline == bd::eam_spline(frho, t.drho));
  CHECK(t.rhor_spline == bd::eam_spline(rhor, t.dr));
  CHECK(t.z2r_spline == bd::eam_spline(z2r, t.dr));

  // read_eam_file picks funcfl by the extension; the tables are the same bits.
  const bd::EamTables u = bd::read_eam_file(path);
  CHECK(u.frho_spline == t.frho_spline);
  CHECK(u.z2r_spline == t.z2r_spline);

  CHECK_THROWS_WITH_AS(
      t.element_index("Ni"),
      ("baton::dynamics::EamTables: element 'Ni' is not in " + path + " (it has Cu)").c_str(),
      baton::Error);

  // A 55-atom fcc ball: bound, forces the gradient of the energy, no net force.
  const std::vector<double> x = fcc_ball(3.615, 5.2, 7);
  const std::vector<int> el(x.size() / 3, 0);
  const bd::EamHostResult r = bd::eam_compute_host(t, x, el);
  CHECK(r.energy < -2.5 * static_cast<double>(el.size()));
  CHECK(r.energy == doctest::Approx(r.embedding_energy + r.pair_energy).epsilon(1e-15));
  double atoms = 0;
  for (double e : r.atom_energy)
    atoms += e;
  CHECK(atoms == doctest::Approx(r.energy).epsilon(1e-13));
  check_forces_are_gradient(t, x, el);
}

TEST_CASE("Cu_mishin1.eam.alloy (setfl) from LAMMPS' potentials") {
  const std::string path = BATON_EAM_SETFL_FILE;
  if (path.empty()) {
    MESSAGE(
        "skipped: LAMMPS' Cu_mishin1.eam.alloy was not found at configure time (Debian: "
        "lammps-data)");
    return;
  }
  const bd::EamTables t = bd::read_eam_file(path);
  CHECK(t.format == bd::EamTables::Format::setfl);
  CHECK(t.n_elements == 1);
  CHECK(t.elements == std::vector<std::string>{"Cu"});
  CHECK(t.atomic_numbers == std::vector<int>{1});
  CHECK(t.masses == std::vector<double>{63.54999999999999715783});
  CHECK(t.nrho == 10001);
  CHECK(t.drho == 0.00016401626143851118);
  CHECK(t.nr == 10001);
  CHECK(t.dr == 0.00089991000899910004);
  CHECK(t.cutoff == 5.50678999999999962967);
  CHECK(t.n_pairs() == 1);
  REQUIRE(t.frho_spline.size() == 10001u * W);
  REQUIRE(t.rhor_spline.size() == 10001u * W);
  REQUIRE(t.z2r_spline.size() == 10001u * W);

  const std::vector<double> all = naive_numbers(path, 6);  // 5 header lines and the element line
  REQUIRE(all.size() == 3 * 10001u);
  CHECK(t.frho_spline == bd::eam_spline(slice(all, 0, 10001), t.drho));
  CHECK(t.rhor_spline == bd::eam_spline(slice(all, 10001, 10001), t.dr));
  CHECK(t.z2r_spline == bd::eam_spline(slice(all, 20002, 10001), t.dr));

  const std::vector<double> x = fcc_ball(3.615, 5.2, 11);
  const std::vector<int> el(x.size() / 3, 0);
  const bd::EamHostResult r = bd::eam_compute_host(t, x, el);
  CHECK(r.energy < -2.5 * static_cast<double>(el.size()));
  check_forces_are_gradient(t, x, el);

  // The HostSystem form maps species to elements.
  bs::HostSystem system;
  system.positions = x;
  system.species.assign(el.size(), "Cu");
  CHECK(bd::eam_compute_host(t, system).energy == r.energy);
  system.species[3] = "Ag";
  CHECK_THROWS_WITH_AS(
      bd::eam_compute_host(t, system),
      ("baton::dynamics::EamTables: element 'Ag' is not in " + path + " (it has Cu)").c_str(),
      baton::Error);
}

TEST_CASE("a synthetic funcfl: LAMMPS' grid, forces, and F near rhomax") {
  const Model m;
  const std::string path = "baton_test_eam_synthetic.eam";
  write_file(path, funcfl_text(m, 60, 0.05, 120, 0.05, 5.0));
  const bd::EamTables t = bd::read_eam_file(path);
  std::remove(path.c_str());
  CHECK(t.format == bd::EamTables::Format::funcfl);
  CHECK(t.nrho == 59);
  CHECK(t.nr == 119);
  CHECK(t.rhomax == 59 * 0.05);  // the file's: one spacing past LAMMPS' last F point
  const std::vector<double> z =
      bd::eam_funcfl_regrid(sample(120, 0.05, [&](double r) { return m.z(r); }), 0.05);
  REQUIRE(z.size() == 119);
  for (int k = 0; k < t.nr; ++k) {
    CHECK(z[k] == doctest::Approx(m.z(k * 0.05)).epsilon(1e-13).scale(1e-300));
    CHECK(t.z2r_spline[t.z2r_row(0, 0, k) + 6] == 27.2 * 0.529 * z[k] * z[k]);
  }

  const std::vector<double> x = fcc_ball(2.9, 4.3, 3);
  const std::vector<int> el(x.size() / 3, 0);
  const bd::EamHostResult loose = bd::eam_compute_host(t, x, el);
  CHECK(*std::max_element(loose.rho.begin(), loose.rho.end()) < (t.nrho - 1) * t.drho);
  check_forces_are_gradient(t, x, el);

  // LAMMPS' funcfl quirk: between its last F point, (nrho - 1) drho, and rhomax = nrho drho, F
  // holds its end value while fp is the end slope; past rhomax F grows by fp (rho - rhomax).
  const double* frho = t.frho_spline.data();
  double fp_end = 0, fp_gap = 0, fp_past = 0;
  const double end = (t.nrho - 1) * t.drho;
  const double f_end = bd::eam_embedding(frho, end, t.rdrho, t.nrho, t.rhomax, fp_end);
  const double f_gap =
      bd::eam_embedding(frho, end + 0.6 * t.drho, t.rdrho, t.nrho, t.rhomax, fp_gap);
  const double f_past = bd::eam_embedding(frho, t.rhomax + 0.3, t.rdrho, t.nrho, t.rhomax, fp_past);
  CHECK(f_gap == doctest::Approx(f_end).epsilon(1e-14));
  CHECK(fp_gap == doctest::Approx(fp_end).epsilon(1e-14));
  CHECK(fp_past == fp_gap);
  CHECK(f_past == doctest::Approx(f_gap + 0.3 * fp_gap).epsilon(1e-14));
}

TEST_CASE("a synthetic two-element setfl: pair tables by (i, j) and cross densities") {
  Model a, b;
  b.a = 1.3;
  const std::string path = "baton_test_eam_synthetic.eam.alloy";
  write_file(path, setfl_text({"Ni", "Cu"}, {a, b}, 200, 0.01, 150, 0.04, 5.0));
  const bd::EamTables t = bd::read_eam_file(path);
  std::remove(path.c_str());
  CHECK(t.elements == std::vector<std::string>{"Ni", "Cu"});
  CHECK(t.atomic_numbers == std::vector<int>{20, 21});
  CHECK(t.masses == std::vector<double>{50.0, 51.0});
  CHECK(t.element_index("Cu") == 1);
  CHECK(t.n_pairs() == 3);
  CHECK(bd::EamTables::pair_index(0, 0) == 0);
  CHECK(bd::EamTables::pair_index(1, 0) == 1);
  CHECK(bd::EamTables::pair_index(0, 1) == 1);
  CHECK(bd::EamTables::pair_index(1, 1) == 2);
  CHECK(bd::EamTables::pair_index(3, 2) == 8);
  const int k = 40;  // r = 1.6
  CHECK(t.rhor_spline[t.rhor_row(1, k) + 6] == b.density(k * 0.04));
  CHECK(t.frho_spline[t.frho_row(1, k) + 6] == b.embedding(k * 0.01));
  Model mix = a;
  mix.a = 0.5 * (a.a + b.a);
  CHECK(t.z2r_spline[t.z2r_row(0, 1, k) + 6] == mix.rphi(k * 0.04));
  CHECK(t.z2r_spline[t.z2r_row(1, 1, k) + 6] == b.rphi(k * 0.04));

  const std::vector<double> x = fcc_ball(3.3, 4.8, 5);
  std::vector<int> el(x.size() / 3);
  for (std::size_t i = 0; i < el.size(); ++i)
    el[i] = static_cast<int>((i * 7) % 3 == 0);
  check_forces_are_gradient(t, x, el);

  // Squeezed: densities run past rhomax, where F continues linearly (forces stay its gradient).
  std::vector<double> squeezed = x;
  for (double& c : squeezed)
    c *= 0.6;
  const bd::EamHostResult tight = bd::eam_compute_host(t, squeezed, el);
  CHECK(*std::max_element(tight.rho.begin(), tight.rho.end()) > t.rhomax);
  check_forces_are_gradient(t, squeezed, el);

  // An isolated A-B dimer by hand: E = F_A(rho_B(r)) + F_B(rho_A(r)) + z2r_AB(r) / r.
  const double r = 2.37;
  const bd::EamHostResult d = bd::eam_compute_host(t, {0, 0, 0, r, 0, 0}, {0, 1});
  const bd::EamSite s = bd::eam_r_site(r, t.rdr, t.nr);
  const double rho_from_b = bd::eam_spline_value(t.rhor_spline.data() + t.rhor_row(1, s.row), s.p);
  const double rho_from_a = bd::eam_spline_value(t.rhor_spline.data() + t.rhor_row(0, s.row), s.p);
  CHECK(d.rho[0] == rho_from_b);
  CHECK(d.rho[1] == rho_from_a);
  double fp = 0;
  const double expected =
      bd::eam_embedding(t.frho_spline.data() + t.frho_row(0, 0), rho_from_b, t.rdrho, t.nrho,
                        t.rhomax, fp) +
      bd::eam_embedding(t.frho_spline.data() + t.frho_row(1, 0), rho_from_a, t.rdrho, t.nrho,
                        t.rhomax, fp) +
      bd::eam_spline_value(t.z2r_spline.data() + t.z2r_row(1, 0, s.row), s.p) / r;
  CHECK(d.energy == doctest::Approx(expected).epsilon(1e-15));
  CHECK(d.rho[0] == doctest::Approx(b.density(r)).epsilon(1e-5));
}

TEST_CASE("bad files and bad names give messages with the path and the line") {
  const Model m;
  const std::string good = funcfl_text(m, 20, 0.05, 20, 0.25, 4.5);  // 4 lines a table
  const std::string path = "baton_test_eam_bad.eam";
  const auto read_text = [&](const std::string& text) {
    write_file(path, text);
    try {
      bd::read_eam_file(path);
    } catch (const baton::Error& e) {
      std::remove(path.c_str());
      return std::string(e.what());
    }
    std::remove(path.c_str());
    return std::string("no error");
  };
  const std::string where = "baton::dynamics::read_eam_file: " + path + ":";

  CHECK(read_text(good) == "no error");
  // Truncated: the last line of rho(r) (line 15) gone.
  const std::string truncated = good.substr(0, good.rfind('\n', good.size() - 2) + 1);
  CHECK(read_text(truncated) ==
        where +
            "14: the file ends after 15 of the 20 values of rho(r) of Cu (expected 20, found 15)");
  CHECK(read_text("comment\n29 63.55\n20 0.05 20 0.25 4.5\n") ==
        where + "3: the file ends after 0 of the 20 values of F(rho) of Cu (expected 20, found 0)");
  CHECK(read_text("comment\n29 63.55\n") ==
        where + "2: the file ends before line 3 (nrho drho nr dr cutoff)");
  CHECK(read_text("") == where + "1: the file is empty");
  // Not a number: the 3rd value of Z(r), on line 8.
  std::string bad = good;
  std::istringstream lines(good);
  std::string text, line;
  for (int i = 1; std::getline(lines, line); ++i) {
    if (i == 8) {
      const auto second_space = line.find(' ', line.find(' ') + 1);
      line =
          line.substr(0, second_space) + " 1.0x2" + line.substr(line.find(' ', second_space + 1));
    }
    text += line + "\n";
  }
  CHECK(read_text(text) ==
        where + "8: '1.0x2' is not a number (value 3 of the 20 values of Z(r) of Cu)");
  CHECK(read_text(good + "1e-3\n") ==
        where +
            "16: unexpected '1e-3' after the 20 values of rho(r) of Cu, the file's last table "
            "(nrho = 20 and nr = 20 on line 3)");
  CHECK(read_text(good + "\n  # a comment\n\n") == "no error");

  const auto header = [&](const std::string& grid) {
    return read_text("comment\n29 63.55 3.615 FCC\n" + grid + "\n" +
                     good.substr(good.find('\n', good.find('\n', good.find('\n') + 1) + 1) + 1));
  };
  CHECK(header("0 0.05 20 0.25 4.5") ==
        where + "3: nrho = 0 must be at least 6 and at most 10000000");
  CHECK(header("20 0.05 4 0.25 4.5") ==
        where + "3: nr = 4 must be at least 6 and at most 10000000");
  CHECK(header("20 0.05 20 -0.25 4.5") == where + "3: dr = -0.25 must be positive");
  CHECK(header("20 0 20 0.25 4.5") == where + "3: drho = 0 must be positive");
  CHECK(header("20 0.05 20 0.25 0") == where + "3: cutoff = 0 must be positive");
  CHECK(header("20 0.05 20 0.25 4.75") == "no error");  // (nr - 1) dr = 4.75
  CHECK(header("20 0.05 20 0.25 5") == "no error");     // one spacing past the end
  CHECK(header("20 0.05 20 0.25 5.01") ==
        where +
            "3: cutoff = 5.0099999999999998 lies beyond the r table, which ends at (nr - 1) * dr "
            "= 4.75 (at most one spacing dr past its end is accepted)");
  CHECK(header("20.0 0.05 20 0.25 4.5") == where + "3: '20.0' is not an integer (nrho)");
  CHECK(header("20 0.05 20 0.25") ==
        where + "3: line 3 has 4 values; it needs 5 (nrho drho nr dr cutoff)");
  CHECK(read_text("comment\n29 -1 3.615 FCC\n20 0.05 20 0.25 4.5\n") ==
        where + "2: mass = -1 on line 2 must be positive");

  // Names and missing files.
  CHECK_THROWS_WITH_AS(
      bd::read_eam_file("no/such/dir/Cu.eam"),
      "baton::dynamics::read_eam_file: cannot open 'no/such/dir/Cu.eam' for reading", baton::Error);
  CHECK_THROWS_WITH_AS(bd::read_eam_funcfl("no/such/dir/Cu.eam"),
                       "baton::dynamics::read_eam_funcfl: cannot open 'no/such/dir/Cu.eam' for "
                       "reading",
                       baton::Error);
  CHECK_THROWS_WITH_AS(
      bd::read_eam_file("Cu.txt"),
      "baton::dynamics::read_eam_file: Cu.txt: unknown potential file type (the name must end in "
      ".eam for a funcfl file, pair_style eam, or in .eam.alloy or .alloy for a setfl file, "
      "pair_style eam/alloy)",
      baton::Error);
  CHECK_THROWS_WITH_AS(bd::read_eam_file("Fe_mm.eam.fs"),
                       "baton::dynamics::read_eam_file: Fe_mm.eam.fs: Finnis-Sinclair files "
                       "(pair_style eam/fs) are not supported",
                       baton::Error);
  // The same text through the stream reader names the stream.
  {
    std::istringstream in(truncated);
    CHECK_THROWS_WITH_AS(bd::read_eam_funcfl(in, "<memory>"),
                         "baton::dynamics::read_eam_funcfl: <memory>:14: the file ends after 15 of "
                         "the 20 values of rho(r) of Cu (expected 20, found 15)",
                         baton::Error);
  }
}

TEST_CASE("bad setfl files") {
  Model a, b;
  b.a = 1.2;
  const std::string good = setfl_text({"Ni", "Cu"}, {a, b}, 10, 0.1, 10, 0.5, 4.5);
  const auto read = [](const std::string& text) {
    std::istringstream in(text);
    try {
      bd::read_eam_setfl(in, "x.eam.alloy");
    } catch (const baton::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string where = "baton::dynamics::read_eam_setfl: x.eam.alloy:";
  CHECK(read(good) == "no error");
  const auto replace_line = [&](int number, const std::string& with) {
    std::istringstream lines(good);
    std::string out, line;
    for (int i = 1; std::getline(lines, line); ++i)
      out += (i == number ? with : line) + "\n";
    return out;
  };
  CHECK(read(replace_line(4, "2 Ni")) == where + "4: line 4 gives N = 2 elements but 1 names");
  CHECK(read(replace_line(4, "2 Ni Ni")) == where + "4: element 'Ni' is named twice on line 4");
  CHECK(read(replace_line(5, "10 0.1 4 0.5 1.5")) ==
        where + "5: nr = 4 must be at least 5 and at most 10000000");
  CHECK(read(replace_line(4, "0")) ==
        where + "4: the element count N = 0 on line 4 must be 1 to 1000");
  CHECK(read(replace_line(4, "two Ni Cu")) ==
        where + "4: 'two' is not an integer (the element count N on line 4)");
  // Line 6 is Ni's element line; 7-8 its F(rho), 9-10 its rho(r); line 11 Cu's element line.
  CHECK(read(replace_line(11, "21")) ==
        where +
            "11: the line of element Cu has 1 value; it needs at least 2 (Z mass "
            "lattice-constant lattice-type)");
  // Ni's rho(r) one value longer: the extra value is where Cu's element line should start.
  {
    std::istringstream lines(good);
    std::string out, line;
    for (int i = 1; std::getline(lines, line); ++i)
      out += line + (i == 10 ? " 0.5\n" : "\n");
    CHECK(read(out) ==
          where +
              "10: unexpected '0.5' after the 10 values of rho(r) of Ni where the line "
              "of element Cu (Z mass lattice-constant lattice-type) should start a new "
              "line");
  }
  // Truncated in the last pair table.
  CHECK(read(good.substr(0, good.rfind('\n', good.size() - 2) + 1)) ==
        where +
            "20: the file ends after 5 of the 10 values of r*phi(r) of Cu-Cu (expected 10, "
            "found 5)");
  CHECK(read(replace_line(8, "1 2 3 4 nan")) ==
        where + "8: 'nan' is not a finite number (value 10 of the 10 values of F(rho) of Ni)");
}

#if BATON_AVX2_DISPATCH
TEST_CASE("the AVX2 copies of the lookups give the scalar code's bits") {
  const std::string path = BATON_EAM_FUNCFL_FILE;
  if (path.empty() || !std::ifstream(path)) {
    MESSAGE("skipped: no Cu_u3.eam (Debian: lammps-data)");
    return;
  }
  if (!bd::detail::host_has_avx2()) {
    MESSAGE("skipped: this CPU has no AVX2");
    return;
  }
  const bd::EamTables t = bd::read_eam_file(path);
  const double* rho = t.rhor_spline.data();
  const double* z2 = t.z2r_spline.data();
  // Distances across the table and past its end, on its knots, and the odd ones (a NaN, an
  // infinity, zero); atom j's F'(rho) at fp[2 j].
  std::vector<double> r;
  for (int k = 0; k < 400; ++k)
    r.push_back(0.5 + 0.013 * k);
  for (int k = 1; k < 8; ++k)
    r.push_back(k / t.rdr);
  r.push_back(std::nan(""));
  r.push_back(HUGE_VAL);
  r.push_back(0.0);
  r.push_back(1e300);
  while (r.size() % 4 != 0)
    r.push_back(2.5);
  const int n = static_cast<int>(r.size());
  std::vector<int> j(r.size());
  std::vector<double> fp(2 * r.size());
  for (int k = 0; k < n; ++k) {
    j[static_cast<std::size_t>(k)] = (k * 7) % n;
    fp[static_cast<std::size_t>(2 * k)] = -0.3 + 0.001 * k;
  }
  const double fpi = -0.71;
  std::vector<double> dens(r.size()), s(r.size()), phi(r.size());
  bd::detail::eam_densities_avx2(rho, t.rdr, t.nr, r.data(), n, dens.data());
  bd::detail::eam_pair_terms_avx2(rho, z2, t.rdr, t.nr, fp.data(), fpi, j.data(), r.data(), n,
                                  s.data(), phi.data());
  const auto same = [](double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; };
  int differ = 0;
  for (int k = 0; k < n; ++k) {
    const double rk = r[static_cast<std::size_t>(k)];
    const bd::EamSite site = bd::eam_r_site(rk, t.rdr, t.nr);
    const double* c = rho + static_cast<std::size_t>(site.row) * bd::eam_spline_width;
    const double* cz = z2 + static_cast<std::size_t>(site.row) * bd::eam_spline_width;
    // Eam::Kernel::block_pair_terms, one element.
    const double rhop = bd::eam_spline_derivative(c, site.p);
    const double z2p = bd::eam_spline_derivative(cz, site.p);
    const double recip = 1.0 / rk;
    const double ph = bd::eam_spline_value(cz, site.p) * recip;
    const double php = z2p * recip - ph * recip;
    const double fpj = fp[static_cast<std::size_t>(2 * j[static_cast<std::size_t>(k)])];
    const double sk = -(fpi * rhop + fpj * rhop + php) * recip;
    const std::size_t u = static_cast<std::size_t>(k);
    if (!same(dens[u], bd::eam_spline_value(c, site.p)) || !same(s[u], sk) || !same(phi[u], ph)) {
      ++differ;
      MESSAGE("r = " << rk << ": " << dens[u] << " " << s[u] << " " << phi[u]);
    }
  }
  CHECK(differ == 0);
}
#endif

TEST_CASE("EAM's pair room: one that cannot be allocated is no room, never an exception") {
  namespace d = baton::dynamics::detail;
  const std::size_t limit = d::eam_cached_pairs_max;
  const d::EamPairRoom some = d::eam_pair_room_host(1000, 50);
  CHECK(some.pairs == 1000);
  CHECK(some.count != nullptr);
  // More doubles than a vector can hold: resize() throws (std::length_error) without allocating.
  d::eam_cached_pairs_max = std::size_t(1) << 62;
  d::EamPairRoom none{};
  CHECK_NOTHROW(none = d::eam_pair_room_host(std::size_t(1) << 62, 50));
  CHECK(none.pairs == 0);
  CHECK(none.count == nullptr);
  CHECK(none.j == nullptr);
  d::eam_cached_pairs_max = limit;
  // The next room is had again.
  const d::EamPairRoom again = d::eam_pair_room_host(2000, 60);
  CHECK(again.pairs == 2000);
  CHECK(again.count != nullptr);
}
