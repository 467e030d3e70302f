// Every View receive form (recv_into, recv_view, irecv_view, irecv_into) on both paths (direct,
// staged), at the three message sizes that take different routes (small, middle, split form), in
// both layouts, through the host code and through the device code (run here on host memory), with
// and without an execution space instance. Plus what makes irecv_into a posted receive.
#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <baton/collectives/collectives.hpp>
#include <baton/core/check_mpi.hpp>
#include <baton/transport/view_message.hpp>
#include <string>

#include "mpi_doctest.hpp"
#include "view_fill.hpp"

namespace {

using Right = Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace>;
using Left = Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace>;

baton::Communicator comm_with(baton::ViewPath path) {
  baton::Communicator comm = baton::test::world().duplicate();
  comm.set_view_path(path);
  return comm;
}

double value(std::size_t i, std::size_t j, int who) {
  return who * 100000.0 + double(i) * 100.0 + double(j) + 0.5;
}

template <class V>
V filled(std::size_t rows, std::size_t cols, int who) {
  V v("v", rows, cols);
  baton::test::fill(v, [who](std::size_t i, std::size_t j) { return value(i, j, who); });
  return v;
}

template <class V>
int wrong(const V& v, int who) {
  return baton::test::count_wrong(v,
                                  [who](std::size_t i, std::size_t j) { return value(i, j, who); });
}

// Rows for a small (< 4 KiB), a middle (4-64 KiB) and a split-form (>= 64 KiB) message of 20
// columns of doubles.
const std::size_t row_counts[] = {3, 100, 500};
constexpr std::size_t cols = 20;

// MPICH 4.0 (Debian 12) reports a posted receive truncated by a longer message on the handler of
// MPI_COMM_WORLD, not the receive's communicator: the job aborts with MPICH's "Message truncated"
// instead of returning the error Baton would throw (docs/transport.md). Those cases run with Open
// MPI only.
#if defined(MPICH_VERSION)
constexpr bool truncation_returns = false;
#else
constexpr bool truncation_returns = true;
#endif

const char* path_name(baton::ViewPath p) {
  return p == baton::ViewPath::staged ? "staged" : "direct";
}

// Receives one message into `into` with the receive form `form`, through the device code when
// Device is true. Forms: 0 recv_into, 1 recv_view, 2 irecv_view, 3 irecv_into.
template <bool Device, class V>
V receive(int form, const baton::Communicator& comm, const V& into, int source, int tag) {
  using namespace baton::detail;
  const Kokkos::DefaultHostExecutionSpace space;
  switch (form) {
    case 0: {
      Matched m = mprobe(comm, source, tag, "test");
      receive_into<Device>(space, comm, m, into, "test");
      return into;
    }
    case 1: {
      Matched m = mprobe(comm, source, tag, "test");
      return receive_new<V, Device>(space, comm, m, "got", "test");
    }
    case 2: {
      // What ViewRecvHandle does once matched.
      std::optional<Matched> m;
      while (!(m = improbe(comm, source, tag, "test"))) {
      }
      return receive_new<V, Device>(space, comm, *m, "got", "test");
    }
    default: {
      baton::PostedRecvHandle<V, Kokkos::DefaultHostExecutionSpace, Device> h(comm, into, source,
                                                                              tag, space);
      while (!h.test()) {
      }
      CHECK(h.info().source == source);
      return h.wait();
    }
  }
}

}  // namespace

TEST_CASE("every receive form, both paths, host and device code: the same data arrives") {
  for (auto path : {baton::ViewPath::automatic, baton::ViewPath::staged}) {
    baton::Communicator comm = comm_with(path);
    const int next = (comm.rank() + 1) % comm.size();
    const int prev = (comm.rank() + comm.size() - 1) % comm.size();
    for (std::size_t rows : row_counts) {
      for (int form = 0; form < 4; ++form) {
        for (bool device : {false, true}) {
          for (bool left_sender : {false, true}) {
            CAPTURE(path_name(path));
            CAPTURE(rows);
            CAPTURE(form);
            CAPTURE(device);
            CAPTURE(left_sender);
            baton::SendHandle sent =
                left_sender
                    ? baton::isend_view(comm, filled<Left>(rows, cols, comm.rank()), next, 7)
                    : baton::isend_view(comm, filled<Right>(rows, cols, comm.rank()), next, 7);
            Right into("into", rows, cols);
            const Right got = device ? receive<true>(form, comm, into, prev, 7)
                                     : receive<false>(form, comm, into, prev, 7);
            sent.wait();
            REQUIRE(got.extent(0) == rows);
            REQUIRE(got.extent(1) == cols);
            CHECK(wrong(got, prev) == 0);
          }
        }
      }
    }
    // Nothing is left behind on either communicator.
    baton::barrier(comm);
    CHECK_FALSE(baton::iprobe(comm).has_value());
    int left = 0;
    if (comm.payload() != MPI_COMM_NULL)
      baton::check_mpi(
          MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm.payload(), &left, MPI_STATUS_IGNORE),
          "MPI_Iprobe");
    CHECK(left == 0);
  }
}

TEST_CASE("irecv_into posts its receive: a message sent after posting is taken by it, first") {
  for (auto path : {baton::ViewPath::automatic, baton::ViewPath::staged}) {
    for (std::size_t rows : row_counts) {
      CAPTURE(path_name(path));
      CAPTURE(rows);
      baton::Communicator comm = comm_with(path);
      const int me = comm.rank();
      Right into("into", rows, cols);
      auto posted = baton::irecv_into(comm, into, me, 5);
      // Two messages to self: tag 5, then tag 6. A receive of any tag started after the posting
      // must get the tag-6 one: the tag-5 message was matched by the posted receive. (Matching at
      // test() time instead, as before, would hand the tag-5 message to the later receive.)
      auto a = baton::isend_view(comm, filled<Right>(rows, cols, 1), me, 5);
      auto b = baton::isend_view(comm, filled<Right>(rows, cols, 2), me, 6);
      baton::MessageInfo info;
      const Right later = baton::recv_view<Right>(comm, me, baton::any_tag, &info);
      CHECK(info.tag == 6);
      CHECK(wrong(later, 2) == 0);
      CHECK(wrong(posted.wait(), 1) == 0);
      CHECK(posted.info().tag == 5);
      a.wait();
      b.wait();
    }
  }
}

TEST_CASE("irecv_into: a larger or differently shaped message is a clear error and is consumed") {
  for (auto path : {baton::ViewPath::automatic, baton::ViewPath::staged}) {
    for (std::size_t rows : row_counts) {
      CAPTURE(path_name(path));
      CAPTURE(rows);
      baton::Communicator comm = comm_with(path);
      const int me = comm.rank();
      // Larger than the View: MPI truncates, Baton says so. (The split form's envelope always
      // fits: its shape is checked.)
      if (truncation_returns || rows == 500) {
        Right small("small", rows - 1, cols);
        auto posted = baton::irecv_into(comm, small, me, 8);
        auto a = baton::isend_view(comm, filled<Right>(rows, cols, 3), me, 8);
        if (rows < 500) {
          CHECK_THROWS_WITH_AS(
              posted.wait(), doctest::Contains("is larger than the View, float64["), baton::Error);
        } else {
          // Split form: the 80-byte envelope fits; its shape is checked and the data drained.
          CHECK_THROWS_WITH_AS(posted.wait(), doctest::Contains("the View is float64["),
                               baton::Error);
        }
        a.wait();
      }
      // Same size, other shape: named, consumed.
      {
        Right other("other", rows * 2, cols / 2);
        auto posted = baton::irecv_into(comm, other, me, 9);
        auto a = baton::isend_view(comm, filled<Right>(rows, cols, 3), me, 9);
        CHECK_THROWS_WITH_AS(posted.wait(), doctest::Contains("the View is float64["),
                             baton::Error);
        a.wait();
      }
      // The channel is clean: the next message arrives intact.
      Right next("next", rows, cols);
      auto posted = baton::irecv_into(comm, next, me, 9);
      auto a = baton::isend_view(comm, filled<Right>(rows, cols, 4), me, 9);
      CHECK(wrong(posted.wait(), 4) == 0);
      a.wait();
      baton::barrier(comm);
      CHECK_FALSE(baton::iprobe(comm).has_value());
    }
  }
}

TEST_CASE("an irecv_into handle dropped before its message cancels its receive") {
  baton::Communicator comm = baton::test::world().duplicate();
  const int me = comm.rank();
  Right into("into", 3, cols);
  {
    auto posted = baton::irecv_into(comm, into, me, 10);
    CHECK_FALSE(posted.test());
  }
  // Had the receive stayed posted it would take this message; it does not.
  auto a = baton::isend_view(comm, filled<Right>(3, cols, 6), me, 10);
  Right got("got", 3, cols);
  baton::recv_into(comm, got, me, 10);
  CHECK(wrong(got, 6) == 0);
  a.wait();
}

TEST_CASE("execution space instance overloads: sends, receives, posted receives") {
  baton::Communicator comm = baton::test::world().duplicate();
  const int next = (comm.rank() + 1) % comm.size();
  const int prev = (comm.rank() + comm.size() - 1) % comm.size();
  const Kokkos::DefaultExecutionSpace space;
  for (std::size_t rows : row_counts) {
    CAPTURE(rows);
    const Left out = filled<Left>(rows, cols, comm.rank());
    auto a = baton::isend_view(space, comm, out, next, 11);
    const Right got = baton::recv_view<Right>(space, comm, prev, 11);
    CHECK(wrong(got, prev) == 0);
    a.wait();

    Right into("into", rows, cols);
    auto posted = baton::irecv_into(space, comm, into, prev, 12);
    auto s = baton::isend_view(space, comm, out, next, 12);
    CHECK(wrong(posted.wait(), prev) == 0);
    s.wait();

    auto b = baton::isend_view(space, comm, out, next, 13);
    auto pending = baton::irecv_view<Right>(space, comm, prev, 13);
    CHECK(wrong(pending.wait(), prev) == 0);
    b.wait();

    Right again("again", rows, cols);
    auto c = baton::isend_view(space, comm, out, next, 14);
    baton::recv_into(space, comm, again, prev, 14);
    CHECK(wrong(again, prev) == 0);
    c.wait();
  }
}

TEST_CASE("irecv_upto: any length up to the buffer lands in its front, posted before the send") {
  for (auto path : {baton::ViewPath::automatic, baton::ViewPath::staged}) {
    CAPTURE(path_name(path));
    baton::Communicator comm = comm_with(path);
    const int next = (comm.rank() + 1) % comm.size();
    const int prev = (comm.rank() + comm.size() - 1) % comm.size();
    // 20000 doubles: 160 KB, past the split threshold when full; the lengths sent cover empty,
    // small, middle and split-form messages.
    Kokkos::View<double*> buffer("buffer", 20000);
    for (std::size_t length : {std::size_t(0), std::size_t(7), std::size_t(1500),
                               std::size_t(12000), std::size_t(20000)}) {
      CAPTURE(length);
      auto posted = baton::irecv_upto(comm, buffer, prev, 16);
      Kokkos::View<double*> out("out", length);
      const double me = comm.rank();
      Kokkos::parallel_for(
          "fill", Kokkos::RangePolicy<>(0, length),
          KOKKOS_LAMBDA(int i) { out(i) = 3.0 * i + me; });
      auto sent = baton::isend_view(comm, out, next, 16);
      const Kokkos::View<double*> got = posted.wait();
      sent.wait();
      REQUIRE(got.extent(0) == length);
      CHECK(got.data() == buffer.data());  // the front of the buffer, not a copy
      auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), got);
      int wrong = 0;
      for (std::size_t i = 0; i < length; ++i)
        wrong += host(i) != 3.0 * double(i) + prev;
      CHECK(wrong == 0);
    }
    // Longer than the buffer, or another value type: named, consumed; the channel stays usable.
    Kokkos::View<double*> small("small", 5);
    if (truncation_returns) {
      auto posted = baton::irecv_upto(comm, small, prev, 17);
      auto sent = baton::isend_view(comm, Kokkos::View<double*>("six", 6), next, 17);
      CHECK_THROWS_WITH_AS(posted.wait(), doctest::Contains("larger than the View, float64[5]"),
                           baton::Error);
      sent.wait();
    }
    {
      auto posted = baton::irecv_upto(comm, small, prev, 17);
      auto sent = baton::isend_view(comm, Kokkos::View<int*>("ints", 3), next, 17);
      CHECK_THROWS_WITH_AS(posted.wait(), doctest::Contains("int32[3]"), baton::Error);
      sent.wait();
    }
    auto posted = baton::irecv_upto(comm, small, prev, 17);
    auto sent = baton::isend_view(comm, Kokkos::View<double*>("two", 2), next, 17);
    CHECK(posted.wait().extent(0) == 2);
    sent.wait();
  }
}

TEST_CASE("recv_into: a longer message is named and consumed, on every MPI") {
  for (auto path : {baton::ViewPath::automatic, baton::ViewPath::staged}) {
    for (std::size_t rows : {std::size_t(3), std::size_t(100)}) {
      CAPTURE(path_name(path));
      CAPTURE(rows);
      baton::Communicator comm = comm_with(path);
      const int next = (comm.rank() + 1) % comm.size();
      const int prev = (comm.rank() + comm.size() - 1) % comm.size();
      Right small("small", rows, cols);
      auto a = baton::isend_view(comm, filled<Right>(rows + 60, cols, 3), next, 18);
      CHECK_THROWS_WITH_AS(baton::recv_into(comm, small, prev, 18),
                           doctest::Contains("is larger than"), baton::Error);
      a.wait();
      auto b = baton::isend_view(comm, filled<Right>(rows, cols, 5), next, 18);
      baton::recv_into(comm, small, prev, 18);
      CHECK(wrong(small, 5) == 0);
      b.wait();
    }
  }
}
