#pragma once
/// \file
/// Dynamics on batches of systems: potentials (Lennard-Jones, Morse, EAM, your own), neighbour
/// lists, integrators (FIRE, NVE, Langevin), batch models and the stage interface.

#include "baton/dynamics/clusters.hpp"
#include "baton/dynamics/crescale.hpp"
#include "baton/dynamics/csvr.hpp"
#include "baton/dynamics/eam.hpp"
#include "baton/dynamics/eam_tables.hpp"
#include "baton/dynamics/fire.hpp"
#include "baton/dynamics/forces.hpp"
#include "baton/dynamics/integrator.hpp"
#include "baton/dynamics/langevin.hpp"
#include "baton/dynamics/lattice.hpp"
#include "baton/dynamics/lennard_jones.hpp"
#include "baton/dynamics/model.hpp"
#include "baton/dynamics/model_sum.hpp"
#include "baton/dynamics/morse.hpp"
#include "baton/dynamics/mtk.hpp"
#include "baton/dynamics/neighbours.hpp"
#include "baton/dynamics/nose_hoover.hpp"
#include "baton/dynamics/potential.hpp"
#include "baton/dynamics/random.hpp"
#include "baton/dynamics/stage.hpp"
#include "baton/dynamics/team.hpp"
#include "baton/dynamics/thermostat.hpp"
#include "baton/dynamics/units.hpp"
#include "baton/dynamics/verlet.hpp"
