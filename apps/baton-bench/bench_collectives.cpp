// Collectives on Views of doubles, 1 to 10^6 elements, beside the same MPI calls on the same Views.
//
// Rows without a suffix use the process default of collective checks (off in a Release build of
// Baton, on in a Debug build; BATON_CHECK_COLLECTIVES overrides it); `_checked` rows switch the
// checks on, and in a build whose default is on, `_unchecked` rows switch them off.
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <baton/collectives/collectives.hpp>
#include <baton/core/check_mpi.hpp>
#include <cstdio>
#include <vector>

#include "measure.hpp"

namespace bench {

void run_collectives(const baton::Communicator& comm, const Settings& settings) {
  const baton::CollectiveChecksDefault checks = baton::collective_checks_default();
  if (comm.rank() == 0 && !settings.json) {
    std::printf("# collectives: checks %s by default (decided by %s)\n", checks.on ? "on" : "off",
                checks.decided_by);
    std::fflush(stdout);
  }
  baton::Communicator checked = comm.duplicate();
  checked.set_collective_checks(true);
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
    // One Baton call on the default communicator, then with checks on (and off, when on by
    // default).
    auto rows = [&](const char* op, const auto& baton_call, const auto& mpi_call,
                    bool has_checks = true) {
      print(comm, settings,
            compare(
                comm, settings, op, bytes, [&] { baton_call(comm); }, mpi_call));
      if (!has_checks)
        return;
      print(comm, settings,
            compare(
                comm, settings, std::string(op) + "_checked", bytes, [&] { baton_call(checked); },
                mpi_call));
      if (checks.on) {
        print(comm, settings,
              compare(
                  comm, settings, std::string(op) + "_unchecked", bytes,
                  [&] { baton_call(unchecked); }, mpi_call));
      }
    };

    rows(
        "all_reduce",
        [&](const baton::Communicator& c) {
          baton::all_reduce(c, send, recv, baton::ReduceOp::sum);
        },
        [&] {
          baton::check_mpi(MPI_Allreduce(send.data(), recv.data(), count, MPI_DOUBLE, MPI_SUM, raw),
                           "MPI_Allreduce", raw);
        });

    // all_gatherv discovers the row counts and returns a new View. Its raw peer does what an MPI
    // user who does not know the counts must do: MPI_Allgather of the count, offsets, allocate the
    // result (a Kokkos View, not initialised), MPI_Allgatherv. The `_vs_prealloc` row compares the
    // same Baton call with the count exchange and MPI_Allgatherv into a View allocated once.
    std::vector<int> counts(comm.size()), offsets(comm.size());
    auto exchange_counts = [&] {
      baton::check_mpi(MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, raw),
                       "MPI_Allgather", raw);
      int total = 0;
      for (int r = 0; r < comm.size(); ++r) {
        offsets[r] = total;
        total += counts[r];
      }
      return total;
    };
    auto mpi_gatherv_into = [&](double* out) {
      baton::check_mpi(MPI_Allgatherv(send.data(), count, MPI_DOUBLE, out, counts.data(),
                                      offsets.data(), MPI_DOUBLE, raw),
                       "MPI_Allgatherv", raw);
    };
    rows(
        "all_gatherv", [&](const baton::Communicator& c) { baton::all_gatherv(c, send); },
        [&] {
          const int total = exchange_counts();
          Kokkos::View<double*> gathered(
              Kokkos::view_alloc(Kokkos::WithoutInitializing, "gathered"),
              static_cast<std::size_t>(total));
          mpi_gatherv_into(gathered.data());
        },
        false);  // all_gatherv checks the shapes always
    Kokkos::View<double*> preallocated("preallocated", n * comm.size());
    print(comm, settings,
          compare(
              comm, settings, "all_gatherv_vs_prealloc", bytes,
              [&] { baton::all_gatherv(comm, send); },
              [&] {
                exchange_counts();
                mpi_gatherv_into(preallocated.data());
              }));

    rows(
        "broadcast", [&](const baton::Communicator& c) { baton::broadcast(c, send, 0); },
        [&] {
          baton::check_mpi(MPI_Bcast(send.data(), count, MPI_DOUBLE, 0, raw), "MPI_Bcast", raw);
        });
  }
}

}  // namespace bench
