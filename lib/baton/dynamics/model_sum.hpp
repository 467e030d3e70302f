#pragma once
/// \file
/// Sums of batch models: a machine-learned model plus a pair term (a repulsion, a dispersion
/// correction, ...), or any terms, as one BatchModel sharing one neighbour search at the largest
/// cutoff (docs/models.md, "Sums of terms").

#include <Kokkos_Core.hpp>
#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "baton/core/error.hpp"
#include "baton/dynamics/model.hpp"
#include "baton/dynamics/potential.hpp"

namespace baton::dynamics {

/// Terms whose energies, forces and virials add up. Its cutoff is the largest of theirs; each term
/// gets only the edges within its own cutoff (the others filtered out, in order), so that a model
/// sees exactly the edges it would see alone.
class SumModel : public BatchModel {
 public:
  /// Throws baton::Error for no terms or a null one.
  explicit SumModel(std::vector<std::shared_ptr<BatchModel>> terms);
  double cutoff() const override;
  void evaluate(const ModelInputs& in, const ModelOutputs& out) override;
  /// The terms' state bytes, summed.
  std::int64_t state_bytes() const override;
  /// Counts every term's allocations; the sum of the terms' peaks (they run one after the other,
  /// so the sum bounds the peak), -1 when no term counts.
  void begin_memory_count() override;
  std::int64_t end_memory_count() override;
  const std::vector<std::shared_ptr<BatchModel>>& terms() const noexcept { return terms_; }

 private:
  std::vector<std::shared_ptr<BatchModel>> terms_;
  ModelInputs part_;  ///< a term's edges, when filtered
  ModelOutputs term_out_;
  systems::SystemsBatch::view<std::int64_t*> edge_buffer_;
};

namespace detail {
/// The per-atom energies and virials PairModel sums per system.
struct PairModelScratch {
  systems::SystemsBatch::view<double*> energy;
  systems::SystemsBatch::view<double* [6]> virial;
  void reserve(int atoms);
};
/// Sums per-atom energies and virials into per-system ones, in atom order (deterministic).
void sum_per_system(const ModelInputs& in, const PairModelScratch& scratch,
                    const ModelOutputs& out);
}  // namespace detail

/// A pair potential of Baton's (LennardJones, Morse, your own: potential.hpp) as a batch model
/// term, evaluated over the model's edges (each pair twice, half each time) on the batch's
/// execution space.
template <class P>
class PairModel : public BatchModel {
 public:
  /// Checks the potential (its kernel()); its cutoff must be finite and positive.
  explicit PairModel(P potential);
  double cutoff() const override { return cutoff_; }
  void evaluate(const ModelInputs& in, const ModelOutputs& out) override;

 private:
  P potential_;
  double cutoff_ = 0;
  detail::PairModelScratch scratch_;
};

template <class P>
PairModel<P>::PairModel(P potential) : potential_(std::move(potential)) {
  const double rc2 = potential_.kernel().cutoff_squared();
  if (!(rc2 > 0) || !(rc2 < 1e300))
    throw Error("baton::dynamics::PairModel: the potential needs a finite, positive cutoff");
  cutoff_ = std::sqrt(rc2);
}

template <class P>
void PairModel<P>::evaluate(const ModelInputs& in, const ModelOutputs& out) {
  const auto k = potential_.kernel();
  scratch_.reserve(in.atoms);
  const ModelInputs v = in;
  const auto energy = scratch_.energy;
  const auto virial = scratch_.virial;
  const auto forces = out.forces;
  Kokkos::parallel_for(
      "baton::dynamics::pair_model", Kokkos::RangePolicy<detail::ExecutionSpace>(0, in.atoms),
      KOKKOS_LAMBDA(int a) {
        const double rc2 = k.cutoff_squared();
        double e = 0, f[3] = {0, 0, 0}, w[6] = {0, 0, 0, 0, 0, 0};
        for (std::int64_t edge = v.edge_ptr(a); edge < v.edge_ptr(a + 1); ++edge) {
          const std::int64_t j = v.edge_index(1, edge);
          double r[3];  // r_ij = pos_j - pos_i + shift . cell
          const double r2 = detail::edge_vector(v, edge, r);
          if (r2 >= rc2)
            continue;
          double pe = 0, f_over_r = 0;
          k.pair(static_cast<int>(v.atom_types(a)), static_cast<int>(v.atom_types(j)), r2, pe,
                 f_over_r);
          e += 0.5 * pe;
          for (int d = 0; d < 3; ++d)
            f[d] -= f_over_r * r[d];  // the force on a: f_over_r (x_a - x_j)
          detail::add_pair_virial(w, 0.5 * f_over_r, r[0], r[1], r[2]);
        }
        energy(a) = e;
        for (int d = 0; d < 3; ++d)
          forces(a, d) = f[d];
        for (int c = 0; c < 6; ++c)
          virial(a, c) = w[c];
      });
  detail::sum_per_system(in, scratch_, out);
}

}  // namespace baton::dynamics
