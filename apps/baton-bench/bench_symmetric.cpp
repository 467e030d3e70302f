// Symmetric Views: a one-sided put into another rank's part beside a two-sided send of the same
// bytes, rank 0 to rank 1, inside one lock_all epoch held for the whole run.
//
// symmetric_put_flush (one-way, streaming): per iteration rank 0 moves N bytes into rank 1's
//   memory and rank 1 learns that they are there.
//     baton: put + flush(1) (the bytes are in rank 1's part when flush returns) + a 0-byte
//       MPI_Send to rank 1, which receives it.
//     mpi: MPI_Send of the N bytes; rank 1 MPI_Recv's them.
//   Neither side waits for rank 1 before the next iteration, so small messages pipeline on both
//   (eager sends; a put into shared memory). The put's sender knows more (remote completion)
//   than MPI_Send's (only that its buffer is free again).
// symmetric_put_flush_ack (round trip, flow-controlled): the same, then rank 1 answers with a
//   0-byte message and rank 0 waits for it before the next iteration (so that it may overwrite
//   rank 1's buffer): baton = put + flush + notify + ack, mpi = send + ack.
// Times are per iteration, max over ranks; ranks above 1 only take part in the timing's barriers.
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <baton/collectives/agreement.hpp>
#include <baton/collectives/collectives.hpp>
#include <baton/core/check_mpi.hpp>
#include <baton/rma/symmetric_view.hpp>
#include <cstdint>

#include "measure.hpp"

namespace bench {

namespace {

constexpr int tag = 3;

void send_empty(int dest, MPI_Comm comm) {
  baton::check_mpi(MPI_Send(nullptr, 0, MPI_BYTE, dest, tag, comm), "MPI_Send", comm);
}
void recv_empty(int source, MPI_Comm comm) {
  baton::check_mpi(MPI_Recv(nullptr, 0, MPI_BYTE, source, tag, comm, MPI_STATUS_IGNORE), "MPI_Recv",
                   comm);
}

}  // namespace

void run_symmetric(const baton::Communicator& comm, const Settings& settings) {
  if (comm.size() < 2)
    throw baton::Error("baton-bench: shm needs at least 2 ranks (rank 0 puts into rank 1)");
  const int me = comm.rank();
  const MPI_Comm raw = comm.raw();
  const std::vector<std::size_t> all_sizes = sizes(settings);
  const std::size_t largest =
      all_sizes.empty() ? 1 : *std::max_element(all_sizes.begin(), all_sizes.end());

  baton::SymmetricView<std::uint8_t*> sym(comm, "baton-bench shm", largest);
  Kokkos::View<std::uint8_t*, Kokkos::HostSpace> out("out", largest), in("in", largest);
  Kokkos::deep_copy(out, std::uint8_t(1));
  sym.lock_all();
  for (std::size_t bytes : all_sizes) {
    const auto source = Kokkos::subview(out, std::make_pair(std::size_t(0), bytes));
    const int n = static_cast<int>(bytes);
    auto baton_put = [&](bool ack) {
      if (me == 0) {
        sym.put(1, 0, source);
        sym.flush(1);
        send_empty(1, raw);
        if (ack)
          recv_empty(1, raw);
      } else if (me == 1) {
        recv_empty(0, raw);
        if (ack)
          send_empty(0, raw);
      }
    };
    auto mpi_send = [&](bool ack) {
      if (me == 0) {
        baton::check_mpi(MPI_Send(out.data(), n, MPI_BYTE, 1, tag, raw), "MPI_Send", raw);
        if (ack)
          recv_empty(1, raw);
      } else if (me == 1) {
        baton::check_mpi(MPI_Recv(in.data(), n, MPI_BYTE, 0, tag, raw, MPI_STATUS_IGNORE),
                         "MPI_Recv", raw);
        if (ack)
          send_empty(0, raw);
      }
    };
    print(comm, settings,
          compare(
              comm, settings, "symmetric_put_flush", bytes, [&] { baton_put(false); },
              [&] { mpi_send(false); }));
    print(comm, settings,
          compare(
              comm, settings, "symmetric_put_flush_ack", bytes, [&] { baton_put(true); },
              [&] { mpi_send(true); }));
  }
  sym.unlock_all();
  // The data arrived: rank 1's part holds rank 0's bytes (a check that the row measured a put).
  baton::barrier(comm);
  baton::on_every_rank(comm, [&] {
    if (me == 1) {
      sym.lock_all();
      sym.sync();
      const bool arrived = sym.local()(0) == 1;
      sym.unlock_all();
      if (!arrived)
        throw baton::Error("baton-bench shm: rank 1's part does not hold what rank 0 put");
    }
  });
  sym.free();
}

}  // namespace bench
