#include "baton/dynamics/model.hpp"

#include <cmath>
#include <string>

#include "baton/core/error.hpp"
#include "baton/dynamics/potential.hpp"
#include "baton/dynamics/team.hpp"

namespace baton::dynamics {

Model::Model(std::shared_ptr<BatchModel> model, bool one_system_per_call)
    : model_(std::move(model)), one_system_per_call_(one_system_per_call) {}

Model::Model(std::shared_ptr<BatchModel> model, bool one_system_per_call, std::int64_t max_edges)
    : model_(std::move(model)), one_system_per_call_(one_system_per_call), max_edges_(max_edges) {
  if (max_edges < 0)
    throw Error("baton::dynamics::Model: max_edges is " + std::to_string(max_edges) +
                "; give 0 (no limit) or more");
}

int Model::evaluate(detail::ModelWorkspace& work, systems::SystemsBatch& batch,
                    const systems::SystemsBatch::view<int*>& selected,
                    NeighbourLists& lists) const {
  return one_system_per_call_ ? work.evaluate_each(model(), batch, selected, lists, max_edges_)
                              : work.evaluate(model(), batch, selected, lists, max_edges_);
}

BatchModel& Model::model() const {
  if (!model_)
    throw Error("baton::dynamics::Model: no model (construct it with a BatchModel)");
  return *model_;
}

detail::ModelCutoff Model::kernel() const {
  const double rc = model().cutoff();
  if (!(rc > 0) || !std::isfinite(rc))
    throw Error("baton::dynamics::Model: the model's cutoff is " + std::to_string(rc) +
                ", but it must be positive and finite");
  return detail::ModelCutoff{rc * rc};
}

namespace detail {

namespace {

using ExecPolicy = Kokkos::RangePolicy<ExecutionSpace>;

/// Where one selected slot's atoms are: batch rows [begin, end), gathered rows from a0, system k of
/// the evaluation (k < 0: the slot is not evaluated).
struct Gathered {
  int k = -1, begin = 0, end = 0;
  std::int64_t a0 = 0;
};
KOKKOS_INLINE_FUNCTION Gathered gathered(const systems::SystemsBatch::view<int*>& slot_system,
                                         const systems::SystemsBatch::view<std::int64_t*>& first,
                                         const systems::SystemsBatch::view<int*>& offset,
                                         const systems::SystemsBatch::view<int*>& count, int s) {
  return Gathered{slot_system(s), offset(s), offset(s) + count(s), first(s)};
}

template <class V>
void reserve(V& v, std::size_t n, const char* label) {
  grow_view(v, n, std::string("baton::model::") + label);
}

/// Slots s with flagged(s) != 0 fail with Failure::edges and leave the selection.
template <class Flags>
void fail_too_many_edges(systems::SystemsBatch& batch,
                         const systems::SystemsBatch::view<int*>& selected, const Flags& flagged,
                         int n) {
  const auto failed = batch.failed;
  const auto status = batch.status;
  const auto chosen = selected;
  Kokkos::parallel_for(
      "baton::dynamics::model_too_many_edges", ExecPolicy(0, n), KOKKOS_LAMBDA(int s) {
        if (flagged(s) == 0)
          return;
        chosen(s) = 0;
        failed(s) = static_cast<int>(systems::Failure::edges);
        status(s) = static_cast<int>(systems::SystemStatus::finished);
      });
  Kokkos::fence();
}

}  // namespace

const systems::SystemsBatch::view<int*>& ModelWorkspace::selection(int n) {
  reserve(selected_, static_cast<std::size_t>(n), "selected");
  return selected_;
}

void select_entering(const systems::SystemsBatch& batch, int first, int n,
                     const systems::SystemsBatch::view<int*>& selected) {
  const auto status = batch.status;
  constexpr int active = static_cast<int>(systems::SystemStatus::active);
  Kokkos::parallel_for(
      "baton::dynamics::model_select", ExecPolicy(0, batch.num_systems()), KOKKOS_LAMBDA(int s) {
        selected(s) = s >= first && s < first + n && status(s) == active ? 1 : 0;
      });
}

int ModelWorkspace::evaluate(BatchModel& model, systems::SystemsBatch& batch,
                             const systems::SystemsBatch::view<int*>& selected,
                             NeighbourLists& lists, std::int64_t max_edges) {
  const int n = batch.num_systems();
  if (n == 0)
    return 0;
  reserve(slot_first_, n, "slot_first");
  reserve(slot_system_, n, "slot_system");
  const auto status = batch.status;
  const auto count = batch.count;
  const auto slot_first = slot_first_;
  const auto slot_system = slot_system_;
  constexpr int active = static_cast<int>(systems::SystemStatus::active);
  // Systems and atoms before each selected slot, packed in one scan: atoms << 32 | systems.
  std::int64_t packed = 0;
  Kokkos::parallel_scan(
      "baton::dynamics::model_gather_scan", ExecPolicy(0, n),
      KOKKOS_LAMBDA(int s, std::int64_t& sum, bool final) {
        const bool use = selected(s) != 0 && status(s) == active;
        if (final) {
          slot_first(s) = sum >> 32;
          slot_system(s) = use ? static_cast<int>(sum & 0xffffffff) : -1;
        }
        if (use)
          sum += (static_cast<std::int64_t>(count(s)) << 32) + 1;
      },
      packed);
  const int systems = static_cast<int>(packed & 0xffffffff);
  const int atoms = static_cast<int>(packed >> 32);
  in_.systems = systems;
  in_.atoms = atoms;
  in_.edges = 0;
  if (systems == 0)
    return 0;

  reserve(in_.pos, atoms, "pos");
  reserve(in_.atom_types, atoms, "atom_types");
  reserve(in_.batch, atoms, "batch");
  reserve(in_.ptr, systems + 1, "ptr");
  reserve(in_.cell, systems, "cell");
  reserve(in_.pbc, systems, "pbc");
  reserve(out_.energy, systems, "energy");
  reserve(out_.forces, atoms, "forces");
  reserve(out_.virial, systems, "virial");
  reserve(edge_start_, atoms + 1, "edge_start");

  const ModelInputs in = in_;
  const ModelOutputs out = out_;
  const auto edge_start = edge_start_;
  const auto x = batch.positions;
  const auto species = batch.species;
  const auto offset = batch.offset;
  const auto cells = batch.cell;
  const auto pbc = batch.pbc;
  const auto id = batch.id;
  const NeighbourData data = lists.data();
  const double rc2 = model.cutoff() * model.cutoff();

  // Gather the selected systems and count each atom's edges.
  Kokkos::parallel_for(
      "baton::dynamics::model_gather", system_teams(n), KOKKOS_LAMBDA(const TeamMember& team) {
        const int s = team.league_rank();
        const Gathered g = gathered(slot_system, slot_first, offset, count, s);
        if (g.k < 0)
          return;
        const int k = g.k, begin = g.begin, end = g.end;
        const std::int64_t a0 = g.a0;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end), [&](int i) {
          const std::int64_t a = a0 + (i - begin);
          for (int d = 0; d < 3; ++d)
            in.pos(a, d) = x(i, d);
          in.atom_types(a) = species(i);
          in.batch(a) = k;
        });
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          in.ptr(k) = a0;
          if (k == systems - 1)
            in.ptr(systems) = a0 + (end - begin);
          for (int c = 0; c < 9; ++c)
            in.cell(k, c) = cells(s, c);
          for (int d = 0; d < 3; ++d)
            in.pbc(k, d) = (pbc(s) >> d) & 1;
        });
        const systems::CellImage cell = systems::make_cell_image(&cells(s, 0), pbc(s));
        with_system_pairs<false>(team, data, s, id(s), x, begin, end, cell, [&](const auto& pairs) {
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end), [&](int i) {
            std::int64_t m = 0;
            pairs.template each<false>(i, [&](int, double dx, double dy, double dz) {
              if (dx * dx + dy * dy + dz * dz < rc2)
                ++m;
            });
            edge_start(a0 + (i - begin)) = m;
          });
        });
      });
  std::int64_t edges = 0;
  Kokkos::parallel_scan(
      "baton::dynamics::model_edge_scan", ExecPolicy(0, atoms),
      KOKKOS_LAMBDA(int a, std::int64_t& sum, bool final) {
        const std::int64_t m = edge_start(a);
        if (final)
          edge_start(a) = sum;
        sum += m;
      },
      edges);
  if (edges > 0x7fffffff && !(max_edges > 0 && max_edges <= 0x7fffffff))
    throw Error("baton::dynamics::Model: " + std::to_string(edges) +
                " edges in one evaluation; the most is 2^31 - 1 (give the stage fewer atoms)");
  Kokkos::parallel_for(
      "baton::dynamics::model_edge_end", ExecPolicy(0, 1),
      KOKKOS_LAMBDA(int) { edge_start(atoms) = edges; });
  if (max_edges > 0 && edges > max_edges)
    return evaluate_split(model, batch, selected, lists, max_edges);
  in_.edges = static_cast<int>(edges);
  in_.edge_ptr = edge_start_;
  reserve(edge_buffer_, 2 * static_cast<std::size_t>(edges), "edge_index");
  reserve(in_.edge_cell_shift, static_cast<std::size_t>(edges), "edge_cell_shift");
  in_.edge_index = decltype(in_.edge_index)(edge_buffer_.data(), 2, edges);
  const auto edge_index = in_.edge_index;
  const auto edge_shift = in_.edge_cell_shift;

  // The edges, atom by atom in list order; the image of j from the displacement the pairs give.
  Kokkos::parallel_for(
      "baton::dynamics::model_edges", system_teams(n), KOKKOS_LAMBDA(const TeamMember& team) {
        const int s = team.league_rank();
        const Gathered g = gathered(slot_system, slot_first, offset, count, s);
        if (g.k < 0)
          return;
        const int begin = g.begin, end = g.end;
        const std::int64_t a0 = g.a0;
        const systems::CellImage cell = systems::make_cell_image(&cells(s, 0), pbc(s));
        const bool periodic = cell.periodic[0] || cell.periodic[1] || cell.periodic[2];
        with_system_pairs<false>(team, data, s, id(s), x, begin, end, cell, [&](const auto& pairs) {
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end), [&](int i) {
            std::int64_t e = edge_start(a0 + (i - begin));
            pairs.template each<false>(i, [&](int j, double dx, double dy, double dz) {
              if (dx * dx + dy * dy + dz * dz >= rc2)
                return;
              edge_index(0, e) = a0 + (i - begin);
              edge_index(1, e) = a0 + (j - begin);
              // pos_j + shift . H - pos_i = -(dx, dy, dz), so shift . H = (x_i - x_j) - d.
              const double u[3] = {x(i, 0) - x(j, 0) - dx, x(i, 1) - x(j, 1) - dy,
                                   x(i, 2) - x(j, 2) - dz};
              for (int c = 0; c < 3; ++c)
                edge_shift(e, c) = periodic ? systems::CellImage::nearest(u[0] * cell.inv[c] +
                                                                          u[1] * cell.inv[3 + c] +
                                                                          u[2] * cell.inv[6 + c])
                                            : 0.0;
              ++e;
            });
          });
        });
      });

  ModelInputs given = in_;
  model.evaluate(given, out_);
  ++calls_;

  // The results back into the batch's rows and slots.
  const auto f = batch.forces;
  const auto energy = batch.energy;
  const auto fmax = batch.fmax;
  const auto virial = batch.virial;
  const auto movable = batch.movable;
  Kokkos::parallel_for(
      "baton::dynamics::model_scatter", system_teams(n), KOKKOS_LAMBDA(const TeamMember& team) {
        const int s = team.league_rank();
        const Gathered g = gathered(slot_system, slot_first, offset, count, s);
        if (g.k < 0)
          return;
        const int k = g.k, begin = g.begin, end = g.end;
        const std::int64_t a0 = g.a0;
        const double f2 = team_max(team, begin, end, [&](int i) {
          double sum = 0;
          const bool moves = movable(i) != 0;  // a fixed atom's force is 0, left out of fmax
          for (int d = 0; d < 3; ++d) {
            const double fd = moves ? out.forces(a0 + (i - begin), d) : 0.0;
            f(i, d) = fd;
            sum += fd * fd;
          }
          return sum;  // non-finite forces fail the system in the checks (broken())
        });
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          energy(s) = out.energy(k);
          fmax(s) = math_sqrt(f2);
          for (int c = 0; c < 6; ++c)
            virial(s, c) = out.virial(k, c);
        });
      });
  lists.grow_after_call(batch);
  return systems;
}

int ModelWorkspace::evaluate_split(BatchModel& model, systems::SystemsBatch& batch,
                                   const systems::SystemsBatch::view<int*>& selected,
                                   NeighbourLists& lists, std::int64_t max_edges) {
  ++split_calls_;
  const int n = batch.num_systems();
  const auto host_edges = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace(), Kokkos::subview(edge_start_, std::make_pair(0, in_.atoms + 1)));
  const auto host_system = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace(), Kokkos::subview(slot_system_, std::make_pair(0, n)));
  const auto host_first = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace(), Kokkos::subview(slot_first_, std::make_pair(0, n)));
  const std::vector<int> count = batch.count_on_host();
  // Parts of consecutive slots, each within max_edges; a slot too large alone fails.
  std::vector<std::vector<int>> parts(1);
  std::vector<int> too_large;
  std::int64_t used = 0;
  for (int s = 0; s < n; ++s) {
    if (host_system(s) < 0)
      continue;
    const std::int64_t a0 = host_first(s);
    const std::int64_t e = host_edges(a0 + count[static_cast<std::size_t>(s)]) - host_edges(a0);
    if (e > max_edges) {
      too_large.push_back(s);
      continue;
    }
    if (used + e > max_edges && !parts.back().empty()) {
      parts.emplace_back();
      used = 0;
    }
    parts.back().push_back(s);
    used += e;
  }
  reserve(part_, static_cast<std::size_t>(n), "part");
  const auto part = Kokkos::subview(part_, std::make_pair(0, n));
  const auto flags = Kokkos::create_mirror_view(part);
  int evaluated = 0;
  for (const std::vector<int>& slots : parts) {
    if (slots.empty())
      continue;
    Kokkos::deep_copy(flags, 0);
    for (int s : slots)
      flags(s) = 1;
    Kokkos::deep_copy(part, flags);
    evaluated += evaluate(model, batch, part_, lists);  // fits: the same positions, the same edges
  }
  if (!too_large.empty()) {  // not evaluated: failed, and out of the caller's selection
    Kokkos::deep_copy(flags, 0);
    for (int s : too_large)
      flags(s) = 1;
    Kokkos::deep_copy(part, flags);
    fail_too_many_edges(batch, selected, part, n);
  }
  return evaluated;
}

int ModelWorkspace::evaluate_each(BatchModel& model, systems::SystemsBatch& batch,
                                  const systems::SystemsBatch::view<int*>& selected,
                                  NeighbourLists& lists, std::int64_t max_edges) {
  const int n = batch.num_systems();
  if (n == 0)
    return 0;
  const auto chosen = Kokkos::create_mirror_view_and_copy(
      Kokkos::HostSpace(), Kokkos::subview(selected, std::make_pair(0, n)));
  reserve(one_, n, "one");
  const auto one = one_;
  int evaluated = 0;
  for (int target = 0; target < n; ++target) {
    if (chosen(target) == 0)
      continue;
    Kokkos::parallel_for(
        "baton::dynamics::model_select_one", ExecPolicy(0, n),
        KOKKOS_LAMBDA(int s) { one(s) = s == target ? 1 : 0; });
    evaluated += evaluate(model, batch, one, lists, max_edges);
    if (max_edges > 0) {  // a system with too many edges left the selection
      Kokkos::parallel_for(
          "baton::dynamics::model_deselect_one", ExecPolicy(0, 1), KOKKOS_LAMBDA(int) {
            if (one(target) == 0)
              selected(target) = 0;
          });
    }
  }
  return evaluated;
}

}  // namespace detail

template class IntegratorStage<Model, FireUpdate>;
template class IntegratorStage<Model, VerletUpdate>;
template class IntegratorStage<Model, LangevinUpdate>;
template class FireStage<Model>;
template class VerletStage<Model>;
template class LangevinStage<Model>;

}  // namespace baton::dynamics
