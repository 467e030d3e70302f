#include "baton/workspace/workspace.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <utility>

#include "baton/collectives/agreement.hpp"
#include "baton/collectives/collectives.hpp"
#include "baton/core/atomic_file.hpp"
#include "baton/core/error.hpp"
#include "baton/transport/objects.hpp"

namespace baton {

namespace {

constexpr const char* who = "baton::Workspace";
constexpr std::size_t max_key_length = 255;

std::string os_error(int err) {
  return std::strerror(err);
}

std::string octal(unsigned mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", mode & 07777u);
  return text;
}

std::string describe_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u < 0x20 || u >= 0x7f) {
    char text[8];
    std::snprintf(text, sizeof text, "\\x%02x", u);
    return text;
  }
  return std::string("'") + c + "'";
}

/// The key as it can be printed: control and non-ASCII characters as \xNN.
std::string printable(const std::string& key) {
  std::string out;
  for (const char c : key) {
    const std::string d = describe_char(c);
    out += d.size() == 3 ? std::string(1, c) : d;
  }
  return out;
}

bool key_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0)
    return "host";
  std::string out;
  for (const char* p = name; *p != '\0'; ++p)
    out += key_char(*p) ? *p : '_';
  return out.empty() ? "host" : out;
}

/// A random 64-bit id in hex: the random device, mixed with the time, the pid and the host name
/// (a random device that is a fixed-seed generator still gives two processes different ids).
std::string random_id() {
  std::random_device device;
  std::uint64_t bits = (static_cast<std::uint64_t>(device()) << 32) ^ device();
  bits ^= static_cast<std::uint64_t>(
      std::chrono::high_resolution_clock::now().time_since_epoch().count());
  bits ^= static_cast<std::uint64_t>(::getpid()) << 40;
  bits ^= std::hash<std::string>()(host_name());
  // A final mix (splitmix64) so that close inputs give unrelated ids.
  bits += 0x9e3779b97f4a7c15ull;
  bits = (bits ^ (bits >> 30)) * 0xbf58476d1ce4e5b9ull;
  bits = (bits ^ (bits >> 27)) * 0x94d049bb133111ebull;
  bits ^= bits >> 31;
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(bits));
  return text;
}

/// Refuses anything at `path` but a real directory of this user with no group or other bits.
void check_private_directory(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    const int err = errno;
    throw Error(std::string(who) + ": cannot see the directory '" + path + "': " + os_error(err) +
                " (is the root on a file system every rank reaches?)");
  }
  if (S_ISLNK(st.st_mode))
    throw Error(std::string(who) + ": '" + path +
                "' is a symbolic link: refused (it could point anywhere); remove it or choose "
                "another root or job id");
  if (!S_ISDIR(st.st_mode))
    throw Error(std::string(who) + ": '" + path + "' exists and is not a directory: refused");
  if (st.st_uid != ::geteuid())
    throw Error(std::string(who) + ": '" + path + "' belongs to uid " + std::to_string(st.st_uid) +
                ", not to this user (uid " + std::to_string(::geteuid()) +
                "): refused; choose another root or job id");
  if ((st.st_mode & 077) != 0)
    throw Error(std::string(who) + ": '" + path + "' has permissions " + octal(st.st_mode) +
                ": refused, a workspace directory must be 0700 (others could read or replace "
                "its records); chmod 700 or remove it, or choose another root or job id");
}

/// Creates `path` as 0700 whatever the umask. Returns false when it existed already (and is a
/// private directory of this user); `exist_ok` false makes that EEXIST instead (returned as
/// false without checks).
bool make_private_directory(const std::string& path, bool exist_ok) {
  if (::mkdir(path.c_str(), 0700) != 0) {
    const int err = errno;
    if (err != EEXIST)
      throw Error(std::string(who) + ": cannot create the directory '" + path +
                  "': " + os_error(err));
    if (exist_ok)
      check_private_directory(path);
    return false;
  }
  // The umask may have taken bits away (never added any): set 0700 exactly, on the directory we
  // made (O_NOFOLLOW: not on something put in its place).
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || ::fchmod(fd, 0700) != 0) {
    const int err = errno;
    if (fd >= 0)
      ::close(fd);
    throw Error(std::string(who) + ": cannot set permissions 0700 on '" + path +
                "': " + os_error(err));
  }
  ::close(fd);
  check_private_directory(path);
  return true;
}

void check_workspace_rank(const Communicator& comm, int rank, const char* operation) {
  if (rank < 0 || rank >= comm.size())
    throw Error(std::string(operation) + ": rank " + std::to_string(rank) + " is not a rank of " +
                "the workspace's communicator (0 to " + std::to_string(comm.size() - 1) + ")");
}

std::string strip_trailing_slashes(std::string path) {
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  return path;
}

}  // namespace

namespace detail {

void check_workspace_key(const std::string& key, const char* what, const char* operation) {
  const std::string rule = std::string("; a workspace ") + what +
                           " is 1 to 255 characters from A-Z a-z 0-9 . _ - (no path separators, "
                           "not '.' or '..')";
  if (key.empty())
    throw Error(std::string(operation) + ": the " + what + " is empty" + rule);
  if (key.size() > max_key_length)
    throw Error(std::string(operation) + ": the " + what + " has " + std::to_string(key.size()) +
                " characters" + rule);
  for (std::size_t i = 0; i < key.size(); ++i)
    if (!key_char(key[i]))
      throw Error(std::string(operation) + ": the " + what + " '" + printable(key) + "' has " +
                  describe_char(key[i]) + " at position " + std::to_string(i) + rule);
  if (key == "." || key == "..")
    throw Error(std::string(operation) + ": the " + what + " '" + key + "' names a directory" +
                rule);
}

JobIdChoice choose_job_id(const std::string& option, const char* baton_job_id,
                          const char* slurm_job_id, const char* slurm_step_id) {
  if (!option.empty())
    return {option, false};
  if (baton_job_id != nullptr && *baton_job_id != '\0')
    return {baton_job_id, false};
  if (slurm_job_id != nullptr && *slurm_job_id != '\0') {
    if (slurm_step_id != nullptr && *slurm_step_id != '\0')
      return {std::string(slurm_job_id) + "." + slurm_step_id, false};
    return {std::string(slurm_job_id) + ".", true};
  }
  return {std::string(), true};
}

}  // namespace detail

Workspace::Workspace(const Communicator& comm, const std::string& root, Options options)
    : comm_(comm.duplicate()),
      root_(strip_trailing_slashes(root)),
      name_(options.name),
      on_destruction_(options.on_destruction) {
  // Every rank must pass what rank 0 passes: a different name would be a different directory.
  std::vector<std::string> zeros = {options.name, options.job_id};
  broadcast_object(comm_, zeros, 0);
  on_every_rank(
      comm_,
      [&] {
        detail::check_workspace_key(options.name, "name", who);
        if (!options.job_id.empty())
          detail::check_workspace_key(options.job_id, "job id", who);
        if (zeros[0] != options.name || zeros[1] != options.job_id)
          throw Error(std::string(who) + ": rank " + std::to_string(comm_.rank()) +
                      " passed name '" + options.name + "' and job id '" + options.job_id +
                      "', rank 0 passed '" + zeros[0] + "' and '" + zeros[1] +
                      "': every rank must pass the same");
        if (root_.empty())
          throw Error(std::string(who) +
                      ": the root directory is empty; pass a directory "
                      "every rank can reach (e.g. on a shared file system)");
        struct stat st {};
        const int err = ::stat(root_.c_str(), &st) != 0 ? errno : 0;
        if (err != 0 || !S_ISDIR(st.st_mode))
          throw Error(std::string(who) + ": the root '" + root_ + "' is not a directory on rank " +
                      std::to_string(comm_.rank()) + " (" +
                      (err != 0 ? os_error(err) : std::string("something else is there")) +
                      "); create it first, on a file system every rank reaches");
      },
      2);

  // Rank 0 decides the job id and creates the directories; a random id is drawn again while its
  // directory exists, so that it is this job's alone.
  on_every_rank(comm_, [&] {
    if (comm_.rank() != 0)
      return;
    const detail::JobIdChoice choice =
        detail::choose_job_id(options.job_id, std::getenv("BATON_WORKSPACE_JOB_ID"),
                              std::getenv("SLURM_JOB_ID"), std::getenv("SLURM_STEP_ID"));
    if (!choice.random_suffix) {
      detail::check_workspace_key(choice.id, "job id", who);
      job_id_ = choice.id;
      make_private_directory(root_ + "/baton-" + job_id_, true);
    } else {
      detail::check_workspace_key(choice.id + "0", "job id", who);
      for (int attempt = 0;; ++attempt) {
        job_id_ = choice.id + random_id();
        if (make_private_directory(root_ + "/baton-" + job_id_, false))
          break;
        if (attempt == 15)
          throw Error(std::string(who) + ": 16 random job ids were all taken in '" + root_ +
                      "' (a broken random device?); set BATON_WORKSPACE_JOB_ID");
      }
    }
    make_private_directory(root_ + "/baton-" + job_id_ + "/" + name_, true);
  });
  broadcast_object(comm_, job_id_, 0);
  job_directory_ = root_ + "/baton-" + job_id_;
  directory_ = job_directory_ + "/" + name_;
  temp_prefix_ = ".tmp." + host_name() + "." + std::to_string(::getpid()) + ".";

  // Every rank sees the same directories, private to this user.
  on_every_rank(comm_, [&] {
    check_private_directory(job_directory_);
    check_private_directory(directory_);
  });
}

Workspace::~Workspace() {
  if (removed_ || on_destruction_ != Options::OnDestruction::remove_own || comm_.is_null())
    return;
  // Not collective: each rank removes its own record; the last one out removes the directories
  // (rmdir removes only an empty directory, so the order of the ranks does not matter).
  ::unlink(path_of(comm_.rank()).c_str());
  ::rmdir(directory_.c_str());
  ::rmdir(job_directory_.c_str());
}

std::string Workspace::path_of(int rank) const {
  return directory_ + "/rank-" + std::to_string(rank) + ".btnr";
}

void Workspace::require_open(const char* operation) const {
  if (removed_)
    throw Error(std::string(operation) + ": the workspace '" + directory_ +
                "' was removed (remove()); make a new Workspace");
}

void Workspace::write(const Record& record) {
  const char* operation = "baton::Workspace::write";
  require_open(operation);
  const std::string path = path_of(comm_.rank());
  try {
    // The temporary name is unique to this writer (host, process, count): two writers never
    // share one, even from different nodes.
    AtomicFile file(path, temp_prefix_ + std::to_string(writes_++), false, 0600);
    const ByteBuffer bytes = encode_record(record);
    file.stream().write(reinterpret_cast<const char*>(bytes.data()),
                        static_cast<std::streamsize>(bytes.size()));
    file.commit();
  } catch (const Error& e) {
    throw Error(std::string(operation) + ": rank " + std::to_string(comm_.rank()) +
                " could not write its record '" + path + "' (the previous one, if any, is " +
                "unchanged): " + e.what() + "; check the space and permissions there");
  }
}

void Workspace::publish(const Record& record) {
  // First every rank is here, so that no rank still reads the records this replaces; then the
  // writes, whose agreement is the barrier after them.
  barrier(comm_);
  on_every_rank(comm_, [&] { write(record); });
}

std::optional<Record> Workspace::read_from(int rank) const {
  const char* operation = "baton::Workspace::read_from";
  require_open(operation);
  check_workspace_rank(comm_, rank, operation);
  const std::string path = path_of(rank);
  const std::string reader = " (read on rank " + std::to_string(comm_.rank()) + ")";
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT)
      return std::nullopt;
    throw Error(std::string(operation) + ": cannot open rank " + std::to_string(rank) +
                "'s record '" + path + "'" + reader + ": " + os_error(err));
  }
  // The committed file is never written again (a new record is a new file renamed over it), so
  // its size is final.
  struct stat st {};
  std::string problem;
  ByteBuffer bytes;
  if (::fstat(fd, &st) != 0) {
    problem = os_error(errno);
  } else if (!S_ISREG(st.st_mode)) {
    problem = "not a regular file";
  } else {
    bytes = ByteBuffer(static_cast<std::size_t>(st.st_size));
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        problem = n < 0 ? os_error(errno) : "the file ended early";
        break;
      }
      done += static_cast<std::size_t>(n);
    }
  }
  ::close(fd);
  if (!problem.empty())
    throw Error(std::string(operation) + ": cannot read rank " + std::to_string(rank) +
                "'s record '" + path + "'" + reader + ": " + problem);
  try {
    return decode_record(bytes.data(), bytes.size());
  } catch (const Error& e) {
    throw Error(std::string(operation) + ": rank " + std::to_string(rank) + "'s record '" + path +
                "' (" + std::to_string(bytes.size()) + " bytes) is not a whole record" + reader +
                ": " + e.what() + "; its writer must write it again, or remove the file");
  }
}

std::vector<int> Workspace::ranks_present() const {
  const char* operation = "baton::Workspace::ranks_present";
  require_open(operation);
  DIR* dir = ::opendir(directory_.c_str());
  if (dir == nullptr) {
    const int err = errno;
    throw Error(std::string(operation) + ": cannot list '" + directory_ + "' on rank " +
                std::to_string(comm_.rank()) + ": " + os_error(err));
  }
  std::vector<int> ranks;
  while (const dirent* entry = ::readdir(dir)) {
    // Exactly "rank-<digits>.btnr": temporary files of unfinished writes are not records.
    const std::string name = entry->d_name;
    const std::string head = "rank-", tail = ".btnr";
    if (name.size() <= head.size() + tail.size() || name.compare(0, head.size(), head) != 0 ||
        name.compare(name.size() - tail.size(), tail.size(), tail) != 0)
      continue;
    const std::string digits = name.substr(head.size(), name.size() - head.size() - tail.size());
    if (digits.size() > 9 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    ranks.push_back(std::stoi(digits));
  }
  ::closedir(dir);
  std::sort(ranks.begin(), ranks.end());
  return ranks;
}

std::vector<std::optional<Record>> Workspace::read_all(int root) const {
  std::vector<std::optional<Record>> records;
  on_every_rank(comm_, [&] {
    check_workspace_rank(comm_, root, "baton::Workspace::read_all");
    if (comm_.rank() != root)
      return;
    records.reserve(static_cast<std::size_t>(comm_.size()));
    for (int r = 0; r < comm_.size(); ++r)
      records.push_back(read_from(r));
  });
  return records;
}

void Workspace::remove() {
  if (removed_)
    return;
  barrier(comm_);  // no rank is still writing or reading
  on_every_rank(comm_, [&] {
    if (comm_.rank() != 0)
      return;
    const char* operation = "baton::Workspace::remove";
    DIR* dir = ::opendir(directory_.c_str());
    if (dir == nullptr) {
      const int err = errno;
      if (err == ENOENT)
        return;  // removed already (by an earlier job step, or by hand)
      throw Error(std::string(operation) + ": cannot list '" + directory_ + "': " + os_error(err));
    }
    std::string problem;
    while (const dirent* entry = ::readdir(dir)) {
      const std::string name = entry->d_name;
      if (name == "." || name == "..")
        continue;
      // Only files: the directory is 0700 and Baton puts nothing else there.
      if (::unlinkat(::dirfd(dir), name.c_str(), 0) != 0 && problem.empty()) {
        const int err = errno;
        problem = "cannot remove '" + directory_ + "/" + name + "': " + os_error(err);
      }
    }
    ::closedir(dir);
    if (problem.empty() && ::rmdir(directory_.c_str()) != 0) {
      const int err = errno;
      problem = "cannot remove '" + directory_ + "': " + os_error(err);
    }
    if (!problem.empty())
      throw Error(std::string(operation) + ": " + problem +
                  " (on NFS, a file still open somewhere leaves a .nfs file until it is closed)");
    // The job's directory goes when no other workspace of the job is left in it.
    const int err = ::rmdir(job_directory_.c_str()) != 0 ? errno : 0;
    if (err != 0 && err != ENOTEMPTY && err != EEXIST && err != ENOENT)
      throw Error(std::string(operation) + ": cannot remove '" + job_directory_ +
                  "': " + os_error(err));
  });
  removed_ = true;
}

}  // namespace baton
