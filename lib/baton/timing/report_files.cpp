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

// The reports as files: JSON, CSV and Chrome trace, written atomically.

namespace baton {

namespace {

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
  const detail::Index index =
      detail::build_index(records, "baton::write_chrome_trace");  // validates
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
