#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <baton/collectives/agreement.hpp>
#include <baton/collectives/collectives.hpp>
#include <baton/comm/group.hpp>
#include <baton/core/error.hpp>
#include <baton/shm/gather.hpp>
#include <baton/transport/objects.hpp>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "mpi_doctest.hpp"

namespace {

// Views of several types and ranks whose values depend on `who` and `round`, `scale` rows long.
baton::Record sample(int who, int round = 0, std::size_t scale = 4) {
  baton::Record record;
  record.config =
      "{\"who\": " + std::to_string(who) + ", \"round\": " + std::to_string(round) + "}";
  Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> positions("positions", scale, 3);
  Kokkos::View<std::int32_t*, Kokkos::HostSpace> ids("ids", scale + static_cast<std::size_t>(who));
  Kokkos::View<float, Kokkos::HostSpace> energy("energy");
  Kokkos::View<std::uint8_t***, Kokkos::HostSpace> flags("flags", 2,
                                                         static_cast<std::size_t>(who) + 1, 3);
  for (std::size_t i = 0; i < scale; ++i) {
    for (int d = 0; d < 3; ++d)
      positions(i, d) = who + 0.5 * static_cast<double>(i) + 0.25 * d + round;
  }
  for (std::size_t i = 0; i < ids.extent(0); ++i)
    ids(i) = static_cast<std::int32_t>(1000 * who + static_cast<int>(i) - round);
  energy() = -1.5f * static_cast<float>(who + round);
  for (std::size_t i = 0; i < flags.size(); ++i)
    flags.data()[i] = static_cast<std::uint8_t>(i * 7 + static_cast<std::size_t>(who + round));
  record.views.add("positions", positions);
  record.views.add("ids", ids);
  record.views.add("energy", energy);
  record.views.add("flags", flags);
  return record;
}

// 0 when `got` equals `want` byte for byte (config, names, envelopes, data).
int count_differences(const baton::Record& got, const baton::Record& want) {
  int wrong = got.config != want.config;
  wrong += got.views.names() != want.views.names();
  if (wrong)
    return wrong;
  for (const baton::ViewBundle::Entry& w : want.views.entries()) {
    const baton::ViewBundle::Entry& g = got.views.at(w.name);
    wrong += g.envelope.describe() != w.envelope.describe();
    wrong += g.data.size() != w.data.size() ||
             (w.data.size() && std::memcmp(g.data.data(), w.data.data(), w.data.size()) != 0);
  }
  return wrong;
}

// What a call throws on this rank ("" when it returns), as a CollectiveError.
template <class F>
std::string collective_error_of(F&& f) {
  try {
    f();
  } catch (const baton::CollectiveError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not a CollectiveError: ") + e.what();
  }
  return "";
}

// True when every rank of comm holds the same text.
bool same_on_every_rank(const baton::Communicator& comm, std::string text) {
  std::string root = text;
  baton::broadcast_object(comm, root, 0);
  int differs = root != text;
  Kokkos::View<int, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> value(&differs);
  baton::all_reduce(comm, value, baton::ReduceOp::max);
  return differs == 0;
}

std::vector<int> all_ranks(int n) {
  std::vector<int> ranks;
  for (int r = 0; r < n; ++r)
    ranks.push_back(r);
  return ranks;
}

// Group ranks treated as remote: all but the first, or every other one (mixed).
std::vector<std::vector<int>> remote_choices(int n) {
  std::vector<int> all, odd;
  for (int r = 1; r < n; ++r) {
    all.push_back(r);
    if (r % 2)
      odd.push_back(r);
  }
  return {{}, all, odd};
}

// Options treating `remote` as on other nodes (moved in: g++ 12 warns falsely on a copy).
baton::NodeGatherOptions treating_as_remote(std::vector<int> remote) {
  baton::NodeGatherOptions options;
  options.remote = std::move(remote);
  return options;
}

}  // namespace

TEST_CASE("every member's config and Views arrive exactly on the first rank, in group order") {
  const baton::Communicator& world = baton::test::world();
  const bool one_node = baton::shares_one_node(world);
  baton::Group group(world, all_ranks(world.size()));
  const std::vector<baton::GatherEntry> got = baton::gather_to_first(group, sample(world.rank()));
  if (world.rank() == 0) {
    REQUIRE(got.size() == static_cast<std::size_t>(world.size()));
    for (int g = 0; g < world.size(); ++g) {
      CAPTURE(g);
      CHECK(got[g].rank == g);
      CHECK_FALSE(got[g].empty());
      CHECK(count_differences(got[g].record, sample(g)) == 0);
    }
    // The result owns usable Views.
    const auto ids = got.back().record.views.get<Kokkos::View<std::int32_t*>>("ids");
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), ids);
    CHECK(host.extent(0) == static_cast<std::size_t>(4 + world.size() - 1));
    CHECK(host(2) == 1000 * (world.size() - 1) + 2);
  } else {
    CHECK(got.empty());
  }
  baton::NodeGather gather(group);
  for (int g = 0; g < world.size(); ++g)
    CHECK(gather.shares_node_with_first(g) == one_node);
}

TEST_CASE("the (config, views) form gives the same result") {
  const baton::Communicator& world = baton::test::world();
  baton::Group group(world, all_ranks(world.size()));
  const baton::Record mine = sample(world.rank(), 3);
  const auto got = baton::gather_to_first(group, mine.config, mine.views);
  CHECK(got.size() == (world.rank() == 0 ? static_cast<std::size_t>(world.size()) : 0u));
  for (const baton::GatherEntry& entry : got)
    CHECK(count_differences(entry.record, sample(entry.rank, 3)) == 0);
}

TEST_CASE("a member with nothing to give is an explicit empty entry") {
  const baton::Communicator& world = baton::test::world();
  baton::Group group(world, all_ranks(world.size()));
  // Rank 1 gives nothing, rank 2 a config only, rank 3 Views only; rank 0 nothing at one rank.
  auto mine = [&](int r) {
    baton::Record record = sample(r);
    if (r == 1 || (r == 0 && world.size() == 1))
      return baton::Record();
    if (r == 2)
      record.views = baton::ViewBundle();
    if (r == 3)
      record.config.clear();
    return record;
  };
  for (const auto& remote : remote_choices(world.size())) {
    CAPTURE(remote.size());
    baton::NodeGatherOptions options = treating_as_remote(remote);
    baton::NodeGather gather(group, options);
    const auto got = gather.gather(mine(world.rank()));
    if (world.rank() != 0) {
      CHECK(got.empty());
      continue;
    }
    REQUIRE(got.size() == static_cast<std::size_t>(world.size()));
    for (int g = 0; g < world.size(); ++g) {
      CAPTURE(g);
      CHECK(got[g].rank == g);
      CHECK(got[g].empty() == (g == 1 || world.size() == 1));
      CHECK(count_differences(got[g].record, mine(g)) == 0);
    }
  }
}

TEST_CASE("a group that is a reordered subset of the world gathers on its own first rank") {
  const baton::Communicator& world = baton::test::world();
  // World ranks in reverse order, without world rank 1 when there are 3 or more.
  std::vector<int> ranks;
  for (int r = world.size() - 1; r >= 0; --r) {
    if (!(r == 1 && world.size() >= 3))
      ranks.push_back(r);
  }
  baton::Group group(world, ranks);
  for (const auto& remote : remote_choices(group.size())) {
    CAPTURE(remote.size());
    baton::NodeGatherOptions options = treating_as_remote(remote);
    baton::NodeGather gather(group, options);
    CHECK(gather.is_member() == group.is_member());
    const auto got = gather.gather(sample(world.rank()));
    if (!group.is_member() || !group.is_first()) {
      CHECK(got.empty());  // non-members: at once, no MPI call
      continue;
    }
    CHECK(world.rank() == world.size() - 1);
    REQUIRE(got.size() == ranks.size());
    for (std::size_t g = 0; g < ranks.size(); ++g) {
      CAPTURE(g);
      CHECK(got[g].rank == static_cast<int>(g));
      CHECK(count_differences(got[g].record, sample(ranks[g])) == 0);
    }
  }
  // The one-shot form on a non-member returns at once with nothing.
  if (!group.is_member())
    CHECK(baton::gather_to_first(group, sample(world.rank())).empty());
}

TEST_CASE("members treated as on other nodes send messages, mixed with shared memory") {
  const baton::Communicator& world = baton::test::world();
  const bool one_node = baton::shares_one_node(world);
  baton::Group group(world, all_ranks(world.size()));
  for (const auto& remote : remote_choices(world.size())) {
    CAPTURE(remote.size());
    baton::NodeGatherOptions options = treating_as_remote(remote);
    baton::NodeGather gather(group, options);
    for (int g = 0; g < world.size(); ++g) {
      const bool listed = std::find(remote.begin(), remote.end(), g) != remote.end();
      CHECK(gather.shares_node_with_first(g) == (one_node && !listed));
    }
    const auto got = gather.gather(sample(world.rank(), 1, 1000));
    for (int g = 0; g < world.size(); ++g) {
      // Only members on the first rank's node (other than the first, which copies) keep memory.
      CHECK((gather.capacity(g) > 0) == (gather.shares_node_with_first(g) && g != 0));
    }
    if (world.rank() == 0) {
      REQUIRE(got.size() == static_cast<std::size_t>(world.size()));
      for (int g = 0; g < world.size(); ++g)
        CHECK(count_differences(got[g].record, sample(g, 1, 1000)) == 0);
    }
  }
}

TEST_CASE("a NodeGather is reused over growing and shrinking records") {
  const baton::Communicator& world = baton::test::world();
  baton::Group group(world, all_ranks(world.size()));
  const std::size_t rows[] = {4, 2000, 1, 100000, 0, 30, 250000, 7};
  for (const auto& remote : remote_choices(world.size())) {
    CAPTURE(remote.size());
    baton::NodeGatherOptions options = treating_as_remote(remote);
    baton::NodeGather gather(group, options);
    std::vector<std::size_t> highest(static_cast<std::size_t>(world.size()), 0);
    int round = 0;
    for (std::size_t n : rows) {
      CAPTURE(n);
      // Sizes differ by rank too; rank 1 gives nothing every third round.
      auto mine = [&](int r) {
        return r == 1 && round % 3 == 0 ? baton::Record()
                                        : sample(r, round, n * static_cast<std::size_t>(r + 1));
      };
      const baton::Record record = mine(world.rank());
      const auto got = gather.gather(record);
      for (int g = 0; g < world.size(); ++g) {
        // Capacities never shrink, and hold at least what was gathered.
        CHECK(gather.capacity(g) >= highest[static_cast<std::size_t>(g)]);
        highest[static_cast<std::size_t>(g)] = gather.capacity(g);
      }
      if (gather.shares_node_with_first(world.rank()) && world.rank() != 0)
        CHECK(gather.capacity(world.rank()) >=
              (record.config.empty() && record.views.empty() ? 0 : baton::encoded_size(record)));
      if (world.rank() == 0) {
        REQUIRE(got.size() == static_cast<std::size_t>(world.size()));
        for (int g = 0; g < world.size(); ++g) {
          CAPTURE(g);
          CHECK(count_differences(got[g].record, mine(g)) == 0);
        }
      } else {
        CHECK(got.empty());
      }
      ++round;
    }
  }
}

TEST_CASE("gather_encoded gives the records in place, valid until the next gather") {
  const baton::Communicator& world = baton::test::world();
  baton::Group group(world, all_ranks(world.size()));
  for (const auto& remote : remote_choices(world.size())) {
    CAPTURE(remote.size());
    baton::NodeGatherOptions options = treating_as_remote(remote);
    baton::NodeGather gather(group, options);
    for (int round = 0; round < 3; ++round) {
      const auto got = gather.gather_encoded(sample(world.rank(), round, 50 << round));
      if (world.rank() != 0) {
        CHECK(got.empty());
        continue;
      }
      REQUIRE(got.size() == static_cast<std::size_t>(world.size()));
      for (int g = 0; g < world.size(); ++g) {
        CAPTURE(g);
        const baton::Record want = sample(g, round, 50 << round);
        CHECK(got[g].rank == g);
        CHECK(got[g].size == baton::encoded_size(want));
        const baton::ByteBuffer bytes = baton::encode_record(want);
        CHECK(std::memcmp(got[g].data, bytes.data(), bytes.size()) == 0);
        CHECK(count_differences(got[g].decode(), want) == 0);
      }
    }
  }
}

TEST_CASE("a member whose encoding fails makes every member throw the same error") {
  const baton::Communicator& world = baton::test::world();
  baton::Group group(world, all_ranks(world.size()));
  const int failing = world.size() - 1;
  for (const auto& remote : remote_choices(world.size())) {
    CAPTURE(remote.size());
    baton::NodeGatherOptions options = treating_as_remote(remote);
    options.after_encode = [&](std::byte*, std::size_t) {
      if (world.rank() == failing)
        throw baton::Error("disk full (injected)");
    };
    baton::NodeGather gather(group, options);
    // The first rank encodes its own record only in gather_encoded.
    const std::string text = collective_error_of([&] {
      if (failing == 0)
        gather.gather_encoded(sample(world.rank()));
      else
        gather.gather(sample(world.rank()));
    });
    CHECK(text.find("group rank " + std::to_string(failing) + ": disk full (injected)") !=
          std::string::npos);
    CHECK(same_on_every_rank(world, text));
    // Nobody is left waiting, and the next gather works (a rank with nothing to give skips the
    // hook).
    const auto got =
        gather.gather(world.rank() == failing ? baton::Record() : sample(world.rank()));
    CHECK(got.size() == (world.rank() == 0 ? static_cast<std::size_t>(world.size()) : 0u));
  }
}

TEST_CASE("a corrupt record is an error naming its group rank, on every member") {
  const baton::Communicator& world = baton::test::world();
  baton::Group group(world, all_ranks(world.size()));
  const int bad = world.size() - 1;
  for (const auto& remote : remote_choices(world.size())) {
    CAPTURE(remote.size());
    baton::NodeGatherOptions options = treating_as_remote(remote);
    options.after_encode = [&](std::byte* data, std::size_t) {
      if (world.rank() == bad)
        data[0] = std::byte{'X'};  // not "BTNR"
    };
    baton::NodeGather gather(group, options);
    if (bad == 0) {  // one rank: only gather_encoded encodes the first rank's record
      const auto got = gather.gather_encoded(sample(0));
      REQUIRE(got.size() == 1);
      CHECK_THROWS_WITH_AS(got[0].decode(), doctest::Contains("group rank 0 is not valid"),
                           baton::Error);
      continue;
    }
    const std::string text = collective_error_of([&] { gather.gather(sample(world.rank())); });
    CHECK(text.find("could not read every record (group rank " + std::to_string(bad) +
                    ": baton::decode_record: bad record: no BTNR magic") != std::string::npos);
    CHECK(same_on_every_rank(world, text));
  }
}

TEST_CASE("a member that cannot get its shared memory makes every member throw") {
  const baton::Communicator& world = baton::test::world();
  baton::Group group(world, all_ranks(world.size()));
  baton::NodeGather gather(group);
  const int greedy = world.size() - 1;
  const std::string text = collective_error_of(
      [&] { gather.reserve(world.rank() == greedy ? std::size_t(1) << 62 : 4096); });
  CHECK(text.find("baton::NodeGather::reserve: cannot allocate node shared memory: the members on "
                  "the first rank's node need") != std::string::npos);
  if (baton::shares_one_node(world))
    CHECK(text.find("(group rank " + std::to_string(greedy) + " alone ") != std::string::npos);
  CHECK(text.find('\n') == std::string::npos);  // one text, the same from every rank
  CHECK(same_on_every_rank(world, text));
  // Still usable afterwards.
  gather.reserve(1 << 20);
  if (gather.shares_node_with_first(world.rank()))
    CHECK(gather.capacity(world.rank()) >= (1u << 20));
  const auto got = gather.gather(sample(world.rank()));
  CHECK(got.size() == (world.rank() == 0 ? static_cast<std::size_t>(world.size()) : 0u));
  if (world.rank() == 0)
    CHECK(count_differences(got.back().record, sample(world.size() - 1)) == 0);
}

TEST_CASE("options naming the first rank or a rank outside the group are refused everywhere") {
  const baton::Communicator& world = baton::test::world();
  baton::Group group(world, all_ranks(world.size()));
  for (int bad : {0, world.size()}) {
    const baton::NodeGatherOptions options = treating_as_remote({bad});
    const std::string text = collective_error_of([&] { baton::NodeGather gather(group, options); });
    CHECK(text.find("baton::NodeGather: NodeGatherOptions::remote lists group rank " +
                    std::to_string(bad)) == 0);
    CHECK(same_on_every_rank(world, text));
  }
}

TEST_CASE("gather(Record&&) moves the first rank's own record and leaves the others' alone") {
  const baton::Communicator& world = baton::test::world();
  baton::Group group(world, all_ranks(world.size()));
  baton::NodeGather gather(group);
  baton::Record mine = sample(world.rank(), 5);
  const auto got = gather.gather(std::move(mine));
  if (world.rank() == 0) {
    REQUIRE(got.size() == static_cast<std::size_t>(world.size()));
    for (int g = 0; g < world.size(); ++g)
      CHECK(count_differences(got[g].record, sample(g, 5)) == 0);
  } else {
    CHECK(got.empty());
    CHECK(count_differences(mine, sample(world.rank(), 5)) == 0);  // not moved from
  }
  // The one-shot form too.
  const auto once = baton::gather_to_first(group, sample(world.rank(), 6));
  CHECK(once.size() == (world.rank() == 0 ? static_cast<std::size_t>(world.size()) : 0u));
  for (const baton::GatherEntry& entry : once)
    CHECK(count_differences(entry.record, sample(entry.rank, 6)) == 0);
}
