#include "baton/roles/context.hpp"

#include <string>

#include "baton/core/check_mpi.hpp"

namespace baton {

namespace {

std::vector<std::string> node_names(const Communicator& world) {
  char mine[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  check_mpi(MPI_Get_processor_name(mine, &length), "MPI_Get_processor_name", world.raw());
  std::vector<char> all(static_cast<std::size_t>(MPI_MAX_PROCESSOR_NAME) * world.size());
  check_mpi(MPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(),
                          MPI_MAX_PROCESSOR_NAME, MPI_CHAR, world.raw()),
            "MPI_Allgather", world.raw());
  std::vector<std::string> names;
  for (int r = 0; r < world.size(); ++r)
    names.emplace_back(all.data() + static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME);
  return names;
}

RankLayout make_layout(const Communicator& world, const ContextOptions& options) {
  LayoutOptions layout;
  layout.world_size = world.size();
  layout.buffers = options.buffers;
  layout.coordinator = options.coordinator;
  layout.agent_groups = options.agent_groups;
  if (options.node_aware)
    layout.node_names = node_names(world);
  return RankLayout(layout);
}

// The colour for a split: `member` ranks get `color`, the others opt out.
int colour(bool member, int color = 0) {
  return member ? color : Communicator::undefined;
}

}  // namespace

DistributedContext::DistributedContext(const Communicator& world, const ContextOptions& options)
    : world_(world.duplicate()), layout_(make_layout(world_, options)) {
  const int me = world_.rank();
  const Role role = layout_.role(me);
  training_ = world_.split(colour(role == Role::agent), me);
  buffers_ = world_.split(colour(role == Role::buffer), me);
  agent_group_ = world_.split(
      colour(role == Role::agent, role == Role::agent ? layout_.agent_group(me) : 0), me);
  // Service groups are coloured by their manager's rank; ranks are ordered so the manager is last.
  int manager = -1;
  if (role == Role::agent)
    manager = layout_.assigned_buffer(me);
  if (role == Role::buffer)
    manager = me;
  service_ = world_.split(colour(manager >= 0, manager), role == Role::buffer ? world_.size() : me);
  // The ranks that score and find modes report to the coordinator: the buffer managers, or the
  // agents themselves when there are no buffers.
  const Role scorer = layout_.buffer_count() > 0 ? Role::buffer : Role::agent;
  const bool discovers = layout_.has_coordinator() && (role == scorer || role == Role::coordinator);
  discovery_ = world_.split(colour(discovers), me);
}

}  // namespace baton
