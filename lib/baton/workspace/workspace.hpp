#pragma once
/// \file
/// baton::Workspace: one record per rank (collectives/record.hpp) in a directory that every rank
/// can reach (NFS, Lustre, GPFS, or a local disk when all ranks share a node), private to one job.
///
/// Layout: `<root>/baton-<job id>/<name>/rank-<r>.btnr`, each file exactly encode_record() of
/// what rank r wrote. Directories 0700, files 0600, whatever the umask. A record is replaced
/// atomically (temporary file, fsync, rename, fsync of the directory): a reader, or a writer
/// killed mid-write, leaves the old record or the new one, never a mix. See docs/workspace.md.

#include <optional>
#include <string>
#include <vector>

#include "baton/collectives/record.hpp"
#include "baton/comm/communicator.hpp"

namespace baton {

/// Settings of a Workspace. Pass the same on every rank (the name and the job id are checked).
struct WorkspaceOptions {
  /// The workspace's name within the job's directory (a "key"): 1 to 255 characters from
  /// [A-Za-z0-9._-], not "." or "..". Anything else is a baton::Error on every rank.
  std::string name = "default";
  /// The job id that names `<root>/baton-<job id>/`. Empty: the environment decides (see
  /// Workspace). Same characters as `name`. Two Workspaces with the same root, job id and name
  /// are the same workspace (a later job step can read an earlier one's records that way).
  std::string job_id;
  /// What the destructor does. keep: nothing (the files stay until remove(), or until a job
  /// epilog removes `<root>/baton-<SLURM_JOB_ID>.*`). remove_own: each rank removes its own
  /// record and then the workspace's directories when they are empty (the last rank out removes
  /// them); not collective, never waits, so destroy it only when no rank reads any more.
  enum class OnDestruction { keep, remove_own };
  OnDestruction on_destruction = OnDestruction::keep;
};

/// Per-rank records in a shared directory, private to one job.
///
/// The job id is, in order: WorkspaceOptions::job_id; the environment variable
/// BATON_WORKSPACE_JOB_ID; `<SLURM_JOB_ID>.<SLURM_STEP_ID>` (two steps of one job do not
/// collide) or `<SLURM_JOB_ID>.<random>` when Slurm gives no step id; otherwise a random 64-bit
/// hex id. Rank 0 decides it, from its own environment, and broadcasts it. A random id is fresh:
/// rank 0 draws again while `<root>/baton-<id>` exists.
///
/// Every collective member (constructor, publish, read_all, remove) agrees on failure: an error on
/// any rank is the same baton::CollectiveError on every rank, never a rank left waiting.
/// One object is for one thread at a time (like the communicator it holds); not movable.
class Workspace {
 public:
  using Options = WorkspaceOptions;

  /// Collective over `comm` (duplicated inside). `root` must be an existing directory reachable
  /// by every rank under the same path. Rank 0 creates `<root>/baton-<job id>/<name>/` (0700);
  /// an existing one is used when it is a real directory (not a symbolic link) owned by this
  /// user with no group or other permissions, and refused with an error otherwise.
  Workspace(const Communicator& comm, const std::string& root, Options options = {});
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  /// The job id in use (the same on every rank).
  const std::string& job_id() const noexcept { return job_id_; }
  const std::string& name() const noexcept { return name_; }
  /// `<root>/baton-<job id>/<name>`, without a trailing slash.
  const std::string& directory() const noexcept { return directory_; }
  /// The path of rank `rank`'s record file.
  std::string path_of(int rank) const;
  const Communicator& communicator() const noexcept { return comm_; }

  /// Local (not collective): replaces this rank's record, atomically. Throws baton::Error naming
  /// the file when writing fails (disk full, removed directory); the old record then stays.
  void write(const Record& record);
  /// Collective: waits until every rank is here (so no rank is still reading the records this
  /// replaces), every rank writes its record, then all wait for all; afterwards any rank can read
  /// any rank's record. A failure on any rank is the same CollectiveError everywhere.
  void publish(const Record& record);

  /// Local: rank `rank`'s record as last committed, or std::nullopt when it has none. A file that
  /// is not a whole record is a baton::Error naming its path and what is wrong with it.
  std::optional<Record> read_from(int rank) const;
  /// Local: the ranks that have a record now, in increasing order.
  std::vector<int> ranks_present() const;
  /// Collective: rank `root` reads every rank's record (std::nullopt for a missing one) and gets
  /// them, indexed by rank; the other ranks get an empty vector. An unreadable record is the same
  /// CollectiveError on every rank. Call it after publish() (which has the barrier inside).
  std::vector<std::optional<Record>> read_all(int root = 0) const;

  /// Collective: waits until every rank is here, then rank 0 removes this workspace's directory
  /// and what is in it, and `<root>/baton-<job id>` when that is left empty. Touches nothing of
  /// another workspace or another job. Afterwards write and read throw; remove() again does
  /// nothing.
  void remove();
  bool removed() const noexcept { return removed_; }

 private:
  void require_open(const char* operation) const;

  Communicator comm_;
  std::string root_;
  std::string job_id_;
  std::string name_;
  std::string job_directory_;
  std::string directory_;
  std::string temp_prefix_;
  Options::OnDestruction on_destruction_;
  unsigned long writes_ = 0;
  bool removed_ = false;
};

namespace detail {
/// Checks a workspace name or job id: 1 to 255 characters from [A-Za-z0-9._-], not "." or "..".
/// Throws baton::Error("<who>: <what> ...") naming the first bad character. Pure, for tests.
void check_workspace_key(const std::string& key, const char* what, const char* who);
/// Where the job id comes from, decided from the environment's values (nullptr when unset). Pure.
struct JobIdChoice {
  /// The id, or its first part when `random_suffix` (e.g. "4242." for a Slurm job without a step
  /// id); empty with `random_suffix`: wholly random.
  std::string id;
  /// True when rank 0 appends a random hex id (and draws again while the directory exists).
  bool random_suffix = false;
};
JobIdChoice choose_job_id(const std::string& option, const char* baton_job_id,
                          const char* slurm_job_id, const char* slurm_step_id);
}  // namespace detail

}  // namespace baton
