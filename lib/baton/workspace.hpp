#pragma once
/// \file
/// Workspaces: per-rank records in a shared directory.

#include "baton/workspace/workspace.hpp"
