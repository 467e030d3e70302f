#pragma once
/// \file
/// baton::pipeline::Stage, the stage interface, defined in baton/dynamics/stage.hpp (kept for code
/// that includes it from here).

#include "baton/dynamics/stage.hpp"
