#include <baton/core/atomic_file.hpp>
#include <baton/core/detail/text.hpp>
#include <baton/core/error.hpp>
#include <baton/systems/cell.hpp>
#include <baton/systems/fields.hpp>
#include <baton/systems/xyz.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <istream>
#include <limits>
#include <locale>
#include <optional>
#include <ostream>
#include <sstream>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace baton::systems {
namespace {

using detail::excerpt;
using detail::is_space;
using detail::lower;
using detail::parse_double;
using detail::parse_integer;
using detail::split_words;

// The items of a list value (Lattice, pbc): separated by spaces or commas, as ASE splits them.
std::vector<std::string_view> split_list(std::string_view value) {
  std::vector<std::string_view> items;
  std::size_t i = 0;
  const auto separator = [](char c) { return is_space(c) || c == ','; };
  while (i < value.size()) {
    while (i < value.size() && separator(value[i]))
      ++i;
    const std::size_t start = i;
    while (i < value.size() && !separator(value[i]))
      ++i;
    if (i > start)
      items.push_back(value.substr(start, i - start));
  }
  return items;
}

// Lines of the input, numbered from 1, with a trailing '\r' removed. Errors read
// "<who>: <source>:<line>: <what>", who being the public function that reads.
class LineReader {
 public:
  LineReader(std::istream& in, std::string source, const char* who)
      : in_(in), source_(std::move(source)), who_(who) {}

  bool next() {
    if (!std::getline(in_, line_)) {
      if (in_.bad())
        fail(number_ + 1, "read error");
      return false;
    }
    ++number_;
    if (!line_.empty() && line_.back() == '\r')
      line_.pop_back();
    return true;
  }
  const std::string& line() const noexcept { return line_; }
  std::size_t number() const noexcept { return number_; }

  [[noreturn]] void fail(std::size_t line, const std::string& what) const {
    throw Error(std::string(who_) + ": " + source_ + ":" + std::to_string(line) + ": " + what);
  }
  [[noreturn]] void fail(const std::string& what) const { fail(number_, what); }

 private:
  std::istream& in_;
  std::string source_;
  const char* who_;
  std::string line_;
  std::size_t number_ = 0;
};

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// key=value, key="quoted value" (backslash escapes the next character) or key={braced value}; bare
// words are left out. nullopt when a quote or brace is not closed.
std::optional<KeyValues> parse_comment(std::string_view s) {
  KeyValues out;
  std::size_t i = 0;
  const auto skip_space = [&] {
    while (i < s.size() && is_space(s[i]))
      ++i;
  };
  while (true) {
    skip_space();
    if (i == s.size())
      return out;
    const std::size_t start = i;
    while (i < s.size() && !is_space(s[i]) && s[i] != '=')
      ++i;
    std::string key(s.substr(start, i - start));
    skip_space();
    if (i == s.size() || s[i] != '=')
      continue;  // a bare word
    ++i;
    skip_space();
    std::string value;
    if (i < s.size() && (s[i] == '"' || s[i] == '{')) {
      const char close = s[i] == '"' ? '"' : '}';
      for (++i; i < s.size() && s[i] != close; ++i) {
        if (s[i] == '\\' && close == '"' && i + 1 < s.size())
          ++i;
        value += s[i];
      }
      if (i == s.size())
        return std::nullopt;
      ++i;
    } else {
      while (i < s.size() && !is_space(s[i]))
        value += s[i++];
    }
    out.emplace_back(std::move(key), std::move(value));
  }
}

// The per-atom fields with a column, described in systems/fields.hpp (their `xyz` member): the
// reader, the writer and their checks iterate them, in table order, and name none.
using XyzFields = fields::xyz_fields;

template <class F>
constexpr std::size_t slot_of = XyzFields::index_of<F>();

// Values of field F per atom (its components).
template <class F>
constexpr std::size_t width_of = static_cast<std::size_t>(F::components);

template <class... F>
constexpr bool atom_columns(fields::FieldList<F...>) {
  return ((F::per == fields::Per::atom && F::components >= 1) && ...);
}
static_assert(atom_columns(XyzFields{}), "an XYZ column is a per-atom field's, of fixed width");

// Where the fields' columns sit on an atom line. By default plain XYZ: the required columns in
// table order (species x y z), extra columns allowed.
struct Columns {
  std::size_t total = 0;  // columns per atom line
  bool exact = false;     // plain XYZ allows extra columns; Properties fixes the count
  std::array<std::optional<std::size_t>, XyzFields::size> at;  // first column, by slot_of
  std::string properties;                                      // as declared, for messages

  Columns() {
    XyzFields::for_each_host([&](auto f) {
      using F = decltype(f);
      if constexpr (F::xyz::required) {
        at[slot_of<F>] = total;
        total += width_of<F>;
      }
    });
  }
};

// True when `key` (lower case) names field F's column.
template <class F>
bool names_column(const std::string& key) {
  if (key == F::xyz::column)
    return true;
  for (const char* alias : F::xyz::aliases)
    if (key == alias)
      return true;
  return false;
}

// "name:T:n" of field F's column.
template <class F>
std::string declaration() {
  return std::string(F::xyz::column) + ':' + fields::xyz_type<F>() + ':' +
         std::to_string(width_of<F>);
}

Columns parse_properties(const std::string& spec, const LineReader& reader) {
  const auto bad = [&](const std::string& why) {
    reader.fail("malformed Properties " + excerpt(spec) + ": " + why);
  };
  std::vector<std::string_view> fields;
  for (std::size_t start = 0;;) {
    const std::size_t colon = spec.find(':', start);
    fields.push_back(std::string_view(spec).substr(start, colon - start));
    if (colon == std::string::npos)
      break;
    start = colon + 1;
  }
  if (fields.size() % 3 != 0)
    bad("expected name:type:count triples");
  Columns c;
  c.exact = true;
  c.total = 0;
  c.at.fill(std::nullopt);
  c.properties = spec;
  std::unordered_set<std::string> names;
  for (std::size_t f = 0; f < fields.size(); f += 3) {
    const std::string name(fields[f]);
    const std::string_view type = fields[f + 1];
    const auto width = parse_integer<std::size_t>(fields[f + 2]);
    if (name.empty())
      bad("empty property name");
    if (type != "S" && type != "R" && type != "I" && type != "L")
      bad("type of '" + name + "' must be S, R, I or L");
    if (!width || *width < 1 || *width > 1000)
      bad("count of '" + name + "' must be an integer from 1 to 1000");
    const std::string key = lower(name);
    if (!names.insert(key).second)
      bad("'" + name + "' appears twice");
    XyzFields::for_each_host([&](auto f) {
      using F = decltype(f);
      if (!names_column<F>(key))
        return;
      std::optional<std::size_t>& slot = c.at[slot_of<F>];
      if (slot)
        bad("two columns for '" + name + "'");
      const char want_type = fields::xyz_type<F>();
      if (type != std::string_view(&want_type, 1) || *width != width_of<F>)
        bad("'" + name + "' must be " + want_type + ":" + std::to_string(width_of<F>));
      slot = c.total;
    });
    c.total += *width;
  }
  std::vector<std::string> required;  // "species:S:1 and pos:R:3"
  bool missing = false;
  XyzFields::for_each_host([&](auto f) {
    using F = decltype(f);
    if constexpr (F::xyz::required) {
      required.push_back(declaration<F>());
      missing = missing || !c.at[slot_of<F>];
    }
  });
  if (missing) {
    std::string list;
    for (std::size_t i = 0; i < required.size(); ++i)
      list += (i == 0 ? "" : i + 1 == required.size() ? " and " : ", ") + required[i];
    bad(list + (required.size() == 1 ? " is required" : " are required"));
  }
  return c;
}

void append_number(std::string& out, double v) {
#if defined(__cpp_lib_to_chars)
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, v);
  out.append(buffer, result.ptr);
#else
  std::ostringstream s;
  s.imbue(std::locale::classic());
  s << std::setprecision(17) << v;
  out += s.str();
#endif
}

void append_integer(std::string& out, std::int64_t v) {
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, v);
  out.append(buffer, result.ptr);
}

// One value of an atom-line column: a word (S), a logical (L: T or F), a number (R) or an
// integer (I).
template <class T>
void append_value(std::string& out, const T& v) {
  if constexpr (std::is_same_v<T, std::string>)
    out += v;
  else if constexpr (std::is_same_v<T, bool>)
    out += v ? 'T' : 'F';
  else if constexpr (std::is_floating_point_v<T>)
    append_number(out, v);
  else
    append_integer(out, static_cast<std::int64_t>(v));
}

// The signed volume a . (b x c) of a cell given as rows a, b, c.
double cell_volume(const std::array<double, 9>& m) {
  return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
         m[2] * (m[3] * m[7] - m[4] * m[6]);
}

bool usable_cell(const std::array<double, 9>& cell) {
  const double volume = cell_volume(cell);
  return std::isfinite(volume) && volume != 0;
}

// A logical as ASE's extxyz reads one in the comment line: T, F, true, false, True, False, TRUE,
// FALSE (not t or f).
std::optional<bool> parse_logical(std::string_view s) {
  if (s == "T" || s == "true" || s == "True" || s == "TRUE")
    return true;
  if (s == "F" || s == "false" || s == "False" || s == "FALSE")
    return false;
  return std::nullopt;
}

// The comment-line keys a frame carries into its HostSystem.
struct FrameKeys {
  Columns columns;
  std::optional<std::array<double, 9>> lattice;
  std::optional<std::array<bool, 3>> pbc;
  std::optional<std::int64_t> id;
  double energy = std::numeric_limits<double>::quiet_NaN();
  double fmax = std::numeric_limits<double>::quiet_NaN();
  double conserved = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::int64_t> steps;
  bool failed = false;
  std::string failure;
  std::optional<std::array<double, 9>> virial;
};

// Lattice="ax ay az bx by bz cx cy cz": exactly 9 finite numbers, a cell of non-zero finite volume.
std::array<double, 9> read_lattice(const std::string& key, const std::string& value,
                                   const LineReader& reader) {
  const auto items = split_list(value);
  std::array<double, 9> cell{};
  bool numbers = items.size() == cell.size();
  for (std::size_t i = 0; numbers && i < cell.size(); ++i) {
    const auto v = parse_double(items[i]);
    numbers = v && std::isfinite(*v);
    cell[i] = v.value_or(0);
  }
  if (!numbers)
    reader.fail(key + " must be 9 finite numbers (cell vectors a, b, c), got " + excerpt(value));
  if (!usable_cell(cell)) {  // flat, or so large that the volume overflows
    std::string volume = std::isnan(cell_volume(cell)) ? "nan" : "";
    if (volume.empty())
      append_number(volume, cell_volume(cell));
    reader.fail(key + " must have a non-zero finite volume, got " + volume + " for " +
                excerpt(value));
  }
  return cell;
}

// pbc="T T F": a logical for each of a, b, c, or one for all three (ASE accepts both).
std::array<bool, 3> read_pbc(const std::string& key, const std::string& value,
                             const LineReader& reader) {
  const auto items = split_list(value);
  std::array<bool, 3> pbc{};
  if (items.size() == 1 || items.size() == 3) {
    bool ok = true;
    for (std::size_t i = 0; i < 3 && ok; ++i) {
      const auto flag = parse_logical(items[items.size() == 1 ? 0 : i]);
      ok = flag.has_value();
      pbc[i] = flag.value_or(false);
    }
    if (ok)
      return pbc;
  }
  reader.fail(key + " must be 3 logicals (T or F; one for all axes also works), got " +
              excerpt(value));
}

FrameKeys read_comment(const LineReader& reader) {
  FrameKeys keys;
  const std::optional<KeyValues> pairs = parse_comment(reader.line());
  if (!pairs) {
    // Free text is a fine comment for plain XYZ; not when it tries to declare Properties.
    if (lower(reader.line()).find("properties=") != std::string::npos)
      reader.fail("malformed comment line: unterminated quote or brace");
    return keys;
  }
  std::unordered_set<std::string> seen;
  for (const auto& pair : *pairs) {
    const std::string& key = pair.first;  // not a structured binding: lambdas use it
    const std::string& value = pair.second;
    const std::string name = lower(key);
    const bool known = name == "properties" || name == "lattice" || name == "pbc" ||
                       name == "energy" || name == "fmax" || name == "system_id" ||
                       name == "failed" || name == "failure" || name == "virial" ||
                       name == "conserved" || name.rfind("steps_", 0) == 0;
    if (!known)
      continue;
    if (!seen.insert(name).second)
      reader.fail("duplicate key '" + key + "' in comment line");
    const auto number = [&] {
      const auto v = parse_double(value);
      if (!v)
        reader.fail(key + " must be a number, got " + excerpt(value));
      return *v;
    };
    const auto integer = [&] {
      const auto v = parse_integer<std::int64_t>(value);
      if (!v)
        reader.fail(key + " must be an integer, got " + excerpt(value));
      return *v;
    };
    if (name == "properties")
      keys.columns = parse_properties(value, reader);
    else if (name == "lattice")
      keys.lattice = read_lattice(key, value, reader);
    else if (name == "pbc")
      keys.pbc = read_pbc(key, value, reader);
    else if (name == "energy")
      keys.energy = number();
    else if (name == "fmax")
      keys.fmax = number();
    else if (name == "conserved")
      keys.conserved = number();
    else if (name == "system_id")
      keys.id = integer();
    else if (name == "virial") {  // a 3x3 matrix, as ASE writes it (9 numbers)
      const auto items = split_list(value);
      std::array<double, 9> w{};
      bool ok = items.size() == w.size();
      for (std::size_t i = 0; ok && i < w.size(); ++i) {
        const auto v = parse_double(items[i]);
        ok = v.has_value();
        w[i] = v.value_or(0);
      }
      if (!ok)
        reader.fail(key + " must be 9 numbers (a 3x3 matrix), got " + excerpt(value));
      keys.virial = w;
    } else if (name == "failed") {
      const auto flag = parse_logical(value);
      if (!flag)
        reader.fail(key + " must be a logical (T or F), got " + excerpt(value));
      keys.failed = *flag;
    } else if (name == "failure") {
      keys.failure = value;
    } else
      keys.steps.push_back(integer());
  }
  // As ASE: a Lattice without pbc is periodic along all three axes; no Lattice, no periodic axis.
  if (!keys.pbc)
    keys.pbc = std::array<bool, 3>{keys.lattice.has_value(), keys.lattice.has_value(),
                                   keys.lattice.has_value()};
  else if (!keys.lattice && ((*keys.pbc)[0] || (*keys.pbc)[1] || (*keys.pbc)[2]))
    reader.fail("pbc has a periodic axis but the comment line has no Lattice");
  return keys;
}

std::size_t read_atom_count(const LineReader& reader) {
  const auto words = split_words(reader.line());
  const auto count = words.size() == 1 ? parse_integer<std::uint64_t>(words[0]) : std::nullopt;
  if (!count)
    reader.fail("expected the atom count (a non-negative integer), got " + excerpt(reader.line()));
  if (*count > max_xyz_atoms)
    reader.fail("atom count " + std::to_string(*count) + " is larger than the limit " +
                std::to_string(max_xyz_atoms));
  return static_cast<std::size_t>(*count);
}

void read_atom(const LineReader& reader, const Columns& c, HostSystem& system) {
  const auto words = split_words(reader.line());
  if (words.size() < c.total || (c.exact && words.size() != c.total)) {
    const std::string declared =
        c.exact ? " (Properties=" + c.properties + ")" : " (species x y z)";
    reader.fail("expected " + std::string(c.exact ? "" : "at least ") + std::to_string(c.total) +
                " columns" + declared + ", got " + std::to_string(words.size()));
  }
  // Field by field in table order, each column value by value: its type, then its rule.
  XyzFields::for_each_host([&](auto f) {
    using F = decltype(f);
    using T = fields::xyz_value_t<F>;
    const std::optional<std::size_t> first = c.at[slot_of<F>];
    if (!first)
      return;
    auto& into = system.*F::xyz::host;
    for (std::size_t k = *first; k < *first + width_of<F>; ++k) {
      if constexpr (std::is_same_v<T, std::string>) {
        into.emplace_back(words[k]);
      } else {
        std::optional<T> v;
        if constexpr (std::is_same_v<T, bool>)
          v = parse_logical(words[k]);
        else if constexpr (std::is_floating_point_v<T>)
          v = parse_double(words[k]);
        else
          v = parse_integer<T>(words[k]);
        if (!v)
          reader.fail("expected " + std::to_string(width_of<F>) +
                      (std::is_same_v<T, bool>       ? " logicals (T or F)"
                       : std::is_floating_point_v<T> ? " numbers"
                                                     : " integers") +
                      " for " + F::xyz::what + ", got " + excerpt(words[k]) + " in column " +
                      std::to_string(k + 1));
        into.push_back(*v);
      }
      if (!F::xyz::valid(into.back()))
        reader.fail(std::string(F::xyz::what) + " must be " + F::xyz::must_be + ", got " +
                    excerpt(words[k]));
    }
  });
}

bool blank(const std::string& line) {
  return std::all_of(line.begin(), line.end(), is_space);
}

// "<who>: system <id>", who being "baton::systems::write_xyz" or, for a file,
// "baton::systems::write_xyz_file: <path>".
std::string system_name(const std::string& who, const HostSystem& s) {
  return who + ": system " + std::to_string(s.id);
}

void check_writable(const std::string& who, const HostSystem& s) {
  const std::string name = system_name(who, s);
  const std::size_t n = s.size();
  // The columns' value counts first (a required column's must match, an optional one's may be
  // empty), then each value's rule, then the format's: a string (S) is one word.
  XyzFields::for_each_host([&](auto f) {
    using F = decltype(f);
    const auto& values = s.*F::xyz::host;
    if (values.size() != width_of<F> * n && (F::xyz::required || !values.empty()))
      throw Error(name + " has " + std::to_string(values.size()) + " " + F::xyz::values + " for " +
                  std::to_string(n) + " atoms");
  });
  XyzFields::for_each_host([&](auto f) {
    using F = decltype(f);
    for (const auto& v : s.*F::xyz::host)
      if (!F::xyz::valid(v))
        throw Error(name + " has a " + F::xyz::what + " that is not " + F::xyz::must_be);
  });
  XyzFields::for_each_host([&](auto f) {
    using F = decltype(f);
    if constexpr (std::is_same_v<fields::xyz_value_t<F>, std::string>)
      for (const std::string& word : s.*F::xyz::host)
        if (word.empty() || std::any_of(word.begin(), word.end(), is_space))
          throw Error(name + " has a " + F::xyz::what + " that is empty or contains spaces");
  });
  if (s.has_cell() && !usable_cell(s.cell))
    throw Error(name + " has a cell whose volume is zero or not finite");
  if (!s.has_cell() && (s.pbc[0] || s.pbc[1] || s.pbc[2]))
    throw Error(name + " has a periodic axis but no cell");
}

void append_frame(std::string& out, const HostSystem& s, const std::vector<std::string>& stages,
                  double stress_mvv2e) {
  std::array<bool, XyzFields::size> written{};  // the columns of this frame, by slot_of
  XyzFields::for_each_host([&](auto f) {
    using F = decltype(f);
    written[slot_of<F>] = F::xyz::required || F::xyz::written(s.*F::xyz::host);
  });
  out += std::to_string(s.size());
  out += '\n';
  if (s.has_cell()) {  // first, where ASE puts it
    out += "Lattice=\"";
    for (std::size_t i = 0; i < s.cell.size(); ++i) {
      if (i > 0)
        out += ' ';
      append_number(out, s.cell[i]);
    }
    out += "\" ";
  }
  out += "Properties=";
  bool first = true;
  XyzFields::for_each_host([&](auto f) {
    using F = decltype(f);
    if (written[slot_of<F>]) {
      out += first ? "" : ":";
      out += declaration<F>();
      first = false;
    }
  });
  if (!std::isnan(s.energy)) {
    out += " energy=";
    append_number(out, s.energy);
  }
  if (!std::isnan(s.fmax)) {
    out += " fmax=";
    append_number(out, s.fmax);
  }
  out += " system_id=";
  append_integer(out, s.id);
  const std::vector<std::string> keys = xyz_step_keys(stages, s.stage_steps.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    out += ' ' + keys[i] + '=';
    append_integer(out, s.stage_steps[i]);
  }
  if (std::all_of(s.virial.begin(), s.virial.end(), [](double w) { return std::isfinite(w); })) {
    // As ASE writes its 3x3 keys: the full matrix, row by row (symmetric here).
    const std::size_t order[9] = {0, 3, 4, 3, 1, 5, 4, 5, 2};
    out += " virial=\"";
    for (std::size_t k = 0; k < 9; ++k) {
      append_number(out, s.virial[order[k]]);
      out += k < 8 ? ' ' : '"';
    }
  }
  if (stress_mvv2e > 0 && !s.failed) {
    if (const std::optional<std::array<double, 6>> sigma = stress(s, stress_mvv2e)) {
      const std::size_t order[9] = {0, 3, 4, 3, 1, 5, 4, 5, 2};  // as the virial's
      out += " stress=\"";
      for (std::size_t k = 0; k < 9; ++k) {
        append_number(out, (*sigma)[order[k]]);
        out += k < 8 ? ' ' : '"';
      }
      out += " pressure=";
      append_number(out, pressure(*sigma));
    }
  }
  if (std::isfinite(s.conserved) && !s.failed) {
    out += " conserved=";
    append_number(out, s.conserved);
  }
  if (s.failed) {
    out += " failed=T";  // its numbers broke: not a result
    if (!s.failure.empty()) {
      out += " failure=\"";
      for (char c : s.failure)
        out += c == '"' || c == '\\' || c == '\n' ? ' ' : c;
      out += '"';
    }
  }
  out += " pbc=\"";  // always, as ASE writes it (clusters: F F F)
  for (int d = 0; d < 3; ++d) {
    out += s.pbc[d] ? 'T' : 'F';
    out += d < 2 ? ' ' : '"';
  }
  out += '\n';
  for (std::size_t a = 0; a < s.size(); ++a) {
    first = true;
    XyzFields::for_each_host([&](auto f) {
      using F = decltype(f);
      if (!written[slot_of<F>])
        return;
      const auto& values = s.*F::xyz::host;
      for (std::size_t d = 0; d < width_of<F>; ++d) {
        if (!first)
          out += ' ';
        append_value(out, values[width_of<F> * a + d]);
        first = false;
      }
    });
    out += '\n';
  }
}

// One frame from `reader` (positioned before its atom-count line), or nullopt at the end of the
// input; `index` is its position in the stream, its id when the comment has no system_id.
std::optional<HostSystem> read_frame(LineReader& reader, std::int64_t index) {
  do {
    if (!reader.next())
      return std::nullopt;
  } while (blank(reader.line()));
  const std::size_t count = read_atom_count(reader);
  if (!reader.next())
    reader.fail(reader.number() + 1, "missing comment line after the atom count");
  FrameKeys keys = read_comment(reader);
  HostSystem system;
  system.id = keys.id ? *keys.id : index;
  if (keys.lattice)
    system.cell = *keys.lattice;
  if (keys.pbc)  // absent for a free-text comment: no cell, not periodic
    system.pbc = *keys.pbc;
  system.energy = keys.energy;
  system.fmax = keys.fmax;
  system.conserved = keys.conserved;
  system.failed = keys.failed;
  system.failure = std::move(keys.failure);
  if (keys.virial) {
    const auto& w = *keys.virial;
    system.virial = {w[0], w[4], w[8], w[1], w[2], w[5]};
  }
  system.stage_steps = std::move(keys.steps);
  const std::size_t reserve = std::min<std::size_t>(count, 4096);
  XyzFields::for_each_host([&](auto f) {
    using F = decltype(f);
    if (keys.columns.at[slot_of<F>])
      (system.*F::xyz::host).reserve(width_of<F> * reserve);
  });
  for (std::size_t a = 0; a < count; ++a) {
    if (!reader.next())
      reader.fail(reader.number() + 1, "file ends after " + std::to_string(a) + " of " +
                                           std::to_string(count) + " atom lines");
    read_atom(reader, keys.columns, system);
  }
  return system;
}

std::vector<HostSystem> read_frames(std::istream& in, const std::string& source_name,
                                    const char* who) {
  LineReader reader(in, source_name, who);
  std::vector<HostSystem> systems;
  std::unordered_map<std::int64_t, std::size_t> id_line;  // id -> line of its comment
  while (auto system = read_frame(reader, static_cast<std::int64_t>(systems.size()))) {
    const std::size_t line = reader.number() - system->size();
    if (const auto [at, fresh] = id_line.emplace(system->id, line); !fresh)
      reader.fail(line, "duplicate system_id " + std::to_string(system->id) + " (also on line " +
                            std::to_string(at->second) + ")");
    systems.push_back(std::move(*system));
  }
  return systems;
}

void write_frames(std::ostream& out, const std::vector<HostSystem>& systems,
                  const std::vector<std::string>& stage_names, double stress_mvv2e,
                  const std::string& who) {
  std::string frame;
  for (const HostSystem& s : systems) {
    check_writable(who, s);
    frame.clear();
    append_frame(frame, s, stage_names, stress_mvv2e);
    errno = 0;
    out.write(frame.data(), static_cast<std::streamsize>(frame.size()));
    if (!out)  // a full disk says so ("No space left on device")
      throw Error(system_name(who, s) + ": writing failed" +
                  (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()));
  }
}

}  // namespace

std::vector<HostSystem> read_xyz(std::istream& in, const std::string& source_name) {
  return read_frames(in, source_name, "baton::systems::read_xyz");
}

std::vector<HostSystem> read_xyz_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error("baton::systems::read_xyz_file: cannot open '" + path + "' for reading");
  return read_frames(in, path, "baton::systems::read_xyz_file");
}

struct XyzReader::Impl {
  std::ifstream file;
  std::istream& in;
  LineReader reader;
  std::int64_t frames = 0;
  std::size_t line = 0;
  Impl(std::istream& stream, std::string name, const char* who)
      : in(stream), reader(stream, std::move(name), who) {}
  Impl(const std::string& path, const char* who)
      : file(path, std::ios::binary), in(file), reader(file, path, who) {}
};

XyzReader::XyzReader(std::istream& in, std::string source_name)
    : impl_(std::make_unique<Impl>(in, std::move(source_name), "baton::systems::XyzReader")) {}

XyzReader::XyzReader(const std::string& path)
    : impl_(std::make_unique<Impl>(path, "baton::systems::XyzReader")) {
  if (!impl_->file)
    throw Error("baton::systems::XyzReader: cannot open '" + path + "' for reading");
}

XyzReader::~XyzReader() = default;
XyzReader::XyzReader(XyzReader&&) noexcept = default;
XyzReader& XyzReader::operator=(XyzReader&&) noexcept = default;

std::optional<HostSystem> XyzReader::next() {
  std::optional<HostSystem> system = read_frame(impl_->reader, impl_->frames);
  if (system) {
    ++impl_->frames;
    impl_->line = impl_->reader.number() - system->size();
  }
  return system;
}

std::int64_t XyzReader::frames() const noexcept {
  return impl_->frames;
}

std::size_t XyzReader::line() const noexcept {
  return impl_->line;
}

std::int64_t XyzReader::offset() const {
  impl_->in.clear(impl_->in.rdstate() & ~std::ios::failbit & ~std::ios::eofbit);
  return static_cast<std::int64_t>(impl_->in.tellg());
}

std::vector<std::string> xyz_step_keys(const std::vector<std::string>& stage_names,
                                       std::size_t count) {
  std::vector<std::string> keys;
  std::unordered_set<std::string> used;  // lower case: the reader matches keys in any case
  for (std::size_t i = 0; i < count; ++i) {
    std::string base = i < stage_names.size() ? stage_names[i] : "";
    for (char& c : base)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
        c = '_';
    base = "steps_" + (base.empty() ? "stage" + std::to_string(i) : base);
    std::string key = base;
    for (int n = 2; !used.insert(lower(key)).second; ++n)
      key = base + "_" + std::to_string(n);
    keys.push_back(key);
  }
  return keys;
}

void write_xyz(std::ostream& out, const std::vector<HostSystem>& systems,
               const std::vector<std::string>& stage_names, double stress_mvv2e) {
  write_frames(out, systems, stage_names, stress_mvv2e, "baton::systems::write_xyz");
}

void write_xyz_file(const std::string& path, const std::vector<HostSystem>& systems,
                    const std::vector<std::string>& stage_names, double stress_mvv2e) {
  try {
    AtomicFile file(path);  // a reader sees the old file or the whole new one, never half
    write_frames(file.stream(), systems, stage_names, stress_mvv2e,
                 "baton::systems::write_xyz_file: " + path);
    file.commit();
  } catch (const Error& e) {
    std::string what = e.what();
    if (what.rfind("baton::systems::", 0) == 0)
      throw;
    const std::string prefix = "baton::AtomicFile: ";
    if (what.rfind(prefix, 0) == 0)
      what.erase(0, prefix.size());
    throw Error("baton::systems::write_xyz_file: " + what);
  }
}

}  // namespace baton::systems
