#include "baton/pipeline/sink.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

#include "baton/dynamics/xyz.hpp"
#include "baton/runtime/error.hpp"

namespace baton::pipeline {

namespace {

bool exists(const std::string& path) {
  return ::access(path.c_str(), F_OK) == 0;
}

// Where the results of an earlier run are, prepared for appending: `path.part` cut back to its
// complete frames, or a copy of the complete frames of `path`. Returns their ids.
std::vector<std::int64_t> prepare_resume(const std::string& path) {
  const std::string part = path + XyzFileSink::partial_suffix;
  if (exists(part)) {
    ResultsOnDisk found = scan_results(part);
    if (::truncate(part.c_str(), static_cast<off_t>(found.complete_bytes)) != 0)
      throw Error("baton::pipeline::XyzFileSink: cannot cut '" + part +
                  "' back to its complete frames: " + std::strerror(errno));
    return std::move(found.ids);
  }
  if (!exists(path))
    return {};
  ResultsOnDisk found = scan_results(path);
  std::ifstream in(path, std::ios::binary);
  std::ofstream out(part, std::ios::binary | std::ios::trunc);
  std::vector<char> buffer(1 << 20);
  for (std::int64_t left = found.complete_bytes; left > 0;) {
    const auto n = static_cast<std::streamsize>(
        std::min<std::int64_t>(left, static_cast<std::int64_t>(buffer.size())));
    in.read(buffer.data(), n);
    out.write(buffer.data(), n);
    if (!in || !out)
      throw Error("baton::pipeline::XyzFileSink: cannot copy '" + path + "' to '" + part + "'");
    left -= n;
  }
  return std::move(found.ids);
}

}  // namespace

ResultsOnDisk scan_results(const std::string& path) {
  ResultsOnDisk out;
  // Bytes up to the last newline: a frame that ends later was cut in its last line.
  std::int64_t lines_end = 0;
  {
    std::ifstream in(path, std::ios::binary);
    if (!in)
      throw Error("baton::pipeline::scan_results: cannot open '" + path + "' for reading");
    std::vector<char> buffer(1 << 20);
    std::int64_t at = 0;
    while (in) {
      in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      const std::streamsize n = in.gcount();
      for (std::streamsize i = 0; i < n; ++i)
        if (buffer[static_cast<std::size_t>(i)] == '\n')
          lines_end = at + i + 1;
      at += n;
    }
  }
  dynamics::XyzReader reader(path);
  try {
    while (std::optional<dynamics::HostSystem> s = reader.next()) {
      const std::int64_t end = reader.offset();
      if (end > lines_end)
        break;
      out.ids.push_back(s->id);
      out.complete_bytes = end;
    }
  } catch (const Error&) {
    // A cut frame: what came before it stands.
  }
  std::sort(out.ids.begin(), out.ids.end());
  return out;
}

XyzFileSink::XyzFileSink(std::string path, std::vector<std::string> stage_names, bool resume)
    : stages_(std::move(stage_names)),
      done_(resume ? prepare_resume(path) : std::vector<std::int64_t>{}),
      file_(std::move(path), partial_suffix, resume) {
  if (resume)
    file_.keep_partial();  // the earlier run's results stay, whatever happens
}

void XyzFileSink::write(const std::vector<dynamics::HostSystem>& systems) {
  if (systems.empty())
    return;
  file_.keep_partial();  // from the first result on, an unfinished run's results stay for resume
  dynamics::write_xyz(file_.stream(), systems, stages_);
  file_.flush();
  written_ += static_cast<std::int64_t>(systems.size());
}

void XyzFileSink::finish() {
  file_.commit();
}

}  // namespace baton::pipeline
