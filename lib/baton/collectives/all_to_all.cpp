#include "baton/collectives/all_to_all.hpp"

#include <cstdint>
#include <string>

namespace baton::detail {

std::int64_t shape_code(const ShapeSignature& s) {
  std::uint64_t hash = 1469598103934665603ULL;  // FNV-1a (unsigned: it wraps by design)
  for (int i = 0; i < ShapeSignature::fields; ++i) {
    if (i == 2)
      continue;  // the rows
    hash = (hash ^ static_cast<std::uint64_t>(s.values[i])) * 1099511628211ULL;
  }
  return static_cast<std::int64_t>(hash >> 1);
}

void check_exchange(const Communicator& comm, const std::int64_t* all, const ShapeSignature& mine,
                    const char* operation, const std::string& problem) {
  const std::int64_t code = problem.empty() ? shape_code(mine) : -1;
  bool same = code >= 0;
  for (int r = 0; r < comm.size() && same; ++r)
    same = all[2 * r + 1] == code;
  if (same)
    return;
  // The full shapes (rows: all of each rank's) and every rank's problem, from every rank.
  agree(comm, mine, operation, problem.empty() ? std::string() : problem);
  throw Error(std::string(operation) + ": ranks passed rows of different shapes");  // a collision
}

}  // namespace baton::detail
