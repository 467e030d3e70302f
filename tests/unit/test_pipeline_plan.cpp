// Pure pipeline logic: which ranks run which stages, and the wire header checks.
#include <doctest/doctest.h>

#include <baton/core/error.hpp>
#include <baton/pipeline/plan.hpp>
#include <baton/systems/codec.hpp>
#include <numeric>
#include <vector>

using namespace baton::pipeline;
using namespace baton::systems;

namespace {

std::vector<std::vector<int>> ranks_of(const RankPlan& p) {
  std::vector<std::vector<int>> out;
  for (const Segment& s : p.segments)
    out.push_back(s.ranks);
  return out;
}

}  // namespace

TEST_CASE("one rank runs every stage") {
  const RankPlan p = plan_ranks(1, {300, 1000, 1000});
  REQUIRE(p.segments.size() == 1);
  CHECK(p.segments[0].first_stage == 0);
  CHECK(p.segments[0].last_stage == 2);
  CHECK(p.segment_of(0) == 0);
}

TEST_CASE("fewer ranks than stages: consecutive stages grouped where that balances the cost") {
  // 1000 | 1000 + 2000 would be 3000 on one rank; 1000 + 1000 | 2000 is best, and exactly the
  // total over the ranks: the split stays.
  const RankPlan p = plan_ranks(2, {1000, 1000, 2000});
  REQUIRE(p.segments.size() == 2);
  CHECK(p.segments[0].first_stage == 0);
  CHECK(p.segments[0].last_stage == 1);
  CHECK(p.segments[1].first_stage == 2);
  CHECK(ranks_of(p) == std::vector<std::vector<int>>{{0}, {1}});
  // Within the margin: the best split, 1000 + 950 | 2000, is 2000 against a total over the ranks
  // of 1975 (1.3% more).
  CHECK(plan_ranks(2, {1000, 950, 2000}).segments.size() == 2);
}

TEST_CASE("fewer ranks than stages, unevenly: every rank runs the whole pipeline") {
  // 300 | 1000 + 1000 would be 2000 on one rank and 300 + 1000 | 1000 1300, against a total over
  // the ranks of 1150: the whole pipeline on both ranks, each taking its share of the systems.
  const RankPlan p = plan_ranks(2, {300, 1000, 1000});
  REQUIRE(p.segments.size() == 1);
  CHECK(p.segments[0].first_stage == 0);
  CHECK(p.segments[0].last_stage == 2);
  CHECK(ranks_of(p) == std::vector<std::vector<int>>{{0, 1}});
  CHECK(p.segment_of(1) == 0);
  CHECK(p.describe({"fire", "langevin", "nve"}) == "stages 0-2 'fire,langevin,nve': ranks 0 1\n");
  // Past the margin: 1000 + 700 | 2000 is 2000 against a total over the ranks of 1850 (8% more).
  CHECK(ranks_of(plan_ranks(2, {1000, 700, 2000})) == std::vector<std::vector<int>>{{0, 1}});
  // Not where asked to keep the split (an overflow chain).
  CHECK(plan_ranks(2, {300, 1000, 1000}, {}, {}, false).segments.size() == 2);
  // Three ranks, four stages: 100 + 1000 | 1000 | 1000 is 1100 against 1033.
  CHECK(ranks_of(plan_ranks(3, {100, 1000, 1000, 1000})) ==
        std::vector<std::vector<int>>{{0, 1, 2}});
}

TEST_CASE("extra ranks replicate the slowest stages") {
  // fire 300, langevin 1000, nve 1000: extras go to the 1000s first (earlier on ties), then fire.
  CHECK(ranks_of(plan_ranks(3, {300, 1000, 1000})) == std::vector<std::vector<int>>{{0}, {1}, {2}});
  CHECK(ranks_of(plan_ranks(4, {300, 1000, 1000})) ==
        std::vector<std::vector<int>>{{0}, {1, 2}, {3}});
  CHECK(ranks_of(plan_ranks(5, {300, 1000, 1000})) ==
        std::vector<std::vector<int>>{{0}, {1, 2}, {3, 4}});
  CHECK(ranks_of(plan_ranks(8, {300, 1000, 1000})) ==
        std::vector<std::vector<int>>{{0}, {1, 2, 3, 4}, {5, 6, 7}});
  // Every rank is used exactly once, in order.
  for (int world = 1; world <= 12; ++world) {
    const RankPlan p = plan_ranks(world, {5, 1, 3, 2});
    std::vector<int> all;
    for (const Segment& s : p.segments)
      all.insert(all.end(), s.ranks.begin(), s.ranks.end());
    std::vector<int> expected(static_cast<std::size_t>(world));
    std::iota(expected.begin(), expected.end(), 0);
    CHECK(all == expected);
    CHECK(p.segments.front().first_stage == 0);
    CHECK(p.segments.back().last_stage == 3);
  }
}

TEST_CASE("a stage is never given more replicas than its cap") {
  // Without caps the costlier first stage gets the extra ranks; capped at 1 (the next stage's batch
  // holds one system), they go to the second stage instead.
  CHECK(ranks_of(plan_ranks(4, {10, 1})) == std::vector<std::vector<int>>{{0, 1, 2}, {3}});
  CHECK(ranks_of(plan_ranks(4, {10, 1}, {}, {1, 8})) ==
        std::vector<std::vector<int>>{{0}, {1, 2, 3}});
  CHECK(ranks_of(plan_ranks(5, {10, 1, 5}, {}, {2, 1, 8})) ==
        std::vector<std::vector<int>>{{0, 1}, {2}, {3, 4}});
  // An explicit list is the user's: caps do not apply to it.
  CHECK(ranks_of(plan_ranks(4, {10, 1}, {3, 1}, {1, 8})) ==
        std::vector<std::vector<int>>{{0, 1, 2}, {3}});
  CHECK_THROWS_WITH_AS(plan_ranks(4, {10, 1}, {}, {1, 2}),
                       doctest::Contains("take at most 3 ranks"), baton::Error);
  CHECK_THROWS_WITH_AS(plan_ranks(4, {10, 1}, {}, {1}), doctest::Contains("one per stage"),
                       baton::Error);
}

TEST_CASE("an explicit ranks-per-stage list is checked against the world") {
  CHECK(ranks_of(plan_ranks(4, {1, 1}, {1, 3})) == std::vector<std::vector<int>>{{0}, {1, 2, 3}});
  CHECK_THROWS_WITH_AS(plan_ranks(4, {1, 1}, {1, 2}),
                       doctest::Contains("adding up to the world size 4"), baton::Error);
  CHECK_THROWS_WITH_AS(plan_ranks(4, {1, 1}, {4}), doctest::Contains("one per stage"),
                       baton::Error);
  CHECK_THROWS_WITH_AS(plan_ranks(2, {1, 1}, {2, 0}), doctest::Contains("counts >= 1"),
                       baton::Error);
  CHECK_THROWS_WITH_AS(plan_ranks(2, {}), doctest::Contains("at least one stage"), baton::Error);
  CHECK_THROWS_WITH_AS(plan_ranks(2, {1, 0}), doctest::Contains("must be > 0"), baton::Error);
}

TEST_CASE("wire header: sizes follow the counts, anything else is rejected") {
  // 2 systems, 5 atoms, 3 stages.
  const std::int64_t h[6] = {packed_magic, packed_version, 2, 5, 3, packed_end_of_stream};
  const std::size_t ni = packed_int_count(2, 5, 3);
  const std::size_t nr = packed_real_count(2, 5);
  // header, id, count, 3 stage counters per system, species and movable per atom, pbc, failed
  CHECK(ni == 6 + 2 * 5 + 5 + 5 + 2 + 2);
  // energy and fmax, 7 per atom, a 3x3 cell, a virial and a conserved quantity each
  CHECK(nr == 4 + 35 + 18 + 12 + 2);
  const PackedHeader w = decode_packed_header(h, ni, nr);
  CHECK(w.systems == 2);
  CHECK(w.end_of_stream());
  CHECK_FALSE(w.abort());
  CHECK_THROWS_WITH_AS(decode_packed_header(h, ni - 1, nr), doctest::Contains("the message has 29"),
                       baton::Error);
  CHECK_THROWS_WITH_AS(decode_packed_header(h, 3, 0), doctest::Contains("fewer than the 6-value"),
                       baton::Error);
  std::int64_t bad[6] = {packed_magic, packed_version, 3, 2, 0, 0};  // more systems than atoms
  CHECK_THROWS_WITH_AS(decode_packed_header(bad, 100, 100), doctest::Contains("impossible counts"),
                       baton::Error);
  bad[0] = 7;
  CHECK_THROWS_WITH_AS(decode_packed_header(bad, 100, 100), doctest::Contains("bad magic"),
                       baton::Error);
  const std::int64_t flags[6] = {packed_magic, packed_version, 0, 0, 1, 8};
  CHECK_THROWS_WITH_AS(decode_packed_header(flags, 6, 0), doctest::Contains("unknown flags"),
                       baton::Error);
  const std::int64_t empty[6] = {packed_magic, packed_version, 0, 0, 1, 0};
  CHECK(decode_packed_header(empty, 6, 0).systems == 0);
  const std::int64_t species[6] = {packed_magic, packed_version, 0, 0, 1, packed_species};
  CHECK(decode_packed_header(species, 6, 0).new_species());
  CHECK_FALSE(decode_packed_header(empty, 6, 0).new_species());
}

TEST_CASE("a message's index: a system that failed before arrives Finished, the others Active") {
  baton::systems::HostSystem ok;
  ok.id = 1;
  ok.species = {"Ar", "Ar"};
  ok.positions = {0, 0, 0, 1, 0, 0};
  baton::systems::HostSystem failed = ok;
  failed.id = 2;
  failed.failed = true;
  failed.failure = "non-finite forces";
  baton::systems::SpeciesTable table;
  const HostPacked w = encode_host_systems({ok, failed}, table, 2);
  const PackedIndex index = index_of(w);
  REQUIRE(index.systems.size() == 2);
  CHECK(index.systems[0].status == static_cast<int>(baton::systems::SystemStatus::active));
  CHECK(index.systems[1].status == static_cast<int>(baton::systems::SystemStatus::finished));
}

// GCC 12 in C++20 with Kokkos 4.6.99+ constant-initialises a default-constructed View whose
// enclosing type has a defaulted constructor to all-zero bytes, which are not an empty View: its
// copy, assignment or destructor then dereferences a null allocation record. Baton's own types
// with View members have user-provided constructors so that `T t;` is always safe (no Kokkos
// allocation happens here, so this needs neither Kokkos::initialize nor MPI).
TEST_CASE("default-constructed PackedSystems and SystemsBatch copy, assign and destroy") {
  PackedSystems w;
  CHECK(w.ints.data() == nullptr);
  CHECK(w.reals.extent(0) == 0);
  PackedSystems copy = w;
  w = copy;
  w = PackedSystems();
  baton::systems::SystemsBatch b;
  CHECK(b.empty());
  CHECK(b.positions.data() == nullptr);
  baton::systems::SystemsBatch other = b;
  b = other;
  b = baton::systems::SystemsBatch();
  CHECK(b.num_systems() == 0);
}

TEST_CASE("an explicit rank -> stage map: any rank order, every rank once, rank 0 on stage 0") {
  const RankPlan plan = plan_ranks_explicit(5, 3, {{0, 4}, {3, 1}, {2}});
  REQUIRE(plan.segments.size() == 3);
  CHECK(plan.segments[1].ranks == std::vector<int>{1, 3});
  CHECK(plan.segment_of(4) == 0);
  CHECK(plan.segment_of(2) == 2);
  const auto message = [](int world, int stages, std::vector<std::vector<int>> map) {
    try {
      plan_ranks_explicit(world, stages, map);
    } catch (const baton::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(message(3, 3, {{1}, {0}, {2}}).find("rank 0 must run stage 0") != std::string::npos);
  CHECK(message(3, 3, {{0}, {1}}).find("ranks for 2 stages; the pipeline has 3") !=
        std::string::npos);
  CHECK(message(3, 3, {{0}, {1, 0}, {2}}).find("rank 0 is given stages 0 and 1") !=
        std::string::npos);
  CHECK(message(4, 3, {{0}, {1}, {2}}).find("rank 3 runs no stage") != std::string::npos);
  CHECK(message(3, 3, {{0}, {}, {1, 2}}).find("stage 1 has no rank") != std::string::npos);
  CHECK(message(3, 3, {{0}, {1}, {7}}).find("rank 7 (stage 2) is not in a world of 3") !=
        std::string::npos);
}
