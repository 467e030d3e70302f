// The pipeline driver at 1-4 ranks: conservation, identical results whatever the rank count and
// communication mode, back-pressure, composition, validation and errors that stop every rank.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <baton/collectives/agreement.hpp>
#include <baton/collectives/collectives.hpp>
#include <baton/collectives/object_collectives.hpp>
#include <baton/core/check_mpi.hpp>
#include <baton/dynamics/clusters.hpp>
#include <baton/dynamics/fire.hpp>
#include <baton/dynamics/langevin.hpp>
#include <baton/dynamics/lattice.hpp>
#include <baton/dynamics/morse.hpp>
#include <baton/dynamics/verlet.hpp>
#include <baton/pipeline/driver.hpp>
#include <baton/pipeline/hooks.hpp>
#include <baton/pipeline/summary.hpp>
#include <baton/systems/cell.hpp>
#include <baton/systems/host_transfer.hpp>
#include <baton/systems/xyz.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "mpi_doctest.hpp"

namespace {

// Part of this job's file names: ctest may run the test at several rank counts at once, in one
// folder (they wrote one another's files on a 16-core GPU machine).
std::string np() {
  return "_np" + std::to_string(baton::test::world().size());
}

using baton::Communicator;
using baton::systems::BatchCapacity;
using baton::systems::HostSystem;
using namespace baton::pipeline;
namespace dyn = baton::dynamics;
namespace sys = baton::systems;

std::vector<HostSystem> input(int count) {
  dyn::ClusterSpec spec;
  spec.count = count;
  spec.seed = 7;
  spec.sizes = {13, 19, 26};
  return dyn::generate_clusters(spec);
}

// fire -> langevin -> nve with short budgets and small batches, so that systems queue up.
Pipeline three_stages(BatchCapacity capacity = {4, 80}) {
  dyn::FireOptions fire;
  fire.fmax = 1e-3;
  dyn::LangevinOptions langevin;
  langevin.steps = 60;
  langevin.temperature = 0.05;
  langevin.seed = 3;
  dyn::VerletOptions nve;
  nve.steps = 40;
  return make_stage<dyn::FireStage>(capacity, dyn::LennardJones{}, fire) |
         make_stage<dyn::LangevinStage>(capacity, dyn::LennardJones{}, langevin) |
         make_stage<dyn::VerletStage>(capacity, dyn::LennardJones{2.0, 1.0, 2.5, true}, nve);
}

std::vector<HostSystem> run(const Communicator& comm, Pipeline p, DriverOptions s,
                            const std::vector<HostSystem>& in) {
  Driver driver(comm, std::move(p), std::move(s));
  driver.setup(in);
  driver.run();
  return driver.gather_results(0);
}

// The reference a run on any number of ranks must match: the pipeline on rank 0 alone (empty on the
// other ranks).
std::vector<HostSystem> alone_on_rank0(Pipeline p, const std::vector<HostSystem>& in) {
  if (baton::test::world().rank() != 0)
    return {};
  return run(Communicator::borrow(MPI_COMM_SELF), std::move(p), DriverOptions{}, in);
}

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// Identical bit for bit: ids, coordinates, velocities, energies, per-stage steps.
void check_identical(const std::vector<HostSystem>& got, const std::vector<HostSystem>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(want[i].id);
    CHECK(got[i].id == want[i].id);
    CHECK(got[i].stage_steps == want[i].stage_steps);
    CHECK(same_bits(got[i].energy, want[i].energy));
    CHECK(same_bits(got[i].fmax, want[i].fmax));
    REQUIRE(got[i].positions.size() == want[i].positions.size());
    bool positions = true;
    bool velocities = true;
    for (std::size_t j = 0; j < got[i].positions.size(); ++j) {
      positions = positions && same_bits(got[i].positions[j], want[i].positions[j]);
      velocities = velocities && same_bits(got[i].velocities[j], want[i].velocities[j]);
    }
    CHECK(positions);
    CHECK(velocities);
  }
}

// The pipeline `make()` run on rank 0 alone (the reference) and on every rank, the input given on
// rank 0: checks that the two agree bit for bit and returns the run on every rank (rank 0's
// results; empty elsewhere).
template <class Make>
std::vector<HostSystem> same_on_every_rank_count(const Communicator& world, const Make& make,
                                                 const std::vector<HostSystem>& in) {
  const std::vector<HostSystem> reference = alone_on_rank0(make(), in);
  std::vector<HostSystem> out =
      run(world, make(), DriverOptions{}, world.rank() == 0 ? in : std::vector<HostSystem>{});
  if (world.rank() == 0)
    check_identical(out, reference);
  return out;
}

}  // namespace

TEST_CASE("every system leaves the last stage exactly once, identical at any rank count and mode") {
  const Communicator& world = baton::test::world();
  const std::vector<HostSystem> in = input(14);
  const std::vector<HostSystem> reference = alone_on_rank0(three_stages(), in);
  for (CommMode mode : {CommMode::sync, CommMode::async_recv, CommMode::fully_async}) {
    CAPTURE(to_string(mode));
    DriverOptions s;
    s.mode = mode;
    s.steps_per_call = 7;
    const std::vector<HostSystem> out =
        run(world, three_stages(), s, world.rank() == 0 ? in : std::vector<HostSystem>{});
    if (world.rank() == 0) {
      check_identical(out, reference);
      for (const HostSystem& sys : out) {
        CHECK(sys.stage_steps.size() == 3);
        CHECK(sys.stage_steps[1] == 60);
        CHECK(sys.stage_steps[2] == 40);
        CHECK(std::isfinite(sys.energy));
        CHECK(sys.energy < 0.0);
      }
    } else {
      CHECK(out.empty());
    }
  }
  if (world.rank() == 0) {
    // FIRE ran to its threshold in a number of steps that depends on the system.
    bool steps_differ = false;
    for (const HostSystem& sys : reference)
      steps_differ = steps_differ || sys.stage_steps[0] != reference.front().stage_steps[0];
    CHECK(steps_differ);
  }
}

TEST_CASE("fewer ranks than stages, uneven costs: every rank runs every stage, the same results") {
  // Costs 0.3, 1, 1 (StageSpec::cost): on 2 ranks the best split (fire,langevin | nve) takes 1.3
  // per system against 1.15 for the whole pipeline on both ranks, so both ranks run all three
  // stages, rank 0 feeding rank 1 and rank 1 sending its results to rank 0.
  const Communicator& world = baton::test::world();
  const std::vector<HostSystem> in = input(14);
  const std::vector<HostSystem> reference = alone_on_rank0(three_stages(), in);
  std::vector<StageSpec> specs = three_stages().stages();
  const double costs[3] = {0.3, 1, 1};
  Pipeline p;
  for (std::size_t s = 0; s < specs.size(); ++s) {
    specs[s].cost = costs[s];
    p = s == 0 ? Pipeline(specs[s]) : p | Pipeline(specs[s]);
  }
  for (CommMode mode : {CommMode::sync, CommMode::async_recv, CommMode::fully_async}) {
    CAPTURE(to_string(mode));
    DriverOptions s;
    s.mode = mode;
    s.steps_per_call = 7;
    Driver driver(world, p, s);
    driver.setup(world.rank() == 0 ? in : std::vector<HostSystem>{});
    if (world.size() == 2) {
      REQUIRE(driver.plan().segments.size() == 1);
      CHECK(driver.plan().segments[0].ranks == std::vector<int>{0, 1});
      CHECK(driver.local_stages() == std::make_pair(0, 2));
    }
    driver.run();
    const HandoffCopies c = driver.handoff_copies();
    if (world.size() == 2)  // no link between stages across ranks: only the input and the results
      CHECK(c.sent.handoffs == 0);
    const std::vector<HostSystem> out = driver.gather_results(0);
    if (world.rank() == 0)
      check_identical(out, reference);
  }
}

namespace {

// A user's pair potential (see docs/dynamics.md): Lennard-Jones plus a Gaussian bump that keeps
// atoms apart near r = 1.2, E = 4 (r^-12 - r^-6) + a exp(-(r - 1.2)^2 / w^2), no cutoff.
struct BumpyLj {
  double a = 0.3, w = 0.1;
  BumpyLj kernel() const {
    if (!(a >= 0 && w > 0))
      throw baton::Error("BumpyLj: need a >= 0 and w > 0");
    return *this;
  }
  KOKKOS_FUNCTION double cutoff_squared() const { return 1e300; }
  KOKKOS_FUNCTION void pair(int, int, double r2, double& energy, double& force_over_r) const {
    const double r = dyn::detail::math_sqrt(r2), u = (r - 1.2) / w;
    const double bump = a * dyn::detail::math_exp(-u * u), inv6 = 1 / (r2 * r2 * r2);
    energy = 4 * inv6 * (inv6 - 1) + bump;
    force_over_r = 24 * inv6 * (2 * inv6 - 1) / r2 + 2 * bump * u / (w * r);
  }
};

}  // namespace

TEST_CASE("stages over Morse and over a user's potential: identical at any rank count") {
  const Communicator& world = baton::test::world();
  const std::vector<HostSystem> in = input(9);
  dyn::Morse morse;
  morse.alpha = 6;
  morse.r0 = 1.12;
  morse.cutoff = 2.5;
  dyn::FireOptions fire;
  fire.fmax = 1e-4;
  dyn::VerletOptions nve;
  nve.steps = 50;
  nve.temperature = 0.05;
  const auto pipeline = [&] {
    return make_stage<dyn::FireStage>({4, 80}, morse, fire) |
           make_stage<dyn::VerletStage>({4, 80}, BumpyLj{}, nve);
  };
  const std::vector<HostSystem> out = same_on_every_rank_count(world, pipeline, in);
  if (world.rank() == 0) {
    for (const HostSystem& sys : out) {
      CHECK(sys.stage_steps[1] == 50);
      CHECK(std::isfinite(sys.energy));
    }
  }
}

TEST_CASE(
    "periodic crystals: cells travel with their systems, results are wrapped, any rank count") {
  const Communicator& world = baton::test::world();
  std::vector<HostSystem> in;
  for (int id = 0; id < 6; ++id) {
    in.push_back(dyn::fcc_crystal({3, 3, 3}, 1.68, "Ar", id, 0.1, 9));
    if (id % 2)
      dyn::tilt_cell(in.back(), 0.4, 0.2, -0.3);
    if (id % 3 == 2)
      in.back().pbc[2] = false;
  }
  dyn::LennardJones lj;
  lj.cutoff = 2.3;
  dyn::FireOptions fire;
  fire.fmax = 1e-3;
  dyn::VerletOptions nve;
  nve.steps = 40;
  nve.temperature = 0.5;  // the atoms travel: some leave the cell
  const auto pipeline = [&] {
    return make_stage<dyn::FireStage>({3, 400}, lj, fire) |
           make_stage<dyn::VerletStage>({3, 400}, lj, nve);
  };
  const std::vector<HostSystem> out = same_on_every_rank_count(world, pipeline, in);
  if (world.rank() == 0) {
    for (std::size_t k = 0; k < out.size(); ++k) {
      CAPTURE(k);
      CHECK(out[k].cell == in[k].cell);
      CHECK(out[k].pbc == in[k].pbc);
      // Wrapped: every periodic fractional coordinate in [0, 1) (the input has atoms just outside:
      // the sites on the cell's faces, jittered).
      const auto& h = in[k].cell;
      bool inside = true;
      for (std::size_t i = 0; i < out[k].size(); ++i) {
        const double z = out[k].positions[3 * i + 2] / h[8];
        const double y = (out[k].positions[3 * i + 1] - z * h[7]) / h[4];
        const double x = (out[k].positions[3 * i] - y * h[3] - z * h[6]) / h[0];
        for (double f : {x, y, in[k].pbc[2] ? z : 0.5})
          inside = inside && f >= -1e-12 && f < 1 + 1e-12;
      }
      CHECK(inside);
      // The virial came along: that of the final positions.
      sys::SystemsBatch one({1, static_cast<int>(out[k].size())}, 1);
      sys::SpeciesTable species;
      sys::append_systems(one, {out[k]}, species);
      dyn::compute_forces(lj, one, 0, 1);
      const auto w = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), one.virial);
      for (int c = 0; c < 6; ++c)
        CHECK(std::abs(out[k].virial[static_cast<std::size_t>(c)] - w(0, c)) <
              1e-9 * std::max(1.0, std::abs(w(0, c))));
    }
  }
}

TEST_CASE("a system whose numbers break comes out failed, the others as without it") {
  const Communicator& world = baton::test::world();
  std::vector<HostSystem> in = input(10);
  std::vector<HostSystem> with_broken = in;
  HostSystem broken = in[3];
  broken.id = 100;
  for (std::size_t d = 0; d < 3; ++d)
    broken.positions[3 + d] = broken.positions[d];  // atoms 0 and 1 on top of each other
  with_broken.push_back(broken);
  const std::vector<HostSystem> reference = alone_on_rank0(three_stages(), in);
  const std::vector<HostSystem> out =
      run(world, three_stages(), DriverOptions{},
          world.rank() == 0 ? with_broken : std::vector<HostSystem>{});
  if (world.rank() == 0) {
    REQUIRE(out.size() == 11);
    CHECK(out.back().id == 100);
    CHECK(out.back().failed);
    CHECK(out.back().stage_steps == std::vector<std::int64_t>{0, 0, 0});
    check_identical(std::vector<HostSystem>(out.begin(), out.end() - 1), reference);
    for (std::size_t k = 0; k + 1 < out.size(); ++k)
      CHECK_FALSE(out[k].failed);
  }
}

TEST_CASE("replicas, an overflow sink and synchronized steps change nothing in the results") {
  const Communicator& world = baton::test::world();
  const std::vector<HostSystem> in = input(11);
  const std::vector<HostSystem> reference = alone_on_rank0(three_stages(), in);
  DriverOptions s;
  s.synchronized = true;
  s.overflow = {3, 60};
  s.steps_per_call = 13;
  if (world.size() == 4)
    s.ranks_per_stage = {1, 1, 2};  // two ranks share the last stage
  std::ostringstream log;
  s.debug = true;
  s.log = &log;
  const std::vector<HostSystem> out = run(world, three_stages({3, 60}), s, in);
  if (world.rank() == 0)
    check_identical(out, reference);
  if (world.size() > 1) {
    // Debug mode logged this rank's hand-offs with ranks, tag and counts.
    const std::string text = log.str();
    CHECK(text.find("[baton::pipeline] step 1 rank " + std::to_string(world.rank())) !=
          std::string::npos);
    CHECK(text.find("(tag ") != std::string::npos);
    CHECK(text.find("end of stream") != std::string::npos);
  }
}

TEST_CASE("empty input and fewer systems than ranks end without deadlock") {
  const Communicator& world = baton::test::world();
  for (int count : {0, 1}) {
    const std::vector<HostSystem> out = run(world, three_stages(), DriverOptions{}, input(count));
    if (world.rank() == 0)
      CHECK(out.size() == static_cast<std::size_t>(count));
  }
}

TEST_CASE("composition renumbers the stages and the plan follows the world size") {
  const Communicator& world = baton::test::world();
  const Pipeline p = three_stages();
  const Pipeline twice = p | p;
  CHECK(twice.size() == 6);
  CHECK(twice.names() ==
        std::vector<std::string>{"fire", "langevin", "nve", "fire", "langevin", "nve"});
  Driver driver(world, twice, DriverOptions{});
  driver.setup(world.rank() == 0 ? input(5) : std::vector<HostSystem>{});
  const RankPlan& plan = driver.plan();
  CHECK(plan.segments.front().first_stage == 0);
  CHECK(plan.segments.back().last_stage == 5);
  // One segment per rank (the six stages split over them), or the whole pipeline on every rank
  // where no split is as balanced (the measured costs decide: plan_ranks).
  if (world.size() == 1 || plan.segments.size() == 1)
    CHECK(plan.segments.front().ranks.size() == static_cast<std::size_t>(world.size()));
  else
    CHECK(plan.segments.size() == static_cast<std::size_t>(std::min(world.size(), 6)));
  for (int r = 0; r < world.size(); ++r)
    CHECK(plan.segment_of(r) >= 0);
  driver.run();
  const int root = world.size() - 1;  // the input ids live on rank 0: the check still runs
  const std::vector<HostSystem> out = driver.gather_results(root);
  if (world.rank() == root) {
    REQUIRE(out.size() == 5);
    CHECK(out[0].stage_steps.size() == 6);
    CHECK(out[0].stage_steps[4] == 60);
  }
}

TEST_CASE("impossible settings give clear errors on every rank") {
  const Communicator& world = baton::test::world();
  const std::vector<HostSystem> in = input(4);  // up to 26 atoms
  auto message_of = [&](Pipeline p, DriverOptions s) {
    try {
      Driver driver(world, std::move(p), std::move(s));
      driver.setup(in);
    } catch (const baton::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(message_of(three_stages({4, 20}), DriverOptions{})
            .find("largest input system has 26 atoms") != std::string::npos);
  DriverOptions bad_ranks;
  bad_ranks.ranks_per_stage = {1, 1};
  CHECK(message_of(three_stages(), bad_ranks).find("ranks per stage '1,1'") != std::string::npos);
  DriverOptions bad_steps;
  bad_steps.steps_per_call = 0;
  CHECK(message_of(three_stages(), bad_steps).find("steps per call") != std::string::npos);
  DriverOptions small_sink;
  small_sink.overflow = {1, 10};
  CHECK(message_of(three_stages(), small_sink).find("overflow sink") != std::string::npos);
  std::vector<HostSystem> broken = in;
  broken[2].positions.pop_back();
  try {
    Driver driver(world, three_stages(), DriverOptions{});
    driver.setup(broken);
    FAIL("setup accepted a system with a missing coordinate");
  } catch (const baton::Error& e) {
    CHECK(std::string(e.what()).find("input system 2 has") != std::string::npos);
  }
  CHECK_THROWS_WITH_AS(parse_comm_mode("eager"),
                       doctest::Contains("sync, async_recv or fully_async"), baton::Error);
}

TEST_CASE("a full next stage with error_when_full stops every rank with an error, no hang") {
  const Communicator& world = baton::test::world();
  const std::vector<HostSystem> in = input(12);
  dyn::FireOptions fire;
  fire.fmax = 1e-2;
  dyn::VerletOptions nve;
  nve.steps = 500;
  // Many systems relax at once upstream; downstream takes one 26-atom system at a time.
  const Pipeline p = make_stage<dyn::FireStage>({12, 400}, dyn::LennardJones{}, fire) |
                     make_stage<dyn::VerletStage>({1, 26}, dyn::LennardJones{}, nve);
  DriverOptions s;
  s.error_when_full = true;
  s.steps_per_call = 50;
  if (world.size() > 1)
    s.ranks_per_stage = {1, world.size() - 1};  // rank 0 relaxes, the others run NVE
  Driver driver(world, p, s);
  driver.setup(in);
  if (world.size() == 1) {
    driver.run();  // one rank: both stages local, no hand-off between ranks to back up
    CHECK(driver.gather_results(0).size() == 12u);
  } else {
    // Rank 0 has more relaxed systems than the NVE ranks can take: it fails, and tells them.
    std::string message;
    try {
      driver.run();
    } catch (const baton::Error& e) {
      message = e.what();
    }
    if (world.rank() == 0)
      CHECK(message.find("finished systems have nowhere to go") != std::string::npos);
    else
      CHECK(message.find("rank 0 (upstream of rank " + std::to_string(world.rank())) !=
            std::string::npos);
  }
}

namespace {

// A stage that fails when the `after`-th system arrives (system 5 by default).
class Exploding : public baton::dynamics::Stage {
 public:
  explicit Exploding(int after = -1) : after_(after) {}
  std::string name() const override { return "exploding"; }
  void enter(sys::SystemsBatch& batch, int first, int n) override {
    auto ids = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.id);
    for (int s = first; s < first + n; ++s)
      if ((after_ < 0 && ids(s) == 5) || ++seen_ == after_)
        throw baton::Error("system " + std::to_string(ids(s)) + " exploded");
  }
  void advance(sys::SystemsBatch& batch, int) override {
    auto status = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.status);
    for (int s = 0; s < batch.num_systems(); ++s)
      status(s) = static_cast<int>(sys::SystemStatus::finished);
    Kokkos::deep_copy(batch.status, status);
  }
  double cost_estimate() const override { return 1.0; }

 private:
  int after_;
  int seen_ = 0;
};

// Runs fire | exploding; returns 1 if this rank's error says it met the exploding system, 0 if it
// says another rank stopped; fails the test if run() did not throw.
int run_exploding(const Communicator& world, DriverOptions s, int after, std::vector<int> ranks) {
  dyn::FireOptions fire;
  fire.fmax = 1e-3;
  const Pipeline p = make_stage<dyn::FireStage>({4, 120}, dyn::LennardJones{}, fire) |
                     make_stage<Exploding>({10, 300}, after);
  if (world.size() > 1)
    s.ranks_per_stage = std::move(ranks);
  s.steps_per_call = 5;
  Driver driver(world, p, s);
  driver.setup(world.rank() == 0 ? input(10) : std::vector<HostSystem>{});
  std::string message;
  try {
    driver.run();
  } catch (const baton::Error& e) {
    message = e.what();
  }
  const bool exploded = message.find("exploded") != std::string::npos;
  CHECK((exploded || message.find("stopped with an error") != std::string::npos));
  CHECK_THROWS_WITH_AS(driver.step(), doctest::Contains("stopped with an error before"),
                       baton::Error);
  int count = exploded ? 1 : 0;
  int total = 0;
  baton::check_mpi(MPI_Allreduce(&count, &total, 1, MPI_INT, MPI_SUM, world.raw()), "MPI_Allreduce",
                   world.raw());
  return total;
}

}  // namespace

TEST_CASE("a stage that throws downstream stops every rank, in every mode, none hangs") {
  const Communicator& world = baton::test::world();
  const int n = world.size();
  for (bool synchronized : {false, true})
    for (CommMode mode : {CommMode::sync, CommMode::async_recv, CommMode::fully_async}) {
      CAPTURE(to_string(mode));
      CAPTURE(synchronized);
      DriverOptions s;
      s.mode = mode;
      s.synchronized = synchronized;
      // System 5 explodes on one of several downstream ranks: the error goes up, then down.
      CHECK(run_exploding(world, s, -1, {1, n - 1}) == 1);
      // The last system explodes on the only downstream rank, after the upstream ranks ended
      // their streams: they hear of it at the end of run().
      CHECK(run_exploding(world, s, 10, {n - 1, 1}) == 1);
    }
}

TEST_CASE("input streamed from a file larger than the batches, results streamed to a file") {
  const Communicator& world = baton::test::world();
  // 40 systems through batches of 4: rank 0 never holds more than a system read ahead.
  const std::vector<HostSystem> in = input(40);
  const std::string path = "baton_test_pipeline" + np() + "_stream.xyz";
  const std::string out = "baton_test_pipeline" + np() + "_stream.out.xyz";
  if (world.rank() == 0) {
    sys::write_xyz_file(path, in);
    std::remove(out.c_str());
  }
  baton::barrier(world);
  for (CommMode mode : {CommMode::sync, CommMode::async_recv, CommMode::fully_async}) {
    CAPTURE(to_string(mode));
    DriverOptions s;
    s.mode = mode;
    {
      Driver driver(world, three_stages(), s);
      XyzFileSource source(path);
      std::unique_ptr<XyzFileSink> sink;
      if (world.rank() == 0)
        sink = std::make_unique<XyzFileSink>(out, three_stages().names());
      driver.write_results_to(sink.get());
      driver.setup(source);
      driver.run();
      if (world.rank() == 0) {
        CHECK(sink->written() == 40);
        CHECK(driver.finished_count() == 40);
      }
    }
    if (world.rank() == 0) {
      // Read back id by id: the same systems, bit for bit, as a run held in memory.
      std::vector<HostSystem> back = sys::read_xyz_file(out);
      std::sort(back.begin(), back.end(),
                [](const HostSystem& a, const HostSystem& b) { return a.id < b.id; });
      const std::vector<HostSystem> reference =
          run(Communicator::borrow(MPI_COMM_SELF), three_stages(), DriverOptions{}, in);
      check_identical(back, reference);
      std::remove(out.c_str());
    }
    baton::barrier(world);
  }
  if (world.rank() == 0)
    std::remove(path.c_str());
}

TEST_CASE("bad input met mid-stream stops every rank with the file and line") {
  const Communicator& world = baton::test::world();
  const std::string path = "baton_test_pipeline" + np() + "_bad_stream.xyz";
  if (world.rank() == 0) {
    std::vector<HostSystem> in = input(12);
    sys::write_xyz_file(path, in);
    std::ofstream(path, std::ios::app) << "2\nProperties=species:S:1:pos:R:3\nAr 0 0 0\nAr 1 x 0\n";
  }
  baton::barrier(world);
  std::string message;
  try {
    Driver driver(world, three_stages(), DriverOptions{});
    XyzFileSource source(path);
    driver.setup(source);
    driver.run();
  } catch (const baton::Error& e) {
    message = e.what();
  }
  // The ranks that met it name the file and line; the others say that another rank stopped.
  CHECK((message.find(path + ":") != std::string::npos ||
         message.find("stopped with an error") != std::string::npos));
  int named = message.find(path + ":") != std::string::npos ? 1 : 0;
  int any = 0;
  baton::check_mpi(MPI_Allreduce(&named, &any, 1, MPI_INT, MPI_MAX, world.raw()), "MPI_Allreduce",
                   world.raw());
  CHECK(any == 1);
  if (world.rank() == 0)
    std::remove(path.c_str());
}

TEST_CASE("a failure while one rank sets up (an allocation) stops every rank, none waits") {
  const Communicator& world = baton::test::world();
  const int last = world.size() - 1;
  StageSpec failing =
      make_stage<dyn::VerletStage>({4, 80}, dyn::LennardJones{}, dyn::VerletOptions{});
  int calls = 0;
  const int rank = world.rank();
  failing.make = [rank, last, calls]() mutable -> std::unique_ptr<dyn::Stage> {
    // Rank 0 also makes stages to ask their cost estimates: on one rank, fail the second call.
    if (rank == last && (rank != 0 || ++calls > 1))
      throw std::bad_alloc();
    return std::make_unique<dyn::VerletStage<dyn::LennardJones>>(dyn::LennardJones{},
                                                                 dyn::VerletOptions{});
  };
  const Pipeline p = make_stage<dyn::FireStage>({4, 80}, dyn::LennardJones{}, dyn::FireOptions{}) |
                     Pipeline(failing);
  Driver driver(world, p, DriverOptions{});
  try {
    driver.setup(world.rank() == 0 ? input(4) : std::vector<HostSystem>{});
    FAIL("setup went on after a rank failed");
  } catch (const baton::CollectiveError& e) {
    CHECK(std::string(e.what()).find("bad_alloc") != std::string::npos);
  }
}

// Counts what it sees: systems that finished its stage, and on_step calls with running systems.
class CountingHook : public Hook {
 public:
  void on_finished(const HookContext& where, const std::vector<HostSystem>& systems) override {
    for (const HostSystem& s : systems) {
      finished.push_back(s.id);
      // The stage's step count is recorded before hooks see a system.
      CHECK(s.stage_steps.at(static_cast<std::size_t>(where.stage)) > 0);
      CHECK(s.species.front() == "Ar");
    }
  }
  long every() const override { return 3; }
  void on_step(const HookContext& where, const std::vector<HostSystem>& running) override {
    CHECK(where.step % 3 == 0);
    CHECK(!running.empty());
    ++steps;
  }
  std::vector<std::int64_t> finished;
  long steps = 0;
};

TEST_CASE("hooks see every system that finishes each stage, and running systems every N steps") {
  const Communicator& world = baton::test::world();
  auto per_stage = std::make_shared<CountingHook>();
  auto everywhere = std::make_shared<CountingHook>();
  Pipeline p = three_stages();
  StageSpec last = p.stages().back();
  last.hooks.push_back(per_stage);
  Pipeline with_hook = make_stage<dyn::FireStage>({4, 80}, dyn::LennardJones{},
                                                  [] {
                                                    dyn::FireOptions f;
                                                    f.fmax = 1e-3;
                                                    return f;
                                                  }()) |
                       Pipeline(last);
  DriverOptions s;
  s.hooks.push_back(everywhere);
  const std::string prefix = "baton_test_pipeline" + np() + "_snap";
  auto snapshots = std::make_shared<XyzSnapshots>(prefix, 4);
  s.hooks.push_back(snapshots);
  std::ostringstream log;
  s.hooks.push_back(std::make_shared<LogHook>(log));
  const std::vector<HostSystem> out =
      run(world, with_hook, s, world.rank() == 0 ? input(9) : std::vector<HostSystem>{});
  // Over all ranks: the per-stage hook saw each system once, the pipeline hook once per stage.
  long mine[3] = {static_cast<long>(per_stage->finished.size()),
                  static_cast<long>(everywhere->finished.size()), snapshots->frames()};
  long all[3] = {0, 0, 0};
  baton::check_mpi(MPI_Allreduce(mine, all, 3, MPI_LONG, MPI_SUM, world.raw()), "MPI_Allreduce",
                   world.raw());
  CHECK(all[0] == 9);
  CHECK(all[1] == 18);
  CHECK(all[2] > 0);
  const std::string lines = log.str();
  CHECK(std::count(lines.begin(), lines.end(), '\n') ==
        static_cast<long>(everywhere->finished.size()));
  // Snapshots are readable extended XYZ, each frame marked with its step.
  for (const std::string& stage : {std::string("fire"), std::string("nve")}) {
    const std::string path = prefix + "." + stage + ".rank" + std::to_string(world.rank()) + ".xyz";
    std::ifstream probe(path);
    if (!probe)
      continue;
    probe.close();
    const std::vector<HostSystem> frames = [&] {
      std::ifstream in(path);
      std::vector<HostSystem> f;
      baton::systems::XyzReader reader(in, path);  // ids repeat across snapshots
      while (auto frame = reader.next())
        f.push_back(*frame);
      return f;
    }();
    CHECK(!frames.empty());
    std::remove(path.c_str());
  }
  if (world.rank() == 0)
    CHECK(out.size() == 9);
}

// Records the atoms of the systems that finished on this rank.
class AtomsHook : public Hook {
 public:
  void on_finished(const HookContext&, const std::vector<HostSystem>& systems) override {
    for (const HostSystem& s : systems)
      atoms += static_cast<long>(s.size());
  }
  long atoms = 0;
};

TEST_CASE("one segment on several ranks: rank 0 deals the input by the work each rank has left") {
  const Communicator& world = baton::test::world();
  // 16 clusters of 55 atoms, then 16 of 13: rank 0 filling its own batch first would keep every
  // large one. Each rank's batch holds 16, so the first step deals all 32 (no rank has finished any
  // work yet): by load, the large ones go round the ranks, then the small ones.
  std::vector<HostSystem> in;
  for (int k = 0; k < 32; ++k)
    in.push_back(dyn::perturbed_cluster(k < 16 ? 55 : 13, k, 5, 0.05, 1.122462048309373));
  dyn::VerletOptions nve;
  nve.steps = 50;
  const auto make = [&] {
    return make_stage<dyn::VerletStage>({16, 16 * 55}, dyn::LennardJones{}, nve);
  };
  auto hook = std::make_shared<AtomsHook>();
  DriverOptions s;
  s.hooks.push_back(hook);
  Driver driver(world, make(), s);
  driver.setup(world.rank() == 0 ? in : std::vector<HostSystem>{});
  REQUIRE(driver.plan().segments.size() == 1);
  driver.run();
  const std::vector<HostSystem> out = driver.gather_results(0);
  const std::vector<long> atoms = baton::all_gather_object(world, hook->atoms);
  long total = 0;
  for (long a : atoms)
    total += a;
  CHECK(total == 16 * 55 + 16 * 13);
  const double even = static_cast<double>(total) / world.size();
  for (int r = 0; r < world.size(); ++r) {
    CAPTURE(r);
    // Balanced to within a large system or two; filling rank 0 first gave it 880 of 1088 atoms.
    CHECK(std::abs(static_cast<double>(atoms[static_cast<std::size_t>(r)]) - even) <= 2 * 55);
  }
  // Where a system ran changes nothing in its result.
  const std::vector<HostSystem> reference = alone_on_rank0(make(), in);
  if (world.rank() == 0)
    check_identical(out, reference);

  // Batches of 2 and 48 systems: after the first step, a rank gets more only when its load, as it
  // reports it with its credits, is the least. In every mode each rank gets a fair part (a rank
  // whose reports went unread got its first 2 systems only, in sync mode).
  std::vector<HostSystem> small;
  for (int k = 0; k < 48; ++k)
    small.push_back(dyn::perturbed_cluster(13, k, 9, 0.05, 1.122462048309373));
  const auto make_small = [&] {
    return make_stage<dyn::VerletStage>({2, 26}, dyn::LennardJones{}, nve);
  };
  const std::vector<HostSystem> small_reference = alone_on_rank0(make_small(), small);
  for (CommMode mode : {CommMode::sync, CommMode::async_recv, CommMode::fully_async}) {
    CAPTURE(static_cast<int>(mode));
    auto counted = std::make_shared<AtomsHook>();
    DriverOptions o;
    o.mode = mode;
    o.hooks.push_back(counted);
    const std::vector<HostSystem> got =
        run(world, make_small(), o, world.rank() == 0 ? small : std::vector<HostSystem>{});
    const std::vector<long> each = baton::all_gather_object(world, counted->atoms);
    for (int r = 0; r < world.size(); ++r) {
      CAPTURE(r);
      CHECK(static_cast<double>(each[static_cast<std::size_t>(r)]) >= 0.4 * 48 * 13 / world.size());
    }
    if (world.rank() == 0)
      check_identical(got, small_reference);
  }
}

TEST_CASE("a mode per stage and an explicit rank -> stage map change nothing in the results") {
  const Communicator& world = baton::test::world();
  const int n = world.size();
  const std::vector<HostSystem> in = input(12);
  const std::vector<HostSystem> reference = alone_on_rank0(three_stages(), in);
  // The links into each stage complete in their own way.
  Pipeline mixed;
  const CommMode modes[3] = {CommMode::fully_async, CommMode::sync, CommMode::async_recv};
  for (std::size_t s = 0; s < 3; ++s) {
    StageSpec spec = three_stages().stages()[s];
    spec.mode = modes[s];
    mixed = mixed | spec;
  }
  DriverOptions settings;
  if (n >= 3) {  // stage 1 on the highest ranks, stage 2 on rank 1
    std::vector<int> middle;
    for (int r = n - 1; r >= 2; --r)
      middle.push_back(r);
    settings.stage_ranks = {{0}, middle, {1}};
  }
  Driver driver(world, mixed, settings);
  driver.setup(world.rank() == 0 ? in : std::vector<HostSystem>{});
  CHECK(driver.global_rank() == world.rank());
  CHECK(driver.node_rank() >= 0);
  if (n >= 3) {
    const int expected = world.rank() == 0 ? 0 : world.rank() == 1 ? 2 : 1;
    CHECK(driver.local_stages() == std::pair<int, int>{expected, expected});
  }
  driver.run();
  const std::vector<HostSystem> out = driver.gather_results(0);
  if (world.rank() == 0)
    check_identical(out, reference);
}

// NVE whose every call takes ten times as long as plain NVE's (it waits nine times the call's own
// time, at least a millisecond): the same step budget, ten times the time in any build (a Debug or
// sanitizer build slows the kernel, not the wait, so a fixed wait would not do).
class CostlyNve : public dyn::VerletStage<dyn::LennardJones> {
 public:
  CostlyNve() : dyn::VerletStage<dyn::LennardJones>(dyn::LennardJones{}, params()) {}
  static dyn::VerletOptions params() {
    dyn::VerletOptions p;
    p.steps = 40;
    return p;
  }
  void advance(sys::SystemsBatch& batch, int max_steps) override {
    const auto start = std::chrono::steady_clock::now();
    dyn::VerletStage<dyn::LennardJones>::advance(batch, max_steps);
    // On a GPU advance() may return before its kernels finish: without the fence `took` was the
    // launches' time, the sleep the 1 ms floor, and on an H200 (2026-11-28) calibration saw the two
    // stages cost about the same and split 4 ranks 2 and 2.
    Kokkos::fence();
    const auto took = std::chrono::steady_clock::now() - start;
    std::this_thread::sleep_for(
        std::max<std::chrono::steady_clock::duration>(9 * took, std::chrono::milliseconds(1)));
  }
};

TEST_CASE("the planner weighs stages by their measured time: replicas go where the time goes") {
  const Communicator& world = baton::test::world();
  const Pipeline p =
      make_stage<dyn::VerletStage>({4, 80}, dyn::LennardJones{}, CostlyNve::params()) |
      make_stage<CostlyNve>({4, 80});
  for (bool calibrate : {false, true}) {
    CAPTURE(calibrate);
    DriverOptions s;
    s.calibrate = calibrate;
    Driver driver(world, p, s);
    driver.setup(world.rank() == 0 ? input(6) : std::vector<HostSystem>{});
    if (world.size() >= 3) {
      const std::size_t first = driver.plan().segments[0].ranks.size();
      const std::size_t second = driver.plan().segments[1].ranks.size();
      // Equal step budgets: by steps alone the tie goes to the earlier stage; measured, the costly
      // one gets the extra ranks.
      CHECK((calibrate ? second > first : first >= second));
    }
    driver.run();
    const std::vector<HostSystem> out = driver.gather_results(0);
    if (world.rank() == 0)
      CHECK(out.size() == 6);
  }
}

// A fast stage feeding a slow one that holds a single system: finished systems back up.
Pipeline backing_up_stages() {
  dyn::VerletOptions fast;
  fast.steps = 10;
  dyn::VerletOptions slow;
  slow.steps = 200;
  return make_stage<dyn::VerletStage>({8, 208}, dyn::LennardJones{}, fast) |
         make_stage<dyn::VerletStage>({1, 26}, dyn::LennardJones{}, slow);
}

TEST_CASE(
    "the overflow chain (device batch, host buffer, spill file) loses nothing, changes nothing") {
  const Communicator& world = baton::test::world();
  const std::vector<HostSystem> in = input(16);
  const std::vector<HostSystem> reference = alone_on_rank0(backing_up_stages(), in);
  DriverOptions s;
  s.overflow = {1, 26};
  s.host_overflow = {2, 52};
  s.spill_directory = ".";
  Driver driver(world, backing_up_stages(), s);
  driver.setup(world.rank() == 0 ? in : std::vector<HostSystem>{});
  driver.run();
  long spilled = driver.spilled_count();
  long total = 0;
  baton::check_mpi(MPI_Allreduce(&spilled, &total, 1, MPI_LONG, MPI_SUM, world.raw()),
                   "MPI_Allreduce", world.raw());
  if (world.size() > 1)
    CHECK(total > 0);  // the spill file was used
  const std::vector<HostSystem> out = driver.gather_results(0);
  if (world.rank() == 0)
    check_identical(out, reference);
  // Without a spill file the chain fills up; with error_when_full that is an error everywhere.
  if (world.size() > 1) {
    DriverOptions full = s;
    full.spill_directory.clear();
    full.error_when_full = true;
    full.ranks_per_stage = {1, world.size() - 1};
    Driver d(world, backing_up_stages(), full);
    d.setup(world.rank() == 0 ? in : std::vector<HostSystem>{});
    std::string message;
    try {
      d.run();
    } catch (const baton::Error& e) {
      message = e.what();
    }
    CHECK((message.find("overflow chain (device batch") != std::string::npos ||
           message.find("stopped with an error") != std::string::npos));
  }
}

TEST_CASE("a stage's replicas never outnumber the systems the next stage's batch holds") {
  // The first stage costs more, so extra ranks would replicate it; but the second stage's batch
  // holds one system, which two upstream ranks cannot share. The plan gives them to the second.
  dyn::VerletOptions few;
  few.steps = 10;
  StageSpec first = make_stage<dyn::VerletStage>({8, 208}, dyn::LennardJones{}, few);
  StageSpec second = make_stage<dyn::VerletStage>({1, 26}, dyn::LennardJones{}, few);
  first.cost = 10.0;
  second.cost = 1.0;
  Driver driver(baton::test::world(), first | second, DriverOptions{});
  const std::vector<HostSystem> in = input(6);
  driver.setup(baton::test::world().rank() == 0 ? in : std::vector<HostSystem>{});
  CHECK(driver.plan().segments.front().ranks == std::vector<int>{0});
  driver.run();
  const std::vector<HostSystem> out = driver.gather_results(0);
  if (baton::test::world().rank() == 0)
    CHECK(out.size() == in.size());
}

TEST_CASE("a spill file never goes over a file that is there already") {
  const Communicator& world = baton::test::world();
  if (world.size() < 2)
    return;  // one rank runs both stages: nothing backs up
  // Where this rank's spill file would go (driver_setup.cpp names it by process and rank).
  const std::string mine = "./baton-spill." + std::to_string(::getpid()) + ".rank" +
                           std::to_string(world.rank()) + ".bin";
  std::ofstream(mine) << "not the run's";
  DriverOptions s;
  s.overflow = {1, 26};
  s.spill_directory = ".";
  std::string message;
  try {
    Driver driver(world, backing_up_stages(), s);
    driver.setup(world.rank() == 0 ? input(16) : std::vector<HostSystem>{});
    driver.run();
  } catch (const baton::Error& e) {
    message = e.what();
  }
  int named = message.find("exists already") != std::string::npos ? 1 : 0, any = 0;
  baton::check_mpi(MPI_Allreduce(&named, &any, 1, MPI_INT, MPI_MAX, world.raw()), "MPI_Allreduce",
                   world.raw());
  INFO("this rank's error: " << message);
  CHECK(!message.empty());
  CHECK(any == 1);
  std::ifstream in(mine);
  std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(kept == "not the run's");
  std::remove(mine.c_str());
}

TEST_CASE("one device-to-host read of bookkeeping per step: the snapshot, at any rank count") {
  const Communicator& world = baton::test::world();
  // Small clusters (no neighbour lists): every step reads its bookkeeping back exactly once, the
  // step's snapshot (statuses, steps, the list overflow flag of every stage batch here, the index
  // of every hand-off received). The only other reads copy finished systems out of the last stage
  // for the results: two copies (the message's integers, then its doubles) in a step where some
  // finish there, none elsewhere (no hooks, no host overflow buffer here).
  DriverOptions s;
  s.steps_per_call = 7;
  Driver driver(world, three_stages(), s);
  driver.setup(world.rank() == 0 ? input(14) : std::vector<HostSystem>{});
  driver.run();
  const sys::HostSyncs syncs = driver.host_syncs();
  CAPTURE(driver.steps_taken());
  CAPTURE(syncs.bookkeeping);
  CAPTURE(syncs.payload);
  CHECK(driver.steps_taken() > 0);
  CHECK(syncs.bookkeeping == driver.steps_taken());
  const bool last_stage_here = driver.local_stages().second == 2;
  if (last_stage_here) {
    const long finished = static_cast<long>(driver.counters().back().systems);
    CHECK(finished > 0);
    CHECK(syncs.payload % 2 == 0);
    CHECK(syncs.payload >= 2);
    CHECK(syncs.payload <= 2 * finished);
  } else {
    CHECK(syncs.payload == 0);
  }
  CHECK(driver.host_syncs_per_step() <= 3.0);  // 1 + 2 in a step that copies results out
  const RunSummary summary = summarize(driver, 0);
  if (world.rank() == 0) {
    REQUIRE(summary.host_syncs_per_step_by_rank.size() == static_cast<std::size_t>(world.size()));
    for (double b : summary.bookkeeping_syncs_per_step_by_rank)
      CHECK(b == 1.0);
    CHECK(summary.host_syncs_per_step >= 1.0);
    CHECK(summary.host_syncs_per_step <= 3.0);
    CHECK(format_summary(summary).find("host_syncs_per_step ") != std::string::npos);
    // The balanced bound: the segments' busy rank-seconds spread over the world; never below the
    // slowest segment's bound, equal to it on one rank.
    double rank_seconds = 0;
    for (const SegmentSummary& g : summary.segments)
      rank_seconds += g.busy * g.ranks;
    CHECK(summary.balanced_bound == doctest::Approx(summary.systems * world.size() / rank_seconds));
    CHECK(summary.balanced_bound >= summary.bound * (1 - 1e-12));
    if (world.size() == 1)
      CHECK(summary.balanced_bound == doctest::Approx(summary.bound));
    CHECK(format_summary(summary).find("spread evenly over the ranks would allow") !=
          std::string::npos);
  }
  CHECK(driver.gather_results(0).size() == (world.rank() == 0 ? 14u : 0u));
}

TEST_CASE("systems with neighbour lists: still one read per step, the same results") {
  const Communicator& world = baton::test::world();
  // 108-atom crystals use neighbour lists, which start empty and grow. Neither a stage's calls nor
  // enter() read a list overflow back in the driver's batches: the snapshot carries it, the lists
  // grow at the stage's next call, and systems whose entry forces came from a list that did not fit
  // get them again there before their first step.
  std::vector<HostSystem> in;
  for (int id = 0; id < 4; ++id)
    in.push_back(dyn::fcc_crystal({3, 3, 3}, 1.68, "Ar", id, 0.1, 9));
  dyn::LennardJones lj;
  lj.cutoff = 2.3;
  dyn::FireOptions fire;
  fire.fmax = 1e-3;
  dyn::VerletOptions nve;
  nve.steps = 30;
  nve.temperature = 0.5;
  const auto pipeline = [&] {
    return make_stage<dyn::FireStage>({3, 400}, lj, fire) |
           make_stage<dyn::VerletStage>({3, 400}, lj, nve);
  };
  DriverOptions s;
  s.steps_per_call = 9;
  Driver driver(world, pipeline(), s);
  driver.setup(world.rank() == 0 ? in : std::vector<HostSystem>{});
  driver.run();
  CAPTURE(driver.steps_taken());
  CAPTURE(driver.host_syncs().bookkeeping);
  CHECK(driver.host_syncs().bookkeeping == driver.steps_taken());
  // The results do not depend on when the lists grew: bit for bit those of each system alone
  // through the stages in a batch whose stages read the overflow back at once (not the driver's).
  std::vector<HostSystem> reference;
  if (world.rank() == 0) {
    for (const HostSystem& start : in) {
      HostSystem sys = start;
      sys.stage_steps.assign(2, 0);
      for (int stage = 0; stage < 2; ++stage) {
        const std::unique_ptr<dyn::Stage> st =
            pipeline().stages()[static_cast<std::size_t>(stage)].make();
        sys::SystemsBatch batch({1, 108}, 2);
        sys::SpeciesTable species;
        sys::append_systems(batch, {sys}, species);
        st->enter(batch, 0, 1);
        while (batch.status_on_host()[0] == static_cast<int>(sys::SystemStatus::active))
          st->advance(batch, 10);
        const std::vector<std::int64_t> steps = sys.stage_steps;
        sys = sys::copy_systems_to_host(batch, {0}, species)[0];
        sys.stage_steps = steps;
        sys.stage_steps[static_cast<std::size_t>(stage)] =
            Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), batch.steps)(0);
      }
      sys::wrap_positions(sys);
      reference.push_back(sys);
    }
  }
  const std::vector<HostSystem> out = driver.gather_results(0);
  if (world.rank() == 0)
    check_identical(out, reference);
}

// A system's species labels in one string, for readable failures.
std::string labels(const HostSystem& s) {
  std::string out;
  for (const std::string& label : s.species)
    out += (out.empty() ? "" : " ") + label;
  return out;
}

// Checks every atom's species label a hook is shown (finished and running systems) against the
// input's, on whichever rank runs the stage; counts the systems seen and those holding `late`.
class SpeciesHook : public Hook {
 public:
  SpeciesHook(std::vector<HostSystem> input, std::string late)
      : input_(std::move(input)), late_(std::move(late)) {}
  void on_finished(const HookContext& where, const std::vector<HostSystem>& systems) override {
    check(where, systems);
  }
  long every() const override { return 1; }
  void on_step(const HookContext& where, const std::vector<HostSystem>& running) override {
    check(where, running);
  }
  long seen = 0;
  long with_late = 0;

 private:
  void check(const HookContext& where, const std::vector<HostSystem>& systems) {
    for (const HostSystem& s : systems) {
      CAPTURE(where.stage);
      CAPTURE(where.rank);
      CAPTURE(s.id);
      const auto want = std::find_if(input_.begin(), input_.end(),
                                     [&](const HostSystem& in) { return in.id == s.id; });
      REQUIRE(want != input_.end());
      CHECK(labels(s) == labels(*want));
      ++seen;
      with_late += std::count(s.species.begin(), s.species.end(), late_) > 0 ? 1 : 0;
    }
  }
  std::vector<HostSystem> input_;
  std::string late_;
};

TEST_CASE("hooks and snapshots name species right on every rank, also labels met mid-stream") {
  const Communicator& world = baton::test::world();
  // 24 systems: the first 10 all Ar; then Kr joins, and from system 18 Xe too. The file says
  // nothing of its species beforehand, so rank 0 meets Kr and Xe only while it streams the input.
  std::vector<HostSystem> in = input(24);
  for (HostSystem& s : in)
    for (std::size_t a = 0; a < s.size(); ++a)
      s.species[a] = s.id >= 18 && a % 3 == 1 ? "Xe" : s.id >= 10 && a % 3 == 0 ? "Kr" : "Ar";
  const std::string path = "baton_test_pipeline" + np() + "_species.xyz";
  const std::string prefix = "baton_test_pipeline" + np() + "_species_snap";
  if (world.rank() == 0)
    sys::write_xyz_file(path, in);
  for (const std::string& stage : three_stages().names())  // left by an earlier run
    std::remove((prefix + "." + stage + ".rank" + std::to_string(world.rank()) + ".xyz").c_str());
  baton::barrier(world);
  for (CommMode mode : {CommMode::sync, CommMode::fully_async}) {
    CAPTURE(to_string(mode));
    auto hook = std::make_shared<SpeciesHook>(in, "Kr");
    auto snapshots = std::make_shared<XyzSnapshots>(prefix, 2);
    DriverOptions s;
    s.mode = mode;
    s.hooks = {hook, snapshots};
    {
      Driver driver(world, three_stages(), s);
      XyzFileSource source(path);  // no species given
      driver.setup(source);
      driver.run();
      const std::vector<HostSystem> out = driver.gather_results(0);
      if (world.rank() == 0) {
        REQUIRE(out.size() == in.size());
        for (std::size_t i = 0; i < out.size(); ++i)
          CHECK(labels(out[i]) == labels(in[i]));
      }
    }
    // Every rank's snapshot frames, read back: the input's labels.
    long frames = 0;
    for (const std::string& stage : three_stages().names()) {
      const std::string file =
          prefix + "." + stage + ".rank" + std::to_string(world.rank()) + ".xyz";
      std::ifstream probe(file);
      if (!probe)
        continue;
      probe.close();
      {
        std::ifstream text(file);
        sys::XyzReader reader(text, file);  // ids repeat across snapshots
        while (auto frame = reader.next()) {
          CAPTURE(frame->id);
          const auto want = std::find_if(in.begin(), in.end(),
                                         [&](const HostSystem& h) { return h.id == frame->id; });
          REQUIRE(want != in.end());
          CHECK(labels(*frame) == labels(*want));
          ++frames;
        }
      }
      std::remove(file.c_str());
    }
    CHECK(frames == snapshots->frames());
    // The hook ran on every rank, and ranks other than 0 saw the label met late.
    const long mine[2] = {hook->seen > 0 ? 1L : 0L, world.rank() != 0 ? hook->with_late : 0L};
    long all[2] = {0, 0};
    baton::check_mpi(MPI_Allreduce(mine, all, 2, MPI_LONG, MPI_SUM, world.raw()), "MPI_Allreduce",
                     world.raw());
    CHECK(all[0] == world.size());
    if (world.size() > 1)
      CHECK(all[1] > 0);
    baton::barrier(world);
  }
  if (world.rank() == 0)
    std::remove(path.c_str());
}

// What on_step is shown must be running: never a failed system, never a non-finite energy.
class RunningOnlyHook : public Hook {
 public:
  long every() const override { return 1; }
  void on_step(const HookContext& where, const std::vector<HostSystem>& running) override {
    double sum = 0;
    for (const HostSystem& s : running) {
      CAPTURE(where.stage);
      CAPTURE(where.rank);
      CAPTURE(s.id);
      CHECK_FALSE(s.failed);
      CHECK(s.failure.empty());
      if (s.id >= 100)  // a broken system, seen before its first step (it fails in it): stage 0
        CHECK(where.stage == 0);
      else
        sum += s.energy;
      ++seen;
    }
    CHECK(std::isfinite(sum));  // what a hook averaging energies needs
  }
  void on_finished(const HookContext& where, const std::vector<HostSystem>& systems) override {
    (void)where;
    for (const HostSystem& s : systems)
      failed += s.failed ? 1 : 0;
  }
  long seen = 0;
  long failed = 0;
};

TEST_CASE("on_step shows running systems only: a failed system is never in the next stage's") {
  const Communicator& world = baton::test::world();
  // Three systems break in the first stage (two atoms on one spot); they pass through the others.
  std::vector<HostSystem> in = input(12);
  for (std::int64_t k = 0; k < 3; ++k) {
    HostSystem broken = in[static_cast<std::size_t>(2 * k + 1)];
    broken.id = 100 + k;
    for (std::size_t d = 0; d < 3; ++d)
      broken.positions[3 + d] = broken.positions[d];
    in.push_back(broken);
  }
  for (CommMode mode : {CommMode::sync, CommMode::async_recv}) {
    CAPTURE(to_string(mode));
    auto hook = std::make_shared<RunningOnlyHook>();
    DriverOptions s;
    s.mode = mode;
    s.hooks = {hook};
    const std::vector<HostSystem> out =
        run(world, three_stages(), s, world.rank() == 0 ? in : std::vector<HostSystem>{});
    long mine[2] = {hook->seen, hook->failed};
    long all[2] = {0, 0};
    baton::check_mpi(MPI_Allreduce(mine, all, 2, MPI_LONG, MPI_SUM, world.raw()), "MPI_Allreduce",
                     world.raw());
    CHECK(all[0] > 0);
    CHECK(all[1] == 3 * 3);  // each broken system finishes every stage, failed
    if (world.rank() == 0) {
      REQUIRE(out.size() == in.size());
      CHECK(std::count_if(out.begin(), out.end(), [](const HostSystem& h) { return h.failed; }) ==
            3);
    }
  }
}

namespace {

// Counts a stage's hook calls on this rank (each call is one copy of systems to the host).
struct CallCounter : Hook {
  explicit CallCounter(long every) : every_(every) {}
  long every() const override { return every_; }
  void on_finished(const HookContext&, const std::vector<HostSystem>& systems) override {
    finished += systems.empty() ? 0 : 1;
  }
  void on_step(const HookContext&, const std::vector<HostSystem>&) override { ++steps; }
  long every_;
  long finished = 0;
  long steps = 0;
};

// Every hand-off on `path` made `copies` copies of its systems, `crossings` of them between the
// host and the device (docs/pipeline.md, "What each hand-off copies").
void check_per_handoff(const char* path, const CopyCount& c, long copies, long crossings) {
  const std::string name = path;
  CAPTURE(name);
  CAPTURE(c.handoffs);
  CHECK(c.handoffs >= 0);
  CHECK(c.copies == copies * c.handoffs);
  CHECK(c.crossings == crossings * c.handoffs);
}

}  // namespace

TEST_CASE("each hand-off makes the copies docs/pipeline.md lists, per path, at any rank count") {
  const Communicator& world = baton::test::world();
  // fire -> langevin -> nve: at 1 rank every move is between stages on this rank, at 2 a chain
  // link too (costs 1, 1, 2: split as fire,langevin | nve), at 3 one stage per rank, at 4 stage 0
  // on ranks 0 and 3 (an input link).
  auto first_hook = std::make_shared<CallCounter>(3);  // on_finished and on_step, stage 0
  auto last_hook = std::make_shared<CallCounter>(0);   // on_finished of the last stage
  const Pipeline p = three_stages();
  StageSpec first = p.stages().front();
  first.hooks.push_back(first_hook);
  first.cost = 1;
  StageSpec middle = p.stages()[1];
  middle.cost = 1;
  StageSpec last = p.stages().back();
  last.hooks.push_back(last_hook);
  last.cost = 2;
  DriverOptions s;
  s.steps_per_call = 7;
  if (world.size() == 4)
    s.stage_ranks = {{0, 3}, {1}, {2}};
  Driver driver(world, Pipeline(first) | Pipeline(middle) | Pipeline(last), s);
  driver.setup(world.rank() == 0 ? input(14) : std::vector<HostSystem>{});
  driver.run();
  const HandoffCopies c = driver.handoff_copies();
  check_per_handoff("input_local", c.input_local, 4, 2);  // encoded, to the device (2), unpacked
  check_per_handoff("input_sent", c.input_sent, 1, 0);    // encoded; sent from host memory
  check_per_handoff("received", c.received, 1, 0);        // unpacked
  check_per_handoff("local", c.local, 1, 0);              // one kernel, batch to batch
  check_per_handoff("sent", c.sent, 1, 0);                // packed
  check_per_handoff("results", c.results, 3, 2);          // packed, to the host (2)
  check_per_handoff("collected", c.collected, 1, 0);      // decoded on rank 0
  // Hooks: stage 0's calls copy the systems out (packed, to the host (2), decoded); the last
  // stage's on_finished decodes the results' own download (no copy of its own to the host).
  const long own = first_hook->finished + first_hook->steps;
  const long shared = last_hook->finished;
  CHECK(c.hooks.handoffs == own + shared);
  CHECK(c.hooks.copies == 4 * own + shared);
  CHECK(c.hooks.crossings == 2 * own);
  // Every path ran somewhere (summed over the ranks).
  long mine[8] = {c.input_local.handoffs, c.input_sent.handoffs, c.received.handoffs,
                  c.local.handoffs,       c.sent.handoffs,       c.results.handoffs,
                  c.collected.handoffs,   c.hooks.handoffs};
  long all[8] = {};
  baton::check_mpi(MPI_Allreduce(mine, all, 8, MPI_LONG, MPI_SUM, world.raw()), "MPI_Allreduce",
                   world.raw());
  CHECK(all[0] > 0);
  CHECK((all[1] > 0) == (world.size() == 4));
  CHECK((all[2] > 0) == (world.size() > 1));
  CHECK((all[3] > 0) == (world.size() < 3));
  CHECK((all[4] > 0) == (world.size() > 1));
  CHECK(all[5] > 0);
  CHECK(all[6] > 0);
  CHECK(all[7] > 0);
  CHECK(driver.gather_results(0).size() == (world.rank() == 0 ? 14u : 0u));
}
