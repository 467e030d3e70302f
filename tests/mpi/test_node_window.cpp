#include <doctest/doctest.h>

#include <baton/core/error.hpp>
#include <baton/shm/node_window.hpp>
#include <cstdint>
#include <cstring>
#include <utility>

#include "mpi_doctest.hpp"

TEST_CASE("node window: every rank sees every rank's segment after barrier()") {
  const baton::Communicator& world = baton::test::world();
  REQUIRE(baton::shares_one_node(world));  // one machine in these tests
  // Rank r contributes r int64 values (rank 0 none: an empty segment is allowed).
  baton::NodeWindow window(world, sizeof(std::int64_t) * static_cast<std::size_t>(world.rank()));
  REQUIRE(window);
  CHECK(window.size() == world.size());
  CHECK(window.rank() == world.rank());
  for (int i = 0; i < world.rank(); ++i) {
    const std::int64_t value = 1000 * world.rank() + i;
    std::memcpy(window.local() + i * sizeof value, &value, sizeof value);
  }
  window.barrier();
  int wrong = 0;
  for (int r = 0; r < world.size(); ++r) {
    CHECK(window.segment_size(r) >= sizeof(std::int64_t) * static_cast<std::size_t>(r));
    for (int i = 0; i < r; ++i) {
      std::int64_t value = 0;
      std::memcpy(&value, window.segment(r) + i * sizeof value, sizeof value);
      wrong += value != 1000 * r + i;
    }
  }
  CHECK(wrong == 0);
  window.barrier();  // nobody frees while another still reads
  baton::NodeWindow moved = std::move(window);
  CHECK_FALSE(window);
  CHECK(moved);
  moved.free();
  CHECK_FALSE(moved);
  moved.free();  // a freed window stays freed
}

TEST_CASE("node window: a null communicator is refused") {
  CHECK_THROWS_WITH_AS(baton::NodeWindow(baton::Communicator(), 8, "test"),
                       doctest::Contains("test: needs a communicator"), baton::Error);
}
