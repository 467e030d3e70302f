#pragma once
/// \file
/// Models: TorchScript files as batch models (link Baton::torch; docs/models.md).

#include "baton/models/torch_model.hpp"
