#include <doctest/doctest.h>

#include <baton/collectives/collectives.hpp>
#include <baton/core/check_mpi.hpp>
#include <baton/roles/context.hpp>
#include <baton/timing/timers.hpp>

#include "mpi_doctest.hpp"

namespace {
int sum(const baton::Communicator& comm, int mine) {
  int total = 0;
  baton::check_mpi(MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, comm.raw()), "MPI_Allreduce");
  return total;
}

// Options that fit every world size: a coordinator and buffers from 3 ranks on.
baton::ContextOptions options_for(int world) {
  baton::ContextOptions o;
  o.coordinator = world >= 3;
  o.buffers = world >= 5 ? 2 : (world >= 3 ? 1 : 0);
  return o;
}
}  // namespace

TEST_CASE("the context's communicators hold exactly the ranks of each role") {
  const baton::Communicator& world = baton::test::world();
  baton::DistributedContext ctx(world, options_for(world.size()));
  const baton::RankLayout& layout = ctx.layout();
  const baton::Role role = ctx.role();
  CHECK(ctx.world().size() == world.size());
  CHECK(ctx.world().raw() != world.raw());  // Baton's own duplicate

  CHECK(static_cast<bool>(ctx.training()) == (role == baton::Role::agent));
  CHECK(static_cast<bool>(ctx.buffers()) == (role == baton::Role::buffer));
  CHECK(static_cast<bool>(ctx.agent_group()) == (role == baton::Role::agent));
  if (role == baton::Role::agent) {
    CHECK(ctx.training().size() == int(layout.agents().size()));
    CHECK(sum(ctx.training(), 1) == int(layout.agents().size()));
    CHECK(ctx.agent_group().size() ==
          int(layout.group_members(layout.agent_group(world.rank())).size()));
  }
  if (role == baton::Role::buffer)
    CHECK(ctx.buffers().size() == layout.buffer_count());

  // Service group: a manager and its agents, the manager last.
  if (role == baton::Role::coordinator || layout.buffer_count() == 0) {
    CHECK(ctx.service().is_null());
  } else {
    REQUIRE(ctx.service());
    const int manager =
        role == baton::Role::buffer ? world.rank() : layout.assigned_buffer(world.rank());
    CHECK(ctx.service().size() == int(layout.assigned_agents(manager).size()) + 1);
    if (role == baton::Role::buffer)
      CHECK(ctx.service().rank() == ctx.service().size() - 1);
    // Every member agrees on who the manager is.
    int managers = sum(ctx.service(), role == baton::Role::buffer ? 1 : 0);
    CHECK(managers == 1);
  }
  // Discovery group: managers and the coordinator, the coordinator last.
  const bool discovers = layout.has_coordinator() && role != baton::Role::agent;
  CHECK(static_cast<bool>(ctx.discovery()) == discovers);
  if (discovers) {
    CHECK(ctx.discovery().size() == layout.buffer_count() + 1);
    if (role == baton::Role::coordinator)
      CHECK(ctx.discovery().rank() == ctx.discovery().size() - 1);
  }
  // Roles partition the world.
  const int agents = sum(world, role == baton::Role::agent);
  const int buffers = sum(world, role == baton::Role::buffer);
  const int coordinators = sum(world, role == baton::Role::coordinator);
  CHECK(agents + buffers + coordinators == world.size());
  CHECK(coordinators == (layout.has_coordinator() ? 1 : 0));
}

TEST_CASE("a world of one rank is one agent without a remote buffer") {
  const baton::Communicator& world = baton::test::world();
  baton::Communicator self = world.split(world.rank(), 0);  // one-rank worlds, one per rank
  baton::DistributedContext ctx(self, baton::ContextOptions{});
  CHECK(ctx.role() == baton::Role::agent);
  CHECK(ctx.training().size() == 1);
  CHECK(ctx.service().is_null());
  CHECK(ctx.discovery().is_null());
  CHECK(ctx.layout().assigned_buffer(0) == -1);
}

TEST_CASE("impossible layouts fail on every rank with the numbers") {
  const baton::Communicator& world = baton::test::world();
  baton::ContextOptions o;
  o.buffers = world.size();
  o.coordinator = true;
  CHECK_THROWS_AS(baton::DistributedContext(world, o), baton::Error);
}

TEST_CASE("timers gather to the root even when ranks timed different steps and iteration counts") {
  const baton::Communicator& world = baton::test::world();
  baton::TimerRegistry timers;
  for (int i = 0; i <= world.rank(); ++i)
    timers.record("common", timers.origin() + i, 0.5 * (world.rank() + 1));
  if (world.rank() % 2 == 1) {
    const double outer = baton::TimerRegistry::now();
    auto t = timers.scope("odd only");
    const double inner = baton::TimerRegistry::now();
    while (baton::TimerRegistry::now() - inner < 0.002) {
    }
    const double elapsed = t.stop();
    const double end = baton::TimerRegistry::now();
    CHECK(elapsed >= 0.002);        // it timed the wait above...
    CHECK(elapsed <= end - outer);  // ...and nothing outside the scope
    CHECK(t.stop() == 0);           // stopping twice records once
  }
  const int root = world.size() - 1;
  const auto records = baton::gather_records(world, timers, root);
  if (world.rank() != root) {
    CHECK(records.empty());
    return;
  }
  REQUIRE(int(records.size()) == world.size());
  for (int r = 0; r < world.size(); ++r) {
    CAPTURE(r);
    CHECK(records[r].rank == r);
    REQUIRE(records[r].steps.size() == (r % 2 == 1 ? 2u : 1u));
    CHECK(records[r].steps[0].name == "common");
    CHECK(records[r].steps[0].durations.size() == std::size_t(r + 1));
    CHECK(records[r].steps[0].durations[0] == doctest::Approx(0.5 * (r + 1)));
    CHECK(records[r].steps[0].starts.back() == doctest::Approx(double(r)));
    if (r % 2 == 1)
      CHECK(records[r].steps[1].durations.size() == 1);
  }
  // The reports take what exists: 'odd only' is missing on even ranks, 'common' counts differ.
  const auto imbalance = baton::load_imbalance(records);
  if (world.size() > 1)
    CHECK_FALSE(imbalance.warnings.empty());
}
