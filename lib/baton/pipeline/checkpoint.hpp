#pragma once
/// \file
/// Exact restarts: checkpoints of running systems. A checkpoint holds one system's whole state in
/// the stage running it (every field that moves with it in a batch: positions, velocities, cell,
/// forces, the stage's own state such as thermostat and barostat variables, its step counts and
/// its neighbour list's origin), so that a run resumed from it takes the same steps, bit for bit,
/// as one that was never stopped: its random numbers are keyed by (seed, system, step)
/// (dynamics/random.hpp). The driver writes them (DriverOptions::checkpoint_prefix) and resumes
/// from them (DriverOptions::resume); docs/pipeline.md, "Exact restarts".

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace baton::pipeline {

/// One running system's state in a stage.
struct SystemCheckpoint {
  std::int64_t id = 0;     ///< the system's id
  int stage = 0;           ///< the stage running it (index in the pipeline)
  std::int64_t steps = 0;  ///< steps it had taken in that stage
  int atoms = 0;           ///< its atom count
  /// It had finished the stage before and waited to enter this one (steps 0): it enters it as an
  /// arriving system does (the fields that travel, then the stage's enter()).
  bool entering = false;
  std::string state;  ///< its fields, in the batch's field order (detail/capture.hpp)
  /// Later in the run than `other` (a later stage, or more steps in the same one).
  bool ahead_of(const SystemCheckpoint& other) const noexcept {
    return stage != other.stage ? stage > other.stage : steps > other.steps;
  }
};

/// Checkpoints by system id, the most advanced of each.
class Checkpoints {
 public:
  /// Keeps `c` unless one of the same system is as far or further.
  void add(SystemCheckpoint c);
  void add(std::vector<SystemCheckpoint> all);
  /// The checkpoint of system `id`, or null.
  const SystemCheckpoint* find(std::int64_t id) const;
  /// Forgets the systems in `ids` (e.g. those an earlier run finished).
  void erase(const std::vector<std::int64_t>& ids);
  /// Forgets the checkpoints of the stages before `stage`.
  void erase_before(int stage);
  /// Forgets the states of the checkpoints of stages outside [first, last] (their ids and stages
  /// stay).
  void keep_states(int first, int last);
  std::size_t size() const noexcept { return by_id_.size(); }
  bool empty() const noexcept { return by_id_.empty(); }
  /// Every checkpoint, by id.
  std::vector<SystemCheckpoint> all() const;

 private:
  std::map<std::int64_t, SystemCheckpoint> by_id_;
};

/// The bytes of a checkpoint file: a header naming the run (`run`, e.g. the results file's run
/// description, pipeline::encode_run) and the fields a state holds, the checkpoints, and a 64-bit
/// FNV-1a hash of all of it.
std::string encode_checkpoints(const std::string& run, const std::vector<SystemCheckpoint>& all);
/// Reads encode_checkpoints()' bytes; `what` names them in errors. Throws baton::Error when they
/// are damaged (cut, or the hash does not match), belong to another run (`run` differs) or hold
/// other fields (another Baton's).
std::vector<SystemCheckpoint> decode_checkpoints(const std::string& bytes, const std::string& run,
                                                 const std::string& what);
/// Writes `all` to `path` atomically (AtomicFile: a reader sees the old file or the new one).
/// Throws baton::Error naming the file and the system's reason when it cannot.
void write_checkpoints(const std::string& path, const std::string& run,
                       const std::vector<SystemCheckpoint>& all);
/// Reads a file write_checkpoints() wrote; throws baton::Error as decode_checkpoints().
std::vector<SystemCheckpoint> read_checkpoints(const std::string& path, const std::string& run);
/// The checkpoint files of `prefix` that exist: `prefix` itself and `prefix.<rank>`, sorted.
std::vector<std::string> checkpoint_files(const std::string& prefix);
/// What writes of those files that never completed (a process killed in write_checkpoints) left:
/// AtomicFile's temporaries `prefix.tmp.<pid>` and `prefix.<rank>.tmp.<pid>`, sorted.
std::vector<std::string> checkpoint_temporaries(const std::string& prefix);

}  // namespace baton::pipeline
