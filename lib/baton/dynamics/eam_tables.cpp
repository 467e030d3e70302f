#include <baton/core/detail/text.hpp>
#include <baton/core/error.hpp>
#include <baton/dynamics/eam_tables.hpp>
#include <baton/systems/host_system.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <istream>
#include <limits>
#include <locale>
#include <optional>
#include <sstream>
#include <string_view>
#include <utility>

namespace baton::dynamics {
namespace {

constexpr const char* element_symbols[] = {
    "H",  "He", "Li", "Be", "B",  "C",  "N",  "O",  "F",  "Ne", "Na", "Mg", "Al", "Si", "P",
    "S",  "Cl", "Ar", "K",  "Ca", "Sc", "Ti", "V",  "Cr", "Mn", "Fe", "Co", "Ni", "Cu", "Zn",
    "Ga", "Ge", "As", "Se", "Br", "Kr", "Rb", "Sr", "Y",  "Zr", "Nb", "Mo", "Tc", "Ru", "Rh",
    "Pd", "Ag", "Cd", "In", "Sn", "Sb", "Te", "I",  "Xe", "Cs", "Ba", "La", "Ce", "Pr", "Nd",
    "Pm", "Sm", "Eu", "Gd", "Tb", "Dy", "Ho", "Er", "Tm", "Yb", "Lu", "Hf", "Ta", "W",  "Re",
    "Os", "Ir", "Pt", "Au", "Hg", "Tl", "Pb", "Bi", "Po", "At", "Rn", "Fr", "Ra", "Ac", "Th",
    "Pa", "U",  "Np", "Pu", "Am", "Cm", "Bk", "Cf", "Es", "Fm", "Md", "No", "Lr", "Rf", "Db",
    "Sg", "Bh", "Hs", "Mt", "Ds", "Rg", "Cn", "Nh", "Fl", "Mc", "Lv", "Ts", "Og"};
constexpr int n_element_symbols = static_cast<int>(sizeof(element_symbols) / sizeof(char*));

using baton::detail::excerpt;
using baton::detail::lower;
using baton::detail::parse_double;
using baton::detail::parse_integer;
using baton::detail::split_words;

// LAMMPS' funcfl pair table: r phi(r) = 27.2 * 0.529 * Zi(r) Zj(r) (Hartree and Bohr in eV and A).
constexpr double hartree_bohr = 27.2 * 0.529;

std::string number_text(double x) {
  std::ostringstream out;
  out.imbue(std::locale::classic());
  out.precision(17);
  out << x;
  return out.str();
}

// The file as lines (numbered from 1) and words. Text after '#' is a comment on every line but the
// free-form comment lines at the top. Values are a stream of words across lines; header lines
// (read with line()) must start a line of their own. Errors read "<who>: <source>:<line>: <what>".
class EamReader {
 public:
  EamReader(std::istream& in, std::string source, std::string who)
      : in_(in), source_(std::move(source)), who_(std::move(who)) {}

  // One free-form line (a comment line at the top of the file); fails at the end of the file.
  void comment_line(const std::string& what) {
    if (!raw_line()) {
      if (number_ == 0)
        fail(1, "the file is empty");
      fail("the file ends before " + what);
    }
  }

  // The words of the next line that has any, for a header; `what` names the line in messages.
  std::vector<std::string> line(const std::string& what) {
    if (next_word_ < words_.size())
      fail("unexpected " + excerpt(words_[next_word_]) + " after " + last_values_ + " where " +
           what + " should start a new line");
    if (!words_line())
      fail("the file ends before " + what);
    next_word_ = words_.size();
    return words_;
  }

  // n numbers from the stream; `what` names them in messages ("F(rho) of Cu").
  std::vector<double> values(std::size_t n, const std::string& what) {
    std::vector<double> out;
    while (out.size() < n) {
      if (next_word_ == words_.size() && !words_line())
        fail("the file ends after " + std::to_string(out.size()) + " of the " + std::to_string(n) +
             " values of " + what + " (expected " + std::to_string(n) + ", found " +
             std::to_string(out.size()) + ")");
      const std::string& word = words_[next_word_];
      const auto value = parse_double(word);
      if (!value)
        fail(excerpt(word) + " is not a number (value " + std::to_string(out.size() + 1) +
             " of the " + std::to_string(n) + " values of " + what + ")");
      if (!std::isfinite(*value))
        fail(excerpt(word) + " is not a finite number (value " + std::to_string(out.size() + 1) +
             " of the " + std::to_string(n) + " values of " + what + ")");
      out.push_back(*value);
      ++next_word_;
    }
    last_values_ = "the " + std::to_string(n) + " values of " + what;
    return out;
  }

  // Nothing but blank lines and comments may follow the last table.
  void expect_end(const std::string& promise) {
    if (next_word_ < words_.size() || words_line())
      fail("unexpected " + excerpt(words_[next_word_]) + " after " + last_values_ +
           ", the file's last table (" + promise + ")");
  }

  [[noreturn]] void fail(const std::string& what) const { fail(number_, what); }
  [[noreturn]] void fail(std::size_t line, const std::string& what) const {
    std::string message = who_;  // appended piece by piece (g++ 12 -Wrestrict false positives)
    message += ": ";
    message += source_;
    message += ':';
    message += std::to_string(line);
    message += ": ";
    message += what;
    throw Error(message);
  }

 private:
  bool raw_line() {
    if (!std::getline(in_, text_)) {
      if (in_.bad())
        fail(number_ + 1, "read error");
      return false;
    }
    ++number_;
    return true;
  }

  // Reads lines until one has words (comments removed); false at the end of the file.
  bool words_line() {
    while (raw_line()) {
      std::string_view view(text_);
      const std::size_t hash = view.find('#');
      if (hash != std::string_view::npos)
        view = view.substr(0, hash);
      words_.clear();
      next_word_ = 0;
      for (const std::string_view word : split_words(view))
        words_.emplace_back(word);
      if (!words_.empty())
        return true;
    }
    words_.clear();
    next_word_ = 0;
    return false;
  }

  std::istream& in_;
  std::string source_;
  std::string who_;
  std::string text_;
  std::vector<std::string> words_;
  std::size_t next_word_ = 0;
  std::size_t number_ = 0;
  std::string last_values_ = "the header";
};

int integer_word(const EamReader& reader, const std::string& word, const std::string& what) {
  const auto value = parse_integer<long long>(word);
  if (!value || *value < std::numeric_limits<int>::min() ||
      *value > std::numeric_limits<int>::max())
    reader.fail(excerpt(word) + " is not an integer (" + what + ")");
  return static_cast<int>(*value);
}

double number_word(const EamReader& reader, const std::string& word, const std::string& what) {
  const auto value = parse_double(word);
  if (!value || !std::isfinite(*value))
    reader.fail(excerpt(word) + " is not a finite number (" + what + ")");
  return *value;
}

std::string values_count(std::size_t n) {
  return std::to_string(n) + (n == 1 ? " value" : " values");
}

// "nrho drho nr dr cutoff" on the line called `name`: sets and checks the grid of `t`.
void read_grid(EamReader& reader, EamTables& t, const std::string& name, int min_points) {
  const std::vector<std::string> w = reader.line(name + " (nrho drho nr dr cutoff)");
  if (w.size() < 5)
    reader.fail(name + " has " + values_count(w.size()) + "; it needs 5 (nrho drho nr dr cutoff)");
  t.nrho = integer_word(reader, w[0], "nrho");
  t.drho = number_word(reader, w[1], "drho");
  t.nr = integer_word(reader, w[2], "nr");
  t.dr = number_word(reader, w[3], "dr");
  t.cutoff = number_word(reader, w[4], "cutoff");
  const auto check_points = [&](int n, const char* what) {
    if (n < min_points || n > max_eam_table_points)
      reader.fail(std::string(what) + " = " + std::to_string(n) + " must be at least " +
                  std::to_string(min_points) + " and at most " +
                  std::to_string(max_eam_table_points));
  };
  check_points(t.nrho, "nrho");
  check_points(t.nr, "nr");
  const auto check_positive = [&](double x, const char* what) {
    if (!(x > 0))
      reader.fail(std::string(what) + " = " + number_text(x) + " must be positive");
  };
  check_positive(t.drho, "drho");
  check_positive(t.dr, "dr");
  check_positive(t.cutoff, "cutoff");
  // LAMMPS does not check the cutoff and holds a table's last value beyond its end; one spacing
  // past the last point is what several of its files (the Zhou eam/alloy files) need.
  const double table_end = (t.nr - 1) * t.dr;
  if (t.cutoff > (table_end + t.dr) * (1 + 1e-12))
    reader.fail("cutoff = " + number_text(t.cutoff) +
                " lies beyond the r table, which ends at (nr - 1) * dr = " +
                number_text(table_end) + " (at most one spacing dr past its end is accepted)");
  t.rdrho = 1.0 / t.drho;
  t.rdr = 1.0 / t.dr;
  t.rhomax = (t.nrho - 1) * t.drho;
  t.cutoff_squared = t.cutoff * t.cutoff;
}

// "Z mass [lattice-constant lattice-type]" on the line called `name`: appends the element's fields
// to `t`.
void read_element_line(EamReader& reader, EamTables& t, const std::string& name) {
  const std::vector<std::string> w = reader.line(name + " (Z mass lattice-constant lattice-type)");
  if (w.size() < 2)
    reader.fail(name + " has " + values_count(w.size()) +
                "; it needs at least 2 (Z mass lattice-constant lattice-type)");
  t.atomic_numbers.push_back(integer_word(reader, w[0], "the atomic number on " + name));
  const double mass = number_word(reader, w[1], "the mass on " + name);
  if (!(mass > 0))
    reader.fail("mass = " + number_text(mass) + " on " + name + " must be positive");
  t.masses.push_back(mass);
  double lattice = std::numeric_limits<double>::quiet_NaN();
  if (w.size() > 2) {
    const auto value = parse_double(w[2]);
    if (value)
      lattice = *value;
  }
  t.lattice_constants.push_back(lattice);
  t.lattice_types.push_back(w.size() > 3 ? w[3] : std::string());
}

void append(std::vector<double>& to, const std::vector<double>& rows) {
  to.insert(to.end(), rows.begin(), rows.end());
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

EamTables funcfl(std::istream& in, const std::string& source, const std::string& who) {
  EamReader reader(in, source, who);
  EamTables t;
  t.source = source;
  t.format = EamTables::Format::funcfl;
  reader.comment_line("line 2 (Z mass lattice-constant lattice-type)");
  read_element_line(reader, t, "line 2");
  read_grid(reader, t, "line 3", 6);
  const int z = t.atomic_numbers[0];
  t.elements.push_back(z >= 1 && z <= n_element_symbols ? element_symbols[z - 1]
                                                        : std::to_string(z));
  t.n_elements = 1;
  const std::string& name = t.elements[0];
  const std::vector<double> frho = reader.values(t.nrho, "F(rho) of " + name);
  const std::vector<double> zr = reader.values(t.nr, "Z(r) of " + name);
  const std::vector<double> rhor = reader.values(t.nr, "rho(r) of " + name);
  reader.expect_end("nrho = " + std::to_string(t.nrho) + " and nr = " + std::to_string(t.nr) +
                    " on line 3");
  // LAMMPS' own grid: one point fewer than the file's (rhomax, set from the file, stays).
  const std::vector<double> fg = eam_funcfl_regrid(frho, t.drho);
  const std::vector<double> zg = eam_funcfl_regrid(zr, t.dr);
  const std::vector<double> rg = eam_funcfl_regrid(rhor, t.dr);
  std::vector<double> z2r(zg.size());
  for (std::size_t k = 0; k < zg.size(); ++k)
    z2r[k] = hartree_bohr * zg[k] * zg[k];  // LAMMPS: 27.2*0.529 * zri*zrj
  t.nrho = static_cast<int>(fg.size());
  t.nr = static_cast<int>(rg.size());
  t.frho_spline = eam_spline(fg, t.drho);
  t.rhor_spline = eam_spline(rg, t.dr);
  t.z2r_spline = eam_spline(z2r, t.dr);
  return t;
}

EamTables setfl(std::istream& in, const std::string& source, const std::string& who) {
  EamReader reader(in, source, who);
  EamTables t;
  t.source = source;
  t.format = EamTables::Format::setfl;
  for (int i = 1; i <= 3; ++i)
    reader.comment_line("line 4 (N El1 ... ElN)");
  const std::string line4 = "line 4 (N El1 ... ElN)";
  const std::vector<std::string> names = reader.line(line4);
  const int n = integer_word(reader, names[0], "the element count N on line 4");
  if (n < 1 || n > 1000)
    reader.fail("the element count N = " + std::to_string(n) + " on line 4 must be 1 to 1000");
  if (names.size() != static_cast<std::size_t>(n) + 1)
    reader.fail("line 4 gives N = " + std::to_string(n) + " elements but " +
                std::to_string(names.size() - 1) + " names");
  for (int i = 1; i <= n; ++i)
    for (int j = 1; j < i; ++j)
      if (names[i] == names[j])
        reader.fail("element " + excerpt(names[i]) + " is named twice on line 4");
  t.n_elements = n;
  t.elements.assign(names.begin() + 1, names.end());
  read_grid(reader, t, "line 5", 5);
  for (int e = 0; e < n; ++e) {
    const std::string& name = t.elements[e];
    read_element_line(reader, t, "the line of element " + name);
    append(t.frho_spline, eam_spline(reader.values(t.nrho, "F(rho) of " + name), t.drho));
    append(t.rhor_spline, eam_spline(reader.values(t.nr, "rho(r) of " + name), t.dr));
  }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j)
      append(t.z2r_spline,
             eam_spline(reader.values(t.nr, "r*phi(r) of " + t.elements[i] + "-" + t.elements[j]),
                        t.dr));
  reader.expect_end("nrho = " + std::to_string(t.nrho) + " and nr = " + std::to_string(t.nr) +
                    " on line 5, N = " + std::to_string(n) + " on line 4");
  return t;
}

EamTables read_path(const std::string& path, const std::string& who,
                    EamTables (*read)(std::istream&, const std::string&, const std::string&)) {
  std::ifstream in(path);
  if (!in)
    throw Error(who + ": cannot open '" + path + "' for reading");
  return read(in, path, who);
}

}  // namespace

int EamTables::element_index(const std::string& name) const {
  for (std::size_t i = 0; i < elements.size(); ++i)
    if (elements[i] == name)
      return static_cast<int>(i);
  std::string list;
  for (const std::string& e : elements) {
    if (!list.empty())
      list += ", ";
    list += e;
  }
  std::string message = "baton::dynamics::EamTables: element ";
  message += excerpt(name);
  message += " is not in ";
  message += source.empty() ? std::string("these tables") : source;
  message += " (it has ";
  message += list.empty() ? std::string("none") : list;
  message += ")";
  throw Error(message);
}

std::vector<double> eam_spline(const std::vector<double>& values, double delta) {
  const int n = static_cast<int>(values.size());
  if (values.size() < 5 || !(delta > 0))
    throw Error(
        "baton::dynamics::eam_spline: needs at least 5 values and a positive spacing (got " +
        std::to_string(values.size()) + " values, spacing " + number_text(delta) + ")");
  // LAMMPS' PairEAM::interpolate with 1-based rows m = 1..n: s(m, c) is spline[m][c].
  std::vector<double> out(values.size() * eam_spline_width);
  const auto s = [&out](int m, int c) -> double& {
    return out[static_cast<std::size_t>(m - 1) * eam_spline_width + c];
  };
  for (int m = 1; m <= n; ++m)
    s(m, 6) = values[m - 1];

  s(1, 5) = s(2, 6) - s(1, 6);
  s(2, 5) = 0.5 * (s(3, 6) - s(1, 6));
  s(n - 1, 5) = 0.5 * (s(n, 6) - s(n - 2, 6));
  s(n, 5) = s(n, 6) - s(n - 1, 6);

  for (int m = 3; m <= n - 2; ++m)
    s(m, 5) = ((s(m - 2, 6) - s(m + 2, 6)) + 8.0 * (s(m + 1, 6) - s(m - 1, 6))) / 12.0;

  for (int m = 1; m <= n - 1; ++m) {
    s(m, 4) = 3.0 * (s(m + 1, 6) - s(m, 6)) - 2.0 * s(m, 5) - s(m + 1, 5);
    s(m, 3) = s(m, 5) + s(m + 1, 5) - 2.0 * (s(m + 1, 6) - s(m, 6));
  }

  s(n, 4) = 0.0;
  s(n, 3) = 0.0;

  for (int m = 1; m <= n; ++m) {
    s(m, 2) = s(m, 5) / delta;
    s(m, 1) = 2.0 * s(m, 4) / delta;
    s(m, 0) = 3.0 * s(m, 3) / delta;
  }
  return out;
}

// LAMMPS' PairEAM::file2array for one funcfl file, table by table (see the header).
std::vector<double> eam_funcfl_regrid(const std::vector<double>& file, double delta) {
  if (file.size() < 5 || !(delta > 0))
    throw Error(
        "baton::dynamics::eam_funcfl_regrid: needs at least 5 values and a positive "
        "spacing (got " +
        std::to_string(file.size()) + " values, spacing " + number_text(delta) + ")");
  const int n = static_cast<int>(file.size());
  const auto f = [&file](int k) { return file[k - 1]; };  // LAMMPS' 1-based file arrays
  const double sixth = 1.0 / 6.0;
  // LAMMPS: rhomax = (nrho-1) * drho; nrho = static_cast<int> (rhomax/drho + 0.5) (and so for r)
  const double xmax = (n - 1) * delta;
  const int points = static_cast<int>(xmax / delta + 0.5);
  std::vector<double> out(points);
  for (int m = 1; m <= points; ++m) {
    const double r = (m - 1) * delta;
    double p = r / delta + 1.0;
    int k = static_cast<int>(p);
    k = std::min(k, n - 2);
    k = std::max(k, 2);
    p -= k;
    p = std::min(p, 2.0);
    const double cof1 = -sixth * p * (p - 1.0) * (p - 2.0);
    const double cof2 = 0.5 * (p * p - 1.0) * (p - 2.0);
    const double cof3 = -0.5 * p * (p + 1.0) * (p - 2.0);
    const double cof4 = sixth * p * (p * p - 1.0);
    out[m - 1] = cof1 * f(k - 1) + cof2 * f(k) + cof3 * f(k + 1) + cof4 * f(k + 2);
  }
  return out;
}

EamTables read_eam_funcfl(std::istream& in, const std::string& source_name) {
  return funcfl(in, source_name, "baton::dynamics::read_eam_funcfl");
}

EamTables read_eam_setfl(std::istream& in, const std::string& source_name) {
  return setfl(in, source_name, "baton::dynamics::read_eam_setfl");
}

EamTables read_eam_funcfl(const std::string& path) {
  return read_path(path, "baton::dynamics::read_eam_funcfl", funcfl);
}

EamTables read_eam_setfl(const std::string& path) {
  return read_path(path, "baton::dynamics::read_eam_setfl", setfl);
}

EamTables read_eam_file(const std::string& path) {
  const std::string name = lower(path);
  const std::string who = "baton::dynamics::read_eam_file";
  if (ends_with(name, ".alloy"))
    return read_path(path, who, setfl);
  if (ends_with(name, ".eam"))
    return read_path(path, who, funcfl);
  if (ends_with(name, ".fs"))
    throw Error("baton::dynamics::read_eam_file: " + path +
                ": Finnis-Sinclair files (pair_style eam/fs) are not supported");
  throw Error("baton::dynamics::read_eam_file: " + path +
              ": unknown potential file type (the name must end in .eam for a funcfl file, "
              "pair_style eam, or in .eam.alloy or .alloy for a setfl file, pair_style eam/alloy)");
}

EamHostResult eam_compute_host(const EamTables& t, const std::vector<double>& positions,
                               const std::vector<int>& elements) {
  const std::size_t n = elements.size();
  if (positions.size() != 3 * n)
    throw Error("baton::dynamics::eam_compute_host: " + std::to_string(positions.size()) +
                " coordinates for " + std::to_string(n) + " atoms (expected " +
                std::to_string(3 * n) + ")");
  for (std::size_t i = 0; i < n; ++i)
    if (elements[i] < 0 || elements[i] >= t.n_elements)
      throw Error("baton::dynamics::eam_compute_host: atom " + std::to_string(i) +
                  " has element index " + std::to_string(elements[i]) + "; " + t.source + " has " +
                  std::to_string(t.n_elements) + " element(s)");
  for (std::size_t k = 0; k < positions.size(); ++k)
    if (!std::isfinite(positions[k]))
      throw Error("baton::dynamics::eam_compute_host: atom " + std::to_string(k / 3) +
                  " has a coordinate that is not finite");
  if (t.frho_spline.size() != static_cast<std::size_t>(t.n_elements) * t.nrho * eam_spline_width ||
      t.rhor_spline.size() != static_cast<std::size_t>(t.n_elements) * t.nr * eam_spline_width ||
      t.z2r_spline.size() != static_cast<std::size_t>(t.n_pairs()) * t.nr * eam_spline_width)
    throw Error(
        "baton::dynamics::eam_compute_host: the tables' sizes do not match their "
        "n_elements, nrho and nr");

  EamHostResult out;
  out.forces.assign(3 * n, 0.0);
  out.rho.assign(n, 0.0);
  out.fp.assign(n, 0.0);
  out.atom_energy.assign(n, 0.0);
  const double* x = positions.data();
  const double* rhor = t.rhor_spline.data();
  const double* z2r = t.z2r_spline.data();

  // Densities (LAMMPS: rho[i] += rho of j's element at r, and the other way round).
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const double delx = x[3 * i] - x[3 * j];
      const double dely = x[3 * i + 1] - x[3 * j + 1];
      const double delz = x[3 * i + 2] - x[3 * j + 2];
      const double rsq = delx * delx + dely * dely + delz * delz;
      if (rsq < t.cutoff_squared) {
        const EamSite s = eam_r_site(std::sqrt(rsq), t.rdr, t.nr);
        out.rho[i] += eam_spline_value(rhor + t.rhor_row(elements[j], s.row), s.p);
        out.rho[j] += eam_spline_value(rhor + t.rhor_row(elements[i], s.row), s.p);
      }
    }

  // Embedding energies and their derivatives.
  for (std::size_t i = 0; i < n; ++i) {
    const double f = eam_embedding(t.frho_spline.data() + t.frho_row(elements[i], 0), out.rho[i],
                                   t.rdrho, t.nrho, t.rhomax, out.fp[i]);
    out.embedding_energy += f;
    out.atom_energy[i] += f;
  }

  // Pair energies and forces.
  double* force = out.forces.data();
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const double delx = x[3 * i] - x[3 * j];
      const double dely = x[3 * i + 1] - x[3 * j + 1];
      const double delz = x[3 * i + 2] - x[3 * j + 2];
      const double rsq = delx * delx + dely * dely + delz * delz;
      if (!(rsq < t.cutoff_squared))
        continue;
      const double r = std::sqrt(rsq);
      const EamSite s = eam_r_site(r, t.rdr, t.nr);
      // rhoip: derivative of the density i gives j; rhojp: of the density j gives i.
      const double rhoip = eam_spline_derivative(rhor + t.rhor_row(elements[i], s.row), s.p);
      const double rhojp = eam_spline_derivative(rhor + t.rhor_row(elements[j], s.row), s.p);
      const double* c = z2r + t.z2r_row(elements[i], elements[j], s.row);
      const double z2p = eam_spline_derivative(c, s.p);
      const double z2 = eam_spline_value(c, s.p);

      const double recip = 1.0 / r;
      const double phi = z2 * recip;
      const double phip = z2p * recip - phi * recip;
      const double psip = out.fp[i] * rhojp + out.fp[j] * rhoip + phip;
      const double fpair = -psip * recip;

      force[3 * i] += delx * fpair;
      force[3 * i + 1] += dely * fpair;
      force[3 * i + 2] += delz * fpair;
      force[3 * j] -= delx * fpair;
      force[3 * j + 1] -= dely * fpair;
      force[3 * j + 2] -= delz * fpair;

      out.pair_energy += phi;
      out.atom_energy[i] += 0.5 * phi;
      out.atom_energy[j] += 0.5 * phi;

      out.virial[0] += fpair * delx * delx;
      out.virial[1] += fpair * dely * dely;
      out.virial[2] += fpair * delz * delz;
      out.virial[3] += fpair * delx * dely;
      out.virial[4] += fpair * delx * delz;
      out.virial[5] += fpair * dely * delz;
    }
  out.energy = out.embedding_energy + out.pair_energy;
  for (std::size_t i = 0; i < n; ++i)
    out.fmax = std::max(
        out.fmax, std::sqrt(force[3 * i] * force[3 * i] + force[3 * i + 1] * force[3 * i + 1] +
                            force[3 * i + 2] * force[3 * i + 2]));
  return out;
}

EamHostResult eam_compute_host(const EamTables& tables, const systems::HostSystem& system) {
  if (system.pbc[0] || system.pbc[1] || system.pbc[2])
    throw Error("baton::dynamics::eam_compute_host: system " + std::to_string(system.id) +
                " is periodic; the host reference handles isolated clusters only");
  std::vector<int> elements(system.size());
  for (std::size_t i = 0; i < system.size(); ++i)
    elements[i] = tables.element_index(system.species[i]);
  return eam_compute_host(tables, system.positions, elements);
}

double eam_energy_host(const EamTables& tables, const std::vector<double>& positions,
                       const std::vector<int>& elements, std::vector<double>& forces) {
  EamHostResult r = eam_compute_host(tables, positions, elements);
  forces = std::move(r.forces);
  return r.energy;
}

}  // namespace baton::dynamics
