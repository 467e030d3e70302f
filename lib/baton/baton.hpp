#pragma once
/// \file
/// Umbrella header: everything in Baton. Each area also has its own (baton/core.hpp,
/// baton/systems.hpp, baton/dynamics.hpp, baton/pipeline.hpp, baton/shm.hpp, baton/roles.hpp,
/// baton/timing.hpp, baton/workspace.hpp, baton/rma.hpp).

#include "baton/core.hpp"
#include "baton/dynamics.hpp"
#include "baton/models.hpp"
#include "baton/pipeline.hpp"
#include "baton/rma.hpp"
#include "baton/roles.hpp"
#include "baton/shm.hpp"
#include "baton/systems.hpp"
#include "baton/timing.hpp"
#include "baton/workspace.hpp"
