#pragma once
/// \file
/// Node shared memory: windows, node gathers, the broadcast queue.

#include "baton/shm/broadcast_queue.hpp"
#include "baton/shm/gather.hpp"
#include "baton/shm/node_window.hpp"
