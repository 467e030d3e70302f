#pragma once
// LAMMPS beside Baton in baton-bench: found on PATH (or given), run on rank 0 in a scratch
// directory with an environment cleared of the surrounding MPI job, timed from its own log.
#include <string>
#include <vector>

namespace bench {

class Lammps {
 public:
  /// `executable` empty: the first of lmp, lmp_serial, lmp_mpi on PATH.
  explicit Lammps(std::string executable = "");
  bool found() const noexcept { return !exe_.empty(); }
  const std::string& executable() const noexcept { return exe_; }

  /// One "Loop time of T on P procs for N steps with M atoms" line of a log.
  struct Loop {
    double seconds = 0;
    long steps = 0;
    long atoms = 0;
  };
  struct Result {
    std::vector<Loop> loops;  // every run/minimize of the input, in order
    double wall_seconds = 0;  // the whole process, start to exit
  };
  /// Runs `input` (the text of an input script) in directory `dir`; throws std::runtime_error with
  /// the end of the log if LAMMPS fails.
  Result run(const std::string& dir, const std::string& name, const std::string& input) const;

 private:
  std::string exe_;
};

}  // namespace bench
