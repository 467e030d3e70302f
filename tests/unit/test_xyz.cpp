#include <doctest/doctest.h>

#include <array>
#include <baton/core/error.hpp>
#include <baton/systems/cell.hpp>
#include <baton/systems/fields.hpp>
#include <baton/systems/xyz.hpp>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <vector>

using baton::systems::HostSystem;
namespace fields = baton::systems::fields;

// Every per-atom field that travels (the codec sends it, so a HostSystem holds it) has an
// extended-XYZ column (its descriptor's `xyz`) or says it has none (`using xyz = NoXyzColumn;`):
// a field added to systems/fields.hpp without deciding fails to compile here.
template <class... F>
constexpr bool travelling_atom_fields_decide_xyz(fields::FieldList<F...>) {
  return ((F::per != fields::Per::atom || F::wire == fields::Wire::none ||
           fields::has_xyz_column<F> || fields::no_xyz_column<F>)&&...);
}
static_assert(travelling_atom_fields_decide_xyz(fields::batch_fields{}),
              "a travelling per-atom field in systems/fields.hpp has neither an `xyz` column nor "
              "`using xyz = NoXyzColumn;`");

namespace {

std::vector<HostSystem> read_text(const std::string& text, const std::string& name = "test.xyz") {
  std::istringstream in(text);
  return baton::systems::read_xyz(in, name);
}

std::string write_text(const std::vector<HostSystem>& systems,
                       const std::vector<std::string>& stages = {}) {
  std::ostringstream out;
  baton::systems::write_xyz(out, systems, stages);
  return out.str();
}

// The message read_xyz throws for `text` read as "bad.xyz" (empty if it does not throw).
std::string error_of(const std::string& text) {
  try {
    read_text(text, "bad.xyz");
  } catch (const baton::Error& e) {
    return e.what();
  }
  return "";
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), 8 * a.size()) == 0);
}

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

bool same_bits(const std::array<double, 9>& a, const std::array<double, 9>& b) {
  return std::memcmp(a.data(), b.data(), sizeof a) == 0;
}

using Pbc = std::array<bool, 3>;

// "name:T:n" of field F's column, as the writer declares it.
template <class F>
std::string declaration() {
  return std::string(F::xyz::column) + ':' + fields::xyz_type<F>() + ':' +
         std::to_string(F::components);
}

// Values for `atoms` atoms of field F's column that the writer writes (not 0, not 1) and its rule
// accepts.
template <class F>
auto column_values(std::size_t atoms) {
  std::remove_reference_t<decltype(std::declval<HostSystem&>().*F::xyz::host)> v;
  for (std::size_t i = 0; i < atoms * F::components; ++i) {
    using T = fields::xyz_value_t<F>;
    if constexpr (std::is_same_v<T, std::string>)
      v.push_back("X" + std::to_string(i));
    else if constexpr (std::is_same_v<T, bool>)
      v.push_back(i % 2 == 0);  // some F: an optional logical column is written when one is F
    else if constexpr (std::is_floating_point_v<T>)
      v.push_back(1.25 + static_cast<T>(i) / 3);
    else
      v.push_back(static_cast<T>(2 + i));
  }
  return v;
}

template <class T>
bool same_values(const std::vector<T>& a, const std::vector<T>& b) {
  if constexpr (std::is_same_v<T, double>)
    return same_bits(a, b);
  else
    return a == b;
}

// `text` with the Properties entry `from` (name:T:n) renamed to `to`.
std::string rename_column(std::string text, const std::string& from, const std::string& to) {
  for (const char* before : {"=", ":"}) {
    const std::size_t at = text.find(before + from);
    if (at != std::string::npos)
      return text.replace(at + 1, from.size(), to);
  }
  return text;
}

HostSystem awkward_system() {
  HostSystem s;
  s.id = 42;
  s.species = {"Ar", "Kr", "Ar"};
  s.positions = {0.1,
                 1.0 / 3.0,
                 -0.0,
                 1e-300,
                 5e-324,
                 1.7976931348623157e308,
                 3.141592653589793,
                 -2.718281828459045,
                 123456789.123456789};
  s.velocities = {1e-17, -0.3, 0.7, 2.0 / 3.0, -1e10, 0.0, 1.1, -1.1, 1e-5};
  s.masses = {39.948, 83.798, 39.948};
  s.energy = -6.0 / 7.0;
  s.fmax = 1e-3 / 3.0;
  s.stage_steps = {120, 1000, 7, 5};
  return s;
}

}  // namespace

TEST_CASE("write then read is bit-exact") {
  HostSystem plain;
  plain.id = -3;
  plain.species = {"Ne"};
  plain.positions = {0.25, -0.5, 1.0 / 7.0};
  const std::vector<HostSystem> systems = {awkward_system(), plain};
  const std::string text = write_text(systems, {"fire", "verlet", "fire"});
  const auto back = read_text(text);
  REQUIRE(back.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(back[i].id == systems[i].id);
    CHECK(back[i].species == systems[i].species);
    CHECK(same_bits(back[i].positions, systems[i].positions));
    CHECK(same_bits(back[i].velocities, systems[i].velocities));
    CHECK(same_bits(back[i].masses, systems[i].masses));
    CHECK(back[i].stage_steps == systems[i].stage_steps);
  }
  CHECK(same_bits(back[0].energy, systems[0].energy));
  CHECK(same_bits(back[0].fmax, systems[0].fmax));
  CHECK(std::isnan(back[1].energy));
  CHECK(std::isnan(back[1].fmax));
  // Repeated stage names get suffixes; a step without a name gets its index.
  CHECK(text.find(" steps_fire=120 steps_verlet=1000 steps_fire_2=7 steps_stage3=5 ") !=
        std::string::npos);
  CHECK(text.find("Properties=species:S:1:pos:R:3:velo:R:3:masses:R:1 ") != std::string::npos);
}

TEST_CASE("every column of the field table is written, read back and its aliases read") {
  // The columns come from systems/fields.hpp (fields::xyz_fields); these are the ones documented
  // (docs/xyz.md). A field whose `xyz` is lost, renamed or retyped fails here.
  std::string declared;
  fields::xyz_fields::for_each_host(
      [&](auto f) { declared += (declared.empty() ? "" : ":") + declaration<decltype(f)>(); });
  CHECK(declared == "species:S:1:pos:R:3:velo:R:3:masses:R:1:move_mask:L:1");

  // Names and aliases are lower case (the reader lowers what it reads) and name one column each.
  std::unordered_set<std::string> names;
  fields::xyz_fields::for_each_host([&](auto f) {
    using F = decltype(f);
    std::vector<std::string> own = {F::xyz::column};
    for (const char* alias : F::xyz::aliases)
      own.emplace_back(alias);
    for (const std::string& name : own) {
      CAPTURE(name);
      CHECK(names.insert(name).second);
      for (char c : name)
        CHECK(std::tolower(static_cast<unsigned char>(c)) == c);
    }
  });

  // A system with every column set: each is declared, in table order, and comes back exactly.
  constexpr std::size_t atoms = 3;
  HostSystem s;
  s.id = 11;
  std::string properties = "Properties=";
  fields::xyz_fields::for_each_host([&](auto f) {
    using F = decltype(f);
    s.*F::xyz::host = column_values<F>(atoms);
    properties += (properties.back() == '=' ? "" : ":") + declaration<F>();
  });
  REQUIRE(s.size() == atoms);
  const std::string text = write_text({s});
  CHECK(text.find(properties + " ") != std::string::npos);
  const auto back = read_text(text);
  REQUIRE(back.size() == 1);
  fields::xyz_fields::for_each_host([&](auto f) {
    using F = decltype(f);
    const std::string column = F::xyz::column;
    CAPTURE(column);
    CHECK(same_values(back[0].*F::xyz::host, s.*F::xyz::host));
  });

  // Each alias, and the name in upper case, reads into the same member.
  fields::xyz_fields::for_each_host([&](auto f) {
    using F = decltype(f);
    std::vector<std::string> spellings;
    for (const char* alias : F::xyz::aliases)
      spellings.emplace_back(alias);
    std::string upper = F::xyz::column;
    for (char& c : upper)
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    spellings.push_back(upper);
    for (const std::string& spelling : spellings) {
      const std::string renamed =
          rename_column(text, F::xyz::column + std::string(":"), spelling + ":");
      CAPTURE(renamed);
      REQUIRE(renamed != text);
      const auto again = read_text(renamed);
      REQUIRE(again.size() == 1);
      CHECK(same_values(again[0].*F::xyz::host, s.*F::xyz::host));
    }
  });

  // Without an optional column's values, it is not written and reads back empty; without a
  // required column, Properties is rejected.
  fields::xyz_fields::for_each_host([&](auto f) {
    using F = decltype(f);
    const std::string column = F::xyz::column;
    CAPTURE(column);
    if constexpr (F::xyz::required) {
      const std::string renamed = rename_column(text, column + ":", "unknown_" + column + ":");
      REQUIRE(renamed != text);
      CHECK(error_of(renamed).find(" are required") != std::string::npos);
    } else {
      HostSystem without = s;
      (without.*F::xyz::host).clear();
      const std::string shorter = write_text({without});
      CHECK(shorter.find(declaration<F>()) == std::string::npos);
      const auto read = read_text(shorter);
      REQUIRE(read.size() == 1);
      CHECK((read[0].*F::xyz::host).empty());
    }
  });
}

TEST_CASE("a written frame looks as documented") {
  HostSystem s;
  s.id = 3;
  s.species = {"Ar", "Ar"};
  s.positions = {0, 0.5, -1, 1.25, 0, 0};
  s.masses = {1, 1};  // all 1: no masses column
  s.energy = -1.5;
  s.stage_steps = {10};
  CHECK(write_text({s}, {"fire"}) ==
        "2\nProperties=species:S:1:pos:R:3 energy=-1.5 system_id=3 steps_fire=10 pbc=\"F F F\"\n"
        "Ar 0 0.5 -1\nAr 1.25 0 0\n");
  HostSystem slab;
  slab.id = 4;
  slab.species = {"Cu", "Cu"};
  slab.positions = {0, 0, 10, 1.8, 1.04, 11.75};
  slab.cell = {3.6, 0, 0, 1.8, 3.1, 0, 0, 0, 20};
  slab.pbc = {true, true, false};
  CHECK(write_text({slab}) ==
        "2\nLattice=\"3.6 0 0 1.8 3.1 0 0 0 20\" Properties=species:S:1:pos:R:3 system_id=4 "
        "pbc=\"T T F\"\nCu 0 0 10\nCu 1.8 1.04 11.75\n");
}

TEST_CASE("step keys are unique whatever the stage names") {
  using baton::systems::xyz_step_keys;
  CHECK(xyz_step_keys({"a", "a", "a_2", ""}, 4) ==
        std::vector<std::string>{"steps_a", "steps_a_2", "steps_a_2_2", "steps_stage3"});
  CHECK(xyz_step_keys({"lj fire", "Fire", "fire"}, 3) ==
        std::vector<std::string>{"steps_lj_fire", "steps_Fire", "steps_fire_2"});
  CHECK(xyz_step_keys({"x", "y"}, 1) == std::vector<std::string>{"steps_x"});
}

TEST_CASE("files round-trip and name the path on failure") {
  const std::string path = "baton_test_xyz_roundtrip.xyz";
  baton::systems::write_xyz_file(path, {awkward_system()});
  const auto back = baton::systems::read_xyz_file(path);
  std::remove(path.c_str());
  REQUIRE(back.size() == 1);
  CHECK(same_bits(back[0].positions, awkward_system().positions));
  CHECK_THROWS_WITH_AS(
      baton::systems::read_xyz_file("no/such/dir/in.xyz"),
      "baton::systems::read_xyz_file: cannot open 'no/such/dir/in.xyz' for reading", baton::Error);
  try {
    baton::systems::write_xyz_file("no/such/dir/out.xyz", {});
    FAIL("write_xyz_file into a missing directory did not throw");
  } catch (const baton::Error& e) {
    const std::string what = e.what();
    CHECK(what.rfind("baton::systems::write_xyz_file: cannot open 'no/such/dir/out.xyz.tmp.", 0) ==
          0);
    CHECK(what.find("No such file or directory") != std::string::npos);
  }
}

TEST_CASE("file errors name the function and the path") {
  const std::string path = "baton_test_xyz_errors.xyz";
  {
    std::ofstream out(path, std::ios::binary);
    out << "1\n\nAr 0 x 0\n";
  }
  CHECK_THROWS_WITH_AS(baton::systems::read_xyz_file(path),
                       ("baton::systems::read_xyz_file: " + path +
                        ":3: expected 3 numbers for pos, got 'x' in column 3")
                           .c_str(),
                       baton::Error);
  HostSystem s;
  s.id = 9;
  s.species = {"Ar", "Ar"};
  s.positions = {0, 0, 0};
  CHECK_THROWS_WITH_AS(
      baton::systems::write_xyz_file(path, {s}),
      ("baton::systems::write_xyz_file: " + path + ": system 9 has 3 position values for 2 atoms")
          .c_str(),
      baton::Error);
  std::remove(path.c_str());
}

TEST_CASE("an ASE-style file with extra columns and keys") {
  const std::string text =
      "2\n"
      "Lattice=\"10.0 0.0 0.0 0.0 10.0 0.0 0.0 0.0 10.0\" "
      "Properties=species:S:1:pos:R:3:forces:R:3:momenta:R:3:velo:R:3:Z:I:1:masses:R:1 "
      "energy=-2.5 free_energy=-2.5 config_type=\"lj cluster\" pbc=\"T T T\" fmax=0.125 "
      "system_id=17 steps_fire=4 steps_verlet=9\n"
      "Ar  0.0 0.5 1.0   0.1 0.2 0.3  9 9 9  1e-2 2e-2 3e-2  18  39.948\n"
      "Ar\t1.5 -0.5 +2.0\t0.1 0.2 0.3  9 9 9  -1e-2 -2e-2 -3e-2  18  39.948\n"
      "1\n"
      "Properties=species:S:1:pos:R:3:vel:R:3 energy=1.25\n"
      "Ne 1 2 3 4 5 6\n";
  const auto systems = read_text(text);
  REQUIRE(systems.size() == 2);
  CHECK(systems[0].id == 17);
  CHECK(systems[0].species == std::vector<std::string>{"Ar", "Ar"});
  CHECK(systems[0].positions == std::vector<double>{0.0, 0.5, 1.0, 1.5, -0.5, 2.0});
  CHECK(systems[0].velocities == std::vector<double>{1e-2, 2e-2, 3e-2, -1e-2, -2e-2, -3e-2});
  CHECK(systems[0].masses == std::vector<double>{39.948, 39.948});
  CHECK(systems[0].energy == -2.5);
  CHECK(systems[0].fmax == 0.125);
  CHECK(systems[0].stage_steps == std::vector<std::int64_t>{4, 9});
  CHECK(systems[0].cell == std::array<double, 9>{10, 0, 0, 0, 10, 0, 0, 0, 10});
  CHECK(systems[0].pbc == Pbc{true, true, true});
  CHECK(systems[1].id == 1);  // no system_id: the frame index
  CHECK(!systems[1].has_cell());
  CHECK(systems[1].pbc == Pbc{false, false, false});
  CHECK(systems[1].velocities == std::vector<double>{4, 5, 6});
  CHECK(systems[1].masses.empty());
  CHECK(systems[1].energy == 1.25);
  CHECK(std::isnan(systems[1].fmax));
}

TEST_CASE("fixed atoms: ASE's move_mask column (FixAtoms) is read, and written only when needed") {
  // As ASE 3.22 writes a FixAtoms constraint (write(..., columns=[..., 'move_mask'])): T moves.
  const std::string ase =
      "3\nLattice=\"5.0 0.0 0.0 0.0 5.0 0.0 0.0 0.0 5.0\" "
      "Properties=species:S:1:pos:R:3:move_mask:L:1 pbc=\"T T T\"\n"
      "Cu       0.00000000       0.00000000       0.00000000  F\n"
      "Cu       1.80000000       0.00000000       0.00000000  T\n"
      "Cu       0.00000000       1.80000000       0.00000000  F\n";
  const HostSystem s = read_text(ase).at(0);
  CHECK(s.move_mask == std::vector<bool>{false, true, false});
  const std::string text = write_text({s});
  CHECK(text.find("Properties=species:S:1:pos:R:3:move_mask:L:1 ") != std::string::npos);
  CHECK(text.find(" F\n") != std::string::npos);
  CHECK(read_text(text).at(0).move_mask == s.move_mask);
  // Every atom moving: no column (as without a constraint).
  HostSystem all = s;
  all.move_mask.assign(3, true);
  CHECK(write_text({all}).find("move_mask") == std::string::npos);
  all.move_mask.clear();
  CHECK(write_text({all}).find("move_mask") == std::string::npos);
  // Logicals as ASE reads them; anything else names the column.
  CHECK(read_text("1\nProperties=species:S:1:pos:R:3:move_mask:L:1\nAr 0 0 0 false\n")
            .at(0)
            .move_mask == std::vector<bool>{false});
  CHECK_THROWS_WITH_AS(read_text("1\nProperties=species:S:1:pos:R:3:move_mask:L:1\nAr 0 0 0 1\n"),
                       doctest::Contains("expected 1 logicals (T or F) for move_mask, got '1'"),
                       baton::Error);
  CHECK_THROWS_WITH_AS(read_text("1\nProperties=species:S:1:pos:R:3:move_mask:I:1\nAr 0 0 0 1\n"),
                       doctest::Contains("'move_mask' must be L:1"), baton::Error);
  // A mask of the wrong length is the writer's error.
  HostSystem bad = s;
  bad.move_mask.pop_back();
  CHECK_THROWS_WITH_AS(write_text({bad}), doctest::Contains("2 move_mask values for 3 atoms"),
                       baton::Error);
}

TEST_CASE("a triclinic cell round-trips bit-exactly, Lattice first as ASE writes it") {
  HostSystem s = awkward_system();
  s.cell = {12345.678901234567, 0.0, -0.0, 1.0 / 3.0, 7.25, 0.0, 1e-17, -2.0 / 3.0, 9.5};
  s.pbc = {true, true, false};
  const std::string text = write_text({s}, {"fire", "verlet", "fire"});
  CHECK(
      starts_with(text,
                  "3\nLattice=\"12345.678901234567 0 -0 0.3333333333333333 7.25 0 1e-17 "
                  "-0.6666666666666666 9.5\" Properties=species:S:1:pos:R:3:velo:R:3:masses:R:1 "));
  CHECK(text.find(" steps_stage3=5 pbc=\"T T F\"\nAr ") != std::string::npos);
  const auto back = read_text(text);
  REQUIRE(back.size() == 1);
  CHECK(same_bits(back[0].cell, s.cell));
  CHECK(back[0].pbc == s.pbc);
  CHECK(same_bits(back[0].positions, s.positions));
  CHECK(same_bits(back[0].velocities, s.velocities));
  CHECK(write_text(back, {"fire", "verlet", "fire"}) == text);
}

TEST_CASE("every pbc combination round-trips; the defaults are ASE's") {
  HostSystem s;
  s.id = 1;
  s.species = {"Cu"};
  s.positions = {0.5, 0.5, 0.5};
  s.cell = {3.6, 0, 0, 0, 3.6, 0, 0, 0, 3.6};
  for (int bits = 0; bits < 8; ++bits) {
    s.pbc = {(bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0};
    CAPTURE(bits);
    const auto back = read_text(write_text({s}));
    REQUIRE(back.size() == 1);
    CHECK(back[0].pbc == s.pbc);
    CHECK(back[0].cell == s.cell);
  }
  const auto pbc_of = [](const std::string& comment) {
    return read_text("1\n" + comment + "\nAr 0 0 0\n").at(0).pbc;
  };
  const std::string cubic = "Lattice=\"2 0 0 0 2 0 0 0 2\"";
  CHECK(pbc_of(cubic) == Pbc{true, true, true});  // a Lattice without pbc: periodic
  CHECK(pbc_of("energy=1") == Pbc{false, false, false});
  CHECK(pbc_of("pbc=\"F F F\"") == Pbc{false, false, false});  // a cluster, as Baton writes it
  CHECK(pbc_of(cubic + " pbc=\"F F F\"") == Pbc{false, false, false});
  CHECK(pbc_of(cubic + " pbc=\"T F T\"") == Pbc{true, false, true});
  CHECK(pbc_of(cubic + " pbc=\"true False TRUE\"") == Pbc{true, false, true});
  CHECK(pbc_of(cubic + " pbc=\"T,F,F\"") == Pbc{true, false, false});
  CHECK(pbc_of(cubic + " pbc=F") == Pbc{false, false, false});  // one logical for all three
  CHECK(pbc_of(cubic + " pbc=True") == Pbc{true, true, true});
  CHECK(pbc_of("lattice=\"2 0 0 0 2 0 0 0 2\" PBC=\"F T F\"") == Pbc{false, true, false});
  const auto cell = read_text("1\nLattice=\"1,2,3, 0 4 5 0 0 6\"\nAr 0 0 0\n").at(0).cell;
  CHECK(cell == std::array<double, 9>{1, 2, 3, 0, 4, 5, 0, 0, 6});
  CHECK(
      read_text("1\nLattice=\"-1 0 0 0 1 0 0 0 1\"\nAr 0 0 0\n").at(0).has_cell());  // left-handed
}

TEST_CASE("clusters are written as before: no Lattice, pbc F F F") {
  HostSystem s;
  s.id = 5;
  s.species = {"Ar"};
  s.positions = {1, 2, 3};
  const std::string text = write_text({s});
  CHECK(text == "1\nProperties=species:S:1:pos:R:3 system_id=5 pbc=\"F F F\"\nAr 1 2 3\n");
  const auto back = read_text(text);
  REQUIRE(back.size() == 1);
  CHECK(!back[0].has_cell());
  CHECK(back[0].pbc == Pbc{false, false, false});
}

TEST_CASE("a failed system is written with failed=T and read back as failed") {
  HostSystem s;
  s.id = 8;
  s.species = {"Ar"};
  s.positions = {1, 2, 3};
  s.failed = true;
  const std::string text = write_text({s});
  CHECK(text == "1\nProperties=species:S:1:pos:R:3 system_id=8 failed=T pbc=\"F F F\"\nAr 1 2 3\n");
  CHECK(read_text(text).at(0).failed);
  s.failed = false;
  CHECK(write_text({s}).find("failed") == std::string::npos);
  CHECK_FALSE(read_text(write_text({s})).at(0).failed);
  CHECK_THROWS_WITH_AS(read_text("1\nProperties=species:S:1:pos:R:3 failed=maybe\nAr 0 0 0\n"),
                       doctest::Contains("failed must be a logical (T or F), got 'maybe'"),
                       baton::Error);
}

TEST_CASE("the virial is written as ASE's 3x3 virial key and read back bit-exactly") {
  HostSystem s;
  s.id = 3;
  s.species = {"Ar"};
  s.positions = {1, 2, 3};
  CHECK(write_text({s}).find("virial") == std::string::npos);  // unknown: not written
  s.virial = {1.0 / 3, -2.5, 1e-17, 0.125, -7, 12345.678901234567};
  const std::string text = write_text({s});
  CHECK(text.find("virial=\"0.3333333333333333 0.125 -7 0.125 -2.5 12345.678901234567 -7 "
                  "12345.678901234567 1e-17\"") != std::string::npos);
  CHECK(read_text(text).at(0).virial == s.virial);
  CHECK_THROWS_WITH_AS(read_text("1\nProperties=species:S:1:pos:R:3 virial=\"1 2 3\"\nAr 0 0 0\n"),
                       doctest::Contains("virial must be 9 numbers (a 3x3 matrix)"), baton::Error);
}

TEST_CASE("the conserved quantity: written when known and not failed, read back bit-exactly") {
  HostSystem s;
  s.id = 4;
  s.species = {"Ar"};
  s.positions = {1, 2, 3};
  CHECK(write_text({s}).find("conserved") == std::string::npos);  // NaN: not written
  s.conserved = -1234.5678901234567;
  const std::string text = write_text({s});
  CHECK(text.find(" conserved=-1234.5678901234567") != std::string::npos);
  const double back = read_text(text).at(0).conserved;
  CHECK(std::memcmp(&back, &s.conserved, sizeof back) == 0);
  s.failed = true;  // a failed system's numbers are not a result
  s.failure = "non-finite energy";
  CHECK(write_text({s}).find("conserved") == std::string::npos);
  CHECK_THROWS_WITH_AS(read_text("1\nProperties=species:S:1:pos:R:3 conserved=x\nAr 0 0 0\n"),
                       doctest::Contains("conserved must be a number"), baton::Error);
}

TEST_CASE("stress and pressure: -(virial + kinetic) / volume, for fully periodic systems only") {
  HostSystem s;
  s.id = 1;
  s.species = {"Ar", "Ar"};
  s.positions = {0, 0, 0, 1, 1, 1};
  s.velocities = {1, 2, 0, 0, 0, 3};
  s.masses = {2, 4};
  s.cell = {2, 0, 0, 0, 4, 0, 1, 0, 5};  // volume 40
  s.pbc = {true, true, true};
  s.virial = {8, -4, 12, 2, 0, -6};
  // kinetic sum m v v: xx 2, yy 8, zz 36, xy 4, xz 0, yz 0; times mvv2e 0.5
  const auto sigma = baton::systems::stress(s, 0.5);
  REQUIRE(sigma.has_value());
  const std::array<double, 6> expected = {
      -(8 + 1) / 40.0, -(-4 + 4) / 40.0, -(12 + 18) / 40.0, -(2 + 2) / 40.0, 0.0, 6 / 40.0};
  for (int c = 0; c < 6; ++c)
    CHECK((*sigma)[c] == doctest::Approx(expected[c]).epsilon(1e-15));
  CHECK(baton::systems::pressure(*sigma) == doctest::Approx((9 + 0 + 30) / 120.0));
  std::ostringstream out;
  baton::systems::write_xyz(out, {s}, {}, 0.5);
  const std::string text = out.str();
  CHECK(text.find(" stress=\"-0.225 -0.1 -0 -0.1 -0 0.15 -0 0.15 -0.75\" pressure=0.325") !=
        std::string::npos);
  CHECK(write_text({s}).find("stress") == std::string::npos);  // no units given: not written
  CHECK(read_text(text).at(0).virial == s.virial);             // stress is derived, not read
  HostSystem slab = s;  // periodic along two axes: no volume to divide by
  slab.pbc[2] = false;
  CHECK_FALSE(baton::systems::stress(slab, 0.5).has_value());
  HostSystem failed = s;
  failed.failed = true;
  std::ostringstream f;
  baton::systems::write_xyz(f, {failed}, {}, 0.5);
  CHECK(f.str().find("stress") == std::string::npos);
  HostSystem unknown = s;  // no virial: no stress
  unknown.virial.fill(std::numeric_limits<double>::quiet_NaN());
  CHECK_FALSE(baton::systems::stress(unknown, 0.5).has_value());
}

TEST_CASE("plain XYZ, free-text comments, CRLF and blank lines") {
  const auto systems = read_text(
      "3\r\nwater, from \"somewhere\r\nO 0 0 0\r\nH 0.757 0.586 0.0 extra\r\nH -0.757 0.586 0\r\n"
      "\n1\nProperties of argon\nAr 1 2 3\n\n\n   \n");
  REQUIRE(systems.size() == 2);
  CHECK(systems[0].id == 0);
  CHECK(systems[0].species == std::vector<std::string>{"O", "H", "H"});
  CHECK(systems[0].positions[3] == 0.757);
  CHECK(systems[0].velocities.empty());
  CHECK(systems[1].id == 1);
  CHECK(systems[1].positions == std::vector<double>{1, 2, 3});
  CHECK(read_text("").empty());
  CHECK(read_text("0\n\n").size() == 1);
}

TEST_CASE("every malformed input names its line") {
  const std::string ok_frame = "1\nProperties=species:S:1:pos:R:3\nAr 0 0 0\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      // atom count
      {"abc\n\nAr 0 0 0\n", "bad.xyz:1: expected the atom count"},
      {"-1\n\n", "bad.xyz:1: expected the atom count"},
      {"2 atoms\n\n", "bad.xyz:1: expected the atom count"},
      {"1.5\n\n", "bad.xyz:1: expected the atom count"},
      {"999999999999\n\n", "bad.xyz:1: atom count 999999999999 is larger than the limit"},
      {ok_frame + "x\n", "bad.xyz:4: expected the atom count"},
      // truncated
      {"2\n", "bad.xyz:2: missing comment line"},
      {"3\ncomment\nAr 0 0 0\nAr 1 1 1\n", "bad.xyz:5: file ends after 2 of 3 atom lines"},
      {ok_frame + "2\ncomment\n", "bad.xyz:6: file ends after 0 of 2 atom lines"},
      // fields
      {"1\n\nAr 0 abc 0\n", "bad.xyz:3: expected 3 numbers for pos, got 'abc' in column 3"},
      {"1\n\nAr 0 0\n", "bad.xyz:3: expected at least 4 columns (species x y z), got 3"},
      {"2\n\nAr 0 0 0\n\n", "bad.xyz:4: expected at least 4 columns"},
      {"1\nProperties=species:S:1:pos:R:3:velo:R:3\nAr 0 0 0 1 1\n",
       "bad.xyz:3: expected 7 columns (Properties=species:S:1:pos:R:3:velo:R:3), got 6"},
      {"1\nProperties=species:S:1:pos:R:3\nAr 0 0 0 1\n", "bad.xyz:3: expected 4 columns"},
      {"1\nProperties=species:S:1:pos:R:3:velo:R:3\nAr 0 0 0 1 x 1\n",
       "bad.xyz:3: expected 3 numbers for velocities, got 'x' in column 6"},
      {"1\nProperties=species:S:1:pos:R:3:mass:R:1\nAr 0 0 0 0\n",
       "bad.xyz:3: mass must be positive"},
      {"1\nProperties=species:S:1:pos:R:3:mass:R:1\nAr 0 0 0 nan\n",
       "bad.xyz:3: mass must be positive"},
      // Properties
      {"1\nProperties=species:S:1:pos:R\nAr 0 0 0\n", "bad.xyz:2: malformed Properties"},
      {"1\nProperties=species:S:1\nAr 0 0 0\n", "bad.xyz:2: malformed Properties"},
      {"1\nProperties=pos:R:3\nAr 0 0 0\n", "bad.xyz:2: malformed Properties"},
      {"1\nProperties=species:S:1:pos:R:2\nAr 0 0\n", "bad.xyz:2: malformed Properties"},
      {"1\nProperties=species:S:1:pos:X:3\nAr 0 0 0\n", "bad.xyz:2: malformed Properties"},
      {"1\nProperties=species:S:1:pos:R:0\nAr\n", "bad.xyz:2: malformed Properties"},
      {"1\nProperties=species:S:1:pos:R:3:pos:R:3\nAr 0 0 0 0 0 0\n",
       "bad.xyz:2: malformed Properties"},
      {"1\nProperties=species:S:1:pos:R:3:vel:R:3:velo:R:3\nAr 0 0 0 0 0 0 0 0 0\n",
       "bad.xyz:2: malformed Properties"},
      {"1\nProperties=\nAr 0 0 0\n", "bad.xyz:2: malformed Properties"},
      {ok_frame + "1\nProperties=species:S:1:pos:R:3 pbc=\"F F F\nAr 0 0 0\n",
       "bad.xyz:5: malformed comment line"},
      // comment keys
      {"1\nenergy=low\nAr 0 0 0\n", "bad.xyz:2: energy must be a number, got 'low'"},
      {"1\nfmax=\nAr 0 0 0\n", "bad.xyz:2: fmax must be a number"},
      {"1\nsystem_id=1.5\nAr 0 0 0\n", "bad.xyz:2: system_id must be an integer"},
      {"1\nsteps_fire=x\nAr 0 0 0\n", "bad.xyz:2: steps_fire must be an integer"},
      {"1\nenergy=1 energy=2\nAr 0 0 0\n", "bad.xyz:2: duplicate key 'energy'"},
      // Lattice and pbc
      {"1\nLattice=\"1 0 0 0 1 0 0 0\"\nAr 0 0 0\n",
       "bad.xyz:2: Lattice must be 9 finite numbers (cell vectors a, b, c), got '1 0 0 0 1 0 0 0'"},
      {"1\nLattice=\"1 0 0 0 1 0 0 0 1 0\"\nAr 0 0 0\n",
       "bad.xyz:2: Lattice must be 9 finite numbers"},
      {"1\nLattice=\"1 0 0 0 1 0 0 0 x\"\nAr 0 0 0\n",
       "bad.xyz:2: Lattice must be 9 finite numbers"},
      {"1\nLattice=\"\"\nAr 0 0 0\n", "bad.xyz:2: Lattice must be 9 finite numbers"},
      {"1\nLattice=1\nAr 0 0 0\n", "bad.xyz:2: Lattice must be 9 finite numbers"},
      {"1\nLattice=\"1 0 0 2 0 0 0 0 1\"\nAr 0 0 0\n",
       "bad.xyz:2: Lattice must have a non-zero finite volume, got 0 for '1 0 0 2 0 0 0 0 1'"},
      {"1\nLattice=\"0 0 0 0 0 0 0 0 0\"\nAr 0 0 0\n",
       "bad.xyz:2: Lattice must have a non-zero finite volume, got 0"},
      {"1\nLattice=\"1 0 0 0 1 0 0 0 nan\"\nAr 0 0 0\n",
       "bad.xyz:2: Lattice must be 9 finite numbers"},
      {"1\nLattice=\"1 0 0 0 1 0 0 0 -inf\"\nAr 0 0 0\n",
       "bad.xyz:2: Lattice must be 9 finite numbers"},
      {"1\nLattice=\"1e200 0 0 0 1e200 0 0 0 1e200\"\nAr 0 0 0\n",
       "bad.xyz:2: Lattice must have a non-zero finite volume, got inf"},
      {ok_frame + "1\nLattice=\"1 0 0 1 0 0 0 0 1\"\nAr 0 0 0\n",
       "bad.xyz:5: Lattice must have a non-zero finite volume"},
      {"1\nLattice=\"1 0 0 0 1 0 0 0 1\" pbc=\"T T\"\nAr 0 0 0\n",
       "bad.xyz:2: pbc must be 3 logicals (T or F; one for all axes also works), got 'T T'"},
      {"1\nLattice=\"1 0 0 0 1 0 0 0 1\" pbc=\"T T F F\"\nAr 0 0 0\n", "bad.xyz:2: pbc must be 3"},
      {"1\nLattice=\"1 0 0 0 1 0 0 0 1\" pbc=\"t t t\"\nAr 0 0 0\n", "bad.xyz:2: pbc must be 3"},
      {"1\nLattice=\"1 0 0 0 1 0 0 0 1\" pbc=\"1 1 0\"\nAr 0 0 0\n", "bad.xyz:2: pbc must be 3"},
      {"1\nLattice=\"1 0 0 0 1 0 0 0 1\" pbc=\"T yes F\"\nAr 0 0 0\n", "bad.xyz:2: pbc must be 3"},
      {"1\nLattice=\"1 0 0 0 1 0 0 0 1\" PBC=\"\"\nAr 0 0 0\n", "bad.xyz:2: PBC must be 3"},
      {"1\npbc=\"T T F\"\nAr 0 0 0\n",
       "bad.xyz:2: pbc has a periodic axis but the comment line has no Lattice"},
      {ok_frame + "1\npbc=T\nAr 0 0 0\n", "bad.xyz:5: pbc has a periodic axis"},
      {"1\nLattice=\"1 0 0 0 1 0 0 0 1\" lattice=\"1 0 0 0 1 0 0 0 1\"\nAr 0 0 0\n",
       "bad.xyz:2: duplicate key 'lattice'"},
      {"1\npbc=\"F F F\" pbc=\"F F F\"\nAr 0 0 0\n", "bad.xyz:2: duplicate key 'pbc'"},
      // ids
      {"1\nsystem_id=4\nAr 0 0 0\n1\nsystem_id=4\nAr 0 0 0\n",
       "bad.xyz:5: duplicate system_id 4 (also on line 2)"},
      {ok_frame + "1\nsystem_id=0\nAr 0 0 0\n", "bad.xyz:5: duplicate system_id 0"},
  };
  for (const auto& one : cases) {
    const std::string& text = one.first;  // CAPTURE makes a lambda: no structured binding
    CAPTURE(text);
    const std::string message = error_of(text);
    CHECK_MESSAGE(starts_with(message, "baton::systems::read_xyz: " + one.second), message);
  }
}

TEST_CASE("the writer rejects inconsistent systems") {
  HostSystem s;
  s.id = 9;
  s.species = {"Ar", "Ar"};
  s.positions = {0, 0, 0};
  CHECK_THROWS_WITH_AS(write_text({s}),
                       "baton::systems::write_xyz: system 9 has 3 position values for 2 atoms",
                       baton::Error);
  s.positions = {0, 0, 0, 1, 1, 1};
  s.velocities = {0};
  CHECK_THROWS_WITH_AS(write_text({s}),
                       "baton::systems::write_xyz: system 9 has 1 velocity values for 2 atoms",
                       baton::Error);
  s.velocities.clear();
  s.masses = {1, -1};
  CHECK_THROWS_WITH_AS(write_text({s}),
                       "baton::systems::write_xyz: system 9 has a mass that is not positive and "
                       "finite",
                       baton::Error);
  s.masses.clear();
  s.species[1] = "A r";
  CHECK_THROWS_WITH_AS(write_text({s}),
                       "baton::systems::write_xyz: system 9 has a species label that is empty or "
                       "contains spaces",
                       baton::Error);
  s.species[1] = "";
  CHECK_THROWS_AS(write_text({s}), baton::Error);
  s.species[1] = "Ar";
  s.pbc = {false, false, true};
  CHECK_THROWS_WITH_AS(write_text({s}),
                       "baton::systems::write_xyz: system 9 has a periodic axis but no cell",
                       baton::Error);
  s.cell = {1, 0, 0, 0, 1, 0, 2, 0, 0};
  CHECK_THROWS_WITH_AS(write_text({s}),
                       "baton::systems::write_xyz: system 9 has a cell whose volume is zero or "
                       "not finite",
                       baton::Error);
  s.cell = {1, 0, 0, 0, 1, 0, 0, 0, std::numeric_limits<double>::quiet_NaN()};
  CHECK_THROWS_AS(write_text({s}), baton::Error);
  s.cell = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  CHECK_NOTHROW(write_text({s}));
}
