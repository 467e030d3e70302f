#pragma once
/// \file
/// The distributed pipeline: stages on ranks, sources and sinks, hooks, the driver and its run
/// summary.

#include "baton/pipeline/checkpoint.hpp"
#include "baton/pipeline/driver.hpp"
#include "baton/pipeline/driver_options.hpp"
#include "baton/pipeline/hooks.hpp"
#include "baton/pipeline/pipeline.hpp"
#include "baton/pipeline/plan.hpp"
#include "baton/pipeline/sink.hpp"
#include "baton/pipeline/source.hpp"
#include "baton/pipeline/stage_counters.hpp"
#include "baton/pipeline/summary.hpp"
