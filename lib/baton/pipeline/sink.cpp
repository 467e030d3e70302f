#include "baton/pipeline/sink.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "baton/core/error.hpp"
#include "baton/systems/xyz.hpp"

namespace baton::pipeline {

namespace {

constexpr const char* run_key = "baton_run=\"";

bool exists(const std::string& path) {
  return ::access(path.c_str(), F_OK) == 0;
}

bool escaped(unsigned char c) {
  return c <= 0x20 || c == 0x7f || c == '%' || c == ';' || c == '=' || c == '"' || c == '\\';
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

std::string decode_part(const std::string& text, std::size_t begin, std::size_t end) {
  std::string out;
  for (std::size_t i = begin; i < end; ++i) {
    if (text[i] != '%') {
      if (escaped(static_cast<unsigned char>(text[i])))
        throw Error("baton::pipeline::decode_run: '" + text + "' is not a run description");
      out += text[i];
      continue;
    }
    const int hi = i + 2 < end ? hex_digit(text[i + 1]) : -1;
    const int lo = i + 2 < end ? hex_digit(text[i + 2]) : -1;
    if (hi < 0 || lo < 0)
      throw Error("baton::pipeline::decode_run: '" + text + "' has a bad %-escape");
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

// The run description in a first frame's comment line, if it has one.
std::optional<RunDescription> run_in_comment(const std::string& comment) {
  std::size_t at = comment.find(run_key);
  while (at != std::string::npos && at != 0 && comment[at - 1] != ' ' && comment[at - 1] != '\t')
    at = comment.find(run_key, at + 1);
  if (at == std::string::npos)
    return std::nullopt;
  const std::size_t begin = at + std::strlen(run_key);
  const std::size_t end = comment.find('"', begin);
  if (end == std::string::npos)
    throw Error("baton::pipeline::scan_results: the run description is not closed");
  return decode_run(comment.substr(begin, end - begin));
}

// What a file's lines are: where the last complete one ends, and the first frame's comment line.
struct Lines {
  std::int64_t complete_end = 0;  // bytes up to the last newline
  std::string second_line;
};

Lines read_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error("baton::pipeline::scan_results: cannot open '" + path + "' for reading");
  Lines out;
  std::vector<char> buffer(1 << 20);
  std::int64_t at = 0, newlines = 0;
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const std::streamsize n = in.gcount();
    for (std::streamsize i = 0; i < n; ++i) {
      const char c = buffer[static_cast<std::size_t>(i)];
      if (c == '\n') {
        out.complete_end = at + i + 1;
        ++newlines;
      } else if (newlines == 1) {
        out.second_line += c;
      }
    }
    at += n;
  }
  if (newlines < 2)
    out.second_line.clear();  // the first frame's comment line is not complete
  return out;
}

// Whether the frame that starts at byte `from` was cut by the end of the file (a killed writer),
// rather than damaged with the lines of a whole frame after it. `line` gets its first line number.
bool cut_by_the_end(const std::string& path, std::int64_t from, std::int64_t complete_end,
                    std::int64_t& line) {
  std::ifstream in(path, std::ios::binary);
  std::string text;
  line = 1;
  for (std::int64_t at = 0; at < from && std::getline(in, text); at += text.size() + 1)
    ++line;
  in.clear();
  in.seekg(from);
  std::int64_t at = from, lines = 0;
  std::string first;
  while (at < complete_end && std::getline(in, text)) {
    if (lines == 0)
      first = text;
    at += static_cast<std::int64_t>(text.size()) + 1;
    ++lines;
  }
  if (lines == 0)
    return true;  // not even its first line is complete
  // Its atom count says how many lines a whole frame has: a count and a comment, then the atoms.
  char* end = nullptr;
  errno = 0;
  const long long atoms = std::strtoll(first.c_str(), &end, 10);
  std::size_t rest = static_cast<std::size_t>(end - first.c_str());
  while (rest < first.size() && (first[rest] == ' ' || first[rest] == '\t' || first[rest] == '\r'))
    ++rest;
  if (errno != 0 || end == first.c_str() || rest != first.size() || atoms < 0)
    return false;  // a complete first line that is no atom count
  return lines < atoms + 2;
}

// Where the results of an earlier run are, prepared for appending: `path.part` cut back to its
// complete frames, after checking that it is this run's. Fills `ids`; false without `path.part`.
bool prepare_resume(const std::string& path, const std::string& run,
                    std::vector<std::int64_t>& ids) {
  const std::string part = path + XyzFileSink::partial_suffix;
  if (!exists(part))
    return false;
  ResultsOnDisk found = scan_results(part);
  if (!found.ids.empty() && !run.empty()) {
    const std::string who = "baton::pipeline::XyzFileSink: cannot resume from '" + part + "': ";
    if (!found.run)
      throw Error(who +
                  "its first frame has no baton_run description (written by another program or "
                  "an older Baton), so it cannot be told to be this run's; move it away");
    const std::string differs = run_differences(*found.run, decode_run(run));
    if (!differs.empty())
      throw Error(who + "it holds the results of another run (" + differs +
                  "); give the same input and options, or move it away");
  }
  if (::truncate(part.c_str(), static_cast<off_t>(found.complete_bytes)) != 0)
    throw Error("baton::pipeline::XyzFileSink: cannot cut '" + part +
                "' back to its complete frames: " + std::strerror(errno));
  ids = std::move(found.ids);
  return true;
}

}  // namespace

std::string encode_run(const RunDescription& run) {
  static const char* digits = "0123456789ABCDEF";
  std::string out;
  const auto put = [&](const std::string& text) {
    for (const char c : text) {
      const auto u = static_cast<unsigned char>(c);
      if (escaped(u)) {
        out += '%';
        out += digits[u / 16];
        out += digits[u % 16];
      } else {
        out += c;
      }
    }
  };
  for (const auto& [key, value] : run) {
    if (!out.empty())
      out += ' ';
    put(key);
    out += '=';
    put(value);
  }
  return out;
}

RunDescription decode_run(const std::string& text) {
  RunDescription out;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find(' ', begin);
    if (end == std::string::npos)
      end = text.size();
    const std::size_t equals = text.find('=', begin);
    if (equals == std::string::npos || equals >= end)
      throw Error("baton::pipeline::decode_run: '" + text + "' is not a run description");
    out.emplace_back(decode_part(text, begin, equals), decode_part(text, equals + 1, end));
    begin = end + 1;
  }
  return out;
}

std::string run_differences(const RunDescription& there, const RunDescription& now) {
  std::string out;
  const auto find = [](const RunDescription& run, const std::string& key) -> const std::string* {
    for (const auto& [k, v] : run)
      if (k == key)
        return &v;
    return nullptr;
  };
  const auto add = [&](const std::string& key, const std::string* a, const std::string* b) {
    out += (out.empty() ? "" : "; ") + key + ": " + (a ? *a + " there" : "not there") + ", " +
           (b ? *b + " now" : "not given now");
  };
  for (const auto& [key, value] : now) {
    const std::string* old = find(there, key);
    if (old == nullptr || *old != value)
      add(key, old, &value);
  }
  for (const auto& [key, value] : there)
    if (find(now, key) == nullptr)
      add(key, &value, nullptr);
  return out;
}

ResultsOnDisk scan_results(const std::string& path) {
  ResultsOnDisk out;
  const Lines lines = read_lines(path);
  systems::XyzReader reader(path);
  try {
    while (std::optional<systems::HostSystem> s = reader.next()) {
      const std::int64_t end = reader.offset();
      if (end > lines.complete_end)
        break;  // its last line was cut
      out.ids.push_back(s->id);
      out.complete_bytes = end;
    }
  } catch (const Error& e) {
    std::int64_t line = 0;
    if (!cut_by_the_end(path, out.complete_bytes, lines.complete_end, line))
      throw Error("baton::pipeline::scan_results: " + path + ":" + std::to_string(line) +
                  ": frame " + std::to_string(out.ids.size() + 1) +
                  " is damaged, and the lines of a whole frame follow it (only a cut last frame "
                  "is dropped): " +
                  e.what());
  }
  if (out.complete_bytes > 0)
    out.run = run_in_comment(lines.second_line);
  std::sort(out.ids.begin(), out.ids.end());
  return out;
}

XyzFileSink::XyzFileSink(std::string path, std::vector<std::string> stage_names, bool resume,
                         RunDescription run, double stress_mvv2e)
    : stages_(std::move(stage_names)),
      stress_mvv2e_(stress_mvv2e),
      run_(encode_run(run)),
      resumed_(resume && prepare_resume(path, run_, done_)),
      file_(std::move(path), partial_suffix, resumed_) {
  if (resumed_)
    file_.keep_partial();  // the earlier run's results stay, whatever happens
}

void XyzFileSink::write(const std::vector<systems::HostSystem>& systems) {
  if (systems.empty())
    return;
  if (in_file() == 0 && !run_.empty()) {
    // The file's first frame carries the run's description in its comment line.
    std::ostringstream first;
    systems::write_xyz(first, {systems.front()}, stages_, stress_mvv2e_);
    std::string frame = first.str();
    const std::size_t comment_end = frame.find('\n', frame.find('\n') + 1);
    frame.insert(comment_end, std::string(" ") + run_key + run_ + "\"");
    errno = 0;
    file_.stream() << frame;
    if (!file_.stream())  // a full disk says so here: flush() would no longer know why
      throw Error("baton::pipeline::XyzFileSink: system " + std::to_string(systems.front().id) +
                  ": writing '" + file_.temporary() + "' failed" +
                  (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()));
    const std::vector<systems::HostSystem> rest(systems.begin() + 1, systems.end());
    systems::write_xyz(file_.stream(), rest, stages_, stress_mvv2e_);
  } else {
    systems::write_xyz(file_.stream(), systems, stages_, stress_mvv2e_);
  }
  file_.flush();
  file_.keep_partial();  // from the first result on, an unfinished run's results stay for resume
  written_ += static_cast<std::int64_t>(systems.size());
}

void XyzFileSink::finish() {
  file_.commit();
}

}  // namespace baton::pipeline
