#pragma once
/// \file
/// Umbrella header: everything in Baton.

#include "baton/collectives/bundle.hpp"
#include "baton/collectives/collectives.hpp"
#include "baton/comm/communicator.hpp"
#include "baton/comm/group.hpp"
#include "baton/config.hpp"
#include "baton/roles/context.hpp"
#include "baton/roles/layout.hpp"
#include "baton/runtime/device.hpp"
#include "baton/runtime/error.hpp"
#include "baton/runtime/gpu_aware.hpp"
#include "baton/runtime/runtime.hpp"
#include "baton/timing/report.hpp"
#include "baton/timing/timers.hpp"
#include "baton/transport/bytes.hpp"
#include "baton/transport/objects.hpp"
#include "baton/transport/view_message.hpp"
