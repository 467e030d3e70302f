#include "baton/pipeline/summary.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>

#include "baton/collectives/collectives.hpp"
#include "baton/core/error.hpp"

namespace baton::pipeline {

namespace {

// Per rank: segment, wall, receive, send, wait, peak RSS, device-to-host reads per step (all,
// bookkeeping), then per stage: systems, steps, atom steps, compute.
constexpr int rank_fields = 8;
constexpr int stage_fields = 4;

double peak_rss_mb() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0)
    return 0.0;
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // kB on Linux
}

}  // namespace

RunSummary summarize(const Driver& driver, int root) {
  const Communicator& comm = driver.communicator();
  const int k = static_cast<int>(driver.pipeline().size());
  const int width = rank_fields + stage_fields * k;
  std::vector<double> mine(static_cast<std::size_t>(width), 0.0);
  mine[0] = driver.segment();
  mine[1] = driver.wall_seconds();
  mine[2] = driver.timers().total("receive");
  mine[3] = driver.timers().total("send");
  mine[4] = driver.timers().total("wait");
  mine[5] = peak_rss_mb();
  mine[6] = driver.host_syncs_per_step();
  mine[7] = driver.steps_taken() > 0 ? static_cast<double>(driver.host_syncs().bookkeeping) /
                                           static_cast<double>(driver.steps_taken())
                                     : 0.0;
  for (const StageCounters& c : driver.counters()) {
    double* f = mine.data() + rank_fields + stage_fields * c.stage;
    f[0] = static_cast<double>(c.systems);
    f[1] = static_cast<double>(c.steps);
    f[2] = static_cast<double>(c.atom_steps);
    f[3] = c.compute_seconds;
  }
  const auto all =
      gather(comm,
             Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                 mine.data(), mine.size()),
             root);
  RunSummary out;
  if (comm.rank() != root)
    return out;
  for (int r = 0; r < comm.size(); ++r) {
    const std::size_t at = static_cast<std::size_t>(width) * r;
    out.peak_rss_mb.push_back(all(at + 5));
    out.host_syncs_per_step_by_rank.push_back(all(at + 6));
    out.bookkeeping_syncs_per_step_by_rank.push_back(all(at + 7));
    out.host_syncs_per_step = std::max(out.host_syncs_per_step, all(at + 6));
  }
  const RankPlan& plan = driver.plan();
  const std::vector<std::string> names = driver.pipeline().names();
  out.world = comm.size();
  out.mode = to_string(driver.settings().mode);
  for (int s = 0; s < k; ++s) {
    StageSummary st;
    st.stage = s;
    st.name = names[static_cast<std::size_t>(s)];
    out.stages.push_back(st);
  }
  for (const Segment& seg : plan.segments) {
    SegmentSummary g;
    g.first_stage = seg.first_stage;
    g.last_stage = seg.last_stage;
    g.ranks = static_cast<int>(seg.ranks.size());
    for (int r : seg.ranks) {
      const double* f = all.data() + static_cast<std::size_t>(width) * r;  // contiguous
      const double wall = f[1] > 0 ? f[1] : 1.0;
      g.comm_share += (f[2] + f[3]) / wall / g.ranks;
      g.wait_share += f[4] / wall / g.ranks;
      out.wall = std::max(out.wall, f[1]);
      for (int s = seg.first_stage; s <= seg.last_stage; ++s) {
        const double* sf = f + rank_fields + stage_fields * s;
        StageSummary& st = out.stages[static_cast<std::size_t>(s)];
        st.ranks = g.ranks;
        st.systems += static_cast<long>(sf[0]);
        st.steps += static_cast<long>(sf[1]);
        st.atom_steps += static_cast<long>(sf[2]);
        st.compute += sf[3];
        g.busy += sf[3] / g.ranks;
      }
    }
    out.segments.push_back(g);
  }
  out.systems = out.stages.back().systems;
  double slowest = 0.0, rank_seconds = 0.0;
  for (const SegmentSummary& g : out.segments) {
    slowest = std::max(slowest, g.busy);
    rank_seconds += g.busy * g.ranks;
  }
  out.throughput = out.wall > 0 ? out.systems / out.wall : 0.0;
  out.bound = slowest > 0 ? out.systems / slowest : 0.0;
  out.efficiency = out.bound > 0 ? out.throughput / out.bound : 0.0;
  out.balanced_bound = rank_seconds > 0 ? out.systems * out.world / rank_seconds : 0.0;
  return out;
}

std::string format_summary(const RunSummary& s) {
  std::string text;
  char line[256];
  std::snprintf(line, sizeof line, "%-10s %5s %8s %11s %13s %10s %15s\n", "stage", "ranks",
                "systems", "steps/sys", "atom-steps", "compute_s", "atom-steps/s/rk");
  text += line;
  text += std::string(78, '-') + "\n";
  for (const StageSummary& st : s.stages) {
    std::snprintf(line, sizeof line, "%-10s %5d %8ld %11.1f %13ld %10.3f %15.3e\n", st.name.c_str(),
                  st.ranks, st.systems,
                  st.systems > 0 ? static_cast<double>(st.steps) / st.systems : 0.0, st.atom_steps,
                  st.compute, st.atom_steps_per_second());
    text += line;
  }
  text += "\n";
  std::snprintf(line, sizeof line, "%-16s %5s %10s %11s %11s\n", "segment", "ranks", "busy_s",
                "comm_share", "wait_share");
  text += line;
  text += std::string(57, '-') + "\n";
  for (const SegmentSummary& g : s.segments) {
    std::string stages;
    for (int i = g.first_stage; i <= g.last_stage; ++i)
      stages += (i > g.first_stage ? "," : "") + s.stages[static_cast<std::size_t>(i)].name;
    std::snprintf(line, sizeof line, "%-16s %5d %10.3f %10.1f%% %10.1f%%\n", stages.c_str(),
                  g.ranks, g.busy, 100 * g.comm_share, 100 * g.wait_share);
    text += line;
  }
  std::snprintf(line, sizeof line,
                "\n%ld systems in %.3f s on %d ranks (%s): %.1f systems/s; slowest segment allows "
                "%.1f systems/s; pipeline efficiency %.3f\n",
                s.systems, s.wall, s.world, s.mode.c_str(), s.throughput, s.bound, s.efficiency);
  text += line;
  std::snprintf(line, sizeof line,
                "the same compute spread evenly over the ranks would allow %.1f systems/s (the "
                "plan's balance %.3f)\n",
                s.balanced_bound, s.balanced_bound > 0 ? s.bound / s.balanced_bound : 0.0);
  text += line;
  // " v0 v1 ..." with `format` for each value.
  const auto append_all = [&](const std::vector<double>& values, const char* format) {
    for (double v : values) {
      std::snprintf(line, sizeof line, format, v);
      text += line;
    }
  };
  text += "peak memory (RSS) per rank, MB:";
  append_all(s.peak_rss_mb, " %.1f");
  text += "\n";
  std::snprintf(
      line, sizeof line,
      "host_syncs_per_step %.2f (device-to-host reads per step, max over ranks); per rank:",
      s.host_syncs_per_step);
  text += line;
  append_all(s.host_syncs_per_step_by_rank, " %.2f");
  text += " (bookkeeping:";
  append_all(s.bookkeeping_syncs_per_step_by_rank, " %.2f");
  text += ")\n";
  return text;
}

}  // namespace baton::pipeline
