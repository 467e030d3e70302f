#pragma once
/// \file
/// Files written so that a reader never sees half of one: the bytes go to a temporary name beside
/// the target, are flushed to the disk (fsync), and are renamed over the target in one step. A run
/// killed before commit() leaves the target as it was.

#include <fstream>
#include <string>

namespace baton {

class AtomicFile {
 public:
  /// Passed as `permissions`: the file gets what std::ofstream gives (0666 less the umask).
  static constexpr int umask_permissions = -1;

  /// Opens `path + suffix` for writing (truncated, or appended to with `append`). Throws
  /// baton::Error naming it if that fails. The default suffix is unique to this process; a fixed
  /// one (".part") lets a later run find the unfinished file. With `permissions` >= 0 (e.g. 0600)
  /// the temporary file, and so the committed one, has exactly those permission bits whatever the
  /// umask (set with fchmod on the created file, which must not be a symbolic link; the stream then
  /// reopens it by name, so keep such files in a directory only you can write).
  explicit AtomicFile(std::string path, std::string suffix = {}, bool append = false,
                      int permissions = umask_permissions);
  /// Without commit(): removes the temporary file, unless keep_partial() was called.
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ofstream& stream() noexcept { return out_; }
  const std::string& path() const noexcept { return path_; }
  const std::string& temporary() const noexcept { return temp_; }
  /// Flushes what was written so far to the operating system (not to the disk); throws
  /// baton::Error if the stream failed.
  void flush();
  /// Flushes, fsyncs, closes and renames the temporary file to path() (fsyncing the directory).
  /// Throws baton::Error naming the file if any of it fails.
  void commit();
  /// Keeps the temporary file if commit() is never called (an unfinished result a later run can
  /// resume from).
  void keep_partial() noexcept { keep_ = true; }

 private:
  std::string path_;
  std::string temp_;
  std::ofstream out_;
  bool committed_ = false;
  bool keep_ = false;
};

/// Flushes the file at `path` to the disk (fsync). Throws baton::Error naming it if that fails.
void sync_file(const std::string& path);

}  // namespace baton
