#include "baton/core/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "baton/core/error.hpp"

namespace baton {

namespace {

std::string os_error() {
  return std::strerror(errno);
}

std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

void sync_path(const std::string& path, int flags, const char* who) {
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0)
    throw Error(std::string(who) + ": cannot open '" + path + "' to sync it: " + os_error());
  const int rc = ::fsync(fd);
  const std::string why = rc != 0 ? os_error() : std::string();
  ::close(fd);
  // Some file systems cannot fsync a directory (EINVAL); the data itself is synced already.
  if (rc != 0 && !(errno == EINVAL && (flags & O_DIRECTORY) != 0))
    throw Error(std::string(who) + ": fsync of '" + path + "' failed: " + why);
}

}  // namespace

AtomicFile::AtomicFile(std::string path, std::string suffix, bool append, int permissions)
    : path_(std::move(path)),
      temp_(path_ + (suffix.empty() ? ".tmp." + std::to_string(::getpid()) : suffix)) {
  if (permissions >= 0) {
    // Created (or found) without following a link, then set to exactly `permissions`: the umask
    // can neither loosen nor tighten them.
    const int fd =
        ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (append ? 0 : O_TRUNC),
               static_cast<mode_t>(permissions));
    if (fd < 0)
      throw Error("baton::AtomicFile: cannot create '" + temp_ + "': " + os_error());
    const int rc = ::fchmod(fd, static_cast<mode_t>(permissions));
    const std::string why = rc != 0 ? os_error() : std::string();
    ::close(fd);
    if (rc != 0) {
      std::remove(temp_.c_str());
      throw Error("baton::AtomicFile: cannot set the permissions of '" + temp_ + "': " + why);
    }
  }
  out_.open(temp_, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
  if (!out_)
    throw Error("baton::AtomicFile: cannot open '" + temp_ + "' for writing: " + os_error());
}

AtomicFile::~AtomicFile() {
  if (committed_ || keep_)
    return;
  out_.close();
  std::remove(temp_.c_str());
}

void AtomicFile::flush() {
  errno = 0;
  out_.flush();
  if (!out_)  // a full disk says so ("No space left on device")
    throw Error("baton::AtomicFile: writing '" + temp_ + "' failed" +
                (errno != 0 ? ": " + os_error() : std::string()));
}

void AtomicFile::commit() {
  flush();
  out_.close();
  if (!out_)
    throw Error("baton::AtomicFile: closing '" + temp_ + "' failed");
  sync_path(temp_, O_RDONLY, "baton::AtomicFile");
  if (std::rename(temp_.c_str(), path_.c_str()) != 0)
    throw Error("baton::AtomicFile: cannot rename '" + temp_ + "' to '" + path_ +
                "': " + os_error());
  committed_ = true;
  sync_path(directory_of(path_), O_RDONLY | O_DIRECTORY, "baton::AtomicFile");
}

void sync_file(const std::string& path) {
  sync_path(path, O_RDONLY, "baton::sync_file");
}

}  // namespace baton
