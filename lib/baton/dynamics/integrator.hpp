#pragma once
/// \file
/// The integrator skeleton: IntegratorStage<Potential, Update>, one Stage that owns what every
/// integrator needs around its own update (neighbour lists and their growth, force evaluations,
/// the failure and dissociation checks, step counting and the per-call step budget, enter() and
/// advance()), and IntegratorSystem, one system as an Update sees it. FireStage, VerletStage and
/// LangevinStage are IntegratorStages with their Updates (FireUpdate, VerletUpdate,
/// LangevinUpdate); docs/dynamics.md, "Writing your own integrator", shows one in user code.
///
/// An Update is a small type, copied into the stage's kernel (plain values or Kokkos Views: no
/// std::string or std::vector members), with
///
///     std::string name() const;       // the stage's name ("fire"): reports, XYZ keys
///     long step_limit() const;        // most steps per system; a system that took them is
///                                     // Finished (< 0: no limit)
///     template <class System> KOKKOS_FUNCTION void step(System& s) const;  // one step
///
/// or, instead of step(), the step split where it computes forces (an Update that runs with a batch
/// model, model.hpp, needs this form: the model evaluates the whole batch between the two halves):
///
///     template <class System> KOKKOS_FUNCTION void before_forces(System& s) const;
///     template <class System> KOKKOS_FUNCTION void after_forces(System& s) const;
///
/// (a step is then before_forces(s); s.forces(); after_forces(s)), and, optionally,
///
///     double cost_estimate() const;   // expected steps per system (default: step_limit())
///     void enter(systems::SystemsBatch& batch, int first, int n);  // host: slots that just
///     arrived,
///                                                         // before their forces are computed
///     template <class System> KOKKOS_FUNCTION void begin(System& s) const;  // once per call
///     template <class System> KOKKOS_FUNCTION bool done(const System& s) const;  // finished?
///     template <class System> KOKKOS_FUNCTION void out_of_steps(System& s) const;  // it took
///                                     // step_limit() steps, not done(): e.g. s.fail(...)
///     KOKKOS_FUNCTION bool virial_each_step() const;  // every force call computes s.virial()
///     bool changes_cells() const;     // its steps call s.set_cell(): the host's copy of the
///                                     // cells is read back after each call
///     template <class System> KOKKOS_FUNCTION double conserved(const System& s) const;
///                                     // its conserved quantity (energy units), stored at the end
///                                     // of every call (SystemsBatch::conserved; NaN without)
///
/// where System is IntegratorSystem<kernel_t<Potential>>. Per call and system, the skeleton runs
///
///     begin(s);
///     until the system is Finished, or took this call's steps, or its neighbour list must grow:
///       done(s) or s.steps() >= step_limit(): Finished (its virial computed at the end; in the
///         second case out_of_steps(s) first);
///       step(s); the step is counted; its energy, forces, positions and velocities are checked
///       and so is whether it dissociated (broken: failed with a Failure code, and Finished);
///
/// with s.state (the system's scratch columns) stored back at the end of the call.

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "baton/dynamics/forces.hpp"
#include "baton/dynamics/stage.hpp"
#include "baton/dynamics/units.hpp"

namespace baton::dynamics {

/// One system inside an IntegratorStage's kernel, as its Update sees it: the system's atoms, its
/// per-system state, its last forces' energy and fmax, the team that runs it and the force call.
///
/// Every thread of the system's team (one on the host, many on a GPU) runs the Update with its own
/// copy of this object, so everything outside for_each_atom / sum / max must come out the same on
/// every thread: compute it only from constants, `state`, steps(), energy(), fmax() and the
/// results of sum() and max() (which every thread gets). Inside for_each_atom, sum and max each
/// thread takes some of the atoms i: write only atom i's rows there. Write per-system data only in
/// single(). Call barrier() between a for_each_atom that writes atoms and code that reads other
/// atoms' values (forces() has one, and the skeleton puts one after every step()).
template <class K>
class IntegratorSystem {
 public:
  /// Per-system values an Update may keep from step to step and from call to call.
  static constexpr int state_size = systems::bound_column;
  /// The system's scratch columns [0, state_size) (systems::SystemsBatch::scratch): 0 when the
  /// system arrives in the stage's batch, loaded at the start of every call, stored back (by one
  /// thread) at its end, and moved with the system when slots are compacted. Change them the same
  /// way on every thread.
  double state[state_size];

  /// Made by IntegratorStage's kernel for the system `sys` of `views`.
  KOKKOS_INLINE_FUNCTION IntegratorSystem(const detail::TeamMember& team, const K& pot,
                                          const detail::StageViews& views, detail::StageSystem& sys)
      : team_(team), pot_(pot), sv_(views), sys_(sys) {
    for (int c = 0; c < state_size; ++c)
      state[c] = sv_.scratch(sys_.slot, c);
  }

  /// The system's team.
  KOKKOS_INLINE_FUNCTION const detail::TeamMember& team() const { return team_; }
  /// Its atoms are rows [begin(), end()) of the batch's per-atom Views.
  KOKKOS_INLINE_FUNCTION int begin() const { return sys_.begin; }
  KOKKOS_INLINE_FUNCTION int end() const { return sys_.end; }
  KOKKOS_INLINE_FUNCTION int atoms() const { return sys_.end - sys_.begin; }
  /// Its slot in the batch (changes as the batch is compacted: do not key results on it).
  KOKKOS_INLINE_FUNCTION int slot() const { return sys_.slot; }
  /// Its system id (systems::SystemsBatch::id), kept through every stage.
  KOKKOS_INLINE_FUNCTION std::int64_t id() const { return sv_.id(sys_.slot); }
  /// Steps it has taken in this stage (systems::SystemsBatch::steps); inside step(), the index of
  /// the step being taken (0 for the first).
  KOKKOS_INLINE_FUNCTION std::int64_t steps() const { return sys_.taken; }
  /// Energy and largest atom force norm of the last force evaluation (on entry: the entry forces).
  KOKKOS_INLINE_FUNCTION double energy() const { return sys_.r.energy; }
  KOKKOS_INLINE_FUNCTION double fmax() const { return sys_.r.fmax; }
  /// Its cell (cell.hpp; no periodic axis for a cluster).
  KOKKOS_INLINE_FUNCTION const systems::CellImage& cell() const { return sys_.cell; }
  /// Its cell's volume, |det h| (0 for a cluster's empty cell).
  KOKKOS_INLINE_FUNCTION double volume() const {
    const double* h = sys_.cell.h;
    const double det = h[0] * (h[4] * h[8] - h[5] * h[7]) - h[1] * (h[3] * h[8] - h[5] * h[6]) +
                       h[2] * (h[3] * h[7] - h[4] * h[6]);
    return det < 0 ? -det : det;
  }
  /// Virial component c (xx, yy, zz, xy, xz, yz: sum over pairs of r (x) f, energy) of the last
  /// force call, for an Update whose virial_each_step() is true; otherwise that of the forces
  /// the system entered the stage with.
  KOKKOS_INLINE_FUNCTION double virial(int c) const { return sys_.r.virial[c]; }
  /// Makes `h` (rows a, b, c) the system's cell, for the next force call (the Update moves the
  /// atoms). Returns false, leaving the cell as it is, when `h` is degenerate or not finite, or
  /// narrower than twice the potential's cutoff along a periodic axis (forces there would be
  /// wrong): fail() the system then. Every thread of the team, with the same `h`.
  KOKKOS_INLINE_FUNCTION bool set_cell(const double* h) {
    int bits = 0;
    for (int k = 0; k < 3; ++k)
      bits |= sys_.cell.periodic[k] ? 1 << k : 0;
    const systems::CellImage next = systems::make_cell_image(h, bits);
    const double rc2 = pot_.cutoff_squared();
    for (int k = 0; k < 3; ++k) {
      if (!sys_.cell.periodic[k])
        continue;
      // The width across axis k is 1 / |column k of h^-1|.
      const double g2 = next.inv[k] * next.inv[k] + next.inv[3 + k] * next.inv[3 + k] +
                        next.inv[6 + k] * next.inv[6 + k];
      if (!(g2 > 0) || !(4 * rc2 * g2 <= 1))  // also false for NaN
        return false;
    }
    team_.team_barrier();  // every thread read the old cell
    sys_.cell = next;
    Kokkos::single(Kokkos::PerTeam(team_), [&]() {
      for (int k = 0; k < 9; ++k)
        sv_.cell(sys_.slot, k) = h[k];
    });
    return true;
  }
  /// Fails the system with `why` at the end of this step (it takes no more): for what the
  /// skeleton's checks cannot see (set_cell()). Every thread of the team.
  KOKKOS_INLINE_FUNCTION void fail(systems::Failure why) { sys_.failure = static_cast<int>(why); }

  /// Position, velocity and force component d of atom row i (in [begin(), end())); its mass and
  /// species index.
  KOKKOS_INLINE_FUNCTION double& x(int i, int d) const { return sv_.x(i, d); }
  KOKKOS_INLINE_FUNCTION double& v(int i, int d) const { return sv_.v(i, d); }
  KOKKOS_INLINE_FUNCTION double& f(int i, int d) const { return sv_.f(i, d); }
  KOKKOS_INLINE_FUNCTION double mass(int i) const { return sv_.mass(i); }
  KOKKOS_INLINE_FUNCTION int species(int i) const { return sv_.species(i); }
  /// Whether atom row i moves (false: it is fixed, HostSystem::move_mask). A fixed atom's force is
  /// 0 after every force call and its velocity 0 from enter() on, so the Verlet, FIRE and
  /// rescaling updates leave it where it is; an update that adds to velocities otherwise (noise)
  /// must skip it.
  KOKKOS_INLINE_FUNCTION bool movable(int i) const { return sv_.movable(i) != 0; }
  /// The system's atoms that move.
  KOKKOS_INLINE_FUNCTION int moving() const { return sys_.moving; }
  /// Kinetic degrees of freedom: 3 N - 3 (the centre of mass's momentum is conserved), or 3 times
  /// the atoms that move when some are fixed (their forces on the others break that conservation).
  KOKKOS_INLINE_FUNCTION int degrees_of_freedom() const {
    return sys_.has_fixed() ? 3 * sys_.moving : 3 * atoms() - 3;
  }

  /// fn(i) for every atom row i of the system, shared among the team's threads (no barrier after).
  template <class F>
  KOKKOS_INLINE_FUNCTION void for_each_atom(const F& fn) const {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team_, sys_.begin, sys_.end), fn);
  }
  /// fn(first, n) for the system's atom rows in blocks [first, first + n) of up to Block rows,
  /// shared among the team's threads (no barrier after): for host loops that work a block at a
  /// time (on a GPU, for_each_atom gives each thread one atom).
  template <int Block, class F>
  KOKKOS_INLINE_FUNCTION void for_each_block(const F& fn) const {
    const int blocks = (sys_.end - sys_.begin + Block - 1) / Block;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team_, 0, blocks), [&](int k) {
      const int first = sys_.begin + k * Block;
      fn(first, sys_.end - first < Block ? sys_.end - first : Block);
    });
  }
  /// Sum of fn(i) over the system's atoms, in a fixed order; every thread gets it.
  template <class F>
  KOKKOS_INLINE_FUNCTION double sum(const F& fn) const {
    return detail::team_sum(team_, sys_.begin, sys_.end, fn);
  }
  /// Largest of fn(i) over the system's atoms and 0; every thread gets it.
  template <class F>
  KOKKOS_INLINE_FUNCTION double max(const F& fn) const {
    return detail::team_max(team_, sys_.begin, sys_.end, fn);
  }
  /// Waits for every thread of the team.
  KOKKOS_INLINE_FUNCTION void barrier() const { team_.team_barrier(); }
  /// fn() on one thread of the team (for writes to per-system data).
  template <class F>
  KOKKOS_INLINE_FUNCTION void single(const F& fn) const {
    Kokkos::single(Kokkos::PerTeam(team_), fn);
  }

  /// Forces, energy and fmax at the current positions (after a barrier): every thread of the team
  /// calls it, as the skeleton's own force calls, over the system's neighbour list or all pairs.
  KOKKOS_INLINE_FUNCTION void forces() {
    team_.team_barrier();
    if (sys_.virial_each_step)
      sv_.forces<true>(team_, pot_, sys_);
    else
      sv_.forces<false>(team_, pot_, sys_);
  }

  /// Stores `state` into the system's scratch columns (the skeleton, at the end of a call).
  KOKKOS_INLINE_FUNCTION void store_state() const {
    Kokkos::single(Kokkos::PerTeam(team_), [&]() {
      for (int c = 0; c < state_size; ++c)
        sv_.scratch(sys_.slot, c) = state[c];
    });
  }

 private:
  const detail::TeamMember& team_;
  const K& pot_;
  const detail::StageViews& sv_;
  detail::StageSystem& sys_;
};

namespace detail {

template <class U, class = void>
struct has_enter : std::false_type {};
template <class U>
struct has_enter<U, std::void_t<decltype(std::declval<U&>().enter(
                        std::declval<systems::SystemsBatch&>(), 0, 0))>> : std::true_type {};

template <class U, class = void>
struct has_cost_estimate : std::false_type {};
template <class U>
struct has_cost_estimate<U, std::void_t<decltype(std::declval<const U&>().cost_estimate())>>
    : std::true_type {};

template <class U, class S, class = void>
struct has_begin : std::false_type {};
template <class U, class S>
struct has_begin<U, S, std::void_t<decltype(std::declval<const U&>().begin(std::declval<S&>()))>>
    : std::true_type {};

template <class U, class S, class = void>
struct has_done : std::false_type {};
template <class U, class S>
struct has_done<U, S,
                std::void_t<decltype(std::declval<const U&>().done(std::declval<const S&>()))>>
    : std::true_type {};

template <class U, class S, class = void>
struct has_out_of_steps : std::false_type {};
template <class U, class S>
struct has_out_of_steps<
    U, S, std::void_t<decltype(std::declval<const U&>().out_of_steps(std::declval<S&>()))>>
    : std::true_type {};

template <class U, class S, class = void>
struct has_step : std::false_type {};
template <class U, class S>
struct has_step<U, S, std::void_t<decltype(std::declval<const U&>().step(std::declval<S&>()))>>
    : std::true_type {};

template <class U, class S, class = void>
struct has_conserved : std::false_type {};
template <class U, class S>
struct has_conserved<
    U, S, std::void_t<decltype(std::declval<const U&>().conserved(std::declval<const S&>()))>>
    : std::true_type {};

/// Stores the Update's conserved(s), where it has one, as the system's conserved quantity
/// (SystemsBatch::conserved): every thread of the team calls it (it may sum over atoms), one
/// writes.
template <class U, class S>
KOKKOS_INLINE_FUNCTION void store_conserved(const U& update, const S& s, const TeamMember& team,
                                            const systems::SystemsBatch::view<double*>& out,
                                            int slot) {
  if constexpr (has_conserved<U, S>::value) {
    const double c = update.conserved(s);
    Kokkos::single(Kokkos::PerTeam(team), [&]() { out(slot) = c; });
  } else {
    (void)update, (void)s, (void)team, (void)out, (void)slot;
  }
}

template <class U, class = void>
struct has_virial_each_step : std::false_type {};
template <class U>
struct has_virial_each_step<U, std::void_t<decltype(std::declval<const U&>().virial_each_step())>>
    : std::true_type {};

/// The Update's virial_each_step() (whether its steps read the virial of every force call), where
/// it has one; false otherwise.
template <class U>
KOKKOS_INLINE_FUNCTION bool update_virial_each_step(const U& update) {
  if constexpr (has_virial_each_step<U>::value)
    return update.virial_each_step();
  else
    return (void)update, false;
}

template <class U, class = void>
struct has_changes_cells : std::false_type {};
template <class U>
struct has_changes_cells<U, std::void_t<decltype(std::declval<const U&>().changes_cells())>>
    : std::true_type {};

/// The Update's changes_cells(), where it has one; false otherwise. A stage whose Update changes
/// cells reads them back into the batch's host copy (systems::SystemsBatch::cells_changed) after
/// each call, so that what the host checks and hands on (cutoff checks, the next stage's slots) is
/// the cell the system has.
template <class U>
bool update_changes_cells(const U& update) {
  if constexpr (has_changes_cells<U>::value)
    return update.changes_cells();
  else
    return (void)update, false;
}

/// Whether the Update splits its step around the force call (before_forces, after_forces).
template <class U, class S, class = void>
struct has_split_step : std::false_type {};
template <class U, class S>
struct has_split_step<
    U, S,
    std::void_t<decltype(std::declval<const U&>().before_forces(std::declval<S&>())),
                decltype(std::declval<const U&>().after_forces(std::declval<S&>()))>>
    : std::true_type {};

/// One step of the Update: its step(s), or before_forces(s); s.forces(); after_forces(s).
template <class U, class S>
KOKKOS_INLINE_FUNCTION void update_step(const U& update, S& s) {
  if constexpr (has_step<U, S>::value) {
    update.step(s);
  } else {
    update.before_forces(s);
    s.forces();
    update.after_forces(s);
  }
}

/// The Update's cost_estimate(), or its step_limit() (1 when it has none): a stage's
/// cost_estimate().
template <class U>
double update_cost_estimate(const U& update) {
  if constexpr (has_cost_estimate<U>::value)
    return update.cost_estimate();
  else
    return update.step_limit() > 0 ? static_cast<double>(update.step_limit()) : 1;
}

/// The Update's step_limit(), 0 where it has none: a stage's step_limit().
template <class U>
long update_step_limit(const U& update) {
  const long limit = update.step_limit();
  return limit > 0 ? limit : 0;
}

/// The Update's begin(s), where it has one. (Called from the kernel: an extended device lambda
/// may not first capture a variable inside `if constexpr`.)
template <class U, class S>
KOKKOS_INLINE_FUNCTION void update_begin(const U& update, S& s) {
  if constexpr (has_begin<U, S>::value)
    update.begin(s);
  else
    (void)update, (void)s;
}

/// The Update's done(s), where it has one; false otherwise.
template <class U, class S>
KOKKOS_INLINE_FUNCTION bool update_done(const U& update, const S& s) {
  if constexpr (has_done<U, S>::value)
    return update.done(s);
  else
    return (void)update, (void)s, false;
}

/// Whether the system is finished before its next step: done(s), or it took `limit` steps (limit
/// >= 0), when the Update's out_of_steps(s) runs first, where it has one.
template <class U, class S>
KOKKOS_INLINE_FUNCTION bool update_finished(const U& update, S& s, long limit) {
  if (update_done(update, s))
    return true;
  if (limit < 0 || s.steps() < limit)
    return false;
  if constexpr (has_out_of_steps<U, S>::value)
    update.out_of_steps(s);
  return true;
}

}  // namespace detail

/// A stage made of a potential (potential.hpp) and an Update (this file's header comment): enter()
/// runs the Update's enter() and computes the arriving systems' forces; advance() runs the
/// Update's steps on every Active system, one team per system, with the checks, step counts and
/// neighbour lists every integrator shares. A system's result depends only on its own data,
/// however its steps are split into calls.
template <class Potential, class Update>
class IntegratorStage : public Stage {
 public:
  /// The kernel's view of one system, for the Update's device members.
  using System = IntegratorSystem<kernel_t<Potential>>;

  /// Checks the potential's parameters (baton::Error) and `neighbours`; the default neighbour-list
  /// skin is that of `units`.
  explicit IntegratorStage(Potential potential = {}, Update update = {},
                           NeighbourOptions neighbours = {}, const Units& units = Units::lj())
      : potential_(std::move(potential)),
        update_(std::move(update)),
        skin_(neighbours.skin_in(units)),
        lists_(neighbours) {
    static_assert(
        detail::has_step<Update, System>::value || detail::has_split_step<Update, System>::value,
        "an Update needs a member template <class System> KOKKOS_FUNCTION void "
        "step(System& s) const, or before_forces(System&) and after_forces(System&) "
        "(see baton/dynamics/integrator.hpp)");
    (void)potential_.kernel();  // checks the potential's parameters
  }

  std::string name() const override { return update_.name(); }
  /// Runs the Update's enter() (if it has one), then computes the forces of slots [first,
  /// first + n).
  void enter(systems::SystemsBatch& batch, int first, int n) override;
  /// Up to `max_steps` steps on every Active system; see the header comment.
  void advance(systems::SystemsBatch& batch, int max_steps) override;
  /// The Update's cost_estimate(), or its step_limit() (1 when it has none).
  double cost_estimate() const override { return detail::update_cost_estimate(update_); }
  /// The Update's step_limit() (0 where it has none).
  long step_limit() const override { return detail::update_step_limit(update_); }

  const Potential& potential() const noexcept { return potential_; }
  const Update& update() const noexcept { return update_; }
  /// The neighbour lists the stage keeps (builds(), capacity()).
  const NeighbourLists& neighbour_lists() const noexcept { return lists_; }
  /// The neighbour lists' skin.
  double skin() const noexcept { return skin_; }

 private:
  Potential potential_;
  Update update_;
  double skin_;
  NeighbourLists lists_;
};

// Implementation.

template <class Potential, class Update>
void IntegratorStage<Potential, Update>::enter(systems::SystemsBatch& batch, int first, int n) {
  detail::check_slots("IntegratorStage::enter", batch, first, n);
  if constexpr (detail::has_enter<Update>::value)
    update_.enter(batch, first, n);
  detail::forget_conserved(batch, first, n);
  detail::stop_fixed_atoms(batch, first, n);
  enter_forces(potential_, batch, first, n, lists_, skin_);
}

template <class Potential, class Update>
void IntegratorStage<Potential, Update>::advance(systems::SystemsBatch& batch, int max_steps) {
  detail::check_max_steps("IntegratorStage::advance", max_steps);
  const int n = batch.num_systems();
  if (n == 0 || max_steps == 0)
    return;
  const auto pot = potential_.kernel();
  const Update update = update_;
  const long limit = update_.step_limit();
  constexpr int active = static_cast<int>(systems::SystemStatus::active);
  const std::string label = "baton::dynamics::" + name();
  const auto conserved = batch.conserved;
  lists_.begin_call(batch, pot.cutoff_squared(), skin_);
  const std::vector<detail::SystemLaunch> launches = detail::system_launches(
      batch, 0, n, lists_, detail::on_host, detail::wide_teams_for<kernel_t<Potential>>);
  do {  // again for the rest of the steps when a neighbour list had to grow
    const detail::StageViews sv(batch, lists_);
    for (const detail::SystemLaunch& launch : launches) {
      const detail::SlotMap map = launch.map;
      Kokkos::parallel_for(
          label, launch.policy, KOKKOS_LAMBDA(const detail::TeamMember& team) {
            const int s = map.slot(team.league_rank());
            if (sv.status(s) != active || !sv.ready(team, pot, s))
              return;
            detail::StageSystem sys = sv.begin(team, pot, s);
            sys.virial_each_step = detail::update_virial_each_step(update);
            System system(team, pot, sv, sys);
            detail::update_begin(update, system);
            while (!sys.done) {
              if (detail::update_finished(update, system, limit)) {
                sys.done = true;
                break;
              }
              if (sv.call_over(sys, max_steps))
                break;
              detail::update_step(update, system);
              team.team_barrier();
              if (sv.stepped(team, pot, sys))
                break;
            }
            team.team_barrier();  // every thread loaded the state before one stores it
            system.store_state();
            sv.finish(team, pot, sys);
            detail::store_conserved(update, system, team, conserved, s);
          });
    }
  } while (lists_.grow_after_call(batch));
  if (detail::update_changes_cells(update_))
    batch.cells_changed();
}

}  // namespace baton::dynamics
