#pragma once
/// \file
/// The Morse pair potential (see potential.hpp for what a potential is).

#include <Kokkos_Core.hpp>

#include "baton/dynamics/random.hpp"

namespace baton::dynamics {

/// E = sum over pairs D0 (exp(-2 alpha (r - r0)) - 2 exp(-alpha (r - r0))), LAMMPS' `pair_style
/// morse` (minimum -D0 at r0), for r < cutoff when cutoff > 0, minus its value at the cutoff when
/// `shift` is set. All species alike.
struct Morse {
  double depth = 1;   ///< D0, well depth (energy)
  double alpha = 1;   ///< width parameter (1 / length)
  double r0 = 1;      ///< equilibrium distance
  double cutoff = 0;  ///< <= 0: no cutoff
  bool shift = true;  ///< shift the energy to 0 at the cutoff

  /// The constants the pair loop uses.
  struct Kernel {
    double d0 = 0, alpha = 0, r0 = 0;
    double rc2 = 0;    ///< squared cutoff (infinity: none)
    double shift = 0;  ///< pair energy at the cutoff, subtracted inside it

    KOKKOS_INLINE_FUNCTION double cutoff_squared() const { return rc2; }
    KOKKOS_INLINE_FUNCTION void pair(int, int, double r2, double& energy,
                                     double& force_over_r) const {
      const double r = detail::math_sqrt(r2);
      const double e1 = detail::math_exp(-alpha * (r - r0));
      energy = d0 * (e1 * e1 - 2 * e1) - shift;
      force_over_r = 2 * d0 * alpha * (e1 * e1 - e1) / r;
    }
  };

  /// Checks the parameters (validate) and precomputes the kernel's constants.
  Kernel kernel() const;
};

/// Throws baton::Error naming the parameter unless depth, alpha and r0 are positive and finite and
/// the cutoff is finite.
void validate(const Morse& morse);

}  // namespace baton::dynamics
