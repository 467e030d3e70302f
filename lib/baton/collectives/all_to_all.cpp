#include "baton/collectives/all_to_all.hpp"

#include <cstdint>
#include <string>

namespace baton::detail {

std::uint32_t shape_code(const ShapeSignature& s) {
  std::uint64_t hash = 1469598103934665603ULL;  // FNV-1a (unsigned: it wraps by design)
  for (int i = 0; i < ShapeSignature::fields; ++i) {
    if (i == 2)
      continue;  // the rows
    hash = (hash ^ static_cast<std::uint64_t>(s.values[i])) * 1099511628211ULL;
  }
  const auto code = static_cast<std::uint32_t>(hash ^ (hash >> 32));
  return code == no_shape ? code - 1 : code;
}

void check_exchange(const Communicator& comm, const std::uint64_t* all, const ShapeSignature& mine,
                    const char* operation, const std::string& problem) {
  const std::uint32_t code = problem.empty() ? shape_code(mine) : no_shape;
  bool same = code != no_shape;
  for (int r = 0; r < comm.size() && same; ++r)
    same = (all[r] >> 32) == code;
  if (same)
    return;
  // The full shapes (rows: all of each rank's) and every rank's problem, from every rank.
  agree(comm, mine, operation, problem);
  throw Error(std::string(operation) + ": ranks passed rows of different shapes");  // a collision
}

}  // namespace baton::detail
