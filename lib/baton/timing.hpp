#pragma once
/// \file
/// Step timers and gathered timing reports.

#include "baton/timing/report.hpp"
#include "baton/timing/timers.hpp"
