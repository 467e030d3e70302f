#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <baton/collectives/bundle.hpp>
#include <baton/core/error.hpp>
#include <cstdint>

#include "mpi_doctest.hpp"

namespace {
baton::ViewBundle sample(int who) {
  Kokkos::View<double**, Kokkos::LayoutLeft> positions("positions", 4, 3);
  Kokkos::View<std::int32_t*> ids("ids", 4);
  Kokkos::View<float> energy("energy");
  auto hp = Kokkos::create_mirror_view(positions);
  auto hi = Kokkos::create_mirror_view(ids);
  for (int i = 0; i < 4; ++i) {
    hi(i) = who * 10 + i;
    for (int d = 0; d < 3; ++d)
      hp(i, d) = who + 0.1 * i + 0.01 * d;
  }
  Kokkos::deep_copy(positions, hp);
  Kokkos::deep_copy(ids, hi);
  Kokkos::deep_copy(energy, -1.5f * who);
  baton::ViewBundle bundle;
  bundle.add("positions", positions);
  bundle.add("ids", ids);
  bundle.add("energy", energy);
  return bundle;
}

int count_wrong(const baton::ViewBundle& bundle, int who) {
  int wrong = 0;
  auto positions = bundle.get<Kokkos::View<double**>>("positions");
  auto ids = bundle.get<Kokkos::View<std::int32_t*>>("ids");
  auto energy = bundle.get<Kokkos::View<float>>("energy");
  auto hp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), positions);
  auto hi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ids);
  auto he = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), energy);
  wrong += positions.extent(0) != 4 || positions.extent(1) != 3;
  for (int i = 0; i < 4; ++i) {
    wrong += hi(i) != who * 10 + i;
    for (int d = 0; d < 3; ++d)
      wrong += hp(i, d) != who + 0.1 * i + 0.01 * d;
  }
  wrong += he() != -1.5f * who;
  return wrong;
}
}  // namespace

TEST_CASE("a bundle of named Views travels as one message and the receiver allocates") {
  baton::Communicator comm = baton::test::world().duplicate();
  const int next = (comm.rank() + 1) % comm.size();
  const int prev = (comm.rank() + comm.size() - 1) % comm.size();
  baton::ViewBundle mine = sample(comm.rank());
  CHECK(mine.names() == std::vector<std::string>{"positions", "ids", "energy"});
  auto handle = baton::isend(comm, baton::encode_bundle(mine), next, 1);
  baton::MessageInfo info;
  baton::ViewBundle got = baton::recv_bundle(comm, baton::any_source, 1, &info);
  handle.wait();
  CHECK(info.source == prev);
  CHECK(got.size() == 3);
  CHECK(got.at("positions").envelope.describe() == "float64[4,3] (left)");
  CHECK(count_wrong(got, prev) == 0);
}

TEST_CASE("broadcast_bundle gives every rank root's bundle") {
  baton::Communicator comm = baton::test::world().duplicate();
  const int root = comm.size() - 1;
  baton::ViewBundle got =
      baton::broadcast_bundle(comm, comm.rank() == root ? sample(root) : baton::ViewBundle(), root);
  CHECK(count_wrong(got, root) == 0);
}

TEST_CASE("bundle errors name the entry, and a bad message does not swallow the next") {
  baton::Communicator comm = baton::test::world().duplicate();
  baton::ViewBundle bundle = sample(1);
  CHECK_THROWS_WITH_AS(
      bundle.get<Kokkos::View<double**>>("velocities"),
      doctest::Contains("no entry named 'velocities' (entries: 'positions', 'ids', 'energy')"),
      baton::Error);
  CHECK_THROWS_WITH_AS(bundle.get<Kokkos::View<double*>>("ids"),
                       "baton::ViewBundle::get: the message is int32[4] (right), the View type "
                       "wants float64 of rank "
                       "1; the message was consumed (entry 'ids')",
                       baton::Error);
  bundle.add("ids", Kokkos::View<std::int32_t*>("ids", 2));  // replaces, keeps the order
  CHECK(bundle.at("ids").envelope.extents[0] == 2);
  CHECK(bundle.names().size() == 3);

  const int me = comm.rank();
  // Self-sends are non-blocking: MPI need not buffer a blocking send to self (MPICH at 1 rank does
  // not).
  auto junk = baton::isend(comm, std::vector<std::byte>(20, std::byte{7}), me, 2);
  auto good = baton::isend(comm, baton::encode_bundle(sample(me)), me, 2);
  CHECK_THROWS_WITH_AS(
      baton::recv_bundle(comm, me, 2),
      doctest::Contains("baton::decode_bundle: bad View bundle message: no BTNB magic"),
      baton::Error);
  CHECK(count_wrong(baton::recv_bundle(comm, me, 2), me) == 0);
}

TEST_CASE("the bundle decoder rejects every truncation of a valid message") {
  baton::ViewBundle bundle = sample(2);
  baton::ByteBuffer bytes = baton::encode_bundle(bundle);
  int rejected = 0;
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    try {
      baton::decode_bundle(bytes.data(), n);
    } catch (const baton::Error&) {
      ++rejected;
    }
  }
  CHECK(rejected == int(bytes.size()));
  CHECK(count_wrong(baton::decode_bundle(bytes.data(), bytes.size()), 2) == 0);
}
