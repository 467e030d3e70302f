#pragma once
/// \file
/// Argument checks shared by the potentials and stages; each throws baton::Error naming what is
/// wrong.

namespace baton::systems {
class SystemsBatch;
}

namespace baton::dynamics::detail {

/// Throws baton::Error "<who>: <parameter> = <value>, but it must be <requirement>" unless `ok`.
void require(const char* who, const char* parameter, double value, bool ok,
             const char* requirement);
/// Throws baton::Error unless slots [first, first + n) are in the batch.
void check_slots(const char* who, const systems::SystemsBatch& batch, int first, int n);
/// Throws baton::Error unless max_steps >= 0.
void check_max_steps(const char* who, int max_steps);

}  // namespace baton::dynamics::detail
