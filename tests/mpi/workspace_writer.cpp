// The process the workspace reliability tests kill or run twice at once
// (tests/mpi/check_workspace_kill.sh, tests/mpi/check_workspace_jobs.sh).
//
//   workspace_writer write ROOT JOB MB VERSIONS [--die-at BYTES] [--in-place]
//       rank 0 writes versions 1..VERSIONS of a record of about MB megabytes; with --die-at it then
//       starts version VERSIONS+1 with a file size limit of BYTES, so that the kernel kills it
//       (SIGXFSZ) in the middle of that write, at a known byte. --in-place writes the record file
//       itself (open, truncate, write) instead of through Workspace::write: the non-atomic way,
//       which the check must catch.
//   workspace_writer loop ROOT JOB MB [--in-place]
//       rank 0 writes versions 1, 2, ... until killed; prints "committed N" after each and its pid
//       to ROOT/writer.pid first.
//   workspace_writer check ROOT JOB
//       reads rank 0's record: prints "version N, consistent" (exit 0), "missing" (exit 4) or
//       "TORN: ..." (exit 3) when it does not decode or its data disagree with its version.
//   workspace_writer jobs ROOT RENDEZVOUS
//       one of two jobs started at once (no job id given: each draws its own): waits for the other
//       at a file rendezvous, publishes a record per rank naming this job, waits again, then checks
//       that every record it reads is its own. Prints "job <id> dir <directory>: <n> records, all
//       its own" (exit 0) or what differed (exit 3).
#include <sys/resource.h>
#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <baton/collectives/collectives.hpp>
#include <baton/runtime/runtime.hpp>
#include <baton/transport/objects.hpp>
#include <baton/workspace/workspace.hpp>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

baton::WorkspaceOptions job(const std::string& id) {
  baton::WorkspaceOptions options;
  options.job_id = id;
  options.name = "kill";
  return options;
}

// Version v: config "version=v", and n 64-bit values v * 2^32 + i (each value tells its version).
baton::Record version_record(std::int64_t v, std::size_t n) {
  Kokkos::View<std::int64_t*, Kokkos::HostSpace> data(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "data"), n);
  for (std::size_t i = 0; i < n; ++i)
    data(i) = (v << 32) + static_cast<std::int64_t>(i);
  baton::Record record;
  record.config = "version=" + std::to_string(v);
  record.views.add("data", data);
  return record;
}

int check(const baton::Workspace& ws) {
  std::optional<baton::Record> record;
  try {
    record = ws.read_from(0);
  } catch (const baton::Error& e) {
    std::printf("TORN: %s\n", e.what());
    return 3;
  }
  if (!record) {
    std::printf("missing\n");
    return 4;
  }
  if (record->config.rfind("version=", 0) != 0) {
    std::printf("TORN: config '%s'\n", record->config.c_str());
    return 3;
  }
  const std::int64_t v = std::stoll(record->config.substr(8));
  const auto data = record->views.get<Kokkos::View<std::int64_t*, Kokkos::HostSpace>>("data");
  for (std::size_t i = 0; i < data.extent(0); ++i)
    if (data(i) != (v << 32) + static_cast<std::int64_t>(i)) {
      std::printf("TORN: version %lld, value %zu is from version %lld\n", static_cast<long long>(v),
                  i, static_cast<long long>(data(i) >> 32));
      return 3;
    }
  std::printf("version %lld, consistent (%zu values)\n", static_cast<long long>(v), data.extent(0));
  return 0;
}

void write_in_place(const baton::Workspace& ws, const baton::Record& record) {
  const baton::ByteBuffer bytes = baton::encode_record(record);
  std::ofstream out(ws.path_of(ws.communicator().rank()), std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out)
    throw baton::Error("workspace_writer: writing in place failed");
}

// Rank 0 waits until `count` files named <prefix>.* are in `dir` (60 s at most), then all go on.
void rendezvous(const baton::Communicator& comm, const std::string& dir, const std::string& prefix,
                int count) {
  if (comm.rank() == 0) {
    std::ofstream(dir + "/" + prefix + "." + std::to_string(::getpid())) << "here\n";
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
      int found = 0;
      for (const auto& entry : std::filesystem::directory_iterator(dir))
        found += entry.path().filename().string().rfind(prefix + ".", 0) == 0;
      if (found >= count)
        break;
      if (std::chrono::steady_clock::now() > deadline)
        throw baton::Error("workspace_writer: the other job never reached '" + prefix + "'");
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  baton::barrier(comm);
}

int jobs(const baton::Communicator& world, const std::string& root, const std::string& meeting) {
  rendezvous(world, meeting, "started", 2);
  baton::Workspace ws(world, root);  // no job id: each job draws its own
  const std::string me = ws.job_id() + " pid " + std::to_string(::getpid());
  std::string token = me;  // rank 0's, on every rank
  baton::broadcast_object(world, token, 0);
  baton::Record record;
  record.config = token + " rank " + std::to_string(world.rank());
  Kokkos::View<int*, Kokkos::HostSpace> rank_view("rank", 1);
  rank_view(0) = world.rank();
  record.views.add("rank", rank_view);
  ws.publish(record);
  rendezvous(world, meeting, "published", 2);  // both jobs' records are on disk now
  int wrong = 0;
  for (int r = 0; r < world.size(); ++r) {
    const auto got = ws.read_from(r);
    if (!got || got->config != token + " rank " + std::to_string(r)) {
      std::printf("rank %d read for rank %d: %s\n", world.rank(), r,
                  got ? got->config.c_str() : "nothing");
      ++wrong;
    }
  }
  std::vector<int> expected(static_cast<std::size_t>(world.size()));
  for (int r = 0; r < world.size(); ++r)
    expected[static_cast<std::size_t>(r)] = r;
  if (ws.ranks_present() != expected) {
    std::printf("rank %d: the directory holds other ranks' records\n", world.rank());
    ++wrong;
  }
  Kokkos::View<int*, Kokkos::HostSpace> sum("wrong", 1);
  sum(0) = wrong;
  baton::all_reduce(world, sum, baton::ReduceOp::sum);
  const int total = sum(0);
  if (world.rank() == 0)
    std::printf("job %s dir %s: %d records, %s\n", ws.job_id().c_str(), ws.directory().c_str(),
                world.size(), total == 0 ? "all its own" : "NOT ITS OWN");
  return total == 0 ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    baton::Runtime runtime(argc, argv);
    const baton::Communicator& world = runtime.world();
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() >= 3 && args[0] == "jobs")
      return jobs(world, args[1], args[2]);
    if (args.size() < 3)
      throw baton::Error("workspace_writer: usage: write|loop|check|jobs ROOT JOB ...");
    const std::string mode = args[0];
    baton::Workspace ws(world, args[1], job(args[2]));
    if (mode == "check")
      return world.rank() == 0 ? check(ws) : 0;
    const std::size_t n = static_cast<std::size_t>(std::stod(args.at(3)) * 1024 * 1024 / 8);
    if (world.rank() != 0)
      return 0;
    if (mode == "loop") {
      std::ofstream(args[1] + "/writer.pid") << ::getpid() << '\n';
      const bool in_place = args.size() > 4 && args[4] == "--in-place";
      for (std::int64_t v = 1;; ++v) {
        if (in_place)
          write_in_place(ws, version_record(v, n));
        else
          ws.write(version_record(v, n));
        std::printf("committed %lld\n", static_cast<long long>(v));
        std::fflush(stdout);
      }
    }
    if (mode != "write")
      throw baton::Error("workspace_writer: unknown mode '" + mode + "'");
    const std::int64_t versions = std::stoll(args.at(4));
    long long die_at = -1;
    bool in_place = false;
    for (std::size_t i = 5; i < args.size(); ++i) {
      if (args[i] == "--die-at")
        die_at = std::stoll(args.at(++i));
      else if (args[i] == "--in-place")
        in_place = true;
    }
    for (std::int64_t v = 1; v <= versions + (die_at >= 0 ? 1 : 0); ++v) {
      const baton::Record record = version_record(v, n);
      if (v == versions + 1) {
        // The kernel stops any write that would take a file past BYTES and kills the process
        // (SIGXFSZ): this write dies after exactly BYTES bytes, mid-record. No core file. A
        // launcher may start us with SIGXFSZ ignored (an ignored signal survives exec; it was on
        // the GPU node of 2026-11-27): the write would then fail with EFBIG, Baton would clean up
        // and report it, and there would be no death mid-write to test. So: the default action.
        std::signal(SIGXFSZ, SIG_DFL);
        const rlimit no_core{0, 0};
        ::setrlimit(RLIMIT_CORE, &no_core);
        rlimit limit{};
        ::getrlimit(RLIMIT_FSIZE, &limit);
        limit.rlim_cur = static_cast<rlim_t>(die_at);
        ::setrlimit(RLIMIT_FSIZE, &limit);
        std::printf("writing version %lld, to die after %lld bytes\n", static_cast<long long>(v),
                    die_at);
        std::fflush(stdout);
      }
      if (in_place)
        write_in_place(ws, record);
      else
        ws.write(record);
      std::printf("committed %lld\n", static_cast<long long>(v));
      std::fflush(stdout);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "workspace_writer: %s\n", e.what());
    return 2;
  }
}
