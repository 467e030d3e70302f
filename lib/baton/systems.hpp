#pragma once
/// \file
/// Systems of atoms: HostSystem, SystemsBatch, cells, the systems codec, host transfer, extended
/// XYZ and LAMMPS data files.

#include "baton/systems/cell.hpp"
#include "baton/systems/codec.hpp"
#include "baton/systems/elements.hpp"
#include "baton/systems/fields.hpp"
#include "baton/systems/host_system.hpp"
#include "baton/systems/host_transfer.hpp"
#include "baton/systems/lammps_data.hpp"
#include "baton/systems/systems_batch.hpp"
#include "baton/systems/xyz.hpp"
