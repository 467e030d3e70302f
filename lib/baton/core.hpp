#pragma once
/// \file
/// Baton's base: errors, configuration, device choice, GPU-aware MPI, atomic files; the runtime,
/// communicators and groups; transport of bytes, Views and objects; collectives.

#include "baton/collectives/agreement.hpp"
#include "baton/collectives/bundle.hpp"
#include "baton/collectives/collectives.hpp"
#include "baton/collectives/mpi_type.hpp"
#include "baton/collectives/record.hpp"
#include "baton/comm/communicator.hpp"
#include "baton/comm/group.hpp"
#include "baton/core/atomic_file.hpp"
#include "baton/core/check_mpi.hpp"
#include "baton/core/config.hpp"
#include "baton/core/device.hpp"
#include "baton/core/error.hpp"
#include "baton/core/gpu_aware.hpp"
#include "baton/runtime/runtime.hpp"
#include "baton/transport/byte_buffer.hpp"
#include "baton/transport/bytes.hpp"
#include "baton/transport/envelope.hpp"
#include "baton/transport/objects.hpp"
#include "baton/transport/serialize.hpp"
#include "baton/transport/value_type.hpp"
#include "baton/transport/view_message.hpp"
#include "baton/transport/view_posted.hpp"
