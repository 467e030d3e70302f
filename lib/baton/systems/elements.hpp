#pragma once
/// \file
/// Chemical elements by symbol: their standard atomic weights, for masses an input does not give
/// (a TorchScript model carries none).

#include <string>

namespace baton::systems {

/// The standard atomic weight of element `symbol` ("Cu": 63.546) in g/mol (amu, metal units):
/// IUPAC's abridged values, and the mass number of the longest-lived isotope for elements without
/// a standard weight, H to Pu (ASE's table, within 0.1 %). NaN for anything else.
double standard_atomic_mass(const std::string& symbol);

}  // namespace baton::systems
