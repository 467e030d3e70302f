#pragma once
// baton-pipeline's progress line on rank 0.

#include <unistd.h>
#include <Kokkos_Core.hpp>
#include <baton/baton.hpp>
#include <cstdio>
#include <string>

#include "options.hpp"

namespace pipeline_app {

// Progress on rank 0. A line redrawn in place (\r) only where it reaches a person: stdout and
// stderr both terminals (Open MPI gives each rank's stdout a pseudo-terminal even when the job's
// output goes to a file, but not its stderr), or --progress on. Otherwise, with auto, a plain line
// every --progress-seconds, which reads well in a log.
class Progress {
 public:
  Progress(const baton::Communicator& world, const Options& o) : seconds_(o.progress_seconds) {
    int mode = 0;  // 0 none, 1 plain lines, 2 redrawn line
    if (world.rank() == 0) {
      const bool terminal = isatty(STDOUT_FILENO) && isatty(STDERR_FILENO);
      mode = o.progress == "on" ? 2 : o.progress == "off" ? 0 : terminal ? 2 : 1;
    }
    baton::broadcast_object(world, mode, 0);
    mode_ = mode;
  }
  bool wanted() const { return mode_ != 0; }
  void start(double t) { start_ = last_ = t; }
  void show(const pl::Driver& driver, bool last) {
    if (mode_ == 0 || driver.communicator().rank() != 0)
      return;
    const double now = baton::TimerRegistry::now();
    const double every = mode_ == 2 ? 0.25 : seconds_;
    if (!last && now - last_ < every)
      return;
    last_ = now;
    const double rate = driver.finished_count() / std::max(now - start_, 1e-9);
    if (mode_ == 2) {
      std::printf("\r  %ld/%ld systems finished, %.1f systems/s   %s", driver.finished_count(),
                  driver.input_count(), rate, last ? "\n" : "");
    } else {
      std::printf("progress: %ld/%ld systems finished, %.1f systems/s, %.0f s\n",
                  driver.finished_count(), driver.input_count(), rate, now - start_);
    }
    std::fflush(stdout);
  }

 private:
  double seconds_;
  int mode_ = 0;
  double start_ = 0, last_ = 0;
};

}  // namespace pipeline_app
