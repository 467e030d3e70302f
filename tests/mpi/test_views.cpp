#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <baton/collectives/collectives.hpp>
#include <baton/core/check_mpi.hpp>
#include <baton/transport/view_message.hpp>
#include <cstdint>
#include <string>

#include "mpi_doctest.hpp"
#include "view_fill.hpp"

namespace {

// A communicator per View path: every test runs once as is and once through host staging.
baton::Communicator comm_with(baton::ViewPath path) {
  baton::Communicator comm = baton::test::world().duplicate();
  comm.set_view_path(path);
  return comm;
}

double value(int i, int j, int who) {
  return who * 1000.0 + i * 10.0 + j + 0.25;
}

template <class V>
void fill2(const V& v, int who) {
  baton::test::fill(v, [who](std::size_t i, std::size_t j) { return value(int(i), int(j), who); });
}

template <class V>
int count_wrong2(const V& v, int who) {
  return baton::test::count_wrong(
      v, [who](std::size_t i, std::size_t j) { return value(int(i), int(j), who); });
}

}  // namespace

TEST_CASE("ring of 2-D Views: the receiver allocates the sent shape") {
  for (auto path : {baton::ViewPath::automatic, baton::ViewPath::staged}) {
    CAPTURE(static_cast<int>(path));
    baton::Communicator comm = comm_with(path);
    const int next = (comm.rank() + 1) % comm.size();
    const int prev = (comm.rank() + comm.size() - 1) % comm.size();
    Kokkos::View<double**> out("out", 3, 4 + comm.rank());
    fill2(out, comm.rank());
    auto handle = baton::isend_view(comm, out, next, 1);
    baton::MessageInfo info;
    auto in = baton::recv_view<Kokkos::View<double**>>(comm, baton::any_source, 1, &info);
    handle.wait();
    CHECK(info.source == prev);
    CHECK(in.extent(0) == 3);
    CHECK(in.extent(1) == std::size_t(4 + prev));
    CHECK(count_wrong2(in, prev) == 0);
  }
}

TEST_CASE("ranks 0 to 8 and several value types travel intact") {
  baton::Communicator comm = baton::test::world().duplicate();
  const int me = comm.rank();
  SUBCASE("rank 0") {
    Kokkos::View<std::int64_t> s("s");
    Kokkos::deep_copy(s, std::int64_t(-123456789012345));
    // Self-sends are non-blocking: MPI need not buffer a blocking send to self (MPICH at 1 rank
    // does not).
    auto handle = baton::isend_view(comm, s, me, 2);
    auto r = baton::recv_view<Kokkos::View<std::int64_t>>(comm, me, 2);
    handle.wait();
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r);
    CHECK(h() == -123456789012345);
  }
  SUBCASE("rank 1 float and uint16, rank 3 int8") {
    Kokkos::View<float*> f("f", 7);
    Kokkos::View<std::uint16_t*> u("u", 5);
    Kokkos::View<std::int8_t***> c("c", 2, 3, 4);
    auto hf = Kokkos::create_mirror_view(f);
    auto hu = Kokkos::create_mirror_view(u);
    auto hc = Kokkos::create_mirror_view(c);
    for (int i = 0; i < 7; ++i)
      hf(i) = 1.5f * i;
    for (int i = 0; i < 5; ++i)
      hu(i) = std::uint16_t(60000 + i);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 4; ++k)
          hc(i, j, k) = std::int8_t(i * 12 + j * 4 + k - 10);
    Kokkos::deep_copy(f, hf);
    Kokkos::deep_copy(u, hu);
    Kokkos::deep_copy(c, hc);
    auto a = baton::isend_view(comm, f, me, 3);
    auto b = baton::isend_view(comm, u, me, 3);
    auto d = baton::isend_view(comm, c, me, 3);
    auto rf = baton::recv_view<Kokkos::View<float*>>(comm, me, 3);
    auto ru = baton::recv_view<Kokkos::View<std::uint16_t*>>(comm, me, 3);
    auto rc = baton::recv_view<Kokkos::View<std::int8_t***, Kokkos::LayoutLeft>>(comm, me, 3);
    REQUIRE(rf.extent(0) == 7);
    REQUIRE(ru.extent(0) == 5);
    REQUIRE(rc.extent(2) == 4);
    // Read on the host (the received Views are in the default memory space: a GPU's, there).
    const auto hrf = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rf);
    const auto hru = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ru);
    const auto hrc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rc);
    int wrong = 0;
    for (int i = 0; i < 7; ++i)
      wrong += hrf(i) != 1.5f * i;
    for (int i = 0; i < 5; ++i)
      wrong += hru(i) != 60000 + i;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 4; ++k)
          wrong += hrc(i, j, k) != std::int8_t(i * 12 + j * 4 + k - 10);
    CHECK(wrong == 0);
  }
  SUBCASE("rank 8") {
    Kokkos::View<double********> v("v8", 2, 1, 2, 1, 2, 1, 2, 3);
    auto h = Kokkos::create_mirror_view(v);
    double* p = h.data();
    for (std::size_t i = 0; i < h.size(); ++i)
      p[i] = double(i) * 0.5;
    Kokkos::deep_copy(v, h);
    auto handle = baton::isend_view(comm, v, me, 4);
    auto r = baton::recv_view<Kokkos::View<double********>>(comm, me, 4);
    handle.wait();
    REQUIRE(r.size() == v.size());
    CHECK(r.extent(7) == 3);
    const auto hr = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r);
    CHECK(hr(1, 0, 1, 0, 1, 0, 1, 2) == h(1, 0, 1, 0, 1, 0, 1, 2));
  }
}

TEST_CASE("layouts: LayoutLeft to LayoutRight and strided subviews keep the logical values") {
  for (auto path : {baton::ViewPath::automatic, baton::ViewPath::staged}) {
    CAPTURE(static_cast<int>(path));
    baton::Communicator comm = comm_with(path);
    const int me = comm.rank();
    Kokkos::View<double**, Kokkos::LayoutLeft> left("left", 4, 6);
    fill2(left, me);
    auto a = baton::isend_view(comm, left, me, 5);
    Kokkos::View<double**, Kokkos::LayoutRight> right("right", 4, 6);
    baton::recv_into(comm, right, me, 5);
    CHECK(count_wrong2(right, me) == 0);

    auto b = baton::isend_view(comm, right, me, 6);
    auto back = baton::recv_view<Kokkos::View<double**, Kokkos::LayoutLeft>>(comm, me, 6);
    CHECK(count_wrong2(back, me) == 0);

    // A column block of a LayoutRight View is strided: packed before sending.
    auto block = Kokkos::subview(right, Kokkos::make_pair(1, 3), Kokkos::make_pair(2, 5));
    auto c = baton::isend_view(comm, block, me, 7);
    auto got = baton::recv_view<Kokkos::View<double**>>(comm, me, 7);
    REQUIRE(got.extent(0) == 2);
    REQUIRE(got.extent(1) == 3);
    const auto hgot = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), got);
    int wrong = 0;
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        wrong += hgot(i, j) != value(i + 1, j + 2, me);
    CHECK(wrong == 0);
  }
}

TEST_CASE("forced staging on host memory gives results identical to the direct path") {
  baton::Communicator direct = comm_with(baton::ViewPath::automatic);
  baton::Communicator staged = comm_with(baton::ViewPath::staged);
  const int me = direct.rank();
  Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> v("v", 5, 7);
  fill2(v, me + 3);
  auto a = baton::isend_view(direct, v, me, 8);
  auto b = baton::isend_view(staged, v, me, 8);
  auto x = baton::recv_view<Kokkos::View<double**, Kokkos::HostSpace>>(direct, me, 8);
  auto y = baton::recv_view<Kokkos::View<double**, Kokkos::HostSpace>>(staged, me, 8);
  int differ = 0;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 7; ++j)
      differ += x(i, j) != y(i, j);
  CHECK(differ == 0);
  CHECK(count_wrong2(x, me + 3) == 0);
}

TEST_CASE("a wrong type or shape is an error naming both, and the next message still arrives") {
  baton::Communicator comm = baton::test::world().duplicate();
  const int me = comm.rank();
  Kokkos::View<int*> ints("ints", 5);
  Kokkos::View<double*> doubles("doubles", 5);
  Kokkos::deep_copy(doubles, 2.5);
  auto a = baton::isend_view(comm, ints, me, 9);
  auto b = baton::isend_view(comm, doubles, me, 9);
  Kokkos::View<double*> target("target", 5);
  CHECK_THROWS_WITH_AS(baton::recv_into(comm, target, me, 9),
                       ("baton::recv_into: the message is int32[5] (right), the View is "
                        "float64[5] (right); the message was consumed (message from source " +
                        std::to_string(me) + " with tag 9, on rank " + std::to_string(me) + ")")
                           .c_str(),
                       baton::Error);
  baton::recv_into(comm, target, me, 9);  // the double message, intact
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), target);
  CHECK(h(4) == 2.5);

  // LayoutRight named: the default layout of rank 2 is LayoutLeft on GPUs, which the text shows.
  Kokkos::View<double**, Kokkos::LayoutRight> matrix("m", 2, 3);
  auto c = baton::isend_view(comm, matrix, me, 10);
  auto d = baton::isend_view(comm, doubles, me, 10);
  Kokkos::View<double**, Kokkos::LayoutRight> wrong_shape("w", 3, 2);
  CHECK_THROWS_WITH_AS(
      baton::recv_into(comm, wrong_shape, me, 10),
      doctest::Contains("the message is float64[2,3] (right), the View is float64[3,2]"),
      baton::Error);
  CHECK_THROWS_WITH_AS(baton::recv_view<Kokkos::View<double**>>(comm, me, 10),
                       doctest::Contains("baton::recv_view: the message is float64[5] (right), "
                                         "the View type wants float64 of rank 2"),
                       baton::Error);
  // A byte message that is no View message at all.
  auto junk = baton::isend(comm, std::vector<std::byte>(3), me, 11);
  CHECK_THROWS_WITH_AS(baton::recv_view<Kokkos::View<double*>>(comm, me, 11),
                       "baton::decode_envelope: bad View message: 3 bytes, shorter than the "
                       "72-byte envelope",
                       baton::Error);
  CHECK_FALSE(baton::iprobe(comm, baton::any_source, 10).has_value());
  CHECK_FALSE(baton::iprobe(comm, baton::any_source, 11).has_value());
}

TEST_CASE("empty Views and bad ranks or tags") {
  baton::Communicator comm = baton::test::world().duplicate();
  Kokkos::View<double**> empty("empty", 0, 3);
  auto handle = baton::isend_view(comm, empty, comm.rank(), 12);
  auto r = baton::recv_view<Kokkos::View<double**>>(comm, comm.rank(), 12);
  handle.wait();
  CHECK(r.extent(0) == 0);
  CHECK(r.extent(1) == 3);
  CHECK_THROWS_WITH_AS(baton::send_view(comm, empty, comm.size(), 0),
                       doctest::Contains("is out of range"), baton::Error);
  CHECK_THROWS_WITH_AS(baton::send_view(comm, empty, 0, -4), doctest::Contains("tag -4"),
                       baton::Error);
}

TEST_CASE("posted View receives complete in test() or wait(); send handles keep Views alive") {
  baton::Communicator comm = baton::test::world().duplicate();
  const int me = comm.rank();
  auto posted = baton::irecv_view<Kokkos::View<double**>>(comm, me, 13);
  CHECK_FALSE(posted.test());
  baton::SendHandle handle;
  {
    Kokkos::View<double**> temporary("temporary", 2, 2);
    fill2(temporary, 7);
    handle = baton::isend_view(comm, temporary, me, 13);
  }  // the caller's reference is gone; the handle keeps the View
  while (!posted.test()) {
  }
  CHECK(posted.info().source == me);
  CHECK(count_wrong2(posted.wait(), 7) == 0);
  handle.wait();

  Kokkos::View<double**> into("into", 2, 2);
  auto post_into = baton::irecv_into(comm, into, me, 14);
  Kokkos::View<double**> from("from", 2, 2);
  fill2(from, 9);
  auto sent = baton::isend_view(comm, from, me, 14);
  post_into.wait();
  sent.wait();
  CHECK(count_wrong2(into, 9) == 0);
}

TEST_CASE("the GPU-aware path's packing and unpacking, run on host memory") {
  baton::Communicator comm = baton::test::world().duplicate();
  const int me = comm.rank();
  // Host memory named: with a GPU, MPI would otherwise be handed device memory it cannot read.
  Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> v("v", 3, 5);
  fill2(v, 4);
  using Out = baton::detail::OutgoingView<decltype(v)>;
  auto out = std::make_shared<Out>(comm, v, me);
  out->pack_on_device();
  REQUIRE(out->packed.size() == 72 + 15 * sizeof(double));
  out->sequence = -1;  // force the packed form (not split, not small)
  out->small_size = 0;
  auto handle = Out::start(comm, out, me, 15);
  Kokkos::View<double**, Kokkos::HostSpace> target("target", 3, 5);
  auto matched = baton::detail::mprobe(comm, me, 15, "test");
  CHECK(matched.info.size == 72 + 15 * sizeof(double));
  baton::detail::receive_packed(comm, matched, target, "test");
  handle.wait();
  CHECK(count_wrong2(target, 4) == 0);
}

TEST_CASE("large Views travel in split form: allocate, receive into, reorder, reject and drain") {
  for (auto path : {baton::ViewPath::automatic, baton::ViewPath::staged}) {
    CAPTURE(static_cast<int>(path));
    baton::Communicator comm = comm_with(path);
    const int next = (comm.rank() + 1) % comm.size();
    const int prev = (comm.rank() + comm.size() - 1) % comm.size();
    // 300 x (100 + rank) doubles: 240 KB and up, above the default split threshold.
    Kokkos::View<double**, Kokkos::LayoutLeft> out("out", 300, 100 + comm.rank());
    fill2(out, comm.rank());
    auto a = baton::isend_view(comm, out, next, 20);
    auto got = baton::recv_view<Kokkos::View<double**>>(comm, baton::any_source, 20);
    REQUIRE(got.extent(1) == std::size_t(100 + prev));
    CHECK(count_wrong2(got, prev) == 0);
    a.wait();

    // Into an existing View of the other layout; then a wrong shape is rejected, its data drained,
    // and the next large message on the channel arrives intact.
    Kokkos::View<double**, Kokkos::LayoutLeft> right_shape("right_shape", 300, 100 + prev);
    Kokkos::View<double**> wrong_shape("wrong_shape", 300, 99);
    auto b = baton::isend_view(comm, out, next, 21);
    auto c = baton::isend_view(comm, out, next, 21);
    CHECK_THROWS_WITH_AS(baton::recv_into(comm, wrong_shape, prev, 21),
                         doctest::Contains("the View is float64[300,99]"), baton::Error);
    baton::recv_into(comm, right_shape, prev, 21);
    CHECK(count_wrong2(right_shape, prev) == 0);
    CHECK_FALSE(baton::iprobe(comm, baton::any_source, 21).has_value());
    b.wait();
    c.wait();
    baton::barrier(comm);  // every rank has received everything it was sent
    int left =
        0;  // and nothing is left on the payload communicator (the rejected data was drained)
    baton::check_mpi(
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm.payload(), &left, MPI_STATUS_IGNORE),
        "MPI_Iprobe");
    CHECK(left == 0);
  }
}
