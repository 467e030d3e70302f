#pragma once
/// \file
/// Batch models: potentials that evaluate a whole batch of systems in one call, such as
/// machine-learned interatomic potentials (a TorchScript file through libtorch:
/// baton/models/torch_model.hpp) or your own BatchModel. A Model handle is a stage's potential:
/// FireStage<Model>, VerletStage<Model>, LangevinStage<Model>, and IntegratorStage<Model, U> for
/// any Update U that splits its step around the force call (integrator.hpp). docs/models.md.
///
/// Per step of such a stage: one kernel runs every stepping system's before_forces(), the model
/// evaluates those systems together (their edges found through the stage's neighbour lists), and
/// a second kernel runs after_forces() and the checks every integrator shares.

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "baton/dynamics/fire.hpp"
#include "baton/dynamics/forces.hpp"
#include "baton/dynamics/integrator.hpp"
#include "baton/dynamics/langevin.hpp"
#include "baton/dynamics/neighbours.hpp"
#include "baton/dynamics/stage.hpp"
#include "baton/dynamics/units.hpp"
#include "baton/dynamics/verlet.hpp"
#include "baton/systems/host_system.hpp"
#include "baton/systems/systems_batch.hpp"

namespace baton::dynamics {

/// The systems a model evaluates, as Views in the batch's memory space (row-major, so that a
/// backend wraps them without copies): N atoms, S systems and E edges, the first rows of Views
/// that may be longer. The atoms of system k are rows [ptr(k), ptr(k + 1)). The edges are every
/// ordered pair (i, j) of atoms of one system closer than the model's cutoff, in both directions
/// (a full list), with the image of j: r_ij = pos(j) - pos(i) + shift . cell (shift: integer
/// multiples of the cell's rows; 0 in a cluster).
struct ModelInputs {
  template <class T>
  using view = systems::SystemsBatch::view<T>;
  int atoms = 0, systems = 0, edges = 0;
  view<double* [3]> pos;              ///< [N][3] positions
  view<std::int64_t*> atom_types;     ///< [N] species index (the run's species table)
  view<std::int64_t*> batch;          ///< [N] system index in [0, S)
  view<std::int64_t*> ptr;            ///< [S + 1] atom offsets
  view<double* [9]> cell;             ///< [S] cell rows a, b, c (all 0 in a cluster)
  view<int* [3]> pbc;                 ///< [S] 1 for a periodic axis
  view<std::int64_t**> edge_index;    ///< [2][E]: row 0 the centre i, row 1 the neighbour j
  view<double* [3]> edge_cell_shift;  ///< [E][3] (first rows) the image of j, in cell vectors
  /// [N + 1] the edges of atom a (its centre) are [edge_ptr(a), edge_ptr(a + 1)): edges come
  /// sorted by centre (Baton's addition to the convention, for models written in C++)
  view<std::int64_t*> edge_ptr;
};

/// What a model writes, in the same Views' memory space.
struct ModelOutputs {
  template <class T>
  using view = systems::SystemsBatch::view<T>;
  view<double*> energy;      ///< [S] energy of each system
  view<double* [3]> forces;  ///< [N][3] -dE/dpos
  /// [S] virial -dE/d(strain): xx, yy, zz, xy, xz, yz (SystemForces::virial's convention)
  view<double* [6]> virial;
};

/// A model of the energy of whole batches. Implement it for your own model; a Model handle makes
/// it a stage's potential.
class BatchModel {
 public:
  virtual ~BatchModel() = default;
  /// Atoms closer than this interact; the edges are the pairs within it.
  virtual double cutoff() const = 0;
  /// Energies, forces and virials of the systems of `in` into the first S and N rows of `out`.
  /// Throws baton::Error (or std::exception) when the model fails; non-finite numbers are failed
  /// systems, not errors.
  virtual void evaluate(const ModelInputs& in, const ModelOutputs& out) = 0;

  /// Bytes the model holds between calls (parameters, buffers); 0 when not known.
  virtual std::int64_t state_bytes() const { return 0; }
  /// Starts counting the memory the model allocates itself while it evaluates (what
  /// probe_memory() measures).
  virtual void begin_memory_count() {}
  /// The most bytes the model's own allocations held at once since begin_memory_count(), or -1
  /// when it cannot count them (probe_memory() then counts only Baton's buffers).
  virtual std::int64_t end_memory_count() { return -1; }
};

/// What one model call takes in memory, as probe_memory() measured it: a fixed part plus bytes
/// per atom and per edge of the call. Baton's gathered inputs and outputs are in it (with the room
/// its buffers keep for growth), and so are the model's own allocations while it runs, when the
/// model counts them (TorchModel does, on the host).
struct ModelMemory {
  std::int64_t state = 0;      ///< bytes the model holds between calls (BatchModel::state_bytes())
  double fixed = 0;            ///< bytes of every call, whatever its size
  double per_atom = 0;         ///< bytes per atom of a call
  double per_edge = 0;         ///< bytes per edge of a call
  bool model_counted = false;  ///< whether the model's own allocations are counted
  /// The budget fraction that edge_capacity() leaves unused: estimates that forget part of the
  /// model's memory (allocator caches, fragmentation, libraries' workspaces) then still fit.
  static constexpr double headroom = 0.5;
  /// The most edges one call of `atoms` atoms may have so that state + fixed + per_atom * atoms +
  /// per_edge * edges stays within (1 - headroom) * `budget` bytes; -1 when not even a call with
  /// no edges fits, std::int64_t's largest when edges take no memory.
  std::int64_t edge_capacity(double budget, std::int64_t atoms) const;
  /// "state 1.2 MB, 160 B per atom, 2.1 kB per edge" (and "(Baton's buffers only)" when the
  /// model's own allocations are not counted).
  std::string describe() const;
};

/// The memory one call of `model` takes (ModelMemory), measured on copies of `sample`: calls on
/// `copies` and 2 `copies` copies, and on `copies` copies stretched by 1.3 (fewer edges per atom),
/// separate the parts per atom and per edge. Pick a sample as dense as the run's densest system.
/// Throws baton::Error when `sample` is not a valid system or the model fails.
ModelMemory probe_memory(BatchModel& model, const systems::HostSystem& sample, int copies = 4);

/// The edges of each system at `cutoff` (ordered pairs closer than it, in both directions, as a
/// model's edge list has them), counted through the same neighbour lists the stages use: what a
/// model call on these systems will see. Throws baton::Error for a system that is not valid.
std::vector<std::int64_t> count_edges(const std::vector<systems::HostSystem>& systems,
                                      double cutoff);

namespace detail {

/// What a model-driven stage's kernels need of the model: its cutoff, for the pair search (a
/// many-body kernel's view of "interacting": two atoms closer than the cutoff).
struct ModelCutoff {
  double rc2 = 0;
  KOKKOS_INLINE_FUNCTION double cutoff_squared() const { return rc2; }
};

/// Grows `v` to at least `n` rows (half as many again, so that growth is rare), keeping nothing.
template <class V>
void grow_view(V& v, std::size_t n, const std::string& label) {
  if (v.extent(0) >= n && v.data() != nullptr)
    return;
  v = V(Kokkos::view_alloc(label, Kokkos::WithoutInitializing), n + n / 2 + 1);
}

/// The vector r_ij = pos(j) - pos(i) + shift . cell of edge e of `in`, into r; returns |r|^2.
KOKKOS_INLINE_FUNCTION double edge_vector(const ModelInputs& in, std::int64_t e, double* r) {
  const std::int64_t i = in.edge_index(0, e), j = in.edge_index(1, e), s = in.batch(i);
  double r2 = 0;
  for (int d = 0; d < 3; ++d) {
    r[d] = in.pos(j, d) - in.pos(i, d) + in.edge_cell_shift(e, 0) * in.cell(s, d) +
           in.edge_cell_shift(e, 1) * in.cell(s, 3 + d) +
           in.edge_cell_shift(e, 2) * in.cell(s, 6 + d);
    r2 += r[d] * r[d];
  }
  return r2;
}

/// The gathered inputs, edges and outputs of a model's evaluations (one per stage).
class ModelWorkspace {
 public:
  /// Evaluates `model` on the Active slots s of `batch` with selected(s) != 0 (slots [0,
  /// num_systems())): their edges through `lists` (prepared for the model's cutoff), then energy,
  /// fmax, forces and virial written into the batch. Returns the number of systems evaluated.
  /// With max_edges > 0, no call has more edges: the systems are split over several calls, in
  /// slot order, and a system with more edges than max_edges on its own is not evaluated but
  /// failed (systems::Failure::edges; its selected flag cleared).
  int evaluate(BatchModel& model, systems::SystemsBatch& batch,
               const systems::SystemsBatch::view<int*>& selected, NeighbourLists& lists,
               std::int64_t max_edges = 0);
  /// evaluate() one system at a time (the selected slots read back to the host first).
  int evaluate_each(BatchModel& model, systems::SystemsBatch& batch,
                    const systems::SystemsBatch::view<int*>& selected, NeighbourLists& lists,
                    std::int64_t max_edges = 0);
  /// A View of at least `n` flags (the selection evaluate() reads).
  const systems::SystemsBatch::view<int*>& selection(int n);
  /// Edges of the last evaluation.
  int last_edges() const noexcept { return in_.edges; }
  /// Model calls so far, and those of them that were split (max_edges).
  std::int64_t calls() const noexcept { return calls_; }
  std::int64_t split_calls() const noexcept { return split_calls_; }

 private:
  /// evaluate() over several calls of at most max_edges edges each (the gathered counts of the
  /// call that was too large are in edge_start_).
  int evaluate_split(BatchModel& model, systems::SystemsBatch& batch,
                     const systems::SystemsBatch::view<int*>& selected, NeighbourLists& lists,
                     std::int64_t max_edges);

  std::int64_t calls_ = 0, split_calls_ = 0;
  systems::SystemsBatch::view<int*> part_;  ///< the selection of one part of a split call
  ModelInputs in_;
  ModelOutputs out_;
  systems::SystemsBatch::view<int*> selected_, one_;
  systems::SystemsBatch::view<std::int64_t*> slot_first_;  ///< per slot: system index, first atom
  systems::SystemsBatch::view<int*> slot_system_;
  systems::SystemsBatch::view<std::int64_t*> edge_start_;  ///< per atom: first edge
  /// edge_index's memory: [2][E] in its first 2 E entries, so that the [2][E] array is contiguous
  /// (a backend wraps it without a copy) and its layout depends only on E
  systems::SystemsBatch::view<std::int64_t*> edge_buffer_;
};

/// Marks Active slots [first, first + n) of `batch` in `selected` (others 0, up to num_systems()).
void select_entering(const systems::SystemsBatch& batch, int first, int n,
                     const systems::SystemsBatch::view<int*>& selected);

}  // namespace detail

/// A batch model as a stage's potential: a handle that copies share (the stages of one rank share
/// its model).
class Model {
 public:
  /// No model: kernel() throws.
  Model() {}  // NOLINT(modernize-use-equals-default): see systems::SystemsBatch()
  /// `model`, called on all the systems that step together, or, with `one_system_per_call`, on
  /// one system at a time. A model whose numbers for one system depend, even in the last bits, on
  /// the other systems of its call (a reduction across the batch, a kernel that treats a tensor's
  /// last elements apart) gives results that depend on the batch, and so on the rank count; one
  /// system per call rules that out, at the cost of more, smaller calls.
  explicit Model(std::shared_ptr<BatchModel> model, bool one_system_per_call = false);
  /// `model`, with `max_edges` > 0 the most edges of one call (ModelWorkspace::evaluate splits
  /// larger ones; a system with more edges on its own fails with systems::Failure::edges). A
  /// ModelMemory's edge_capacity() gives it for a memory budget.
  Model(std::shared_ptr<BatchModel> model, bool one_system_per_call, std::int64_t max_edges);

  /// The model (throws baton::Error when there is none).
  BatchModel& model() const;
  /// Checks that there is a model with a positive, finite cutoff (baton::Error) and returns the
  /// kernels' view of it.
  detail::ModelCutoff kernel() const;
  bool one_system_per_call() const noexcept { return one_system_per_call_; }
  /// The most edges of one call (0: no limit).
  std::int64_t max_edges() const noexcept { return max_edges_; }
  /// Evaluates the model on the selected slots (detail::ModelWorkspace::evaluate or
  /// evaluate_each); returns the number of systems evaluated.
  int evaluate(detail::ModelWorkspace& work, systems::SystemsBatch& batch,
               const systems::SystemsBatch::view<int*>& selected, NeighbourLists& lists) const;

 private:
  std::shared_ptr<BatchModel> model_;
  bool one_system_per_call_ = false;
  std::int64_t max_edges_ = 0;
};

/// An integrator over a batch model: IntegratorStage's contract (integrator.hpp) with the Update's
/// step split (before_forces, after_forces), the forces of all the batch's stepping systems
/// computed by one model call in between. The model's virial comes with every evaluation.
template <class Update>
class IntegratorStage<Model, Update> : public Stage {
 public:
  using System = IntegratorSystem<detail::ModelCutoff>;

  explicit IntegratorStage(Model model = {}, Update update = {}, NeighbourOptions neighbours = {},
                           const Units& units = Units::lj())
      : potential_(std::move(model)),
        update_(std::move(update)),
        skin_(neighbours.skin_in(units)),
        lists_(neighbours),
        work_(std::make_shared<detail::ModelWorkspace>()) {
    static_assert(detail::has_split_step<Update, System>::value,
                  "a stage over a batch model needs an Update with before_forces(System&) and "
                  "after_forces(System&) (see baton/dynamics/integrator.hpp): the model "
                  "evaluates the whole batch between them");
    (void)potential_.kernel();
  }

  std::string name() const override { return update_.name(); }
  void enter(systems::SystemsBatch& batch, int first, int n) override;
  void advance(systems::SystemsBatch& batch, int max_steps) override;
  double cost_estimate() const override { return detail::update_cost_estimate(update_); }
  long step_limit() const override { return detail::update_step_limit(update_); }

  const Model& potential() const noexcept { return potential_; }
  const Update& update() const noexcept { return update_; }
  const NeighbourLists& neighbour_lists() const noexcept { return lists_; }
  double skin() const noexcept { return skin_; }
  /// Edges of the model's last evaluation.
  int last_edges() const noexcept { return work_->last_edges(); }

 private:
  Model potential_;
  Update update_;
  double skin_;
  NeighbourLists lists_;
  std::shared_ptr<detail::ModelWorkspace> work_;
};

// Implementation.

template <class Update>
void IntegratorStage<Model, Update>::enter(systems::SystemsBatch& batch, int first, int n) {
  detail::check_slots("IntegratorStage::enter", batch, first, n);
  if constexpr (detail::has_enter<Update>::value)
    update_.enter(batch, first, n);
  if (n == 0)
    return;
  detail::forget_conserved(batch, first, n);
  detail::stop_fixed_atoms(batch, first, n);
  const double rc2 = potential_.kernel().rc2;
  detail::check_cutoff(batch, first, n, rc2);
  const auto scratch = batch.scratch;
  const auto stale = batch.forces_stale;
  const int column = systems::bound_column;
  Kokkos::parallel_for(  // not known yet whether they are bound: the first advance() finds out
      "baton::dynamics::model_enter",
      Kokkos::RangePolicy<systems::SystemsBatch::execution_space>(first, first + n),
      KOKKOS_LAMBDA(int s) {
        scratch(s, column) = 0;
        stale(s) = 0;
      });
  lists_.prepare(batch, rc2, skin_);
  const auto& selected = work_->selection(batch.num_systems());
  detail::select_entering(batch, first, n, selected);
  potential_.evaluate(*work_, batch, selected, lists_);
}

template <class Update>
void IntegratorStage<Model, Update>::advance(systems::SystemsBatch& batch, int max_steps) {
  detail::check_max_steps("IntegratorStage::advance", max_steps);
  const int n = batch.num_systems();
  if (n == 0 || max_steps == 0)
    return;
  const detail::ModelCutoff pot = potential_.kernel();
  const Update update = update_;
  const long limit = update_.step_limit();
  constexpr int active = static_cast<int>(systems::SystemStatus::active);
  const std::string label = "baton::dynamics::" + name();
  lists_.begin_call(batch, pot.rc2, skin_);
  const auto selected = work_->selection(n);
  const auto conserved = batch.conserved;
  for (int k = 0;; ++k) {
    const bool first_step = k == 0;
    // Which systems take a step, and their moves up to the forces.
    const detail::StageViews before(batch, lists_);
    Kokkos::parallel_for(
        label + "_before", detail::system_teams(n), KOKKOS_LAMBDA(const detail::TeamMember& team) {
          const int s = team.league_rank();
          if (before.status(s) != active) {
            Kokkos::single(Kokkos::PerTeam(team), [&]() { selected(s) = 0; });
            return;
          }
          detail::StageSystem sys = before.begin(team, pot, s);
          sys.virial_each_step = true;  // the model's virial comes with every evaluation
          System system(team, pot, before, sys);
          if (first_step)
            detail::update_begin(update, system);
          bool go = false;
          if (!sys.done) {
            if (detail::update_finished(update, system, limit))
              sys.done = true;
            else
              go = !before.call_over(sys, max_steps);
          }
          if (go) {
            update.before_forces(system);
            if (sys.failure != 0) {  // the move failed it (IntegratorSystem::fail): no forces
              ++sys.taken;
              sys.broke = sys.done = true;
              go = false;
            }
          }
          team.team_barrier();  // every thread loaded the state before one stores it
          system.store_state();
          before.store_system(team, sys);
          Kokkos::single(Kokkos::PerTeam(team), [&]() { selected(s) = go ? 1 : 0; });
        });
    if (potential_.evaluate(*work_, batch, selected, lists_) == 0)
      break;
    // The rest of the step with the new forces, and the checks.
    const detail::StageViews after(batch, lists_);
    Kokkos::parallel_for(
        label + "_after", detail::system_teams(n), KOKKOS_LAMBDA(const detail::TeamMember& team) {
          const int s = team.league_rank();
          if (selected(s) == 0)
            return;
          detail::StageSystem sys = after.load(s);
          after.count_moving(team, sys);
          sys.virial_each_step = true;
          System system(team, pot, after, sys);
          update.after_forces(system);
          team.team_barrier();
          after.stepped(team, pot, sys);
          team.team_barrier();
          system.store_state();
          after.store_system(team, sys);
          detail::store_conserved(update, system, team, conserved, s);
        });
  }
  if (detail::update_changes_cells(update_))
    batch.cells_changed();
}

extern template class IntegratorStage<Model, FireUpdate>;
extern template class IntegratorStage<Model, VerletUpdate>;
extern template class IntegratorStage<Model, LangevinUpdate>;
extern template class FireStage<Model>;
extern template class VerletStage<Model>;
extern template class LangevinStage<Model>;

}  // namespace baton::dynamics
