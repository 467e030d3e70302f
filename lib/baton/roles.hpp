#pragma once
/// \file
/// Roles: the rank layout (agents, replay buffers, coordinator) and the distributed context.

#include "baton/roles/context.hpp"
#include "baton/roles/layout.hpp"
