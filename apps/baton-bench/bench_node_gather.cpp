// Node gathers (baton::NodeGather) beside MPI_Gatherv of the same bytes to rank 0, 1 KiB to
// --max-bytes per rank (powers of 4, and --max-bytes itself).
//
// Every rank gives one View of `bytes` bytes (a Record: no config, one entry "data"; its wire form
// adds about 110 bytes). The record and the MPI buffers are made once, outside the timing. Timed:
// - node_gather: NodeGather::gather(record) on a NodeGather made once (its shared memory is
//   allocated in the warm-up): the size exchange, every other rank's encoding into its shared
//   segment, two agreements, and on rank 0 a copy of its own record, the decoding (one copy into
//   freshly allocated, owned buffers) of every other record, and freeing the result.
// - node_gather_encoded: NodeGather::gather_encoded(record): the same without the copies on rank 0
//   (the records stay in shared memory, valid until the next gather).
// - gather_to_first: the one-shot form (a NodeGather, its communicators and shared memory made and
//   freed in every iteration), up to 1 MiB (past that it only grows with the page faults).
// The MPI side of every row: MPI_Gather of the byte count (as a caller who does not know the other
// ranks' sizes must) and MPI_Gatherv of the bytes into a receive buffer allocated once on rank 0;
// except in node_gather_vs_alloc (the node_gather call again), where MPI_Gatherv receives into a
// buffer allocated (not zero-filled) and freed in every iteration, as owned results need.
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <baton/comm/group.hpp>
#include <baton/core/check_mpi.hpp>
#include <baton/shm/gather.hpp>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <numeric>
#include <vector>

#include "measure.hpp"

namespace bench {

namespace {
constexpr std::size_t one_shot_limit = std::size_t(1) << 20;
}  // namespace

void run_node_gather(const baton::Communicator& comm, const Settings& settings) {
  const int ranks = comm.size();
  const bool one_node = baton::shares_one_node(comm);
  if (comm.rank() == 0 && !settings.json) {
    std::printf("# node gathers to rank 0 of %d ranks (%s); bytes = per rank\n", ranks,
                one_node ? "all on one node: shared memory"
                         : "on several nodes: shared memory "
                           "on rank 0's node, messages else");
    std::fflush(stdout);
  }
  std::vector<int> members(static_cast<std::size_t>(ranks));
  std::iota(members.begin(), members.end(), 0);
  const baton::Group group(comm, members);
  baton::NodeGather gather(group);
  const MPI_Comm raw = comm.raw();

  std::vector<std::size_t> list;
  for (std::size_t b = 1024; b <= settings.max_bytes; b *= 4) {
    if (b >= settings.min_bytes)
      list.push_back(b);
    if (b > settings.max_bytes / 4)
      break;  // b * 4 would pass max_bytes (or wrap around)
  }
  if (list.empty() || list.back() != settings.max_bytes)
    list.push_back(settings.max_bytes);

  for (std::size_t bytes : list) {
    if (bytes * static_cast<std::size_t>(ranks) > static_cast<std::size_t>(INT_MAX)) {
      if (comm.rank() == 0 && !settings.json)
        std::printf("# %zu bytes per rank: skipped, MPI_Gatherv counts stop at INT_MAX\n", bytes);
      continue;
    }
    Kokkos::View<std::uint8_t*, Kokkos::HostSpace> data("data", bytes);
    for (std::size_t i = 0; i < bytes; ++i)
      data(i) = static_cast<std::uint8_t>(i * 31 + static_cast<std::size_t>(comm.rank()));
    baton::Record record;
    record.views.add("data", data);

    // MPI: counts to rank 0, then the bytes into a buffer made once.
    const int count = static_cast<int>(bytes);
    std::vector<int> counts(static_cast<std::size_t>(ranks)), offsets(counts.size());
    std::vector<std::uint8_t> received(comm.rank() == 0 ? bytes * counts.size() : 0);
    auto gatherv_into = [&](std::uint8_t* out) {
      baton::check_mpi(MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, raw),
                       "MPI_Gather", raw);
      if (comm.rank() == 0) {
        int total = 0;
        for (std::size_t r = 0; r < counts.size(); ++r) {
          offsets[r] = total;
          total += counts[r];
        }
      }
      baton::check_mpi(MPI_Gatherv(data.data(), count, MPI_BYTE, out, counts.data(), offsets.data(),
                                   MPI_BYTE, 0, raw),
                       "MPI_Gatherv", raw);
    };
    auto mpi_gatherv = [&] { gatherv_into(received.data()); };

    print(comm, settings,
          compare(
              comm, settings, "node_gather", bytes, [&] { gather.gather(record); }, mpi_gatherv));
    // The same Baton call beside MPI receiving into a fresh (not zero-filled) buffer every time,
    // as an MPI program that hands out an owned result must.
    print(comm, settings,
          compare(
              comm, settings, "node_gather_vs_alloc", bytes, [&] { gather.gather(record); },
              [&] {
                std::unique_ptr<std::uint8_t[]> fresh(
                    comm.rank() == 0 ? new std::uint8_t[bytes * counts.size()] : nullptr);
                gatherv_into(fresh.get());
              }));
    print(comm, settings,
          compare(
              comm, settings, "node_gather_encoded", bytes, [&] { gather.gather_encoded(record); },
              mpi_gatherv));
    if (bytes <= one_shot_limit) {
      print(comm, settings,
            compare(
                comm, settings, "gather_to_first", bytes,
                [&] { baton::gather_to_first(group, record); }, mpi_gatherv));
    }
  }
}

}  // namespace bench
