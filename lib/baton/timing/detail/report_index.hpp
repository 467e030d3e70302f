#pragma once
/// \file
/// The step index the timing reports share (internal to timing/report*.cpp): every step over all
/// ranks, in order of first appearance, the records checked.

#include <string>
#include <vector>

#include "baton/timing/report.hpp"

namespace baton::detail {

struct RankStep {
  int rank;
  const StepRecord* record;
};

// One step over all ranks, in order of first appearance.
struct StepIndex {
  std::string name;
  std::vector<RankStep> ranks;  // ranks with at least one iteration, increasing rank
  std::vector<int> empty;       // ranks with a record but no iteration
  int last_rank = -1;           // the last rank seen with this step (repeat detection)
};

struct Index {
  std::vector<int> all_ranks;  // every rank of the input, increasing
  std::vector<StepIndex> steps;
};

/// Checks `records` and indexes them; `who` is the public function that checks them
/// ("baton::time_info", ...), named in its errors.
Index build_index(const std::vector<RankRecord>& records, const char* who);

}  // namespace baton::detail
