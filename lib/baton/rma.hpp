#pragma once
/// \file
/// One-sided communication: symmetric Views in MPI windows.

#include "baton/rma/symmetric_view.hpp"
