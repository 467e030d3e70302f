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

// Text tables of the reports (locale-independent numbers).

namespace baton {

namespace {

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

}  // namespace

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

}  // namespace baton
