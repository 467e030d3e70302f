// The integrator skeleton (IntegratorStage, integrator.hpp) with Updates written here: steps
// counted, per-system state kept between calls, the per-call budget and the step limit, done(),
// systems that break or fall apart mid-call, results that do not depend on how steps are split
// into calls (neighbour lists growing inside a call included), the built-in stages as Updates of
// it, and a user-written integrator in a pipeline at any rank count.
#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <baton/dynamics/clusters.hpp>
#include <baton/dynamics/eam.hpp>
#include <baton/dynamics/fire.hpp>
#include <baton/dynamics/forces.hpp>
#include <baton/dynamics/integrator.hpp>
#include <baton/dynamics/langevin.hpp>
#include <baton/dynamics/lennard_jones.hpp>
#include <baton/dynamics/morse.hpp>
#include <baton/dynamics/verlet.hpp>
#include <baton/pipeline/driver.hpp>
#include <baton/systems/host_transfer.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "dynamics_batch.hpp"
#include "mpi_doctest.hpp"

namespace bd = baton::dynamics;

namespace bs = baton::systems;
namespace pl = baton::pipeline;
using baton::test::Batch;
using baton::test::lj_nn;

namespace {

bs::HostSystem cluster(int atoms, std::int64_t id, double amplitude = 0.05) {
  return bd::perturbed_cluster(atoms, id, 42, amplitude, lj_nn);
}

std::vector<bs::HostSystem> clusters(int atoms, int n) {
  std::vector<bs::HostSystem> out;
  for (int id = 0; id < n; ++id)
    out.push_back(cluster(atoms, id));
  return out;
}

// Scratch column c of every slot, and the failure codes.
std::vector<double> scratch(const Batch& b, int c) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.batch.scratch);
  std::vector<double> out;
  for (int s = 0; s < b.batch.num_systems(); ++s)
    out.push_back(h(s, c));
  return out;
}
std::vector<int> failures(const Batch& b) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.batch.failed);
  return {h.data(), h.data() + b.batch.num_systems()};
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

// Moves nothing; counts. state[0]: steps taken, state[1]: the sum of steps() seen in step(),
// state[2]: calls in which the system was begun. enter() counts the slots it was given.
struct Counter {
  long limit = 25;
  int entered = 0;
  std::string name() const { return "counter"; }
  long step_limit() const { return limit; }
  void enter(bs::SystemsBatch&, int, int n) { entered += n; }
  template <class System>
  KOKKOS_FUNCTION void begin(System& s) const {
    s.state[2] += 1;
  }
  template <class System>
  KOKKOS_FUNCTION void step(System& s) const {
    s.state[0] += 1;
    s.state[1] += static_cast<double>(s.steps());
  }
};

// Done after id + 2 steps (each system on its own), with a step limit of 5.
struct UntilId {
  std::string name() const { return "until_id"; }
  long step_limit() const { return 5; }
  double cost_estimate() const { return 3.5; }
  template <class System>
  KOKKOS_FUNCTION bool done(const System& s) const {
    return s.steps() >= s.id() + 2;
  }
  template <class System>
  KOKKOS_FUNCTION void step(System&) const {}
};

// At step 4, breaks system 1 (a NaN position), 2 (an atom past max_coordinate), 3 (an infinite
// velocity) and 4 (every atom 100 times further out: nothing left within the cutoff); then
// recomputes the forces, as an integrator does. System 0 runs to the limit, 10 steps.
struct Breaker {
  std::string name() const { return "breaker"; }
  long step_limit() const { return 10; }
  template <class System>
  KOKKOS_FUNCTION void step(System& s) const {
    const std::int64_t id = s.id();
    const int first = s.begin();
    if (s.steps() == 4) {
      s.for_each_atom([&](int i) {
        if (id == 1 && i == first)
          s.x(i, 1) = NAN;
        if (id == 2 && i == first)
          s.x(i, 0) = 2 * bs::max_coordinate;
        if (id == 3 && i == first)
          s.v(i, 2) = INFINITY;
        if (id == 4)
          for (int d = 0; d < 3; ++d)
            s.x(i, d) *= 100;
      });
    }
    s.forces();
  }
};

// Steepest descent with a step limited to max_move per atom (docs/dynamics.md's example).
struct Descent {
  double gamma = 0.002, max_move = 0.05, tol = 1e-5;
  long limit = 20000;
  std::string name() const { return "descent"; }
  long step_limit() const { return limit; }
  template <class System>
  KOKKOS_FUNCTION bool done(const System& s) const {
    return s.fmax() <= tol;
  }
  template <class System>
  KOKKOS_FUNCTION void step(System& s) const {
    const double h = gamma * s.fmax() > max_move ? max_move / s.fmax() : gamma;
    s.for_each_atom([&](int i) {
      for (int d = 0; d < 3; ++d)
        s.x(i, d) += h * s.f(i, d);
    });
    s.forces();
  }
};

// Velocity rescaling towards a kinetic temperature after each velocity-Verlet step, with the
// kinetic energy summed by the team (a thermostat on the skeleton).
struct Rescale {
  double dt = 0.005, temperature = 0.3;
  long steps = 200;
  std::string name() const { return "rescale"; }
  long step_limit() const { return steps; }
  template <class System>
  KOKKOS_FUNCTION void step(System& s) const {
    s.for_each_atom([&](int i) {
      for (int d = 0; d < 3; ++d) {
        s.v(i, d) += 0.5 * dt * s.f(i, d) / s.mass(i);
        s.x(i, d) += dt * s.v(i, d);
      }
    });
    s.forces();
    const double twice_kinetic = s.sum([&](int i) {
      double v2 = 0;
      for (int d = 0; d < 3; ++d) {
        s.v(i, d) += 0.5 * dt * s.f(i, d) / s.mass(i);
        v2 += s.v(i, d) * s.v(i, d);
      }
      return s.mass(i) * v2;
    });
    const double want = 3.0 * s.atoms() * temperature;
    const double scale = twice_kinetic > 0 ? bd::detail::math_sqrt(want / twice_kinetic) : 1.0;
    s.for_each_atom([&](int i) {
      for (int d = 0; d < 3; ++d)
        s.v(i, d) *= scale;
    });
  }
};

// A cluster of `atoms` blown up by `factor` about its centre: relaxing, it shrinks, and its
// neighbour lists need more room than they had on entry.
bs::HostSystem expanded(int atoms, std::int64_t id, double factor) {
  bs::HostSystem s = cluster(atoms, id);
  for (double& x : s.positions)
    x *= factor;
  return s;
}

double entry_energy(const bs::HostSystem& s, const bd::LennardJones& lj) {
  Batch b({s});
  bd::compute_forces(lj, b.batch, 0, 1);
  return b.systems()[0].energy;
}

// The final positions, velocities, energies and steps of `in` through a new stage make() gives,
// `chunk` steps per call; with `defer`, the batch's owner reads the list overflow (as the pipeline
// driver does). `grew`: the lists grew inside advance() calls, after enter().
struct Outcome {
  std::vector<double> x, v, energy;
  std::vector<std::int64_t> steps;
  bool grew = false;
};
template <class Make>
Outcome outcome(const Make& make, const std::vector<bs::HostSystem>& in, int chunk,
                bool defer = false) {
  auto stage = make();
  Batch b(in);
  b.batch.defer_list_overflow(defer);
  stage.enter(b.batch, 0, b.batch.num_systems());
  const int entered = stage.neighbour_lists().capacity();
  for (long k = 0; k < stage.step_limit() + 2 && !b.all_finished(); ++k) {
    stage.advance(b.batch, chunk);
    if (defer) {
      int needed = 0;
      Kokkos::deep_copy(needed, b.batch.list_overflow);
      b.batch.note_list_overflow(needed);
    }
  }
  REQUIRE(b.all_finished());
  Outcome o;
  for (const bs::HostSystem& s : b.systems()) {
    o.x.insert(o.x.end(), s.positions.begin(), s.positions.end());
    o.v.insert(o.v.end(), s.velocities.begin(), s.velocities.end());
    o.energy.push_back(s.energy);
  }
  o.steps = b.steps();
  o.grew = stage.neighbour_lists().capacity() > entered;
  return o;
}

void check_same(const Outcome& a, const Outcome& b) {
  CHECK(a.steps == b.steps);
  CHECK(same_bits(a.x, b.x));
  CHECK(same_bits(a.v, b.v));
  CHECK(same_bits(a.energy, b.energy));
}

}  // namespace

TEST_CASE("IntegratorStage counts steps, keeps state between calls, and keeps to the budget") {
  bd::IntegratorStage stage(bd::LennardJones{}, Counter{});
  CHECK(stage.name() == "counter");
  CHECK(stage.step_limit() == 25);
  CHECK(stage.cost_estimate() == 25);  // no cost_estimate(): the step limit
  Batch b(clusters(13, 3));
  stage.enter(b.batch, 0, 3);
  CHECK(stage.update().entered == 3);
  for (int call = 1; call <= 3; ++call) {
    stage.advance(b.batch, 7);
    CHECK(b.steps() == std::vector<std::int64_t>(3, 7 * call));
    CHECK_FALSE(b.all_finished());
  }
  stage.advance(b.batch, 7);  // 4 more steps to the limit
  CHECK(b.steps() == std::vector<std::int64_t>(3, 25));
  CHECK(b.all_finished());
  CHECK(scratch(b, 0) == std::vector<double>(3, 25));
  CHECK(scratch(b, 1) == std::vector<double>(3, 24 * 25 / 2));  // steps() was 0, 1, ..., 24
  CHECK(scratch(b, 2) == std::vector<double>(3, 4));            // begun in 4 calls
  stage.advance(b.batch, 7);                                    // Finished systems are left alone
  CHECK(b.steps() == std::vector<std::int64_t>(3, 25));
  CHECK(scratch(b, 2) == std::vector<double>(3, 4));
  CHECK(failures(b) == std::vector<int>(3, 0));
  stage.advance(b.batch, 0);  // nothing
  CHECK_THROWS_WITH(stage.advance(b.batch, -1), doctest::Contains("max_steps = -1"));
  CHECK_THROWS_WITH(stage.enter(b.batch, 2, 2), doctest::Contains("slots [2, 4)"));
}

TEST_CASE("IntegratorStage: done() finishes each system on its own, the step limit all of them") {
  bd::IntegratorStage stage(bd::LennardJones{}, UntilId{});
  CHECK(stage.cost_estimate() == 3.5);
  Batch b(clusters(13, 5));
  stage.enter(b.batch, 0, 5);
  stage.advance(b.batch, 100);
  CHECK(b.all_finished());
  CHECK(b.steps() == std::vector<std::int64_t>{2, 3, 4, 5, 5});
  for (const bs::HostSystem& s : b.systems()) {  // Finished: its virial is current
    CHECK(std::isfinite(s.virial[0]));
    CHECK_FALSE(s.failed);
  }
}

TEST_CASE("IntegratorStage: systems that break or fall apart mid-call are failed, the rest go on") {
  bd::LennardJones lj;
  lj.cutoff = 3;
  for (int chunk : {100, 3}) {
    CAPTURE(chunk);
    bd::IntegratorStage stage(lj, Breaker{});
    Batch b(clusters(13, 5));
    stage.enter(b.batch, 0, 5);
    for (int call = 0; call < 10 && !b.all_finished(); ++call)
      stage.advance(b.batch, chunk);
    CHECK(b.all_finished());
    CHECK(failures(b) == std::vector<int>{0, static_cast<int>(bs::Failure::positions),
                                          static_cast<int>(bs::Failure::exploded),
                                          static_cast<int>(bs::Failure::positions),
                                          static_cast<int>(bs::Failure::dissociated)});
    // The breaking step (index 4) is counted; nothing after it.
    CHECK(b.steps() == std::vector<std::int64_t>{10, 5, 5, 5, 5});
    const auto out = b.systems();
    CHECK(out[4].failure == bs::failure_text(static_cast<int>(bs::Failure::dissociated)));
    CHECK(out[0].positions == cluster(13, 0).positions);  // moved nothing
  }
}

TEST_CASE("IntegratorStage: results do not depend on how the steps are split into calls") {
  // Clusters of 147 atoms use neighbour lists (cutoff 2.5); blown up by 30 %, they shrink as they
  // relax, and their lists grow inside advance() (the kernel runs again for the steps left).
  bd::LennardJones lj;
  lj.cutoff = 2.5;
  const std::vector<bs::HostSystem> in = {expanded(147, 0, 1.3), cluster(13, 1, 0.1),
                                          expanded(147, 2, 1.15)};
  const auto descent = [&] {
    Descent d;
    d.limit = 400;
    return bd::IntegratorStage(lj, d);
  };
  const Outcome once = outcome(descent, in, 400);
  CHECK(once.grew);
  CHECK(once.energy[0] < entry_energy(in[0], lj) - 10);  // it descended
  for (int chunk : {7, 1}) {
    CAPTURE(chunk);
    const Outcome split = outcome(descent, in, chunk);
    CHECK(split.grew);
    check_same(split, once);
  }
  check_same(outcome(descent, in, 13, true), once);  // overflow read by the batch's owner

  Rescale r;
  const auto rescale = [&] { return bd::IntegratorStage(lj, r); };
  const Outcome thermostat = outcome(rescale, in, 200);
  check_same(outcome(rescale, in, 9), thermostat);
  check_same(outcome(rescale, in, 11, true), thermostat);
  // The kinetic temperature is the target after every step.
  auto stage = rescale();
  Batch b({in[1]});
  stage.enter(b.batch, 0, 1);
  stage.advance(b.batch, 50);
  const bs::HostSystem s = b.systems()[0];
  double twice_kinetic = 0;
  for (double v : s.velocities)
    twice_kinetic += v * v;
  CHECK(twice_kinetic / (3 * 13) == doctest::Approx(r.temperature).epsilon(1e-12));
}

TEST_CASE("the built-in stages are Updates of IntegratorStage, with the same results") {
  static_assert(std::is_base_of_v<bd::IntegratorStage<bd::LennardJones, bd::FireUpdate>,
                                  bd::FireStage<bd::LennardJones>>);
  static_assert(
      std::is_base_of_v<bd::IntegratorStage<bd::Eam, bd::VerletUpdate>, bd::VerletStage<bd::Eam>>);
  static_assert(std::is_base_of_v<bd::IntegratorStage<bd::Morse, bd::LangevinUpdate>,
                                  bd::LangevinStage<bd::Morse>>);
  bd::LennardJones lj;
  lj.cutoff = 2.5;
  const std::vector<bs::HostSystem> in = {expanded(147, 0, 1.1), cluster(13, 1, 0.1)};
  bd::FireOptions fp;
  fp.fmax = 1e-4;
  bd::VerletOptions vp;
  vp.steps = 150;
  vp.temperature = 0.2;
  bd::LangevinOptions lp;
  lp.steps = 150;
  const auto fire = [&] { return bd::FireStage(lj, fp); };
  const auto nve = [&] { return bd::VerletStage(lj, vp); };
  const auto langevin = [&] { return bd::LangevinStage(lj, lp); };
  CHECK(fire().name() == "fire");
  CHECK(nve().name() == "nve");
  CHECK(langevin().name() == "langevin");
  CHECK(fire().cost_estimate() == bd::FireStage<>::typical_fire_steps);
  CHECK(nve().step_limit() == 150);
  check_same(outcome([&] { return bd::IntegratorStage(lj, bd::FireUpdate(fp)); }, in, 1000),
             outcome(fire, in, 17));
  check_same(outcome([&] { return bd::IntegratorStage(lj, bd::VerletUpdate(vp)); }, in, 1000),
             outcome(nve, in, 17));
  check_same(outcome([&] { return bd::IntegratorStage(lj, bd::LangevinUpdate(lp)); }, in, 1000),
             outcome(langevin, in, 17));
}

TEST_CASE("a user-written integrator runs in a pipeline, identical at every rank count") {
  const baton::Communicator& world = baton::test::world();
  const std::vector<bs::HostSystem> in = clusters(13, 6);
  const auto make = [] {
    bd::FireOptions fp;
    fp.fmax = 1e-2;  // FIRE to 1e-2, then steepest descent the rest of the way
    return pl::make_stage<bd::FireStage>(bs::BatchCapacity{2, 26}, bd::LennardJones{}, fp) |
           pl::make_stage<bd::IntegratorStage>(bs::BatchCapacity{2, 26}, bd::LennardJones{},
                                               Descent{});
  };
  const auto run = [&](const baton::Communicator& comm) {
    pl::Driver driver(comm, make(), pl::DriverOptions{});
    driver.setup(comm.rank() == 0 ? in : std::vector<bs::HostSystem>{});
    driver.run();
    return driver.gather_results(0);
  };
  std::vector<bs::HostSystem> alone;
  if (world.rank() == 0)
    alone = run(baton::Communicator::borrow(MPI_COMM_SELF));
  const std::vector<bs::HostSystem> all = run(world);
  if (world.rank() == 0) {
    REQUIRE(all.size() == in.size());
    REQUIRE(alone.size() == in.size());
    for (std::size_t i = 0; i < all.size(); ++i) {
      CAPTURE(all[i].id);
      CHECK(all[i].id == alone[i].id);
      CHECK(all[i].stage_steps == alone[i].stage_steps);
      CHECK(same_bits(all[i].positions, alone[i].positions));
      CHECK(all[i].energy == doctest::Approx(-44.326801).epsilon(1e-8));
      CHECK(all[i].fmax <= 1e-5);
      REQUIRE(all[i].stage_steps.size() == 2);
      CHECK(all[i].stage_steps[1] > 0);  // descent took steps after FIRE
    }
  }
}
