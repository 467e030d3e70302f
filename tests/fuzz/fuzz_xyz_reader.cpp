// libFuzzer target: the extended-XYZ reader on untrusted text. It must either return systems or
// throw baton::Error; nothing else (crash, UB, leak, huge allocation, other exception) is
// acceptable. What it accepts must survive write_xyz and a second read unchanged.
//
// Built with -fsanitize=fuzzer when BATON_ENABLE_FUZZING=ON (clang); linked with replay_main.cpp it
// is a plain program that replays files (corpus and found crashes) in ctest.
#include <algorithm>
#include <baton/core/error.hpp>
#include <baton/systems/xyz.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace {
bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
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
  std::vector<baton::systems::HostSystem> systems;
  try {
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    systems = baton::systems::read_xyz(in, "fuzz.xyz");
  } catch (const baton::Error&) {
    return 0;  // rejected with a reason: fine
  }
  std::ostringstream out;
  baton::systems::write_xyz(out, systems);  // a baton::Error here escapes: a bug
  std::istringstream again_in(out.str());
  const auto again = baton::systems::read_xyz(again_in, "rewritten.xyz");
  if (again.size() != systems.size())
    std::abort();
  for (std::size_t i = 0; i < again.size(); ++i) {
    const auto& a = systems[i];
    const auto& b = again[i];
    const bool unit_masses =  // masses all 1 are not written
        b.masses.empty() &&
        std::all_of(a.masses.begin(), a.masses.end(), [](double m) { return m == 1.0; });
    if (a.id != b.id || a.species != b.species || !same(a.positions, b.positions) ||
        !same(a.velocities, b.velocities) || !(same(a.masses, b.masses) || unit_masses) ||
        !same(a.energy, b.energy) || !same(a.fmax, b.fmax) || a.stage_steps != b.stage_steps ||
        std::memcmp(a.cell.data(), b.cell.data(), sizeof a.cell) != 0 || a.pbc != b.pbc ||
        a.failed != b.failed)
      std::abort();
    // A virial is written only when all of it is finite; then it comes back bit for bit.
    const bool finite =
        std::all_of(a.virial.begin(), a.virial.end(), [](double w) { return std::isfinite(w); });
    for (std::size_t k = 0; k < a.virial.size(); ++k)
      if (finite ? !same(a.virial[k], b.virial[k]) : !std::isnan(b.virial[k]))
        std::abort();
  }
  return 0;
}
