#pragma once
/// \file
/// The Lennard-Jones pair potential (see potential.hpp for what a potential is).

#include <Kokkos_Core.hpp>

namespace baton::dynamics {

/// E = sum over pairs 4 epsilon ((sigma/r)^12 - (sigma/r)^6), for r < cutoff when cutoff > 0,
/// minus its value at the cutoff when `shift` is set (the energy is then continuous there). All
/// species alike.
struct LennardJones {
  double epsilon = 1;
  double sigma = 1;
  double cutoff = 0;  ///< <= 0: no cutoff
  bool shift = true;  ///< shift the energy to 0 at the cutoff

  /// The constants the pair loop uses.
  struct Kernel {
    double c12 = 0, c6 = 0;  ///< 4 eps sigma^12, 4 eps sigma^6 (energy)
    double f12 = 0, f6 = 0;  ///< 48 eps sigma^12, 24 eps sigma^6 (force / r^2 times r^6)
    double rc2 = 0;          ///< squared cutoff (infinity: none)
    double shift = 0;        ///< pair energy at the cutoff, subtracted inside it
    /// pair() is defined at any r2 and cheap (potential.hpp, small_pair_forces).
    static constexpr bool pair_at_any_r2 = true;

    KOKKOS_INLINE_FUNCTION double cutoff_squared() const { return rc2; }
    KOKKOS_INLINE_FUNCTION void pair(int, int, double r2, double& energy,
                                     double& force_over_r) const {
      const double inv2 = 1.0 / r2;
      const double inv6 = inv2 * inv2 * inv2;
      energy = inv6 * (c12 * inv6 - c6) - shift;
      force_over_r = inv6 * (f12 * inv6 - f6) * inv2;
    }
  };

  /// Checks the parameters (validate) and precomputes the kernel's constants.
  Kernel kernel() const;
};

/// Throws baton::Error naming the parameter unless epsilon and sigma are positive and finite and
/// the cutoff is finite.
void validate(const LennardJones& lj);

}  // namespace baton::dynamics
