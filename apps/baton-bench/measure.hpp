#pragma once
// Timing for baton-bench: Baton and raw MPI measured alternately in the same run, on the same
// buffers; an iteration's time is the max over ranks; the figure is the median over repeats.
#include <baton/comm/communicator.hpp>
#include <functional>
#include <string>
#include <vector>

namespace bench {

/// The largest --max-bytes: 1 TiB (message sizes are doubled and quadrupled without overflow).
inline constexpr std::size_t largest_message = std::size_t(1) << 40;

struct Settings {
  int repeats = 7;                   // medians over this many repeats
  double seconds_per_repeat = 0.01;  // iterations per repeat are sized to take about this long
  std::size_t min_bytes = 8;
  std::size_t max_bytes = std::size_t(16) << 20;  ///< at most largest_message
  bool json = false;
  std::string lj_model, model;     ///< baton-bench models: TorchScript files
  long max_atoms = 6000000;        ///< baton-bench scale: cases with more atoms are skipped
  int rounds = 1;                  ///< baton-bench dynamics: LAMMPS then Baton, this many times
  std::vector<std::string> cases;  ///< baton-bench dynamics: only these (empty: all)
};

struct Row {
  std::string op;
  std::size_t bytes;
  int ranks;
  double baton_us;
  double mpi_us;
};

/// Runs `iteration` (one unit of work on every rank) `count` times; returns seconds per iteration,
/// max over ranks.
double time_per_iteration(const baton::Communicator& comm, int count,
                          const std::function<void()>& iteration);

/// Warm-up, then `settings.repeats` alternating repeats of baton and raw MPI; medians in
/// microseconds. `scale` divides the per-iteration time (2 for a ping-pong, to report one-way
/// latency).
Row compare(const baton::Communicator& comm, const Settings& settings, const std::string& op,
            std::size_t bytes, const std::function<void()>& baton_iteration,
            const std::function<void()>& mpi_iteration, double scale = 1);

/// Prints the table header (text mode) on rank 0.
void print_header(const baton::Communicator& comm, const Settings& settings);
/// Prints one row on rank 0 (text or JSON line).
void print(const baton::Communicator& comm, const Settings& settings, const Row& row);

/// 8, 64, 512, ... up to max_bytes (times 8), plus 64 KiB and 1 MiB so the targets' sizes are
/// there.
std::vector<std::size_t> sizes(const Settings& settings);

void run_p2p(const baton::Communicator& comm, const Settings& settings);
void run_collectives(const baton::Communicator& comm, const Settings& settings);
// baton-bench shm: bench_node_gather.cpp, bench_queue.cpp, bench_symmetric.cpp
void run_node_gather(const baton::Communicator& comm, const Settings& settings);
void run_queue(const baton::Communicator& comm, const Settings& settings);
void run_symmetric(const baton::Communicator& comm, const Settings& settings);

}  // namespace bench
