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

namespace baton {

namespace {

// ---------------------------------------------------------------------------------------------
// Validation and the step index both reports share

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

// ---------------------------------------------------------------------------------------------
// Number and text formatting (locale-independent)

std::string fixed3(double value) {
  std::ostringstream out;
  out.imbue(std::locale::classic());
  out << std::fixed << std::setprecision(3) << value;
  return out.str();
}

std::string ms(double seconds) {
  return fixed3(seconds * 1e3);
}

// The shortest decimal form that reads back as the same double; "null" when not finite (JSON).
std::string number(double value) {
  if (!std::isfinite(value))
    return "null";
  std::string text;
  for (int digits = 15; digits <= 17; ++digits) {
    std::ostringstream out;
    out.imbue(std::locale::classic());
    out << std::setprecision(digits) << value;
    text = out.str();
    std::istringstream in(text);
    in.imbue(std::locale::classic());
    double back = 0;
    in >> back;
    if (back == value)
      break;
  }
  return text;
}

// A name as it goes into a text table: control characters become '?'.
std::string printable(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      c = '?';
  }
  return out;
}

// Display width of UTF-8 text: one column per code point.
std::size_t width(const std::string& text) {
  std::size_t n = 0;
  for (char c : text) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80)
      ++n;
  }
  return n;
}

// A text table: each column as wide as its widest cell, two spaces apart; `align` has one letter
// per column, 'l' for left-aligned, anything else for right-aligned.
class Table {
 public:
  Table(std::vector<std::string> header, std::string align) : align_(std::move(align)) {
    rows_.push_back(std::move(header));
  }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string str() const {
    std::vector<std::size_t> widths(rows_.front().size(), 0);
    for (const auto& row : rows_) {
      for (std::size_t c = 0; c < row.size(); ++c)
        widths[c] = std::max(widths[c], width(row[c]));
    }
    std::string out;
    for (const auto& row : rows_) {
      std::string line;
      for (std::size_t c = 0; c < row.size(); ++c) {
        const std::string pad(widths[c] - width(row[c]), ' ');
        if (c > 0)
          line += "  ";
        line += align_[c] == 'l' ? row[c] + pad : pad + row[c];
      }
      while (!line.empty() && line.back() == ' ')
        line.pop_back();
      out += line + "\n";
    }
    return out;
  }

 private:
  std::string align_;
  std::vector<std::vector<std::string>> rows_;
};

std::string iterations_text(std::size_t lo, std::size_t hi) {
  return lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
}

std::string warning_lines(const std::vector<std::string>& warnings) {
  std::string out;
  for (const std::string& w : warnings)
    out += "warning: " + printable(w) + "\n";
  return out;
}

// ---------------------------------------------------------------------------------------------
// JSON, CSV and files

// Appends `text` as a JSON string: quotes, backslashes and control characters escaped, valid
// UTF-8 kept, each byte of invalid UTF-8 replaced by U+FFFD.
void append_json_string(std::string& out, const std::string& text) {
  out += '"';
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t size = text.size();
  for (std::size_t i = 0; i < size;) {
    const unsigned char c = bytes[i];
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x20) {
      switch (c) {
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default: {
          static const char hex[] = "0123456789abcdef";
          out += "\\u00";
          out += hex[c >> 4];
          out += hex[c & 0xF];
        }
      }
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else {
      std::size_t length = 0;
      unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
      if (c >= 0xC2 && c <= 0xDF) {
        length = 2;
      } else if (c >= 0xE0 && c <= 0xEF) {
        length = 3;
        if (c == 0xE0)
          lo = 0xA0;  // no overlong forms
        if (c == 0xED)
          hi = 0x9F;  // no surrogates
      } else if (c >= 0xF0 && c <= 0xF4) {
        length = 4;
        if (c == 0xF0)
          lo = 0x90;
        if (c == 0xF4)
          hi = 0x8F;  // nothing above U+10FFFF
      }
      bool valid = length > 0 && i + length <= size && bytes[i + 1] >= lo && bytes[i + 1] <= hi;
      for (std::size_t k = 2; valid && k < length; ++k)
        valid = (bytes[i + k] & 0xC0) == 0x80;
      if (valid) {
        out.append(text, i, length);
        i += length;
      } else {
        out += "\\ufffd";
        ++i;
      }
    }
  }
  out += '"';
}

std::string json_string(const std::string& text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

// One CSV field (RFC 4180): quoted when it holds a comma, a quote, a line break or edge spaces.
std::string csv_field(const std::string& text) {
  const bool quote = text.find_first_of(",\"\r\n") != std::string::npos ||
                     (!text.empty() && (text.front() == ' ' || text.back() == ' '));
  if (!quote)
    return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"')
      out += '"';
    out += c;
  }
  return out + "\"";
}

// `who` is the public writer ("baton::write_json", ...), `what` the kind of file it writes.
void write_file(const char* who, const std::string& path, const std::string& text,
                const char* what) {
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    const int error = errno;
    throw Error(std::string(who) + ": cannot open '" + path + "' to write the " + what +
                (error != 0 ? std::string(": ") + std::strerror(error) : std::string()));
  }
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out)
    throw Error(std::string(who) + ": cannot write the " + what + " to '" + path + "'");
}

std::string imbalance_json(const StepImbalance& s, const std::string& indent) {
  return indent + "{\"step\": " + json_string(s.step) +
         ", \"iterations\": " + std::to_string(s.iterations) +
         ", \"ranks\": " + std::to_string(s.ranks) + ", \"useful_s\": " + number(s.useful) +
         ", \"waiting_s\": " + number(s.waiting) + ", \"efficiency\": " + number(s.efficiency) +
         ", \"slowest_rank\": " + std::to_string(s.slowest_rank) +
         ", \"slowest_total_s\": " + number(s.slowest_total) + "}";
}

std::string csv_row(const StepImbalance& s) {
  return csv_field(s.step) + "," + std::to_string(s.iterations) + "," + std::to_string(s.ranks) +
         "," + number(s.useful) + "," + number(s.waiting) + "," + number(s.efficiency) + "," +
         std::to_string(s.slowest_rank) + "," + number(s.slowest_total) + "\n";
}

}  // namespace

// -----------------------------------------------------------------------------------------------
// Reports

TimeInfo time_info(const std::vector<RankRecord>& records) {
  const Index index = build_index(records, "baton::time_info");
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
  const Index index = build_index(records, "baton::load_imbalance");
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

// -----------------------------------------------------------------------------------------------
// Text tables

std::string format_time_info(const TimeInfo& info) {
  Table steps(
      {"step", "ranks", "iterations", "mean_avg_ms", "max_avg_ms", "mean_total_ms", "max_total_ms"},
      "lrrrrrr");
  for (const StepTime& s : info.steps) {
    steps.add({printable(s.step), std::to_string(s.ranks),
               iterations_text(s.min_iterations, s.max_iterations), ms(s.mean_average),
               ms(s.max_average), ms(s.mean_total), ms(s.max_total)});
  }
  Table ranks({"rank", "step", "iterations", "avg_ms", "total_ms"}, "rlrrr");
  for (const RankTime& r : info.ranks) {
    for (const RankStepTime& s : r.steps) {
      ranks.add({std::to_string(r.rank), printable(s.step), std::to_string(s.iterations),
                 ms(s.average), ms(s.total)});
    }
  }
  return "Time per step over ranks (ms)\n" + steps.str() + "\nTime per rank and step (ms)\n" +
         ranks.str() + warning_lines(info.warnings);
}

std::string format_load_imbalance(const LoadImbalance& imbalance) {
  Table table({"step", "iterations", "ranks", "useful_ms", "waiting_ms", "efficiency",
               "slowest_rank", "slowest_total_ms"},
              "lrrrrrrr");
  auto add = [&table](const StepImbalance& s) {
    table.add({printable(s.step), std::to_string(s.iterations), std::to_string(s.ranks),
               ms(s.useful), ms(s.waiting), fixed3(s.efficiency),
               s.slowest_rank < 0 ? "-" : std::to_string(s.slowest_rank), ms(s.slowest_total)});
  };
  for (const StepImbalance& s : imbalance.steps)
    add(s);
  add(imbalance.overall);
  return "Load imbalance (ms): useful = sum over iterations of the mean over ranks, waiting = sum "
         "of max - mean\n" +
         table.str() + warning_lines(imbalance.warnings);
}

// -----------------------------------------------------------------------------------------------
// Files

void write_json(const std::string& path, const TimeInfo& info, const LoadImbalance& imbalance) {
  std::string out = "{\n  \"time_info\": {\n    \"ranks\": [";
  for (std::size_t r = 0; r < info.ranks.size(); ++r) {
    const RankTime& rank = info.ranks[r];
    out += (r ? ",\n" : "\n");
    out += "      {\"rank\": " + std::to_string(rank.rank) + ", \"steps\": [";
    for (std::size_t k = 0; k < rank.steps.size(); ++k) {
      const RankStepTime& s = rank.steps[k];
      out += (k ? ",\n" : "\n");
      out += "        {\"step\": " + json_string(s.step) +
             ", \"iterations\": " + std::to_string(s.iterations) +
             ", \"average_s\": " + number(s.average) + ", \"total_s\": " + number(s.total) + "}";
    }
    out += rank.steps.empty() ? "]}" : "\n      ]}";
  }
  out += info.ranks.empty() ? "],\n" : "\n    ],\n";
  out += "    \"steps\": [";
  for (std::size_t k = 0; k < info.steps.size(); ++k) {
    const StepTime& s = info.steps[k];
    out += (k ? ",\n" : "\n");
    out += "      {\"step\": " + json_string(s.step) + ", \"ranks\": " + std::to_string(s.ranks) +
           ", \"min_iterations\": " + std::to_string(s.min_iterations) +
           ", \"max_iterations\": " + std::to_string(s.max_iterations) +
           ", \"mean_average_s\": " + number(s.mean_average) +
           ", \"max_average_s\": " + number(s.max_average) +
           ", \"mean_total_s\": " + number(s.mean_total) +
           ", \"max_total_s\": " + number(s.max_total) + "}";
  }
  out += info.steps.empty() ? "]\n  },\n" : "\n    ]\n  },\n";
  out += "  \"load_imbalance\": {\n    \"steps\": [";
  for (std::size_t k = 0; k < imbalance.steps.size(); ++k)
    out += (k ? ",\n" : "\n") + imbalance_json(imbalance.steps[k], "      ");
  out += imbalance.steps.empty() ? "],\n" : "\n    ],\n";
  out += "    \"overall\": " + imbalance_json(imbalance.overall, "") + "\n  },\n";
  // The warnings of both reports, each once, in order.
  std::vector<std::string> warnings = info.warnings;
  for (const std::string& w : imbalance.warnings) {
    if (std::find(warnings.begin(), warnings.end(), w) == warnings.end())
      warnings.push_back(w);
  }
  out += "  \"warnings\": [";
  for (std::size_t k = 0; k < warnings.size(); ++k)
    out += (k ? ",\n    " : "\n    ") + json_string(warnings[k]);
  out += warnings.empty() ? "]\n}\n" : "\n  ]\n}\n";
  write_file("baton::write_json", path, out, "timing report (JSON)");
}

void write_csv(const std::string& path, const LoadImbalance& imbalance) {
  std::string out =
      "step,iterations,ranks,useful_s,waiting_s,efficiency,slowest_rank,slowest_total_s\n";
  for (const StepImbalance& s : imbalance.steps)
    out += csv_row(s);
  out += csv_row(imbalance.overall);
  write_file("baton::write_csv", path, out, "load imbalance (CSV)");
}

void write_chrome_trace(const std::string& path, const std::vector<RankRecord>& records) {
  const Index index = build_index(records, "baton::write_chrome_trace");  // validates
  double earliest = 0;
  for (const RankRecord& r : records) {
    for (const StepRecord& s : r.steps) {
      for (double start : s.starts)
        earliest = std::min(earliest, start);
    }
  }
  std::string out = "{\"traceEvents\": [\n";
  out +=
      "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": 0, \"args\": {\"name\": "
      "\"baton\"}}";
  for (int rank : index.all_ranks) {
    const std::string tid = std::to_string(rank);
    out += ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": " + tid +
           ", \"args\": {\"name\": \"rank " + tid + "\"}}";
    out += ",\n{\"name\": \"thread_sort_index\", \"ph\": \"M\", \"pid\": 0, \"tid\": " + tid +
           ", \"args\": {\"sort_index\": " + tid + "}}";
  }
  std::vector<const RankRecord*> sorted;
  for (const RankRecord& r : records)
    sorted.push_back(&r);
  std::sort(sorted.begin(), sorted.end(),
            [](const RankRecord* a, const RankRecord* b) { return a->rank < b->rank; });
  for (const RankRecord* r : sorted) {
    const std::string tid = std::to_string(r->rank);
    for (const StepRecord& s : r->steps) {
      const std::string name = json_string(s.name);
      for (std::size_t i = 0; i < s.durations.size(); ++i) {
        out += ",\n{\"name\": " + name + ", \"cat\": \"step\", \"ph\": \"X\", \"ts\": " +
               number((s.starts[i] - earliest) * 1e6) +
               ", \"dur\": " + number(s.durations[i] * 1e6) + ", \"pid\": 0, \"tid\": " + tid +
               ", \"args\": {\"iteration\": " + std::to_string(i) + "}}";
      }
    }
  }
  out += "\n],\n\"displayTimeUnit\": \"ms\"}\n";
  write_file("baton::write_chrome_trace", path, out, "Chrome trace");
}

}  // namespace baton
