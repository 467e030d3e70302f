#include "baton/collectives/agreement.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <vector>

#include "baton/collectives/collectives.hpp"

namespace baton {

namespace {

// "rank 3" or "ranks 0,2,5".
std::string rank_list(const std::vector<int>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i)
      out += ',';
    out += std::to_string(ranks[i]);  // appended apart: g++ 12 -Wrestrict false positive, C++20
  }
  return out;
}

}  // namespace

void agree_on_failure(const Communicator& comm, const std::string& problem, int code) {
  using HostInts = Kokkos::View<std::int64_t*, Kokkos::HostSpace>;
  const int size = comm.size();
  const bool failed = code > 0;
  HostInts mine("baton::agree_on_failure", 2);
  mine(0) = failed ? code : 0;
  mine(1) = failed ? static_cast<std::int64_t>(problem.size()) : 0;
  HostInts all("baton::agree_on_failure", 2 * static_cast<std::size_t>(size));
  all_gather(comm, mine, all);
  int worst = 0;
  for (int r = 0; r < size; ++r)
    worst = std::max(worst, static_cast<int>(all(2 * r)));
  if (worst == 0)
    return;

  Kokkos::View<char*, Kokkos::HostSpace> text("baton::agree_on_failure", mine(1));
  std::copy(problem.begin(), problem.begin() + mine(1), text.data());
  const auto texts = all_gatherv(comm, text);
  // Distinct texts in order of their first rank, each with the ranks that reported it.
  std::vector<std::pair<std::string, std::vector<int>>> distinct;
  std::size_t offset = 0;
  for (int r = 0; r < size; ++r) {
    const auto length = static_cast<std::size_t>(all(2 * r + 1));
    if (all(2 * r) != 0) {
      std::string t(texts.data() + offset, length);
      if (t.empty())
        t = "failed (no message)";
      auto it = std::find_if(distinct.begin(), distinct.end(),
                             [&](const auto& d) { return d.first == t; });
      if (it == distinct.end())
        distinct.push_back({t, {r}});
      else
        it->second.push_back(r);
    }
    offset += length;
  }
  std::string message;
  if (distinct.size() == 1) {
    message = distinct.front().first;
  } else {
    for (const auto& d : distinct) {
      if (!message.empty())
        message += '\n';
      message += rank_list(d.second);
      message += ": ";
      message += d.first;
    }
  }
  throw CollectiveError(message, worst);
}

}  // namespace baton
