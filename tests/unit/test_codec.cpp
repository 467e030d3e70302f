// The systems codec (systems/codec.hpp) directly: HostSystems -> encode_host_systems ->
// decode_host_systems, and through a SystemsBatch (append, pack, unpack, remove, copy back), give
// the systems back exactly; the bytes it writes are those of format version 4 (expectations
// generated with the codec as it was before its fields came from one table, systems/fields.hpp,
// with version 3's movable flags and version 4's conserved quantities added);
// malformed messages throw baton::Error naming baton::systems.
#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <baton/core/error.hpp>
#include <baton/systems/codec.hpp>
#include <baton/systems/host_system.hpp>
#include <baton/systems/host_transfer.hpp>
#include <baton/systems/systems_batch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {

using baton::systems::HostPacked;
using baton::systems::HostSystem;
using baton::systems::SpeciesTable;
using baton::systems::SystemsBatch;

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same_bits(a[i], b[i]))
      return false;
  return true;
}

// Every member of a HostSystem, doubles bit for bit (NaN equals NaN).
void check_same(const HostSystem& a, const HostSystem& b) {
  INFO("system " << a.id);
  CHECK(a.id == b.id);
  CHECK(a.species == b.species);
  CHECK(same_bits(a.positions, b.positions));
  CHECK(same_bits(a.velocities, b.velocities));
  CHECK(same_bits(a.masses, b.masses));
  CHECK(a.move_mask == b.move_mask);
  CHECK(same_bits(a.energy, b.energy));
  CHECK(same_bits(a.fmax, b.fmax));
  CHECK(same_bits(a.conserved, b.conserved));
  for (std::size_t j = 0; j < 9; ++j)
    CHECK(same_bits(a.cell[j], b.cell[j]));
  for (std::size_t j = 0; j < 6; ++j)
    CHECK(same_bits(a.virial[j], b.virial[j]));
  CHECK(a.pbc == b.pbc);
  CHECK(a.stage_steps == b.stage_steps);
  CHECK(a.failed == b.failed);
  CHECK(a.failure == b.failure);
}

void check_same(const std::vector<HostSystem>& a, const std::vector<HostSystem>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    check_same(a[i], b[i]);
}

// Systems with every field set (velocities and masses given, stage_steps of `stages` entries):
// what comes back must equal them exactly.
std::vector<HostSystem> varied_systems(int stages) {
  std::vector<HostSystem> out;
  const char* labels[] = {"Ar", "Cu", "Ni", "He"};
  const int sizes[] = {1, 4, 2, 7, 3};
  for (int k = 0; k < 5; ++k) {
    HostSystem s;
    s.id = 1000 * k - 3;  // negative for k = 0
    const int n = sizes[k];
    for (int i = 0; i < n; ++i) {
      s.species.push_back(labels[(i + k) % 4]);
      for (int d = 0; d < 3; ++d) {
        s.positions.push_back(0.1 * (i + 1) + 1.7 * d - 0.3 * k);
        s.velocities.push_back(-0.01 * i + 0.003 * d * k);
      }
      s.masses.push_back(1.0 + 0.5 * ((i + k) % 3));
      s.move_mask.push_back((i + k) % 3 != 1);
    }
    if (k % 2 == 1) {  // a triclinic cell
      s.cell = {10.0 + k, 0.0, 0.0, 1.5, 9.0 + k, 0.0, -0.75, 0.25, 11.0};
      s.pbc = {true, k == 1, k != 1};
    } else if (k == 4) {  // an orthorhombic cell, not periodic along b
      s.cell = {12.0, 0, 0, 0, 13.0, 0, 0, 0, 14.0};
      s.pbc = {true, false, true};
    }
    s.energy = k == 2 ? nan : -1.25 * k;
    s.fmax = k == 2 ? std::numeric_limits<double>::infinity() : 0.125 * k;
    for (std::size_t j = 0; j < 6; ++j)
      s.virial[j] = k == 0 ? nan : 0.5 * static_cast<double>(j) - k;
    s.conserved = k == 1 ? nan : -3.5 * k + 0.0625;
    for (int j = 0; j < stages; ++j)
      s.stage_steps.push_back(std::int64_t(k) * 100 + j + (k == 3 ? (std::int64_t(1) << 40) : 0));
    if (k == 2 || k == 3) {
      s.failed = true;
      s.failure = k == 2 ? "non-finite forces" : "dissociated: no two atoms within the cutoff";
    }
    out.push_back(s);
  }
  return out;
}

std::vector<HostSystem> decode(const HostPacked& w, const SpeciesTable& table) {
  return baton::systems::decode_host_systems(w.ints.data(), w.ints.size(), w.reals.data(),
                                             w.reals.size(), table);
}

// Runs `f` and checks that it throws baton::Error whose message starts "baton::systems".
template <class F>
void check_rejected(F&& f) {
  bool threw = false;
  try {
    f();
  } catch (const baton::Error& e) {
    threw = true;
    INFO(e.what());
    CHECK(std::string(e.what()).rfind("baton::systems", 0) == 0);
  }
  CHECK(threw);
}

// Two small systems whose encoding the format-version-2 codec wrote as below (generated with the
// codec before systems/fields.hpp; the layout is docs/pipeline.md's), with format 3's movable
// flags added (by hand: after the species), and format 4's conserved quantities (after the
// virials).
std::vector<HostSystem> golden_systems() {
  HostSystem a;
  a.id = 42;
  a.species = {"Cu", "Ar"};
  a.positions = {0.5, 1.5, 2.5, -1.0, 0.25, 3.0};
  a.velocities = {0.125, 0, -0.5, 1, 2, 3};
  a.masses = {63.5, 40.0};
  a.move_mask = {true, false};
  a.energy = -2.5;
  a.fmax = 0.75;
  a.virial = {1, 2, 3, 4, 5, 6};
  a.conserved = -1.75;
  a.stage_steps = {11, 22, 33};  // cut to 2 stages
  HostSystem b;
  b.id = -7;
  b.species = {"Ar", "Ni", "Cu"};
  b.positions = {1, 2, 3, 4, 5, 6, 7, 8, 9.5};
  // no velocities (0), no masses (1), no move_mask (every atom moves: 1)
  b.cell = {5, 0, 0, 0.5, 6, 0, 0, 0, 7};
  b.pbc = {true, false, true};
  b.energy = 1.0;
  b.fmax = 2.0;
  b.virial = {-1, -2, -3, -4, -5, -6};
  b.stage_steps = {5};  // padded with 0
  b.failed = true;
  b.failure = "non-finite energy";
  return {a, b};
}

const std::vector<std::int64_t> golden_ints = {
    0x42545359, 4,  2, 5, 2, 0,  // header: magic, version, systems, atoms, stages, flags
    42,         -7,              // id
    2,          3,               // count
    11,         22, 5, 0,        // stage_steps
    0,          1,  1, 2, 0,     // species (Cu 0, Ar 1, Ni 2)
    1,          0,  1, 1, 1,     // movable
    0,          5,               // pbc bits
    0,          1};              // failed codes
const std::vector<double> golden_reals = {
    -2.5,  1.0,                                                                      // energy
    0.75,  2.0,                                                                      // fmax
    0.5,   1.5,  2.5,  -1.0, 0.25, 3.0, 1,  2,  3,  4,  5,  6,                       // positions
    7,     8,    9.5,                                                                //
    0.125, 0,    -0.5, 1,    2,    3,   0,  0,  0,  0,  0,  0,  0,   0,              // velocities
    0,                                                                               //
    63.5,  40.0, 1,    1,    1,                                                      // masses
    0,     0,    0,    0,    0,    0,   0,  0,  0,  5,  0,  0,  0.5, 6, 0, 0, 0, 7,  // cells
    1,     2,    3,    4,    5,    6,   -1, -2, -3, -4, -5, -6,                      // virials
    -1.75, nan};                                                                     // conserved

}  // namespace

TEST_CASE("codec: host systems encode to the format-version-4 bytes") {
  SpeciesTable table;
  table.index("Cu");
  const HostPacked w = baton::systems::encode_host_systems(golden_systems(), table, 2);
  CHECK(w.ints == golden_ints);
  CHECK(same_bits(w.reals, golden_reals));
  CHECK(table.names() == std::vector<std::string>{"Cu", "Ar", "Ni"});
}

TEST_CASE("codec: packed from a batch, systems give the format-version-4 bytes") {
  SpeciesTable table;
  table.index("Cu");
  SystemsBatch batch({8, 32}, 2);
  HostSystem first = golden_systems()[1];
  first.id = 99;  // a system before them, so that offsets are not 0
  baton::systems::append_systems(batch, {first}, table);
  baton::systems::append_systems(batch, golden_systems(), table);
  const HostPacked w = baton::systems::to_host(baton::systems::pack_systems(batch, {1, 2}));
  CHECK(w.ints == golden_ints);
  CHECK(same_bits(w.reals, golden_reals));
}

TEST_CASE("codec: encode then decode gives the systems back exactly") {
  for (int stages : {0, 1, 3}) {
    INFO("stages " << stages);
    SpeciesTable table;
    const std::vector<HostSystem> systems = varied_systems(stages);
    const HostPacked w = baton::systems::encode_host_systems(systems, table, stages);
    check_same(systems, decode(w, table));
    // Two messages end to end (as gathered from two ranks) decode as one list.
    HostPacked both = w;
    const std::vector<HostSystem> tail(systems.begin() + 3, systems.end());
    const HostPacked w2 = baton::systems::encode_host_systems(tail, table, stages);
    both.ints.insert(both.ints.end(), w2.ints.begin(), w2.ints.end());
    both.reals.insert(both.reals.end(), w2.reals.begin(), w2.reals.end());
    std::vector<HostSystem> all = systems;
    all.insert(all.end(), tail.begin(), tail.end());
    check_same(all, decode(both, table));
    // No systems at all.
    check_same({}, decode(baton::systems::encode_host_systems({}, table, stages), table));
  }
}

TEST_CASE("codec: what a system leaves out comes back as its default") {
  HostSystem s;
  s.id = 3;
  s.species = {"Ar", "Ar"};
  s.positions = {0, 0, 0, 1, 0, 0};
  s.stage_steps = {4};
  s.failed = true;
  s.failure = "something else broke";
  SpeciesTable table;
  const auto back = decode(baton::systems::encode_host_systems({s}, table, 3), table);
  REQUIRE(back.size() == 1);
  CHECK(back[0].velocities == std::vector<double>(6, 0.0));
  CHECK(back[0].masses == std::vector<double>(2, 1.0));
  CHECK(back[0].move_mask == std::vector<bool>(2, true));
  CHECK(back[0].stage_steps == std::vector<std::int64_t>{4, 0, 0});
  CHECK(back[0].failed);
  CHECK(back[0].failure == "failed before");
}

TEST_CASE("codec: pack then unpack through a batch gives the systems back exactly") {
  const int stages = 2;
  SpeciesTable table;
  const std::vector<HostSystem> systems = varied_systems(stages);
  SystemsBatch batch({16, 64}, stages);
  baton::systems::append_systems(batch, systems, table);
  REQUIRE(batch.num_systems() == 5);
  // Failed systems arrive Finished, the others Active.
  const std::vector<int> status = batch.status_on_host();
  for (std::size_t k = 0; k < systems.size(); ++k)
    CHECK(status[k] == static_cast<int>(systems[k].failed ? baton::systems::SystemStatus::finished
                                                          : baton::systems::SystemStatus::active));
  check_same(systems, baton::systems::copy_systems_to_host(batch, {0, 1, 2, 3, 4}, table));

  // Packed in another order, unpacked into a second batch that already holds a system.
  SystemsBatch other({16, 64}, stages);
  baton::systems::append_systems(other, {systems[1]}, table);
  const int first = baton::systems::unpack_systems(
      other, baton::systems::pack_systems(batch, {4, 0, 3}, baton::systems::packed_species));
  CHECK(first == 1);
  REQUIRE(other.num_systems() == 4);
  check_same({systems[1], systems[4], systems[0], systems[3]},
             baton::systems::copy_systems_to_host(other, {0, 1, 2, 3}, table));
  // Through the host and back (what a hand-off does), read from the device index.
  baton::systems::PackedSystems via_host = baton::systems::to_device(
      baton::systems::to_host(baton::systems::pack_systems(batch, {2, 1})), "test");
  via_host.index.reset();
  baton::systems::unpack_systems(other, via_host);
  REQUIRE(other.num_systems() == 6);
  check_same({systems[2], systems[1]}, baton::systems::copy_systems_to_host(other, {4, 5}, table));

  // Removing slots moves the rest down with everything they carry.
  batch.remove({0, 2});
  REQUIRE(batch.num_systems() == 3);
  check_same({systems[1], systems[3], systems[4]},
             baton::systems::copy_systems_to_host(batch, {0, 1, 2}, table));
  const std::vector<int> counts = batch.count_on_host();
  CHECK(counts == std::vector<int>{4, 7, 3});
  // Slot bookkeeping on the device agrees: offsets and system_of_atom after the move.
  auto offset = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.offset);
  auto owner = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.system_of_atom);
  CHECK(offset(0) == 0);
  CHECK(offset(1) == 4);
  CHECK(offset(2) == 11);
  for (int a = 0; a < 14; ++a)
    CHECK(owner(a) == (a < 4 ? 0 : a < 11 ? 1 : 2));
  batch.remove({1});
  check_same({systems[1], systems[4]}, baton::systems::copy_systems_to_host(batch, {0, 1}, table));
}

TEST_CASE("codec: malformed messages throw baton::Error naming baton::systems") {
  SpeciesTable table;
  const HostPacked good = baton::systems::encode_host_systems(varied_systems(2), table, 2);
  const baton::systems::PackedLayout L{5, 17, 2};
  const auto at = [](std::int64_t i) { return static_cast<std::size_t>(i); };
  SUBCASE("truncated integers") {
    for (std::size_t cut : {std::size_t(1), std::size_t(5), good.ints.size() - 1}) {
      HostPacked w = good;
      w.ints.resize(cut);
      check_rejected([&] { decode(w, table); });
    }
  }
  SUBCASE("truncated doubles") {
    HostPacked w = good;
    w.reals.pop_back();
    check_rejected([&] { decode(w, table); });
  }
  SUBCASE("trailing doubles") {
    HostPacked w = good;
    w.reals.push_back(0.0);
    check_rejected([&] { decode(w, table); });
  }
  SUBCASE("wrong magic") {
    HostPacked w = good;
    w.ints[0] = 0x42545358;
    check_rejected([&] { decode(w, table); });
  }
  SUBCASE("wrong version") {
    HostPacked w = good;
    w.ints[1] = 2;  // the version before fixed atoms
    check_rejected([&] { decode(w, table); });
  }
  SUBCASE("atom counts that do not add up to the header's") {
    HostPacked w = good;
    w.ints[at(L.count())] -= 1;
    w.ints[at(L.count() + 1)] += 2;
    check_rejected([&] { decode(w, table); });
    check_rejected([&] { baton::systems::index_of(w); });
  }
  SUBCASE("a system of no atoms") {
    HostPacked w = good;
    w.ints[at(L.count())] = 0;
    w.ints[at(L.count() + 1)] += 1;
    check_rejected([&] { decode(w, table); });
  }
  SUBCASE("an atom count that overflows") {
    HostPacked w = good;
    w.ints[at(L.count() + 1)] = std::numeric_limits<std::int64_t>::max();
    check_rejected([&] { decode(w, table); });
  }
  SUBCASE("a header whose counts need more than the message holds") {
    HostPacked w = good;
    w.ints[3] += 1;
    check_rejected([&] { decode(w, table); });
    w = good;
    w.ints[2] = -1;
    check_rejected([&] { decode(w, table); });
    w = good;
    w.ints[4] = 5000;
    check_rejected([&] { decode(w, table); });
  }
  SUBCASE("unknown flags") {
    HostPacked w = good;
    w.ints[5] = 64;
    check_rejected([&] { decode(w, table); });
  }
}

namespace {

// Baton's allocations (any memory space) while a CountAllocations lives, through Kokkos' tools
// interface. Kokkos' own are left out: on CUDA a team launch without team scratch memory still
// allocates 0 bytes labelled "Kokkos::CudaSpace::TeamScratchMemory" (a cudaMalloc, no fence).
long allocations_seen = 0;
void count_allocation(Kokkos_Profiling_SpaceHandle, const char* label, const void*, std::uint64_t) {
  if (std::string(label).rfind("Kokkos::", 0) != 0)
    ++allocations_seen;
}
struct CountAllocations {
  CountAllocations() {
    allocations_seen = 0;
    Kokkos::Tools::Experimental::set_allocate_data_callback(count_allocation);
  }
  ~CountAllocations() { Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr); }
  long seen() const { return allocations_seen; }
};

}  // namespace

// On a GPU every allocation in device memory synchronises (Kokkos copies its header from the host
// and fences), and the pipeline removes and packs systems at every step.
TEST_CASE("codec: compaction keeps its scratch, and a pack allocates only its message and plan") {
  const int stages = 2;
  SpeciesTable table;
  std::vector<HostSystem> systems;
  for (int copy = 0; copy < 4; ++copy)
    for (HostSystem s : varied_systems(stages)) {
      s.id += 100 * copy;
      systems.push_back(s);
    }
  SystemsBatch batch({32, 256}, stages);
  baton::systems::append_systems(batch, systems, table);
  REQUIRE(batch.num_systems() == 20);
  batch.remove({0});  // the first removal sizes the scratch for a tail of 19 systems
  systems.erase(systems.begin());
  {
    CountAllocations count;
    batch.remove({0, 5});
    batch.remove({2, 3, 4});
    CHECK(count.seen() == 0);
  }
  for (int s : {5, 0})
    systems.erase(systems.begin() + s);
  for (int s : {4, 3, 2})
    systems.erase(systems.begin() + s);
  REQUIRE(batch.num_systems() == 14);
  check_same(systems, baton::systems::copy_systems_to_host(
                          batch,
                          [] {
                            std::vector<int> all(14);
                            for (int i = 0; i < 14; ++i)
                              all[static_cast<std::size_t>(i)] = i;
                            return all;
                          }(),
                          table));
  {
    CountAllocations count;
    const baton::systems::PackedSystems w = baton::systems::pack_systems(batch, {1, 4, 9});
    CHECK(count.seen() <= 3);  // the message's two Views, one upload of the plan
    CHECK(baton::systems::read_packed_header(w).systems == 3);
  }
}
