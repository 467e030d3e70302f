#pragma once
/// \file
/// A running system's whole state out of a batch and back in (internal to the driver; exact
/// restarts, pipeline/checkpoint.hpp). What is kept: every field that moves with a system when a
/// batch compacts its slots (systems/fields.hpp, `compacted`), but its species indices (the same
/// system's labels, which a later run may number differently) and its status (it goes on Active).

#include <cstdint>
#include <utility>
#include <vector>

#include "baton/pipeline/checkpoint.hpp"
#include "baton/systems/systems_batch.hpp"

namespace baton::pipeline::detail {

/// The Active systems of `batch` that did not fail, as checkpoints of `stage` (one read of each
/// field).
std::vector<SystemCheckpoint> capture(const systems::SystemsBatch& batch, int stage);

/// Puts each checkpoint's state into its slot (the same system, just arrived: the same atom
/// count) and makes it Active there, with the checkpoint's steps, on the device and in the host's
/// view. Throws baton::Error when a checkpoint does not fit its slot.
void restore(systems::SystemsBatch& batch,
             const std::vector<std::pair<int, const SystemCheckpoint*>>& slots);

/// The ids of slots [first, first + n) of `batch` (one read).
std::vector<std::int64_t> slot_ids(const systems::SystemsBatch& batch, int first, int n);

}  // namespace baton::pipeline::detail
