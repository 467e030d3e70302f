#include "baton/dynamics/lennard_jones.hpp"

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "baton/runtime/error.hpp"

namespace baton::dynamics {

void validate(const LennardJones& lj) {
  using detail::require;
  const char* who = "baton::dynamics::LennardJones";
  require(who, "epsilon", lj.epsilon, lj.epsilon > 0 && std::isfinite(lj.epsilon),
          "positive and finite");
  require(who, "sigma", lj.sigma, lj.sigma > 0 && std::isfinite(lj.sigma), "positive and finite");
  require(who, "cutoff", lj.cutoff, std::isfinite(lj.cutoff), "finite (<= 0: no cutoff)");
}

void compute_forces(const LennardJones& lj, SystemsBatch& batch, int first_slot, int n_slots) {
  detail::compute_forces(lj, batch, first_slot, n_slots, detail::on_host);
}

namespace detail {

void require(const char* who, const char* parameter, double value, bool ok,
             const char* requirement) {
  if (ok)
    return;
  std::ostringstream text;
  text.precision(17);
  text << who << ": " << parameter << " = " << value << ", but it must be " << requirement;
  throw Error(text.str());
}

void check_slots(const char* who, const SystemsBatch& batch, int first, int n) {
  if (first < 0 || n < 0 || first + n > batch.num_systems())
    throw Error(std::string("baton::dynamics::") + who + ": slots [" + std::to_string(first) +
                ", " + std::to_string(first + n) + ") are not all in the batch of " +
                std::to_string(batch.num_systems()) + " systems");
}

void check_max_steps(const char* who, int max_steps) {
  require((std::string("baton::dynamics::") + who).c_str(), "max_steps", max_steps, max_steps >= 0,
          ">= 0");
}

LjTerms lj_terms(const LennardJones& lj) {
  validate(lj);
  const double s6 = std::pow(lj.sigma, 6);
  LjTerms t;
  t.c12 = 4 * lj.epsilon * s6 * s6;
  t.c6 = 4 * lj.epsilon * s6;
  t.f12 = 12 * t.c12;
  t.f6 = 6 * t.c6;
  if (lj.cutoff > 0) {
    t.rc2 = lj.cutoff * lj.cutoff;
    const double inv6 = 1 / (t.rc2 * t.rc2 * t.rc2);
    t.shift = lj.shift ? inv6 * (t.c12 * inv6 - t.c6) : 0.0;
  } else {
    t.rc2 = std::numeric_limits<double>::infinity();
  }
  return t;
}

template <bool HalfPairs>
void launch_forces(const LjTerms& lj, SystemsBatch& batch, int first, int n) {
  const auto x = batch.positions;
  const auto f = batch.forces;
  const auto offset = batch.offset;
  const auto count = batch.count;
  const auto status = batch.status;
  const auto energy = batch.energy;
  const auto fmax = batch.fmax;
  Kokkos::parallel_for(
      "baton::dynamics::lj_forces", system_teams(n), KOKKOS_LAMBDA(const TeamMember& team) {
        const int s = first + team.league_rank();
        if (status(s) != static_cast<int>(SystemStatus::Active))
          return;
        double e = 0, fm = 0;
        team_forces<HalfPairs>(team, lj, x, f, offset(s), offset(s) + count(s), e, fm);
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          energy(s) = e;
          fmax(s) = fm;
        });
      });
}

void compute_forces(const LennardJones& lj, SystemsBatch& batch, int first_slot, int n_slots,
                    bool half_pairs) {
  const LjTerms terms = lj_terms(lj);
  check_slots("compute_forces", batch, first_slot, n_slots);
  if (n_slots == 0)
    return;
  if (half_pairs && !on_host)
    throw Error("baton::dynamics::compute_forces: the half-pair loop runs on host spaces only");
  if (half_pairs)
    launch_forces<on_host>(terms, batch, first_slot, n_slots);  // never instantiated on GPUs
  else
    launch_forces<false>(terms, batch, first_slot, n_slots);
}

}  // namespace detail

}  // namespace baton::dynamics
