#include "measure.hpp"

#include <mpi.h>

#include <algorithm>
#include <baton/core/check_mpi.hpp>
#include <cstdio>
#include <set>

namespace bench {

double time_per_iteration(const baton::Communicator& comm, int count,
                          const std::function<void()>& iteration) {
  baton::check_mpi(MPI_Barrier(comm.raw()), "MPI_Barrier", comm.raw());
  const double start = MPI_Wtime();
  for (int i = 0; i < count; ++i)
    iteration();
  double mine = (MPI_Wtime() - start) / count;
  double slowest = 0;
  baton::check_mpi(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm.raw()),
                   "MPI_Allreduce", comm.raw());
  return slowest;
}

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}
}  // namespace

Row compare(const baton::Communicator& comm, const Settings& settings, const std::string& op,
            std::size_t bytes, const std::function<void()>& baton_iteration,
            const std::function<void()>& mpi_iteration, double scale) {
  // Size the repeat from a short probe of the raw MPI version (same count for both sides).
  const double probe = std::max(time_per_iteration(comm, 3, mpi_iteration), 1e-7);
  int count = static_cast<int>(std::clamp(settings.seconds_per_repeat / probe, 3.0, 100000.0));
  baton::check_mpi(MPI_Bcast(&count, 1, MPI_INT, 0, comm.raw()), "MPI_Bcast", comm.raw());
  time_per_iteration(comm, std::max(count / 4, 2),
                     baton_iteration);  // warm-up: caches, pages, eager buffers
  time_per_iteration(comm, std::max(count / 4, 2), mpi_iteration);
  std::vector<double> baton_times, mpi_times;
  // The two sides take turns going first, so neither always runs in the state the other leaves.
  for (int r = 0; r < settings.repeats; ++r) {
    if (r % 2 == 0) {
      baton_times.push_back(time_per_iteration(comm, count, baton_iteration));
      mpi_times.push_back(time_per_iteration(comm, count, mpi_iteration));
    } else {
      mpi_times.push_back(time_per_iteration(comm, count, mpi_iteration));
      baton_times.push_back(time_per_iteration(comm, count, baton_iteration));
    }
  }
  return Row{op, bytes, comm.size(), median(baton_times) * 1e6 / scale,
             median(mpi_times) * 1e6 / scale};
}

void print_header(const baton::Communicator& comm, const Settings& settings) {
  if (comm.rank() != 0 || settings.json)
    return;
  std::printf("%-28s %10s %6s %12s %12s %8s\n", "op", "bytes", "ranks", "baton_us", "mpi_us",
              "ratio");
  std::printf("%s\n", std::string(81, '-').c_str());
}

void print(const baton::Communicator& comm, const Settings& settings, const Row& row) {
  if (comm.rank() != 0)
    return;
  const double ratio = row.baton_us / row.mpi_us;
  if (settings.json) {
    std::printf(
        "{\"op\": \"%s\", \"bytes\": %zu, \"ranks\": %d, \"baton_us\": %.4f, \"mpi_us\": %.4f, "
        "\"ratio\": %.4f}\n",
        row.op.c_str(), row.bytes, row.ranks, row.baton_us, row.mpi_us, ratio);
  } else {
    std::printf("%-28s %10zu %6d %12.3f %12.3f %8.3f\n", row.op.c_str(), row.bytes, row.ranks,
                row.baton_us, row.mpi_us, ratio);
  }
  std::fflush(stdout);
}

std::vector<std::size_t> sizes(const Settings& settings) {
  std::set<std::size_t> out;
  for (std::size_t b = 8; b <= settings.max_bytes; b *= 8) {
    if (b >= settings.min_bytes)
      out.insert(b);
    if (b > settings.max_bytes / 8)
      break;  // b * 8 would pass max_bytes (or wrap around)
  }
  for (std::size_t b : {std::size_t(64) << 10, std::size_t(1) << 20, settings.max_bytes}) {
    if (b >= settings.min_bytes && b <= settings.max_bytes)
      out.insert(b);
  }
  return {out.begin(), out.end()};
}

}  // namespace bench
