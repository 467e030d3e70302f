#include "baton/dynamics/model_sum.hpp"

#include <algorithm>
#include <string>

#include "baton/core/error.hpp"

namespace baton::dynamics {

namespace {

using ExecPolicy = Kokkos::RangePolicy<detail::ExecutionSpace>;

template <class V>
void grow(V& v, std::size_t n, const char* label) {
  detail::grow_view(v, n, std::string("baton::model_sum::") + label);
}

}  // namespace

namespace detail {

void PairModelScratch::reserve(int atoms) {
  grow(energy, static_cast<std::size_t>(atoms), "pair_energy");
  grow(virial, static_cast<std::size_t>(atoms), "pair_virial");
}

void sum_per_system(const ModelInputs& in, const PairModelScratch& scratch,
                    const ModelOutputs& out) {
  const ModelInputs v = in;
  const auto energy = scratch.energy;
  const auto virial = scratch.virial;
  const auto e_out = out.energy;
  const auto w_out = out.virial;
  Kokkos::parallel_for(
      "baton::dynamics::pair_model_sum", ExecPolicy(0, in.systems), KOKKOS_LAMBDA(int s) {
        double e = 0, w[6] = {0, 0, 0, 0, 0, 0};
        for (std::int64_t a = v.ptr(s); a < v.ptr(s + 1); ++a) {
          e += energy(a);
          for (int c = 0; c < 6; ++c)
            w[c] += virial(a, c);
        }
        e_out(s) = e;
        for (int c = 0; c < 6; ++c)
          w_out(s, c) = w[c];
      });
}

}  // namespace detail

SumModel::SumModel(std::vector<std::shared_ptr<BatchModel>> terms) : terms_(std::move(terms)) {
  if (terms_.empty())
    throw Error("baton::dynamics::SumModel: no terms");
  for (const auto& t : terms_)
    if (!t)
      throw Error("baton::dynamics::SumModel: a term is null");
}

std::int64_t SumModel::state_bytes() const {
  std::int64_t bytes = 0;
  for (const auto& term : terms_)
    bytes += term->state_bytes();
  return bytes;
}

void SumModel::begin_memory_count() {
  for (const auto& term : terms_)
    term->begin_memory_count();
}

std::int64_t SumModel::end_memory_count() {
  std::int64_t bytes = -1;
  for (const auto& term : terms_) {
    const std::int64_t b = term->end_memory_count();
    if (b >= 0)
      bytes = std::max<std::int64_t>(bytes, 0) + b;
  }
  return bytes;
}

double SumModel::cutoff() const {
  double rc = 0;
  for (const auto& t : terms_)
    rc = std::max(rc, t->cutoff());
  return rc;
}

void SumModel::evaluate(const ModelInputs& in, const ModelOutputs& out) {
  const int n = in.atoms, s = in.systems;
  grow(term_out_.energy, static_cast<std::size_t>(s), "energy");
  grow(term_out_.forces, static_cast<std::size_t>(n), "forces");
  grow(term_out_.virial, static_cast<std::size_t>(s), "virial");
  const ModelOutputs sum = out, term = term_out_;
  const double largest = cutoff();
  for (std::size_t t = 0; t < terms_.size(); ++t) {
    ModelInputs given = in;
    const double rc = terms_[t]->cutoff();
    if (rc < largest) {  // only the edges within this term's cutoff, in order
      const double rc2 = rc * rc;
      grow(part_.edge_ptr, static_cast<std::size_t>(n) + 1, "edge_ptr");
      const auto ptr = part_.edge_ptr;
      const ModelInputs v = in;
      std::int64_t kept = 0;
      Kokkos::parallel_scan(
          "baton::dynamics::model_sum_count", ExecPolicy(0, n),
          KOKKOS_LAMBDA(int a, std::int64_t& before, bool final) {
            std::int64_t m = 0;
            double r[3];
            for (std::int64_t e = v.edge_ptr(a); e < v.edge_ptr(a + 1); ++e)
              m += detail::edge_vector(v, e, r) < rc2 ? 1 : 0;
            if (final)
              ptr(a) = before;
            before += m;
          },
          kept);
      grow(edge_buffer_, 2 * static_cast<std::size_t>(kept), "edge_index");
      grow(part_.edge_cell_shift, static_cast<std::size_t>(kept), "edge_cell_shift");
      const decltype(in.edge_index) index(edge_buffer_.data(), 2, kept);
      const auto shift = part_.edge_cell_shift;
      Kokkos::parallel_for(
          "baton::dynamics::model_sum_edges", ExecPolicy(0, n), KOKKOS_LAMBDA(int a) {
            std::int64_t to = ptr(a);
            double r[3];
            for (std::int64_t e = v.edge_ptr(a); e < v.edge_ptr(a + 1); ++e) {
              if (!(detail::edge_vector(v, e, r) < rc2))
                continue;
              index(0, to) = v.edge_index(0, e);
              index(1, to) = v.edge_index(1, e);
              for (int c = 0; c < 3; ++c)
                shift(to, c) = v.edge_cell_shift(e, c);
              ++to;
            }
            if (a == n - 1)
              ptr(n) = to;
          });
      given.edges = static_cast<int>(kept);
      given.edge_index = index;
      given.edge_cell_shift = shift;
      given.edge_ptr = ptr;
    }
    terms_[t]->evaluate(given, t == 0 ? sum : term);
    if (t == 0)
      continue;
    Kokkos::parallel_for(
        "baton::dynamics::model_sum_add", ExecPolicy(0, std::max(n, s)), KOKKOS_LAMBDA(int i) {
          if (i < n)
            for (int d = 0; d < 3; ++d)
              sum.forces(i, d) += term.forces(i, d);
          if (i < s) {
            sum.energy(i) += term.energy(i);
            for (int c = 0; c < 6; ++c)
              sum.virial(i, c) += term.virial(i, c);
          }
        });
  }
}

}  // namespace baton::dynamics
