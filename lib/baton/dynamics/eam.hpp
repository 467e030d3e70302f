#pragma once
/// \file
/// The embedded-atom method (Daw and Baskes), from LAMMPS' `pair_style eam` (funcfl, *.eam) and
/// `eam/alloy` (setfl, *.eam.alloy) files, with LAMMPS' interpolation (eam_tables.hpp): a many-body
/// potential, E = sum_i F_i(rho_i) + sum_{i<j} phi_ij(r_ij), rho_i = sum_j rho_j(r_ij).

#include <Kokkos_Core.hpp>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "baton/dynamics/detail/eam_avx2.hpp"
#include "baton/dynamics/eam_tables.hpp"
#include "baton/dynamics/potential.hpp"
#include "baton/dynamics/random.hpp"
#include "baton/dynamics/team.hpp"
#include "baton/systems/cell.hpp"
#include "baton/systems/systems_batch.hpp"

namespace baton::dynamics {

namespace detail {
/// Where the host's one-thread EAM loop over a list (Eam::Kernel::one_thread_forces) keeps the
/// pairs its density pass found within the cutoff, for its force pass, which then neither fills
/// its blocks from the list again nor takes their square roots: per pair, its displacement,
/// distance and neighbour, in the fill's order; per atom of the system, how many. Room for
/// `pairs` pairs (0: none kept).
struct EamPairRoom {
  double *dx = nullptr, *dy = nullptr, *dz = nullptr, *r = nullptr;
  int* j = nullptr;
  int* count = nullptr;
  std::size_t pairs = 0;
};
/// At most this many pairs (36 bytes each: 36 MiB) per thread. Tests lower it to take the path
/// where some atoms' pairs do not fit.
inline std::size_t eam_cached_pairs_max = std::size_t(1) << 20;
/// This host thread's room for min(pairs, eam_cached_pairs_max) pairs and `atoms` atoms: a buffer
/// per thread, grown to the largest system it ran and freed when the thread ends (eam.cpp). No room
/// (all null) when it cannot be allocated; it never throws.
EamPairRoom eam_pair_room_host(std::size_t pairs, std::size_t atoms);
/// eam_pair_room_host() in host code; no room in device code (the one-thread loop runs on host
/// spaces only).
KOKKOS_INLINE_FUNCTION EamPairRoom eam_pair_room(std::size_t pairs, std::size_t atoms) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__) || defined(__SYCL_DEVICE_ONLY__)
  (void)pairs;
  (void)atoms;
  return EamPairRoom{};
#else
  return eam_pair_room_host(pairs, atoms);
#endif
}
}  // namespace detail

/// An EAM potential. Construction reads the file (once: copies share the tables and their device
/// copies). `species` names the batch's species indices in order (species index i is the element
/// species[i]; empty: the file's elements in the file's order, which is what a
/// systems::SpeciesTable seeded with elements() gives). Throws baton::Error for a bad file or a
/// species the file does not have.
class Eam {
 public:
  explicit Eam(const std::string& path, std::vector<std::string> species = {});

  /// The file's elements, in its order.
  const std::vector<std::string>& elements() const noexcept { return tables_->elements; }
  /// Mass of an element in the file's units (amu for every file LAMMPS ships).
  double mass(const std::string& element) const;
  const EamTables& tables() const noexcept { return *tables_; }

  /// What the kernels use: the spline tables in device memory and the species-to-element map.
  struct Kernel {
    using Table = Kokkos::View<const double*, systems::SystemsBatch::memory_space>;
    Table frho, rhor, z2r;
    Kokkos::View<const int*, systems::SystemsBatch::memory_space>
        element;  ///< species index -> element
    int n_elements = 0, n_species = 0, nrho = 0, nr = 0;
    double rdrho = 0, rdr = 0, rhomax = 0, rc2 = 0;

    KOKKOS_INLINE_FUNCTION double cutoff_squared() const { return rc2; }
    /// team_forces' half-pair passes run on wide teams (potential.hpp, wide_teams_for).
    static constexpr bool wide_teams = true;

    /// The element of a species index, or -1 for an index the potential was not given (its system
    /// then gets NaN energy and forces, and fails: see "Failed systems" in docs/dynamics.md).
    KOKKOS_INLINE_FUNCTION int element_of(int species_index) const {
      return species_index >= 0 && species_index < n_species ? element(species_index) : -1;
    }

    /// rho_b(r) contributed to an atom by a neighbour of element b at `site` (eam_r_site of r),
    /// and its derivative.
    KOKKOS_INLINE_FUNCTION double density(int b, const EamSite& site, double& derivative) const {
      if (b < 0)
        return derivative = __builtin_nan("");
      const double* c = &rhor((static_cast<std::size_t>(b) * nr + site.row) * eam_spline_width);
      derivative = eam_spline_derivative(c, site.p);
      return eam_spline_value(c, site.p);
    }
    /// rho_b(r) alone.
    KOKKOS_INLINE_FUNCTION double density(int b, const EamSite& site) const {
      if (b < 0)
        return __builtin_nan("");
      return eam_spline_value(
          &rhor((static_cast<std::size_t>(b) * nr + site.row) * eam_spline_width), site.p);
    }
    /// r phi_ab(r) at `site` and its derivative.
    KOKKOS_INLINE_FUNCTION double r_phi(int a, int b, const EamSite& site,
                                        double& derivative) const {
      if (a < 0 || b < 0)
        return derivative = __builtin_nan("");
      const int hi = a > b ? a : b, lo = a > b ? b : a;  // EamTables::pair_index
      const double* c = &z2r((static_cast<std::size_t>(hi * (hi + 1) / 2 + lo) * nr + site.row) *
                             eam_spline_width);
      derivative = eam_spline_derivative(c, site.p);
      return eam_spline_value(c, site.p);
    }
    /// F_a(rho) and fp = F_a'(rho).
    KOKKOS_INLINE_FUNCTION double embedding(int a, double rho, double& fp) const {
      if (a < 0)
        return fp = __builtin_nan("");
      return eam_embedding(&frho(static_cast<std::size_t>(a) * nrho * eam_spline_width), rho, rdrho,
                           nrho, rhomax, fp);
    }

    /// Whether the neighbours j[0..n) are all of element a (the AVX2 copies' case).
    KOKKOS_INLINE_FUNCTION bool same_element(const detail::SpeciesView& species, int a,
                                             const int* j, int n) const {
      bool same = true;
      for (int k = 0; k < n; ++k)
        same &= element_of(species(j[k])) == a;
      return same;
    }

    /// The densities of atom i's n pairs with neighbours j[k] at distances r[k] (a: i's element):
    /// what j brings to i in to_i[k], what i brings to j in to_j[k], in a loop of its own (the
    /// host's one-thread loop over blocks of a list).
    KOKKOS_FORCEINLINE_FUNCTION void block_densities(const detail::SpeciesView& species, int a,
                                                     const int* j, const double* r, int n,
                                                     double* to_i, double* to_j) const {
      int k = 0;
#if BATON_AVX2_DISPATCH
      if (n >= 4 && a >= 0 && same_element(species, a, j, n) && detail::host_has_avx2()) {
        k = n & ~3;
        detail::eam_densities_avx2(&rhor(static_cast<std::size_t>(a) * nr * eam_spline_width), rdr,
                                   nr, r, k, to_i);
        for (int q = 0; q < k; ++q)
          to_j[q] = to_i[q];
      }
#endif
      for (; k < n; ++k) {
        const EamSite site = eam_r_site(r[k], rdr, nr);
        const int b = element_of(species(j[k]));
        to_i[k] = density(b, site);
        to_j[k] = a == b ? to_i[k] : density(a, site);
      }
    }

    /// -dE/dr / r (s[k]) and the pair energy (phi[k]) of atom i's n pairs with neighbours j[k] at
    /// distances r[k], with F'(rho) of the atoms in scratch(., 1), in a loop of its own (the
    /// host's one-thread loop over blocks of a list; pair_term() for one pair). One lookup of r's
    /// row per pair, and one density where both atoms are of one element: the same numbers as
    /// LAMMPS' two.
    KOKKOS_FORCEINLINE_FUNCTION void block_pair_terms(const detail::SpeciesView& species,
                                                      const detail::AtomScratch& scratch, int i,
                                                      const int* j, const double* r, int n,
                                                      double* s, double* phi) const {
      const int a = element_of(species(i));
      const double fpi = scratch(i, 1);
      int k = 0;
#if BATON_AVX2_DISPATCH
      if (n >= 4 && a >= 0 && same_element(species, a, j, n) && detail::host_has_avx2()) {
        k = n & ~3;
        detail::eam_pair_terms_avx2(
            &rhor(static_cast<std::size_t>(a) * nr * eam_spline_width),
            &z2r(static_cast<std::size_t>(a * (a + 1) / 2 + a) * nr * eam_spline_width), rdr, nr,
            &scratch(0, 1), fpi, j, r, k, s, phi);
      }
#endif
      for (; k < n; ++k) {
        const int b = element_of(species(j[k]));
        const EamSite site = eam_r_site(r[k], rdr, nr);
        double rhoip = 0, rhojp = 0, z2p = 0;
        density(a, site, rhoip);
        if (a == b)
          rhojp = rhoip;
        else
          density(b, site, rhojp);
        const double z2 = r_phi(a, b, site, z2p);
        const double recip = 1.0 / r[k];
        phi[k] = z2 * recip;
        const double phip = z2p * recip - phi[k] * recip;
        s[k] = -(fpi * rhojp + scratch(j[k], 1) * rhoip + phip) * recip;
      }
    }

    /// -dE/dr / r of the pair (i, j) at distance r, and its pair energy phi, with F'(rho) of both
    /// atoms in scratch(., 1) (block_pair_terms() of one pair).
    KOKKOS_INLINE_FUNCTION double pair_term(const detail::SpeciesView& species,
                                            const detail::AtomScratch& scratch, int i, int j,
                                            double r, double& phi) const {
      double s = 0;
      block_pair_terms(species, scratch, i, &j, &r, 1, &s, &phi);
      return s;
    }

    /// F(rho) of atoms [begin, end), the densities in scratch(., 0): their sum, every thread of the
    /// team; F'(rho) into scratch(., 1).
    KOKKOS_INLINE_FUNCTION double embed_all(const detail::TeamMember& team,
                                            const detail::SpeciesView& species,
                                            const detail::AtomScratch& scratch, int begin,
                                            int end) const {
      return detail::team_sum(team, begin, end, [&](int i) {
        double fp = 0;
        const double embed = embedding(element_of(species(i)), scratch(i, 0), fp);
        scratch(i, 1) = fp;
        return embed;
      });
    }

    /// team_forces' passes where the team's threads share the atoms i and loop over all their j
    /// (no atomics), the virial in the same pass.
    template <bool Virial, class Pairs>
    KOKKOS_INLINE_FUNCTION void all_atoms_forces(const detail::TeamMember& team,
                                                 const detail::SpeciesView& species,
                                                 const detail::Positions& f,
                                                 const detail::AtomScratch& scratch,
                                                 const Pairs& pairs, int begin, int end, double& e,
                                                 double* w) const {
      const auto pair_force = [&](int i, int j, double r, double& phi) {
        return pair_term(species, scratch, i, j, r, phi);
      };
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end), [&](int i) {
        double rho = 0;
        pairs.template each<false>(i, [&](int j, double dx, double dy, double dz) {
          const double r2 = dx * dx + dy * dy + dz * dz;
          if (r2 < rc2)
            rho += density(element_of(species(j)), eam_r_site(detail::math_sqrt(r2), rdr, nr));
        });
        scratch(i, 0) = rho;
      });
      team.team_barrier();
      e = embed_all(team, species, scratch, begin, end);
      team.team_barrier();
      // Atom i's forces into f, its pair energies into acc[0] and, when Virial, its pairs' virial
      // into acc[1..7) (each pair is seen from both ends: the halves come below).
      const auto atom = [&](int i, double* acc) {
        double fi[3] = {0, 0, 0}, ei = 0;
        double wi[6] = {0, 0, 0, 0, 0, 0};
        pairs.template each<false>(i, [&](int j, double dx, double dy, double dz) {
          const double r2 = dx * dx + dy * dy + dz * dz;
          if (r2 < rc2) {
            double phi = 0;
            const double s = pair_force(i, j, detail::math_sqrt(r2), phi);
            ei += phi;
            fi[0] += s * dx;
            fi[1] += s * dy;
            fi[2] += s * dz;
            if constexpr (Virial)
              detail::add_pair_virial(wi, s, dx, dy, dz);
          }
        });
        for (int k = 0; k < 3; ++k)
          f(i, k) = fi[k];
        acc[0] += ei;
        if constexpr (Virial)
          for (int c = 0; c < 6; ++c)
            acc[1 + c] += wi[c];
      };
      if constexpr (Virial) {
        const detail::Sums<7> sums = detail::team_sums<7>(team, begin, end, atom);
        e += 0.5 * sums.v[0];
        for (int c = 0; c < 6; ++c)
          w[c] = 0.5 * sums.v[1 + c];
      } else {
        e += 0.5 * detail::team_sum(team, begin, end, [&](int i) {
               double ei = 0;
               atom(i, &ei);
               return ei;
             });
      }
    }

    /// all_atoms_forces out of line: a wide team's loop where the pairs are not a list, kept out of
    /// the host's one-thread loop that it would otherwise make larger.
    template <bool Virial, class Pairs>
    BATON_NOINLINE KOKKOS_FUNCTION void all_atoms_forces_apart(
        const detail::TeamMember& team, const detail::SpeciesView& species,
        const detail::Positions& f, const detail::AtomScratch& scratch, const Pairs& pairs,
        int begin, int end, double& e, double* w) const {
      all_atoms_forces<Virial>(team, species, f, scratch, pairs, begin, end, e, w);
    }

    /// team_forces' half-pair passes on a wide team (team.hpp): densities, embedding, forces, each
    /// thread over its blocks of atoms into its own accumulators (detail::wide_half_loop); out of
    /// line, as all_atoms_forces_apart.
    template <bool Virial>
    BATON_NOINLINE KOKKOS_FUNCTION void wide_half_forces(const detail::TeamMember& team,
                                                         const detail::SpeciesView& species,
                                                         const detail::Positions& f,
                                                         const detail::AtomScratch& scratch,
                                                         const detail::ListPairs& pairs, int begin,
                                                         int end, double& e, double* w) const {
      double sums[detail::team_acc_sums];
      detail::wide_half_loop<1>(
          team, pairs.acc, begin, end, sums,
          [&](int i, double* __restrict a, double*) {
            const int el = element_of(species(i));
            double rho = 0;
            detail::PairBlock blk;  // as one_thread_forces does
            double br[detail::PairBlock::size];
            detail::each_pair_block(pairs, i, rc2, blk, [&](int n) {
              for (int k = 0; k < n; ++k)
                br[k] = detail::math_sqrt(blk.r2[k]);
              for (int k = 0; k < n; ++k) {
                const EamSite site = eam_r_site(br[k], rdr, nr);
                const int j = blk.j[k], b = element_of(species(j));
                const double rho_b = density(b, site);
                rho += rho_b;
                a[j - begin] += el == b ? rho_b : density(el, site);
              }
            });
            a[i - begin] += rho;
          },
          [&](int i, const double* total) { scratch(i, 0) = total[0]; });
      e = embed_all(team, species, scratch, begin, end);
      team.team_barrier();
      double pairs_e = 0;
      detail::wide_force_pass<Virial>(
          team, pairs, f, begin, end, rc2,
          [&](int i, int j, double r2, double& phi, double& s) {
            s = pair_term(species, scratch, i, j, detail::math_sqrt(r2), phi);
          },
          pairs_e, w);
      e += pairs_e;
    }

    /// team_forces' half-pair passes on a team of one thread (the host's loop): each pair once.
    template <bool Virial, class Pairs>
    KOKKOS_INLINE_FUNCTION void one_thread_forces(const detail::SpeciesView& species,
                                                  const detail::Positions& f,
                                                  const detail::AtomScratch& scratch,
                                                  const Pairs& pairs, int begin, int end, double& e,
                                                  double* w) const {
      // Sums in locals of their own, which the loop's writes to forces cannot alias.
      double es = 0;
      double ws[6] = {0, 0, 0, 0, 0, 0};
      for (int i = begin; i < end; ++i)
        scratch(i, 0) = 0;
      // A pair (i, j): its densities into both atoms (block_densities()); then its force and
      // energy. Atom i's own density stays in rho_i while its pairs are added (j == i, an image
      // of i itself, adds there too): the same sums, in the same order, as one loop over the
      // pairs.
      const auto add_density = [&](int i, double& rho_i, int j, double to_i, double to_j) {
        rho_i += to_i;
        if (j == i)
          rho_i += to_j;
        else
          scratch(j, 0) += to_j;
      };
      const auto add_force = [&](double* fi, int j, double s, double phi, double dx, double dy,
                                 double dz) {
        es += phi;
        fi[0] += s * dx;
        fi[1] += s * dy;
        fi[2] += s * dz;
        f(j, 0) -= s * dx;
        f(j, 1) -= s * dy;
        f(j, 2) -= s * dz;
        if constexpr (Virial)
          detail::add_pair_virial(ws, s, dx, dy, dz);
      };
      const auto embed = [&]() {
        for (int i = begin; i < end; ++i) {
          double fp = 0;
          es += embedding(element_of(species(i)), scratch(i, 0), fp);
          scratch(i, 1) = fp;
          f(i, 0) = f(i, 1) = f(i, 2) = 0;
        }
      };
      if constexpr (std::is_same_v<Pairs, detail::ListPairs>) {
        // From a list, in blocks (detail::each_pair_block: no mispredicted branch), the square
        // roots and the pair terms in loops of their own.
        // The density pass keeps its blocks (detail::EamPairRoom) for the atoms whose pairs fit,
        // [begin, cached_end); the force pass reads them back, and fills the others' again.
        std::size_t candidates = 0;
        for (int i = begin; i < end; ++i)
          candidates += static_cast<std::size_t>(pairs.num(i));
        const detail::EamPairRoom cache =
            detail::eam_pair_room(candidates, static_cast<std::size_t>(end - begin));
        const std::size_t room = cache.pairs;
        detail::PairBlock blk;
        double br[detail::PairBlock::size], bs[detail::PairBlock::size],
            bphi[detail::PairBlock::size];
        int cached_end = begin;
        std::size_t used = 0;
        for (int i = begin; i < end; ++i) {
          const int a = element_of(species(i));
          double rho_i = scratch(i, 0);
          const bool keep = cache.count != nullptr && cached_end == i &&
                            used + static_cast<std::size_t>(pairs.num(i)) <= room;
          const std::size_t first = used;
          detail::each_pair_block(pairs, i, rc2, blk, [&](int n) {
            double* r = keep ? cache.r + used : br;
            for (int k = 0; k < n; ++k)
              r[k] = detail::math_sqrt(blk.r2[k]);
            block_densities(species, a, blk.j, r, n, bs, bphi);
            for (int k = 0; k < n; ++k)
              add_density(i, rho_i, blk.j[k], bs[k], bphi[k]);
            if (keep) {
              for (int k = 0; k < n; ++k) {
                cache.dx[used + k] = blk.dx[k];
                cache.dy[used + k] = blk.dy[k];
                cache.dz[used + k] = blk.dz[k];
                cache.j[used + k] = blk.j[k];
              }
              used += static_cast<std::size_t>(n);
            }
          });
          if (keep) {
            cache.count[static_cast<std::size_t>(i - begin)] = static_cast<int>(used - first);
            cached_end = i + 1;
          }
          scratch(i, 0) = rho_i;
        }
        embed();
        std::size_t at = 0;
        for (int i = begin; i < end; ++i) {
          double fi[3] = {0, 0, 0};
          const auto forces = [&](const int* j, const double* r, const double* dx, const double* dy,
                                  const double* dz, int n) {
            block_pair_terms(species, scratch, i, j, r, n, bs, bphi);
            for (int k = 0; k < n; ++k)
              add_force(fi, j[k], bs[k], bphi[k], dx[k], dy[k], dz[k]);
          };
          if (i < cached_end) {
            // In blocks of at most PairBlock::size, as the fill gave them.
            const int m = cache.count[static_cast<std::size_t>(i - begin)];
            for (int o = 0; o < m; o += detail::PairBlock::size) {
              const std::size_t q = at + static_cast<std::size_t>(o);
              forces(cache.j + q, cache.r + q, cache.dx + q, cache.dy + q, cache.dz + q,
                     m - o < detail::PairBlock::size ? m - o : detail::PairBlock::size);
            }
            at += static_cast<std::size_t>(m);
          } else {
            detail::each_pair_block(pairs, i, rc2, blk, [&](int n) {
              for (int k = 0; k < n; ++k)
                br[k] = detail::math_sqrt(blk.r2[k]);
              forces(blk.j, br, blk.dx, blk.dy, blk.dz, n);
            });
          }
          for (int d = 0; d < 3; ++d)
            f(i, d) += fi[d];
        }
      } else {
        for (int i = begin; i < end; ++i) {
          const int a = element_of(species(i));
          double rho_i = scratch(i, 0);
          pairs.template each<true>(i, [&](int j, double dx, double dy, double dz) {
            const double r2 = dx * dx + dy * dy + dz * dz;
            if (r2 < rc2) {
              const double r = detail::math_sqrt(r2);
              double to_i = 0, to_j = 0;
              block_densities(species, a, &j, &r, 1, &to_i, &to_j);
              add_density(i, rho_i, j, to_i, to_j);
            }
          });
          scratch(i, 0) = rho_i;
        }
        embed();
        for (int i = begin; i < end; ++i) {
          double fi[3] = {0, 0, 0};
          pairs.template each<true>(i, [&](int j, double dx, double dy, double dz) {
            const double r2 = dx * dx + dy * dy + dz * dz;
            if (r2 < rc2) {
              double phi = 0;
              const double s = pair_term(species, scratch, i, j, detail::math_sqrt(r2), phi);
              add_force(fi, j, s, phi, dx, dy, dz);
            }
          });
          for (int d = 0; d < 3; ++d)
            f(i, d) += fi[d];
        }
      }
      e = es;
      for (int c = 0; c < 6; ++c)
        w[c] = ws[c];
    }

    /// Forces on atoms [begin, end) of one system over `pairs` (each with its displacement), as
    /// the pair loop does them (potential.hpp): densities into scratch(i, 0), then F'(rho) into
    /// scratch(i, 1), then the forces. HalfPairs: each pair once, in one loop on a team of one
    /// thread, per thread into its accumulators on a wide team (wide_half_forces); otherwise the
    /// team's threads share the atoms i and loop over all their j (all_atoms_forces; a wide team
    /// too where the pairs are not a list).
    template <bool HalfPairs, bool Virial, class Pairs>
    KOKKOS_INLINE_FUNCTION void team_forces(const detail::TeamMember& team,
                                            const detail::SpeciesView& species,
                                            const detail::Positions& f,
                                            const detail::AtomScratch& scratch, const Pairs& pairs,
                                            int begin, int end, SystemForces& out) const {
      double e = 0;
      double w[6] = {0, 0, 0, 0, 0, 0};
      if constexpr (HalfPairs) {
        if (team.team_size() == 1) {
          one_thread_forces<Virial>(species, f, scratch, pairs, begin, end, e, w);
        } else if constexpr (std::is_same_v<Pairs, detail::ListPairs>) {
          wide_half_forces<Virial>(team, species, f, scratch, pairs, begin, end, e, w);
        } else {
          all_atoms_forces_apart<Virial>(team, species, f, scratch, pairs, begin, end, e, w);
        }
      } else {
        all_atoms_forces<Virial>(team, species, f, scratch, pairs, begin, end, e, w);
      }
      team.team_barrier();
      const double f2 = detail::team_max(team, begin, end, [&](int i) {
        return f(i, 0) * f(i, 0) + f(i, 1) * f(i, 1) + f(i, 2) * f(i, 2);
      });
      out.energy = e;
      out.fmax = detail::math_sqrt(f2);
      for (int c = 0; c < 6; ++c)
        out.virial[c] = w[c];
    }
  };
  Kernel kernel() const {
    return kernel_;
  }

 private:
  std::shared_ptr<const EamTables> tables_;
  Kernel kernel_;
};

}  // namespace baton::dynamics
