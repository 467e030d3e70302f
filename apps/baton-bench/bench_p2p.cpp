// Point-to-point: ping-pong latency/bandwidth for bytes and Views, and any-source fan-in.
#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <baton/core/check_mpi.hpp>
#include <baton/transport/bytes.hpp>
#include <baton/transport/view_message.hpp>
#include <cstdio>

#include "measure.hpp"

namespace bench {

namespace {

void raw_send(const void* data, std::size_t bytes, int dest, MPI_Comm comm) {
  baton::check_mpi(MPI_Send(data, static_cast<int>(bytes), MPI_BYTE, dest, 1, comm), "MPI_Send",
                   comm);
}
void raw_recv(void* data, std::size_t bytes, int source, MPI_Comm comm) {
  baton::check_mpi(
      MPI_Recv(data, static_cast<int>(bytes), MPI_BYTE, source, 1, comm, MPI_STATUS_IGNORE),
      "MPI_Recv", comm);
}

}  // namespace

void run_p2p(const baton::Communicator& comm, const Settings& settings) {
  if (comm.size() < 2)
    throw baton::Error("baton-bench: p2p needs at least 2 ranks (ranks 0 and 1 ping-pong)");
  const int me = comm.rank();
  const MPI_Comm raw = comm.raw();
  for (std::size_t bytes : sizes(settings)) {
    // Bytes: Baton's matched-probe receive allocates each message; raw MPI receives into a
    // preallocated buffer (the baseline the targets are set against).
    baton::ByteBuffer out(bytes), in(bytes);
    std::fill(out.begin(), out.end(), std::byte{1});
    auto baton_bytes = [&] {
      if (me == 0) {
        baton::send(comm, out, 1, 1);
        baton::recv(comm, 1, 1);
      } else if (me == 1) {
        baton::Message m = baton::recv(comm, 0, 1);
        baton::send(comm, m.bytes, 0, 1);
      }
    };
    auto mpi_bytes = [&] {
      if (me == 0) {
        raw_send(out.data(), bytes, 1, raw);
        raw_recv(in.data(), bytes, 1, raw);
      } else if (me == 1) {
        raw_recv(in.data(), bytes, 0, raw);
        raw_send(in.data(), bytes, 0, raw);
      }
    };
    print(comm, settings,
          compare(comm, settings, "pingpong_bytes", bytes, baton_bytes, mpi_bytes, 2));
    if (bytes <= 512) {
      // Raw MPI only: what the 72 bytes of a View message's envelope cost MPI itself here (a
      // message of bytes + 72 beside one of bytes), the floor under the View rows' ratios.
      baton::ByteBuffer longer(bytes + 72);
      auto mpi_longer = [&] {
        if (me == 0) {
          raw_send(longer.data(), bytes + 72, 1, raw);
          raw_recv(longer.data(), bytes + 72, 1, raw);
        } else if (me == 1) {
          raw_recv(longer.data(), bytes + 72, 0, raw);
          raw_send(longer.data(), bytes + 72, 0, raw);
        }
      };
      print(comm, settings,
            compare(comm, settings, "raw_plus_72_bytes", bytes, mpi_longer, mpi_bytes, 2));
    }
    // The same protocol in raw MPI (matched probe, size, allocate, matched receive): what the
    // receiver of a message of unknown size pays before Baton adds anything.
    auto mpi_mprobe = [&] {
      const auto receive = [&](int source) {
        MPI_Message message;
        MPI_Status status;
        baton::check_mpi(MPI_Mprobe(source, 1, raw, &message, &status), "MPI_Mprobe", raw);
        MPI_Count count = 0;
        baton::check_mpi(MPI_Get_elements_x(&status, MPI_BYTE, &count), "MPI_Get_elements_x", raw);
        baton::ByteBuffer buffer(static_cast<std::size_t>(count));
        baton::check_mpi(MPI_Mrecv(buffer.data(), static_cast<int>(count), MPI_BYTE, &message,
                                   MPI_STATUS_IGNORE),
                         "MPI_Mrecv", raw);
        return buffer;
      };
      if (me == 0) {
        raw_send(out.data(), bytes, 1, raw);
        receive(1);
      } else if (me == 1) {
        baton::ByteBuffer got = receive(0);
        raw_send(got.data(), bytes, 0, raw);
      }
    };
    print(comm, settings,
          compare(comm, settings, "pingpong_bytes_vs_mprobe", bytes, baton_bytes, mpi_mprobe, 2));

    // Views of doubles: into a preallocated View, and allocating on receive.
    const std::size_t n = std::max<std::size_t>(bytes / sizeof(double), 1);
    Kokkos::View<double*> a("a", n), b("b", n);
    Kokkos::deep_copy(a, 1.0);
    auto baton_into = [&] {
      if (me == 0) {
        baton::send_view(comm, a, 1, 1);
        baton::recv_into(comm, b, 1, 1);
      } else if (me == 1) {
        baton::recv_into(comm, b, 0, 1);
        baton::send_view(comm, b, 0, 1);
      }
    };
    auto mpi_view = [&] {
      if (me == 0) {
        raw_send(a.data(), n * sizeof(double), 1, raw);
        raw_recv(b.data(), n * sizeof(double), 1, raw);
      } else if (me == 1) {
        raw_recv(b.data(), n * sizeof(double), 0, raw);
        raw_send(b.data(), n * sizeof(double), 0, raw);
      }
    };
    print(comm, settings,
          compare(comm, settings, "pingpong_view_recv_into", n * sizeof(double), baton_into,
                  mpi_view, 2));
    auto baton_alloc = [&] {
      if (me == 0) {
        baton::send_view(comm, a, 1, 1);
        baton::recv_view<Kokkos::View<double*>>(comm, 1, 1);
      } else if (me == 1) {
        auto got = baton::recv_view<Kokkos::View<double*>>(comm, 0, 1);
        baton::send_view(comm, got, 0, 1);
      }
    };
    print(comm, settings,
          compare(comm, settings, "pingpong_view_recv_view", n * sizeof(double), baton_alloc,
                  mpi_view, 2));
    // The allocating receive beside what raw MPI needs for a message of unknown size: matched
    // probe, size, allocate, matched receive.
    auto mpi_view_mprobe = [&] {
      const auto receive = [&](int source) {
        MPI_Message message;
        MPI_Status status;
        baton::check_mpi(MPI_Mprobe(source, 1, raw, &message, &status), "MPI_Mprobe", raw);
        int count = 0;
        baton::check_mpi(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count", raw);
        Kokkos::View<double*> got(Kokkos::view_alloc(Kokkos::WithoutInitializing, "got"),
                                  static_cast<std::size_t>(count) / sizeof(double));
        baton::check_mpi(MPI_Mrecv(got.data(), count, MPI_BYTE, &message, MPI_STATUS_IGNORE),
                         "MPI_Mrecv", raw);
        return got;
      };
      if (me == 0) {
        raw_send(a.data(), n * sizeof(double), 1, raw);
        receive(1);
      } else if (me == 1) {
        auto got = receive(0);
        raw_send(got.data(), n * sizeof(double), 0, raw);
      }
    };
    print(comm, settings,
          compare(comm, settings, "pingpong_recv_view_vs_mprobe", n * sizeof(double), baton_alloc,
                  mpi_view_mprobe, 2));
    // Posted receives, both sides: irecv_into beside MPI_Irecv, each posted before the send.
    auto baton_posted = [&] {
      if (me == 0) {
        auto posted = baton::irecv_into(comm, b, 1, 1);
        baton::send_view(comm, a, 1, 1);
        posted.wait();
      } else if (me == 1) {
        auto posted = baton::irecv_into(comm, b, 0, 1);
        posted.wait();
        baton::send_view(comm, b, 0, 1);
      }
    };
    auto mpi_posted = [&] {
      const auto post = [&](int source) {
        MPI_Request request;
        baton::check_mpi(MPI_Irecv(b.data(), static_cast<int>(n * sizeof(double)), MPI_BYTE, source,
                                   1, raw, &request),
                         "MPI_Irecv", raw);
        return request;
      };
      const auto wait = [&](MPI_Request& request) {
        baton::check_mpi(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait", raw);
      };
      if (me == 0) {
        MPI_Request request = post(1);
        raw_send(a.data(), n * sizeof(double), 1, raw);
        wait(request);
      } else if (me == 1) {
        MPI_Request request = post(0);
        wait(request);
        raw_send(b.data(), n * sizeof(double), 0, raw);
      }
    };
    print(comm, settings,
          compare(comm, settings, "pingpong_view_irecv_into", n * sizeof(double), baton_posted,
                  mpi_posted, 2));
  }

  // Fan-in: every other rank sends one message per iteration to rank 0, which receives any-source.
  for (std::size_t bytes : {std::size_t(8), std::size_t(64) << 10}) {
    if (bytes > settings.max_bytes || bytes < settings.min_bytes)
      continue;
    baton::ByteBuffer out(bytes), in(bytes);
    const int senders = comm.size() - 1;
    auto baton_fan = [&] {
      if (me == 0) {
        for (int s = 0; s < senders; ++s)
          baton::recv(comm, baton::any_source, 2);
      } else {
        baton::send(comm, out, 0, 2);
      }
    };
    auto mpi_fan = [&] {
      if (me == 0) {
        for (int s = 0; s < senders; ++s) {
          baton::check_mpi(MPI_Recv(in.data(), static_cast<int>(bytes), MPI_BYTE, MPI_ANY_SOURCE, 2,
                                    raw, MPI_STATUS_IGNORE),
                           "MPI_Recv", raw);
        }
      } else {
        baton::check_mpi(MPI_Send(out.data(), static_cast<int>(bytes), MPI_BYTE, 0, 2, raw),
                         "MPI_Send", raw);
      }
    };
    print(comm, settings, compare(comm, settings, "fan_in_any_source", bytes, baton_fan, mpi_fan));
  }
}

}  // namespace bench
