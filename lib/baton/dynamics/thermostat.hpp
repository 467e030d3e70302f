#pragma once
/// \file
/// What the thermostat stages built on velocity Verlet (CSVR, csvr.hpp; Nose-Hoover chains,
/// nose_hoover.hpp) are given: their options in common, and the Verlet step they wrap.

#include <cstdint>

#include "baton/dynamics/neighbours.hpp"
#include "baton/dynamics/units.hpp"
#include "baton/dynamics/verlet.hpp"

namespace baton::dynamics {

/// A thermostat's parameters, in the units of `units` (defaults for Lennard-Jones units).
struct ThermostatOptions {
  double dt = 0.005;            ///< time step
  long steps = 1000;            ///< steps per system
  double temperature = 0.1;     ///< bath temperature
  double tau = 0.5;             ///< the thermostat's time constant (LAMMPS' Tdamp), time
  bool draw = true;             ///< Maxwell-Boltzmann velocities at `temperature` on entry
  std::uint64_t seed = 1;       ///< seed of the drawn velocities (and of a stochastic one's noise)
  Units units = Units::lj();    ///< the unit system of the potential, masses and temperature
  NeighbourOptions neighbours;  ///< how pairs are found (neighbours.hpp)
};

namespace detail {
/// Throws baton::Error naming the parameter of `who` that is not usable (a temperature of 0 only
/// where `zero_temperature`).
void validate_thermostat(const ThermostatOptions& p, const char* who, bool zero_temperature);
/// The velocity-Verlet step (and entry draw) of a thermostat with `p`.
VerletOptions verlet_options(const ThermostatOptions& p);
}  // namespace detail

}  // namespace baton::dynamics
