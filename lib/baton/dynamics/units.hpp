#pragma once
/// \file
/// Unit systems, as LAMMPS defines them: what the integrators need to turn forces into velocities
/// and temperatures into kinetic energies. A potential's parameters and the masses must be in the
/// same system as the stage's Units.

#include <string>

namespace baton::dynamics {

struct Units {
  std::string name = "lj";
  double ftm2v = 1;   ///< force x time / mass -> velocity
  double mvv2e = 1;   ///< mass x velocity^2 -> energy
  double boltz = 1;   ///< Boltzmann's constant, energy / temperature
  double skin = 0.3;  ///< default neighbour-list skin, length (LAMMPS' defaults)
  double nktv2p = 1;  ///< energy / length^3 -> the unit system's pressure unit (metal: bar)

  /// Lennard-Jones reduced units: epsilon, sigma, the atom mass, tau; k_B = 1.
  static Units lj() { return {}; }
  /// LAMMPS `units metal`: eV, Angstrom, g/mol (amu), ps, K.
  static Units metal() {
    return {"metal", 1 / 1.0364269e-4, 1.0364269e-4, 8.617343e-5, 2.0, 1.6021765e6};
  }
  /// lj or metal by name; throws baton::Error for any other name.
  static Units named(const std::string& name);
};

/// Throws baton::Error unless the three factors are positive and finite.
void validate(const Units& u);

}  // namespace baton::dynamics
