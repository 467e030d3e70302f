#include "baton/pipeline/checkpoint.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <utility>

#include "baton/core/atomic_file.hpp"
#include "baton/core/error.hpp"
#include "baton/pipeline/detail/capture.hpp"

namespace baton::pipeline {

void Checkpoints::add(SystemCheckpoint c) {
  auto it = by_id_.find(c.id);
  if (it == by_id_.end())
    by_id_.emplace(c.id, std::move(c));
  else if (c.ahead_of(it->second))
    it->second = std::move(c);
}

void Checkpoints::add(std::vector<SystemCheckpoint> all) {
  for (SystemCheckpoint& c : all)
    add(std::move(c));
}

const SystemCheckpoint* Checkpoints::find(std::int64_t id) const {
  const auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &it->second;
}

void Checkpoints::erase(const std::vector<std::int64_t>& ids) {
  for (std::int64_t id : ids)
    by_id_.erase(id);
}

void Checkpoints::erase_before(int stage) {
  for (auto it = by_id_.begin(); it != by_id_.end();)
    it = it->second.stage < stage ? by_id_.erase(it) : std::next(it);
}

void Checkpoints::keep_states(int first, int last) {
  for (auto& entry : by_id_)
    if (entry.second.stage < first || entry.second.stage > last)
      std::string().swap(entry.second.state);
}

std::vector<SystemCheckpoint> Checkpoints::all() const {
  std::vector<SystemCheckpoint> out;
  out.reserve(by_id_.size());
  for (const auto& entry : by_id_)
    out.push_back(entry.second);
  return out;
}

namespace {

constexpr char magic[8] = {'B', 'A', 'T', 'O', 'N', 'C', 'K', '2'};

std::uint64_t fnv1a(const char* p, std::size_t n) {
  std::uint64_t h = 1469598103934665603ULL;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(p[i]);
    h *= 1099511628211ULL;
  }
  return h;
}

template <class T>
void put(std::string& out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out.append(b, sizeof(T));
}

void put_text(std::string& out, const std::string& s) {
  put<std::uint64_t>(out, s.size());
  out += s;
}

struct Reader {
  const std::string& bytes;
  const std::string& what;
  std::size_t at = 0;
  void need(std::size_t n) const {
    if (bytes.size() - at < n)
      throw Error("baton::pipeline: " + what + " is damaged: it ends inside a checkpoint (" +
                  std::to_string(bytes.size()) + " bytes)");
  }
  template <class T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, bytes.data() + at, sizeof(T));
    at += sizeof(T);
    return v;
  }
  std::string text() {
    const auto n = get<std::uint64_t>();
    need(n);
    std::string s = bytes.substr(at, n);
    at += n;
    return s;
  }
};

}  // namespace

std::string encode_checkpoints(const std::string& run, const std::vector<SystemCheckpoint>& all) {
  std::string out(magic, sizeof(magic));
  put_text(out, run);
  put_text(out, detail::state_layout());
  put<std::uint64_t>(out, all.size());
  for (const SystemCheckpoint& c : all) {
    put<std::int64_t>(out, c.id);
    put<std::int32_t>(out, c.stage);
    put<std::int64_t>(out, c.steps);
    put<std::int32_t>(out, c.atoms);
    put<std::int32_t>(out, c.entering ? 1 : 0);
    put_text(out, c.state);
  }
  put<std::uint64_t>(out, fnv1a(out.data(), out.size()));
  return out;
}

std::vector<SystemCheckpoint> decode_checkpoints(const std::string& bytes, const std::string& run,
                                                 const std::string& what) {
  if (bytes.size() < sizeof(magic) + 16 || std::memcmp(bytes.data(), magic, sizeof(magic)) != 0)
    throw Error("baton::pipeline: " + what + " is not a Baton checkpoint file");
  Reader in{bytes, what, sizeof(magic)};
  const std::string theirs = in.text();
  if (theirs != run)
    throw Error("baton::pipeline: " + what +
                " holds the checkpoints of another run (its description differs)");
  if (in.text() != detail::state_layout())
    throw Error("baton::pipeline: " + what +
                " was written by a Baton whose checkpoints hold other fields");
  const auto n = in.get<std::uint64_t>();
  std::vector<SystemCheckpoint> out;
  for (std::uint64_t k = 0; k < n; ++k) {
    SystemCheckpoint c;
    c.id = in.get<std::int64_t>();
    c.stage = in.get<std::int32_t>();
    c.steps = in.get<std::int64_t>();
    c.atoms = in.get<std::int32_t>();
    const auto flags = in.get<std::int32_t>();
    c.entering = flags == 1;
    c.state = in.text();
    if (c.stage < 0 || c.steps < 0 || c.atoms < 1 || flags < 0 || flags > 1 ||
        (c.entering && c.steps != 0))
      throw Error("baton::pipeline: " + what + " is damaged: checkpoint " + std::to_string(k) +
                  " has stage " + std::to_string(c.stage) + ", " + std::to_string(c.steps) +
                  " steps and " + std::to_string(c.atoms) + " atoms");
    out.push_back(std::move(c));
  }
  const std::size_t end = in.at;
  const auto hash = in.get<std::uint64_t>();
  if (in.at != bytes.size() || hash != fnv1a(bytes.data(), end))
    throw Error("baton::pipeline: " + what +
                " is damaged: its checksum does not match its contents");
  return out;
}

void write_checkpoints(const std::string& path, const std::string& run,
                       const std::vector<SystemCheckpoint>& all) {
  const std::string bytes = encode_checkpoints(run, all);
  AtomicFile file(path);
  file.stream().write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  file.commit();
}

std::vector<SystemCheckpoint> read_checkpoints(const std::string& path, const std::string& run) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error("baton::pipeline: cannot open the checkpoint file '" + path +
                "': " + std::strerror(errno));
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad())
    throw Error("baton::pipeline: cannot read the checkpoint file '" + path + "'");
  return decode_checkpoints(bytes, run, "the checkpoint file '" + path + "'");
}

namespace {

bool digits(const std::string& s, std::size_t from, std::size_t to) {
  if (from >= to)
    return false;
  for (std::size_t i = from; i < to; ++i)
    if (s[i] < '0' || s[i] > '9')
      return false;
  return true;
}

// The files in `prefix`'s folder whose names `keep` accepts (given the name and prefix's name).
template <class Keep>
std::vector<std::string> files_of(const std::string& prefix, Keep keep) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  const fs::path p(prefix);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  const std::string name = p.filename().string();
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string f = it->path().filename().string();
    if (f.size() >= name.size() && f.compare(0, name.size(), name) == 0 && keep(f, name.size()))
      out.push_back(p.has_parent_path() ? (dir / f).string() : f);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<std::string> checkpoint_files(const std::string& prefix) {
  return files_of(prefix, [](const std::string& f, std::size_t n) {
    return f.size() == n || (f[n] == '.' && digits(f, n + 1, f.size()));
  });
}

std::vector<std::string> checkpoint_temporaries(const std::string& prefix) {
  return files_of(prefix, [](const std::string& f, std::size_t n) {
    // prefix[.<rank>].tmp.<pid>
    const std::size_t tmp = f.rfind(".tmp.");
    if (tmp == std::string::npos || tmp < n || !digits(f, tmp + 5, f.size()))
      return false;
    return tmp == n || (f[n] == '.' && digits(f, n + 1, tmp));
  });
}

}  // namespace baton::pipeline
