#include "baton/timing/report.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <locale>
#include <map>
#include <sstream>
#include <utility>

#include "baton/core/error.hpp"
#include "baton/timing/detail/report_index.hpp"

// The analysis: the step index, time_info() and load_imbalance(). Text tables are in
// report_text.cpp, files (JSON, CSV, Chrome trace) in report_files.cpp.

namespace baton {
namespace detail {

namespace {

std::string quoted(const std::string& step) {
  return "'" + step + "'";
}

// `who` is the public function that checks the records ("baton::time_info", ...).
void validate_step(const char* who, int rank, const StepRecord& step) {
  const std::string where =
      std::string(who) + ": rank " + std::to_string(rank) + ", step " + quoted(step.name);
  if (step.starts.size() != step.durations.size())
    throw Error(where + ": " + std::to_string(step.starts.size()) + " starts but " +
                std::to_string(step.durations.size()) + " durations");
  for (std::size_t i = 0; i < step.durations.size(); ++i) {
    const std::string at = where + ", iteration " + std::to_string(i);
    if (!std::isfinite(step.starts[i]))
      throw Error(at + ": start is not finite");
    if (!std::isfinite(step.durations[i]))
      throw Error(at + ": duration is not finite");
    if (step.durations[i] < 0)
      throw Error(at + ": negative duration");
  }
}

}  // namespace

Index build_index(const std::vector<RankRecord>& records, const char* who) {
  std::vector<const RankRecord*> sorted;
  sorted.reserve(records.size());
  for (const RankRecord& r : records) {
    if (r.rank < 0)
      throw Error(std::string(who) + ": negative rank " + std::to_string(r.rank));
    sorted.push_back(&r);
  }
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const RankRecord* a, const RankRecord* b) { return a->rank < b->rank; });
  Index index;
  std::map<std::string, std::size_t> position;
  for (const RankRecord* r : sorted) {
    if (!index.all_ranks.empty() && index.all_ranks.back() == r->rank)
      throw Error(std::string(who) + ": rank " + std::to_string(r->rank) + " appears twice");
    index.all_ranks.push_back(r->rank);
    for (const StepRecord& step : r->steps) {
      validate_step(who, r->rank, step);
      auto found = position.find(step.name);
      if (found == position.end()) {
        found = position.emplace(step.name, index.steps.size()).first;
        index.steps.push_back(StepIndex{step.name, {}, {}, -1});
      }
      StepIndex& s = index.steps[found->second];
      if (s.last_rank == r->rank)
        throw Error(std::string(who) + ": rank " + std::to_string(r->rank) + " recorded step " +
                    quoted(step.name) + " twice");
      s.last_rank = r->rank;
      if (step.durations.empty())
        s.empty.push_back(r->rank);
      else
        s.ranks.push_back(RankStep{r->rank, &step});
    }
  }
  return index;
}

}  // namespace detail

namespace {

using detail::Index;
using detail::quoted;
using detail::RankStep;
using detail::StepIndex;

// "rank 3", "ranks 2, 3", "ranks 0-4, 7" (runs of three or more as ranges).
std::string rank_list(const std::vector<int>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1)
      ++j;
    if (i > 0)
      out += ", ";
    if (j >= i + 2) {
      out += std::to_string(ranks[i]) + "-" + std::to_string(ranks[j]);
      i = j + 1;
    } else {
      out += std::to_string(ranks[i]);
      ++i;
    }
  }
  return out;
}

// Warnings common to both reports for one step: ranks without it, ranks with an empty record.
void presence_warnings(const Index& index, const StepIndex& s, std::vector<std::string>& warnings) {
  std::vector<int> present;
  for (const RankStep& rs : s.ranks)
    present.push_back(rs.rank);
  present.insert(present.end(), s.empty.begin(), s.empty.end());
  std::sort(present.begin(), present.end());
  std::vector<int> missing;
  std::set_difference(index.all_ranks.begin(), index.all_ranks.end(), present.begin(),
                      present.end(), std::back_inserter(missing));
  if (!missing.empty())
    warnings.push_back("step " + quoted(s.name) + " missing on " + rank_list(missing));
  if (!s.empty.empty())
    warnings.push_back("step " + quoted(s.name) + " recorded no iterations on " +
                       rank_list(s.empty));
}

std::pair<std::size_t, std::size_t> iteration_range(const StepIndex& s) {
  std::size_t lo = s.ranks.front().record->durations.size(), hi = lo;
  for (const RankStep& rs : s.ranks) {
    lo = std::min(lo, rs.record->durations.size());
    hi = std::max(hi, rs.record->durations.size());
  }
  return {lo, hi};
}

double sum(const std::vector<double>& values, std::size_t n) {
  double total = 0;
  for (std::size_t i = 0; i < n; ++i)
    total += values[i];
  return total;
}

double efficiency(double useful, double waiting) {
  const double all = useful + waiting;
  return all > 0 ? useful / all : 1.0;
}

}  // namespace

// -----------------------------------------------------------------------------------------------
// Reports

TimeInfo time_info(const std::vector<RankRecord>& records) {
  const Index index = detail::build_index(records, "baton::time_info");
  TimeInfo info;
  if (records.empty())
    info.warnings.push_back("no timing records");
  for (int rank : index.all_ranks)
    info.ranks.push_back(RankTime{rank, {}});
  for (const StepIndex& s : index.steps) {
    presence_warnings(index, s, info.warnings);
    if (s.ranks.empty())
      continue;
    const auto [lo, hi] = iteration_range(s);
    if (lo != hi)
      info.warnings.push_back("step " + quoted(s.name) + ": ranks recorded " + std::to_string(lo) +
                              " to " + std::to_string(hi) +
                              " iterations; averages and totals use each rank's own iterations");
    StepTime step;
    step.step = s.name;
    step.ranks = static_cast<int>(s.ranks.size());
    step.min_iterations = lo;
    step.max_iterations = hi;
    for (const RankStep& rs : s.ranks) {
      const std::size_t n = rs.record->durations.size();
      const double total = sum(rs.record->durations, n);
      const double average = total / static_cast<double>(n);
      const auto at = std::lower_bound(index.all_ranks.begin(), index.all_ranks.end(), rs.rank);
      info.ranks[static_cast<std::size_t>(at - index.all_ranks.begin())].steps.push_back(
          RankStepTime{s.name, n, average, total});
      step.mean_average += average;
      step.mean_total += total;
      step.max_average = std::max(step.max_average, average);
      step.max_total = std::max(step.max_total, total);
    }
    step.mean_average /= static_cast<double>(s.ranks.size());
    step.mean_total /= static_cast<double>(s.ranks.size());
    info.steps.push_back(std::move(step));
  }
  return info;
}

LoadImbalance load_imbalance(const std::vector<RankRecord>& records) {
  const Index index = detail::build_index(records, "baton::load_imbalance");
  LoadImbalance report;
  report.overall.step = "overall";
  if (records.empty())
    report.warnings.push_back("no timing records");
  // Per rank (position in all_ranks): the sum over steps of its total over compared iterations.
  std::vector<double> overall_totals(index.all_ranks.size(), 0.0);
  std::vector<bool> counted(index.all_ranks.size(), false);
  for (const StepIndex& s : index.steps) {
    presence_warnings(index, s, report.warnings);
    if (s.ranks.empty())
      continue;
    const auto [n, hi] = iteration_range(s);
    if (n != hi) {
      const std::string used = n == 1 ? "iteration 0" : "iterations 0-" + std::to_string(n - 1);
      report.warnings.push_back("step " + quoted(s.name) + ": ranks recorded " + std::to_string(n) +
                                " to " + std::to_string(hi) + " iterations; load imbalance uses " +
                                used + " present on every rank that has the step");
    }
    std::vector<double> sums(n, 0.0), maxes(n, 0.0);
    StepImbalance step;
    step.step = s.name;
    step.iterations = n;
    step.ranks = static_cast<int>(s.ranks.size());
    for (const RankStep& rs : s.ranks) {
      const std::vector<double>& d = rs.record->durations;
      for (std::size_t i = 0; i < n; ++i) {
        sums[i] += d[i];
        maxes[i] = std::max(maxes[i], d[i]);
      }
      const double total = sum(d, n);
      if (step.slowest_rank < 0 ||
          total > step.slowest_total) {  // ranks increase: ties keep the lowest
        step.slowest_rank = rs.rank;
        step.slowest_total = total;
      }
      const auto at = static_cast<std::size_t>(
          std::lower_bound(index.all_ranks.begin(), index.all_ranks.end(), rs.rank) -
          index.all_ranks.begin());
      overall_totals[at] += total;
      counted[at] = true;
    }
    for (std::size_t i = 0; i < n; ++i) {
      // Rounding can put the mean a hair above the maximum when all ranks agree: clamp.
      const double mean = std::min(sums[i] / static_cast<double>(s.ranks.size()), maxes[i]);
      step.useful += mean;
      step.waiting += maxes[i] - mean;
    }
    step.efficiency = efficiency(step.useful, step.waiting);
    report.overall.iterations += step.iterations;
    report.overall.useful += step.useful;
    report.overall.waiting += step.waiting;
    report.steps.push_back(std::move(step));
  }
  report.overall.efficiency = efficiency(report.overall.useful, report.overall.waiting);
  for (std::size_t k = 0; k < index.all_ranks.size(); ++k) {
    if (!counted[k])
      continue;
    ++report.overall.ranks;
    if (report.overall.slowest_rank < 0 || overall_totals[k] > report.overall.slowest_total) {
      report.overall.slowest_rank = index.all_ranks[k];
      report.overall.slowest_total = overall_totals[k];
    }
  }
  return report;
}

}  // namespace baton
