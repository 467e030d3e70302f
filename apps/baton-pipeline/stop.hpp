#pragma once
// baton-pipeline stopped by SIGTERM or SIGINT (Slurm's time limit, scancel, Ctrl-C, mpiexec
// forwarding either) while it runs: every rank ends within a second with exit code
// app::exit_stopped (rank 0 at once, the others a second later, so that a launcher that ends a job
// when one rank ends cannot cut rank 0 short), and rank 0 first prints one line saying so and how
// many complete results FILE.part holds for
// --resume (with none, FILE.part is removed and the line says so). A signal that arrives while
// rank 0 writes results is handled right after the write, so the count it prints is exactly what
// the file holds.
#include <cstdint>
#include <string>

namespace stop {

/// Installs the handlers (after MPI_Init: some MPIs install their own). `part`: the results file
/// being written ("" with --output none); `in_file`: the results it holds already (--resume);
/// `checkpoints`: running systems' checkpoints are kept beside it (its line says so).
void install(int rank, const std::string& part, std::int64_t in_file, bool checkpoints = false);

/// Back to the default handlers, once the run is over (its results complete, or its failure
/// agreed): a signal then ends the process with no word about results.
void uninstall();

/// Held around every write of results on rank 0; `in_file` (set before the guard ends): the
/// complete results in the file once the write was flushed.
class WriteGuard {
 public:
  WriteGuard();
  ~WriteGuard();
  WriteGuard(const WriteGuard&) = delete;
  WriteGuard& operator=(const WriteGuard&) = delete;
  void written(std::int64_t in_file);
};

}  // namespace stop
