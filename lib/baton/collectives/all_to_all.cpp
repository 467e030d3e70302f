#include "baton/collectives/all_to_all.hpp"

#include <cstdint>
#include <string>

namespace baton::detail {

void check_exchange(const Communicator& comm, const std::int64_t* all, const ShapeSignature& mine,
                    const char* operation, const std::string& problem) {
  constexpr int n = ShapeSignature::fields;
  const auto ranks = static_cast<std::size_t>(comm.size());
  bool same = problem.empty();
  for (std::size_t r = 0; r < ranks && same; ++r) {
    for (int i = 0; i < n; ++i) {
      if (i != 2 && all[r * n + i] != mine.values[i])
        same = false;
    }
  }
  if (same)
    return;
  // Every rank sees every rank's signature (with the rows that rank sends here): when not all of
  // them agree, each rank sees at least one that differs from its own, so every rank throws.
  std::string text = std::string(operation) +
                     ": ranks passed different or unusable arguments (rows: those sent to rank " +
                     std::to_string(comm.rank()) + "):";
  for (std::size_t r = 0; r < ranks; ++r) {
    ShapeSignature s;
    for (int i = 0; i < n; ++i)
      s.values[i] = all[r * n + i];
    const bool troubled = s.values[10] != 0;
    s.values[10] = 0;
    text += " rank " + std::to_string(r) + " " + s.describe();
    if (static_cast<int>(r) == comm.rank() && !problem.empty())
      text += " (" + problem + ")";
    else if (troubled)
      text += " (its own arguments are unusable)";
    text += r + 1 < ranks ? ";" : "";
  }
  throw Error(text);
}

}  // namespace baton::detail
