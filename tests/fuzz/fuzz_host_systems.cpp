// libFuzzer target: decode_host_systems, the systems codec's host decoder (systems/codec.hpp), on
// untrusted messages (a results file's gathered hand-offs). It must either return systems or throw
// baton::Error; nothing else (crash, UB, huge allocation, other exception) is acceptable. What it
// accepts must encode and decode again to the same systems.
//
// Input: a little-endian uint32 count of integers, that many int64 (the integers), then the rest
// as doubles (a partial double at the end is dropped).
//
// Built with -fsanitize=fuzzer when BATON_ENABLE_FUZZING=ON (clang); linked with replay_main.cpp it
// is a plain program that replays files (corpus and found crashes) in ctest.
#include <baton/core/error.hpp>
#include <baton/systems/codec.hpp>
#include <baton/systems/host_system.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {
bool same(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}
bool same(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same(a[i], b[i]))
      return false;
  return true;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace baton::systems;
  if (size < 4)
    return 0;
  std::uint32_t n_ints = 0;
  std::memcpy(&n_ints, data, 4);
  data += 4;
  size -= 4;
  if (n_ints > size / 8)
    return 0;
  std::vector<std::int64_t> ints(n_ints);
  if (n_ints > 0)
    std::memcpy(ints.data(), data, 8 * std::size_t(n_ints));
  data += 8 * std::size_t(n_ints);
  size -= 8 * std::size_t(n_ints);
  std::vector<double> reals(size / 8);
  if (!reals.empty())
    std::memcpy(reals.data(), data, 8 * reals.size());

  SpeciesTable table;
  for (const char* label : {"Ar", "Cu", "Ni"})
    table.index(label);
  std::vector<HostSystem> systems;
  try {
    systems = decode_host_systems(ints.data(), ints.size(), reals.data(), reals.size(), table);
  } catch (const baton::Error&) {
    return 0;  // rejected with a reason: fine
  }
  // Accepted: encode again (systems of one stage count at a time) and decode: the same systems.
  for (const HostSystem& s : systems) {
    SpeciesTable fresh;
    const int stages = static_cast<int>(s.stage_steps.size());
    const HostPacked w = encode_host_systems({s}, fresh, stages);
    const auto again =
        decode_host_systems(w.ints.data(), w.ints.size(), w.reals.data(), w.reals.size(), fresh);
    if (again.size() != 1)
      std::abort();
    const HostSystem& b = again[0];
    if (s.id != b.id || s.species != b.species || !same(s.positions, b.positions) ||
        !same(s.velocities, b.velocities) || !same(s.masses, b.masses) ||
        !same(s.energy, b.energy) || !same(s.fmax, b.fmax) || !same(s.conserved, b.conserved) ||
        s.stage_steps != b.stage_steps ||
        std::memcmp(s.cell.data(), b.cell.data(), sizeof s.cell) != 0 || s.pbc != b.pbc ||
        std::memcmp(s.virial.data(), b.virial.data(), sizeof s.virial) != 0 || s.failed != b.failed)
      std::abort();
  }
  return 0;
}
