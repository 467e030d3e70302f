#pragma once
/// \file
/// A running system's whole state out of a batch and back in (internal to the driver; exact
/// restarts, pipeline/checkpoint.hpp). What is kept: every field that moves with a system when a
/// batch compacts its slots (systems/fields.hpp, `compacted`), but its species indices (the same
/// system's labels, which a later run may number differently) and its status (it goes on Active).

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "baton/pipeline/checkpoint.hpp"
#include "baton/systems/systems_batch.hpp"

namespace baton::pipeline::detail {

/// The systems of `batch` that did not fail, as checkpoints (one read of each field): the Active
/// ones of `stage`, and the Held ones (finished here, waiting for room) as entering the next
/// stage, when there is one.
std::vector<SystemCheckpoint> capture(const systems::SystemsBatch& batch, int stage);

/// Puts each checkpoint's state into its slot (the same system, just arrived: the same atom
/// count) and makes it Active there, with the checkpoint's steps, on the device and in the host's
/// view. An entering one gets what an arrival gets (systems/fields.hpp: the travelling fields,
/// the others 0 or kept), for its stage's enter(), which the caller calls. Throws baton::Error
/// when a checkpoint does not fit its slot.
void restore(systems::SystemsBatch& batch,
             const std::vector<std::pair<int, const SystemCheckpoint*>>& slots);

/// Bytes a checkpoint of a system of `atoms` atoms takes in a pipeline of `stages` stages.
std::size_t state_size(int atoms, int stages);

/// What a checkpoint's state holds, in order: each field's name, values per row and bytes per
/// value ("positions:atom:3:8;..."), so that a state is never read by a Baton that lays it out
/// otherwise.
std::string state_layout();

/// The ids of slots [first, first + n) of `batch` (one read).
std::vector<std::int64_t> slot_ids(const systems::SystemsBatch& batch, int first, int n);

}  // namespace baton::pipeline::detail
