#pragma once
/// \file
/// One force evaluation over slots of a batch, for any potential (see potential.hpp): forces,
/// energy, fmax and virial of each Active system.

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <vector>

#include "baton/core/error.hpp"
#include "baton/dynamics/detail/checks.hpp"
#include "baton/dynamics/lennard_jones.hpp"
#include "baton/dynamics/neighbours.hpp"
#include "baton/dynamics/potential.hpp"
#include "baton/systems/cell.hpp"

namespace baton::dynamics {

namespace detail {

/// Throws baton::Error naming the first Active periodic system among slots [first, first + n)
/// whose cell is too small for the cutoff (cutoff_problem).
void check_cutoff(const systems::SystemsBatch& batch, int first, int n, double cutoff_squared);

/// The kernel launches over slots [first, first + n) of `batch`, one team per system. Without
/// `half_pairs`: one launch, system_teams(n). With it (the host's pair loops): teams of one thread;
/// and on a host space of more than one thread, for a potential whose kernel runs on wide teams
/// (`wide`: wide_teams_for), the systems of at least wide_team_atoms atoms (that use a list) in a
/// launch of their own, on teams of all the threads, with their accumulators reserved in `lists`.
std::vector<SystemLaunch> system_launches(const systems::SystemsBatch& batch, int first, int n,
                                          NeighbourLists& lists, bool half_pairs, bool wide);

/// Sets the velocities of the fixed atoms (SystemsBatch::movable 0) of slots [first, first + n)
/// to 0: a stage's enter() does, whatever velocities they arrived with.
void stop_fixed_atoms(systems::SystemsBatch& batch, int first, int n);

/// Sets the conserved quantity (SystemsBatch::conserved) of slots [first, first + n) to NaN: a
/// stage's enter() does, so that a system does not carry the last stage's into one without.
void forget_conserved(systems::SystemsBatch& batch, int first, int n);

/// Stores one system's results in the batch's per-system Views (by one thread of the team).
template <class Batch>
KOKKOS_INLINE_FUNCTION void store(const Batch& b, int s, const SystemForces& r, bool virial) {
  b.energy(s) = r.energy;
  b.fmax(s) = r.fmax;
  if (virial)
    for (int c = 0; c < 6; ++c)
      b.virial(s, c) = r.virial[c];
}

/// The per-system Views a force kernel writes (copied into the kernel, so no systems::SystemsBatch
/// there).
struct ForceOutputs {
  systems::SystemsBatch::view<double*> energy;
  systems::SystemsBatch::view<double*> fmax;
  systems::SystemsBatch::view<double* [6]> virial;
  explicit ForceOutputs(const systems::SystemsBatch& b)
      : energy(b.energy), fmax(b.fmax), virial(b.virial) {}
};

/// One system inside a stage's advance() kernel: where its atoms are, its cell, its last forces'
/// results, its step count and whether it broke or is done.
struct StageSystem {
  int slot = 0, begin = 0, end = 0;
  systems::CellImage cell;
  SystemForces r;
  std::int64_t taken = 0;
  std::int64_t call_first = 0;  ///< its steps when the stage call began
  bool broke = false;           ///< its numbers broke (now or in an earlier stage): failed
  int failure = 0;              ///< why (a Failure code), when it broke in this call
  bool done = false;            ///< finished in this stage
  bool list_full = false;       ///< its neighbour list must grow before it goes on
  /// It had an interacting pair when it entered the stage: it dissociates when none is left.
  bool bound = false;
  /// Its atoms that move (begin() counts them; the others are fixed: their forces are zeroed and
  /// fmax leaves them out).
  int moving = 0;
  /// Every force call of the stage computes the virial (r.virial current after each step, and
  /// stored at the end of every call), for an Update that reads it (a variable cell).
  bool virial_each_step = false;
  KOKKOS_INLINE_FUNCTION bool has_fixed() const { return moving < end - begin; }
};

/// What the integrators' kernels read and write of the batch, and the steps every integrator
/// shares around its own update: begin a system, evaluate forces, count a step, finish.
struct StageViews {
  Positions x, v, f;
  SpeciesView species;
  AtomScratch atom_scratch;
  systems::SystemsBatch::view<double*> mass;
  MovableView movable;
  systems::SystemsBatch::view<int*> offset, count, status, failed, pbc;
  systems::SystemsBatch::view<double* [9]> cell;
  systems::SystemsBatch::view<std::int64_t*> id, steps;
  systems::SystemsBatch::view<int*> forces_stale;
  systems::SystemsBatch::view<double * [systems::batch_scratch_size]> scratch;
  ForceOutputs out;
  NeighbourData lists;

  StageViews(const systems::SystemsBatch& b, const NeighbourLists& l)
      : x(b.positions),
        v(b.velocities),
        f(b.forces),
        species(b.species),
        atom_scratch(b.atom_scratch),
        mass(b.masses),
        movable(b.movable),
        offset(b.offset),
        count(b.count),
        status(b.status),
        failed(b.failed),
        pbc(b.pbc),
        cell(b.cell),
        id(b.id),
        steps(b.steps),
        forces_stale(b.forces_stale),
        scratch(b.scratch),
        out(b),
        lists(l.data()) {}

  /// Whether slot s may take steps in this call: true unless its entry forces came from a list
  /// that did not fit (systems::SystemsBatch::forces_stale) and, computed again now, still do not
  /// fit (the lists grow first: the call leaves it as it is). Computed again, they are stored as
  /// enter() stores them. Call it first, on every thread of the team.
  template <class K>
  KOKKOS_INLINE_FUNCTION bool ready(const TeamMember& team, const K& pot, int s) const {
    if (forces_stale(s) == 0)
      return true;
    SystemForces r;
    const systems::CellImage c = systems::make_cell_image(&cell(s, 0), pbc(s));
    const int b = offset(s), e = offset(s) + count(s);
    if (!system_forces<on_host, true>(team, pot, lists, s, id(s), x, species, f, atom_scratch, b, e,
                                      c, r))
      return false;
    if (team_moving(team, movable, b, e) < e - b)
      hold_fixed(team, movable, f, b, e, r);
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      store(out, s, r, true);
      forces_stale(s) = 0;
    });
    team.team_barrier();
    return true;
  }

  /// Slot s as the last call left it. A system that failed earlier, or whose numbers are broken
  /// already, is done and takes no steps. At its first call in the stage (scratch(s,
  /// systems::bound_column) 0, as enter_forces() left it) it learns whether it has an interacting
  /// pair: only then can it dissociate (stepped()).
  template <class K>
  KOKKOS_INLINE_FUNCTION StageSystem begin(const TeamMember& team, const K& pot, int s) const {
    StageSystem sys = load(s);
    count_moving(team, sys);
    sys.failure = failed(s) != 0 ? 0 : broken(team, x, v, f, sys.begin, sys.end, sys.r);
    sys.broke = sys.done = failed(s) != 0 || sys.failure != 0;
    const int column = systems::bound_column;  // a copy: device code indexes with it
    const double known = scratch(s, column);
    if (known != 0)
      sys.bound = known == 2;
    else if (!sys.broke && sys.end - sys.begin >= 2)  // a force means an interacting pair
      sys.bound =
          sys.r.fmax != 0 || system_interacts<on_host>(team, pot, lists, s, id(s), x, species,
                                                       sys.begin, sys.end, sys.cell);
    return sys;
  }

  /// Slot s as stored: its atoms, cell, energy, fmax and virial (current after enter() and for a
  /// stage whose force calls all compute it, StageSystem::virial_each_step; otherwise as the last
  /// call that finished a system left it), steps, where the call began, and whether it is bound
  /// (as begin() found out; false when not known yet). Not broken, not done.
  KOKKOS_INLINE_FUNCTION StageSystem load(int s) const {
    StageSystem sys;
    sys.slot = s;
    sys.begin = offset(s);
    sys.end = offset(s) + count(s);
    sys.cell = systems::make_cell_image(&cell(s, 0), pbc(s));
    sys.r.energy = out.energy(s);
    sys.r.fmax = out.fmax(s);
    for (int c = 0; c < 6; ++c)
      sys.r.virial[c] = out.virial(s, c);
    sys.taken = steps(s);
    sys.call_first = lists.call_first(s);
    const int column = systems::bound_column;
    sys.bound = scratch(s, column) == 2;
    return sys;
  }

  /// Counts the system's atoms that move into sys.moving (begin() does; a kernel that load()s a
  /// system and computes its forces or degrees of freedom calls it too). Every thread of the team.
  KOKKOS_INLINE_FUNCTION void count_moving(const TeamMember& team, StageSystem& sys) const {
    sys.moving = team_moving(team, movable, sys.begin, sys.end);
  }

  /// True when the system took this call's `max_steps` steps.
  KOKKOS_INLINE_FUNCTION bool call_over(const StageSystem& sys, int max_steps) const {
    return sys.taken - sys.call_first >= max_steps;
  }

  /// Forces, energy and fmax (and the virial when Virial) at the current positions.
  template <bool Virial, class K>
  KOKKOS_INLINE_FUNCTION void forces(const TeamMember& team, const K& pot, StageSystem& sys) const {
    if (!system_forces<on_host, Virial>(team, pot, lists, sys.slot, id(sys.slot), x, species, f,
                                        atom_scratch, sys.begin, sys.end, sys.cell, sys.r))
      sys.list_full = true;
    else if (sys.has_fixed())
      hold_fixed(team, movable, f, sys.begin, sys.end, sys.r);
  }

  /// Counts a step; a system whose numbers broke, or that dissociated (it was bound on entry and
  /// no two of its atoms interact now: every force exactly 0 and system_interacts() false), is
  /// done (and failed). True when the system stops for this call: it broke, or its neighbour list
  /// must grow first.
  template <class K>
  KOKKOS_INLINE_FUNCTION bool stepped(const TeamMember& team, const K& pot,
                                      StageSystem& sys) const {
    ++sys.taken;
    if (sys.failure == 0)  // else the step itself failed it (IntegratorSystem::fail)
      sys.failure = broken(team, x, v, f, sys.begin, sys.end, sys.r);
    if (sys.failure == 0 && sys.bound && sys.r.fmax == 0 &&
        !system_interacts<on_host>(team, pot, lists, sys.slot, id(sys.slot), x, species, sys.begin,
                                   sys.end, sys.cell))
      sys.failure = static_cast<int>(systems::Failure::dissociated);
    if (sys.failure != 0)
      sys.broke = sys.done = true;
    return sys.broke || sys.list_full;
  }

  /// Ends the call for this system: when it is done (and not broken), the virial at the final
  /// positions; then energy, fmax, virial, steps, the failed flag and the status are stored.
  template <class K>
  KOKKOS_INLINE_FUNCTION void finish(const TeamMember& team, const K& pot, StageSystem& sys) const {
    team.team_barrier();
    if (sys.done && !sys.broke)
      forces<true>(team, pot, sys);
    store_system(team, sys);
  }

  /// Stores energy, fmax, the virial when the system is done (or virial_each_step), steps, the
  /// failed flag, whether it is bound and the status (finish() without the final forces; one
  /// thread of the team).
  KOKKOS_INLINE_FUNCTION void store_system(const TeamMember& team, const StageSystem& sys) const {
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      store(out, sys.slot, sys.r, sys.done || sys.virial_each_step);
      steps(sys.slot) = sys.taken;
      const int column = systems::bound_column;
      scratch(sys.slot, column) = sys.bound ? 2 : 1;
      if (sys.failure != 0)
        failed(sys.slot) = sys.failure;
      if (sys.done)
        status(sys.slot) = static_cast<int>(systems::SystemStatus::finished);
    });
  }
};

template <bool HalfPairs, class K>
void launch_forces(const K& pot, systems::SystemsBatch& batch,
                   const std::vector<SystemLaunch>& launches, const NeighbourData& lists) {
  const auto x = batch.positions;
  const auto f = batch.forces;
  const auto species = batch.species;
  const auto scratch = batch.atom_scratch;
  const auto offset = batch.offset;
  const auto count = batch.count;
  const auto status = batch.status;
  const auto cells = batch.cell;
  const auto pbc = batch.pbc;
  const auto id = batch.id;
  const auto stale = batch.forces_stale;
  const auto movable = batch.movable;
  const ForceOutputs out(batch);
  for (const SystemLaunch& launch : launches) {
    const SlotMap map = launch.map;
    Kokkos::parallel_for(
        "baton::dynamics::forces", launch.policy, KOKKOS_LAMBDA(const TeamMember& team) {
          const int s = map.slot(team.league_rank());
          if (status(s) != static_cast<int>(systems::SystemStatus::active))
            return;
          SystemForces r;
          const systems::CellImage cell = systems::make_cell_image(&cells(s, 0), pbc(s));
          const int b = offset(s), e = offset(s) + count(s);
          const bool fits = system_forces<HalfPairs, true>(team, pot, lists, s, id(s), x, species,
                                                           f, scratch, b, e, cell, r);
          if (fits && team_moving(team, movable, b, e) < e - b)
            hold_fixed(team, movable, f, b, e, r);
          Kokkos::single(Kokkos::PerTeam(team), [&]() {
            store(out, s, r, true);
            stale(s) = fits ? 0 : 1;
          });
        });
  }
}

/// compute_forces with the pair loop chosen explicitly (tests run the GPU loop on the host too, and
/// the host loop in a build with BATON_DEVICE_ALGORITHMS_ON_HOST) and the neighbour lists given
/// (`skin`: theirs).
template <class P = LennardJones>
void compute_forces(const P& potential, systems::SystemsBatch& batch, int first_slot, int n_slots,
                    bool half_pairs, NeighbourLists& lists, double skin, bool may_defer = false) {
  const auto pot = potential.kernel();
  check_slots("compute_forces", batch, first_slot, n_slots);
  if (n_slots == 0)
    return;
  check_cutoff(batch, first_slot, n_slots, pot.cutoff_squared());
  if (half_pairs && !host_space)
    throw Error("baton::dynamics::compute_forces: the half-pair loop runs on host spaces only");
  lists.prepare(batch, pot.cutoff_squared(), skin);
  const std::vector<SystemLaunch> launches =
      system_launches(batch, first_slot, n_slots, lists, half_pairs, wide_teams_for<kernel_t<P>>);
  do {  // again, with lists that fit, when one did not (forces are recomputed in full)
    if (half_pairs)
      launch_forces<host_space>(pot, batch, launches, lists.data());  // host only
    else
      launch_forces<false>(pot, batch, launches, lists.data());
    if (may_defer && batch.list_overflow_deferred())
      return;  // a list that did not fit: forces_stale, for the stage's next call (enter_forces)
  } while (lists.grow(batch, first_slot, n_slots));
}

template <class P = LennardJones>
void compute_forces(const P& potential, systems::SystemsBatch& batch, int first_slot, int n_slots,
                    bool half_pairs) {
  NeighbourLists lists{NeighbourOptions{}};
  compute_forces(potential, batch, first_slot, n_slots, half_pairs, lists, 0.0);
}

}  // namespace detail

/// Forces, per-system energy, fmax (largest atom force norm) and virial for slots [first_slot,
/// first_slot + n_slots), skipping systems that are not Active. A system's result depends only on
/// its own atoms (bit-identical in any slot, beside any other systems, run to run).
template <class P = LennardJones>
void compute_forces(const P& potential, systems::SystemsBatch& batch, int first_slot, int n_slots) {
  detail::compute_forces(potential, batch, first_slot, n_slots, detail::on_host);
}

/// compute_forces with a stage's neighbour lists (kept for its next calls) and skin.
template <class P = LennardJones>
void compute_forces(const P& potential, systems::SystemsBatch& batch, int first_slot, int n_slots,
                    NeighbourLists& lists, double skin) {
  detail::compute_forces(potential, batch, first_slot, n_slots, detail::on_host, lists, skin);
}

/// compute_forces for a stage's enter() whose advance() kernel calls StageViews::ready() first (the
/// built-in stages). In a batch whose owner reads the list overflow itself
/// (systems::SystemsBatch::defer_list_overflow()) it reads nothing back: a system whose list did
/// not fit keeps the forces of the build's bins, marked forces_stale, and ready() computes them
/// again once the lists grew, before its first step. Elsewhere, compute_forces. It also forgets
/// whether those systems were bound (scratch column systems::bound_column), which their first
/// advance() finds out.
template <class P = LennardJones>
void enter_forces(const P& potential, systems::SystemsBatch& batch, int first_slot, int n_slots,
                  NeighbourLists& lists, double skin) {
  detail::check_slots("enter_forces", batch, first_slot, n_slots);
  const auto scratch = batch.scratch;
  const int column = systems::bound_column;
  Kokkos::parallel_for(  // not known yet whether they are bound: the first advance() finds out
      "baton::dynamics::enter_bound",
      Kokkos::RangePolicy<systems::SystemsBatch::execution_space>(first_slot, first_slot + n_slots),
      KOKKOS_LAMBDA(int s) { scratch(s, column) = 0; });
  detail::compute_forces(potential, batch, first_slot, n_slots, detail::on_host, lists, skin, true);
}

}  // namespace baton::dynamics
