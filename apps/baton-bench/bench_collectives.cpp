// Collectives on Views of doubles, 1 to 10^6 elements, beside the same MPI calls on the same Views.
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <baton/collectives/collectives.hpp>
#include <baton/runtime/error.hpp>
#include <vector>

#include "measure.hpp"

namespace bench {

void run_collectives(const baton::Communicator& comm, const Settings& settings) {
  baton::Communicator unchecked = comm.duplicate();
  unchecked.set_collective_checks(false);
  const MPI_Comm raw = comm.raw();
  for (std::size_t n = 1; n <= 1000000; n *= 10) {
    const std::size_t bytes = n * sizeof(double);
    if (bytes > settings.max_bytes)
      break;
    const int count = static_cast<int>(n);
    Kokkos::View<double*> send("send", n), recv("recv", n);
    Kokkos::deep_copy(send, 1.0 + comm.rank());
    auto mpi_allreduce = [&] {
      baton::check_mpi(MPI_Allreduce(send.data(), recv.data(), count, MPI_DOUBLE, MPI_SUM, raw),
                       "MPI_Allreduce", raw);
    };
    print(comm, settings,
          compare(
              comm, settings, "all_reduce", bytes,
              [&] { baton::all_reduce(comm, send, recv, baton::ReduceOp::sum); }, mpi_allreduce));
    print(comm, settings,
          compare(
              comm, settings, "all_reduce_unchecked", bytes,
              [&] { baton::all_reduce(unchecked, send, recv, baton::ReduceOp::sum); },
              mpi_allreduce));

    // all_gatherv discovers the counts; so does the raw version (MPI_Allgather of the count).
    std::vector<int> counts(comm.size()), offsets(comm.size());
    Kokkos::View<double*> gathered("gathered", n * comm.size());
    auto mpi_gatherv = [&] {
      baton::check_mpi(MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, raw),
                       "MPI_Allgather", raw);
      int total = 0;
      for (int r = 0; r < comm.size(); ++r) {
        offsets[r] = total;
        total += counts[r];
      }
      baton::check_mpi(MPI_Allgatherv(send.data(), count, MPI_DOUBLE, gathered.data(),
                                      counts.data(), offsets.data(), MPI_DOUBLE, raw),
                       "MPI_Allgatherv", raw);
    };
    print(comm, settings,
          compare(
              comm, settings, "all_gatherv", bytes, [&] { baton::all_gatherv(comm, send); },
              mpi_gatherv));

    auto mpi_bcast = [&] {
      baton::check_mpi(MPI_Bcast(send.data(), count, MPI_DOUBLE, 0, raw), "MPI_Bcast", raw);
    };
    print(comm, settings,
          compare(
              comm, settings, "broadcast", bytes, [&] { baton::broadcast(comm, send, 0); },
              mpi_bcast));
    print(comm, settings,
          compare(
              comm, settings, "broadcast_unchecked", bytes,
              [&] { baton::broadcast(unchecked, send, 0); }, mpi_bcast));
  }
}

}  // namespace bench
