#pragma once
/// \file
/// baton::DistributedContext: one job split into agents, replay-buffer managers and a coordinator
/// (layout.hpp), with the communicators each role needs.

#include <vector>

#include "baton/comm/communicator.hpp"
#include "baton/roles/layout.hpp"

namespace baton {

struct ContextOptions {
  int buffers = 0;           ///< number of replay-buffer managers
  bool coordinator = false;  ///< reserve the last rank as coordinator
  int agent_groups = 1;      ///< agents sliced into this many equal groups
  bool node_aware = true;    ///< give the layout every rank's node name (MPI_Get_processor_name)
};

/// Built collectively over `world` (which it duplicates). Every communicator below is owned and is
/// null on ranks outside it; asking a rank outside for one is safe (it gets the null communicator).
class DistributedContext {
 public:
  DistributedContext(const Communicator& world, const ContextOptions& options);

  const RankLayout& layout() const noexcept { return layout_; }
  /// Baton's duplicate of the world given.
  const Communicator& world() const noexcept { return world_; }
  int rank() const noexcept { return world_.rank(); }
  Role role() const { return layout_.role(world_.rank()); }

  /// All agents, in rank order (null elsewhere).
  const Communicator& training() const noexcept { return training_; }
  /// All buffer managers (null elsewhere).
  const Communicator& buffers() const noexcept { return buffers_; }
  /// The calling agent's agent group (null on non-agents).
  const Communicator& agent_group() const noexcept { return agent_group_; }
  /// The calling rank's service group: its buffer manager and that manager's agents, the manager
  /// last (null on the coordinator and where there are no buffers).
  const Communicator& service() const noexcept { return service_; }
  /// Buffer managers and the coordinator, the coordinator last (null elsewhere and without a
  /// coordinator).
  const Communicator& discovery() const noexcept { return discovery_; }

 private:
  Communicator world_;
  RankLayout layout_;
  Communicator training_;
  Communicator buffers_;
  Communicator agent_group_;
  Communicator service_;
  Communicator discovery_;
};

}  // namespace baton
