// Collectives on Views of doubles, 1 to 10^6 elements, beside the same MPI calls on the same Views.
// The size column is the bytes each rank sends (all_to_allv: in all, split over the ranks;
// sparse_exchange: to each of its two ring neighbours).
//
// `noise_floor` times raw MPI_Iallreduce + MPI_Wait against itself: how far from 1 the machine
// alone puts a ratio at that size in that run.
//
// Rows without a suffix use the process default of collective checks (off in a Release build of
// Baton, on in a Debug build; BATON_CHECK_COLLECTIVES overrides it); `_checked` rows switch the
// checks on, and in a build whose default is on, `_unchecked` rows switch them off.
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <baton/collectives/all_to_all.hpp>
#include <baton/collectives/collectives.hpp>
#include <baton/collectives/nonblocking.hpp>
#include <baton/collectives/sparse_exchange.hpp>
#include <baton/core/check_mpi.hpp>
#include <cstdio>
#include <map>
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

    // The noise floor: the same raw MPI call on both sides. Its ratio's distance from 1 is what
    // the machine alone does to a ratio at this size in this run.
    const auto raw_iall_reduce = [&] {
      MPI_Request request;
      baton::check_mpi(
          MPI_Iallreduce(send.data(), recv.data(), count, MPI_DOUBLE, MPI_SUM, raw, &request),
          "MPI_Iallreduce", raw);
      baton::check_mpi(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait", raw);
    };
    print(comm, settings,
          compare(comm, settings, "noise_floor", bytes, raw_iall_reduce, raw_iall_reduce));
    rows(
        "iall_reduce",
        [&](const baton::Communicator& c) {
          baton::iall_reduce(c, send, recv, baton::ReduceOp::sum).wait();
        },
        raw_iall_reduce);

    // all_to_allv: rank r sends its n elements split over the ranks (the remainder to the last);
    // the receivers discover their counts. The raw peer exchanges the counts (MPI_Alltoall),
    // allocates the result (a Kokkos View, not initialised) and calls MPI_Alltoallv.
    const int ranks = comm.size();
    std::vector<std::size_t> split(ranks, n / ranks);
    split[ranks - 1] += n % ranks;
    std::vector<int> send_counts(ranks), send_offsets(ranks), recv_counts(ranks),
        recv_offsets(ranks);
    for (int r = 0, at = 0; r < ranks; ++r) {
      send_counts[r] = static_cast<int>(split[r]);
      send_offsets[r] = at;
      at += send_counts[r];
    }
    rows(
        "all_to_allv", [&](const baton::Communicator& c) { baton::all_to_allv(c, send, split); },
        [&] {
          baton::check_mpi(
              MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, raw),
              "MPI_Alltoall", raw);
          int total = 0;
          for (int r = 0; r < ranks; ++r) {
            recv_offsets[r] = total;
            total += recv_counts[r];
          }
          Kokkos::View<double*> got(Kokkos::view_alloc(Kokkos::WithoutInitializing, "got"),
                                    static_cast<std::size_t>(total));
          baton::check_mpi(
              MPI_Alltoallv(send.data(), send_counts.data(), send_offsets.data(), MPI_DOUBLE,
                            got.data(), recv_counts.data(), recv_offsets.data(), MPI_DOUBLE, raw),
              "MPI_Alltoallv", raw);
        },
        false);  // all_to_allv checks the shapes always

    // sparse_exchange: n elements to each ring neighbour, the receivers not told who sends. The
    // raw peer is the same NBX protocol by hand on the same Views, into Views it allocates.
    std::map<int, Kokkos::View<double*>> neighbours{{(comm.rank() + 1) % ranks, send},
                                                    {(comm.rank() + ranks - 1) % ranks, send}};
    int raw_round = 0;  // two tags, alternating, as sparse_exchange does (see its header)
    rows(
        "sparse_exchange",
        [&](const baton::Communicator& c) { baton::sparse_exchange(c, neighbours); },
        [&] {
          const int nbx_tag = 7 + (raw_round++ & 1);
          MPI_Request sends[2];
          int posted = 0;
          for (const auto& [dest, view] : neighbours) {
            baton::check_mpi(
                MPI_Issend(view.data(), count, MPI_DOUBLE, dest, nbx_tag, raw, &sends[posted++]),
                "MPI_Issend", raw);
          }
          std::map<int, Kokkos::View<double*>> got;
          MPI_Request barrier = MPI_REQUEST_NULL;
          for (bool in_barrier = false;;) {
            int arrived = 0;
            MPI_Message message;
            MPI_Status status;
            baton::check_mpi(MPI_Improbe(MPI_ANY_SOURCE, nbx_tag, raw, &arrived, &message, &status),
                             "MPI_Improbe", raw);
            if (arrived) {
              int elements = 0;
              baton::check_mpi(MPI_Get_count(&status, MPI_DOUBLE, &elements), "MPI_Get_count", raw);
              Kokkos::View<double*> view(Kokkos::view_alloc(Kokkos::WithoutInitializing, "got"),
                                         static_cast<std::size_t>(elements));
              baton::check_mpi(
                  MPI_Mrecv(view.data(), elements, MPI_DOUBLE, &message, MPI_STATUS_IGNORE),
                  "MPI_Mrecv", raw);
              got[status.MPI_SOURCE] = view;
              continue;
            }
            int done = 0;
            if (in_barrier) {
              baton::check_mpi(MPI_Test(&barrier, &done, MPI_STATUS_IGNORE), "MPI_Test", raw);
              if (done)
                break;
            } else {
              baton::check_mpi(MPI_Testall(posted, sends, &done, MPI_STATUSES_IGNORE),
                               "MPI_Testall", raw);
              if (done) {
                baton::check_mpi(MPI_Ibarrier(raw, &barrier), "MPI_Ibarrier", raw);
                in_barrier = true;
              }
            }
          }
        });

    rows(
        "broadcast", [&](const baton::Communicator& c) { baton::broadcast(c, send, 0); },
        [&] {
          baton::check_mpi(MPI_Bcast(send.data(), count, MPI_DOUBLE, 0, raw), "MPI_Bcast", raw);
        });
  }
}

}  // namespace bench
