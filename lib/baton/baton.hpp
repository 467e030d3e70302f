#pragma once
/// \file
/// Umbrella header: everything in Baton.

#include "baton/config.hpp"
#include "baton/comm/communicator.hpp"
#include "baton/runtime/device.hpp"
#include "baton/runtime/error.hpp"
#include "baton/runtime/gpu_aware.hpp"
#include "baton/runtime/runtime.hpp"
