// Driver setup: checks, the plan (with measured stage costs), this rank's stages, links, overflow
// chain, feeder and collector.
#include "baton/pipeline/detail/driver_impl.hpp"
#include "baton/pipeline/driver.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <deque>
#include <exception>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

#include "baton/collectives/agreement.hpp"
#include "baton/collectives/collectives.hpp"
#include "baton/core/error.hpp"
#include "baton/pipeline/detail/calibrate.hpp"
#include "baton/pipeline/detail/capture.hpp"
#include "baton/pipeline/detail/collector.hpp"
#include "baton/pipeline/detail/feeder.hpp"
#include "baton/pipeline/detail/links.hpp"
#include "baton/pipeline/detail/overflow.hpp"
#include "baton/pipeline/detail/runner.hpp"
#include "baton/systems/codec.hpp"
#include "baton/systems/host_transfer.hpp"
#include "baton/transport/objects.hpp"

namespace baton::pipeline {

using detail::counts;
using systems::BatchCapacity;
using systems::HostSystem;
using systems::SystemsBatch;

void Driver::setup(const std::vector<systems::HostSystem>& input) {
  // Rank 0's copy, given away system by system as the run takes them in.
  impl_->vector_source.emplace(comm_.rank() == 0 ? input : std::vector<systems::HostSystem>{});
  std::string problem;
  if (comm_.rank() == 0)
    problem = impl_->vector_source->problem();
  on_every_rank(comm_, [&] {
    if (!problem.empty())
      throw Error("baton::pipeline::Driver::setup: " + problem);
  });
  setup(*impl_->vector_source);
}

namespace {

// The ranks upstream of a stage's batch: the previous segment's for the first stage of a later
// segment, otherwise one (rank 0's input, or the stage before on the same rank).
std::int64_t upstream_ranks(const RankPlan& plan, std::size_t segment, int stage) {
  const Segment& sg = plan.segments[segment];
  return stage == sg.first_stage && segment > 0
             ? static_cast<std::int64_t>(plan.segments[segment - 1].ranks.size())
             : 1;
}

// The most atoms one system may have so that every stage's share of its batch (its capacity split
// over its upstream ranks) and the overflow sink hold it; throws if some share holds no system, or
// if a system of `largest` atoms (>= 0) does not fit.
std::int64_t check_capacities(const RankPlan& plan, const std::vector<StageSpec>& specs,
                              systems::BatchCapacity overflow, systems::BatchCapacity host,
                              std::int64_t largest) {
  std::int64_t most = std::numeric_limits<std::int64_t>::max();
  for (std::size_t g = 0; g < plan.segments.size(); ++g) {
    for (int s = plan.segments[g].first_stage; s <= plan.segments[g].last_stage; ++s) {
      const StageSpec& spec = specs[static_cast<std::size_t>(s)];
      const std::int64_t upstream = upstream_ranks(plan, g, s);
      const std::int64_t share_atoms = spec.capacity.atoms / upstream;
      const std::int64_t share_systems = spec.capacity.systems / upstream;
      most = std::min(most, share_atoms);
      if (share_atoms < std::max<std::int64_t>(largest, 1) || share_systems < 1)
        throw Error("baton::pipeline::Driver: stage " + std::to_string(s) + " '" + spec.name +
                    "' has capacity " + counts(spec.capacity.systems, spec.capacity.atoms) +
                    (upstream > 1 ? " shared by " + std::to_string(upstream) + " upstream ranks (" +
                                        counts(share_systems, share_atoms) + " each)"
                                  : std::string()) +
                    (share_systems < 1 ? ", less than one system for each"
                                       : ", but the largest input system has " +
                                             std::to_string(largest) + " atoms"));
    }
  }
  if (overflow.systems > 0 || overflow.atoms > 0) {
    if (overflow.systems < 1 || overflow.atoms < std::max<std::int64_t>(largest, 1))
      throw Error("baton::pipeline::Driver: the overflow sink (" +
                  counts(overflow.systems, overflow.atoms) +
                  ") cannot hold the largest input system (" + std::to_string(largest) + " atoms)");
    most = std::min<std::int64_t>(most, overflow.atoms);
  }
  if (host.systems > 0 && host.atoms < std::max<std::int64_t>(largest, 1))
    throw Error("baton::pipeline::Driver: the host overflow buffer (" +
                counts(host.systems, host.atoms) + ") cannot hold the largest input system (" +
                std::to_string(largest) + " atoms)");
  if (host.systems > 0)
    most = std::min<std::int64_t>(most, host.atoms);
  return most;
}

void check_specs(const std::vector<StageSpec>& specs, const DriverOptions& settings) {
  if (specs.empty())
    throw Error("baton::pipeline::Driver: the pipeline has no stages");
  if (settings.steps_per_call < 1)
    throw Error("baton::pipeline::Driver: steps per call must be >= 1, got " +
                std::to_string(settings.steps_per_call));
  for (std::size_t s = 0; s < specs.size(); ++s) {
    const StageSpec& spec = specs[s];
    if (!spec.make)
      throw Error("baton::pipeline::Driver: stage " + std::to_string(s) + " '" + spec.name +
                  "' has no factory");
    if (spec.capacity.systems < 1 || spec.capacity.atoms < 1)
      throw Error("baton::pipeline::Driver: stage " + std::to_string(s) + " '" + spec.name +
                  "' has capacity " + counts(spec.capacity.systems, spec.capacity.atoms) +
                  "; it needs at least 1 of each");
  }
}

}  // namespace

void Driver::setup(SystemSource& source) {
  const std::vector<StageSpec>& specs = pipeline_.stages();
  const int k = static_cast<int>(specs.size());
  // What rank 0 knows of the input: count, largest system, whether results stream to a sink.
  std::array<std::int64_t, 3> facts{-1, -1, 0};
  std::vector<double> costs;              // of each stage, decided on rank 0
  std::deque<systems::HostSystem> ahead;  // rank 0: input read to measure the costs
  on_every_rank(comm_, [&] {
    check_specs(specs, settings_);
    if (!settings_.stage_ranks.empty() && !settings_.ranks_per_stage.empty())
      throw Error("baton::pipeline::Driver: give ranks_per_stage or stage_ranks, not both");
    if (comm_.rank() == 0) {
      facts = {source.count(), source.largest(), sink_ != nullptr ? 1 : 0};
      for (const std::string& label : settings_.species)  // first, in this order (EAM elements)
        species_.index(label);
      for (const std::string& label : source.species())
        species_.index(label);
      costs = stage_costs(source, ahead);
    }
  });
  broadcast_object(comm_, costs, 0);
  broadcast_object(comm_, facts, 0);
  // Checkpoints to go on from: every rank may meet their systems in its stages.
  on_every_rank(comm_, [&] {
    if (settings_.checkpoint_every < 0)
      throw Error("baton::pipeline::Driver: checkpoint_every must be >= 0, got " +
                  std::to_string(settings_.checkpoint_every));
    if (settings_.checkpoint_every > 0 && settings_.checkpoint_prefix.empty())
      throw Error("baton::pipeline::Driver: checkpoint_every needs a checkpoint_prefix");
  });
  {
    std::string resume;
    on_every_rank(comm_, [&] {
      if (comm_.rank() == 0 && settings_.resume && !settings_.resume->empty())
        resume = encode_checkpoints(settings_.checkpoint_run, settings_.resume->all());
    });
    broadcast_object(comm_, resume, 0);
    on_every_rank(comm_, [&] {
      if (resume.empty())
        return;
      for (SystemCheckpoint& c :
           decode_checkpoints(resume, settings_.checkpoint_run, "the checkpoints to resume from")) {
        const std::string whose =
            "baton::pipeline::Driver: the checkpoint of system " + std::to_string(c.id);
        if (c.stage >= k)
          throw Error(whose + " is of stage " + std::to_string(c.stage) +
                      ", but the pipeline has " + std::to_string(k) + " stages");
        if (c.state.size() != detail::state_size(c.atoms, k))
          throw Error(whose + " holds " + std::to_string(c.state.size()) + " bytes, where " +
                      std::to_string(c.atoms) + " atoms in " + std::to_string(k) + " stages take " +
                      std::to_string(detail::state_size(c.atoms, k)));
        impl_->resume.add(std::move(c));
      }
    });
  }
  impl_->checkpoint_interval =
      settings_.checkpoint_every > 0
          ? (settings_.checkpoint_every + settings_.steps_per_call - 1) / settings_.steps_per_call
          : 0;
  // A stage's replicas share the next stage's batch: no more of them than it holds largest systems
  // (the same on every rank: a plan never rests on which stage happened to measure slower).
  std::vector<int> most(static_cast<std::size_t>(k), std::numeric_limits<int>::max());
  for (int s = 0; s + 1 < k; ++s) {
    const systems::BatchCapacity next = specs[static_cast<std::size_t>(s) + 1].capacity;
    const std::int64_t fit =
        std::min<std::int64_t>(next.systems, next.atoms / std::max<std::int64_t>(facts[1], 1));
    most[static_cast<std::size_t>(s)] =
        static_cast<int>(std::clamp<std::int64_t>(fit, 1, std::numeric_limits<int>::max()));
  }
  // An overflow chain (and error_when_full, which is about it) is where a segment meets the next:
  // asked for, the stages stay split over the ranks.
  const bool chain = settings_.overflow.systems > 0 || settings_.overflow.atoms > 0 ||
                     settings_.host_overflow.systems > 0 || settings_.host_overflow.atoms > 0 ||
                     !settings_.spill_directory.empty() || settings_.error_when_full;
  plan_ = settings_.stage_ranks.empty()
              ? plan_ranks(comm_.size(), costs, settings_.ranks_per_stage, most, !chain)
              : plan_ranks_explicit(comm_.size(), k, settings_.stage_ranks);
  // Every rank names species alike (hooks see labels); labels a source meets later reach the other
  // ranks with the first hand-offs that carry them (links.hpp).
  std::vector<std::string> names = species_.names();
  broadcast_object(comm_, names, 0);
  for (const std::string& label : names)
    species_.index(label);
  input_count_ = static_cast<long>(facts[0]);
  streamed_ = facts[2] != 0;
  segment_ = plan_.segment_of(comm_.rank());
  const Segment& seg = plan_.segments[static_cast<std::size_t>(segment_)];
  // Checkpoints of the stages before this rank's are restored elsewhere (rank 0 runs stage 0, so
  // its feeder still knows every one).
  impl_->resume.erase_before(seg.first_stage);
  impl_->resume.keep_states(seg.first_stage, seg.last_stage);  // the rest only pass through
  // The same checks on every rank, from the same numbers: they throw alike.
  const std::int64_t max_atoms =
      check_capacities(plan_, specs, settings_.overflow, settings_.host_overflow, facts[1]);

  // Everything this rank allocates, agreed on: one rank out of memory stops every rank.
  Impl& m = *impl_;
  on_every_rank(comm_, [&] {
    for (int s = seg.first_stage; s <= seg.last_stage; ++s) {
      const StageSpec& spec = specs[static_cast<std::size_t>(s)];
      detail::Runner r{
          spec.make(), systems::SystemsBatch(spec.capacity, k), StageCounters{}, {}, {}, {}};
      r.counters.stage = s;
      r.counters.name = spec.name;
      m.runners.push_back(std::move(r));
    }
    m.last_segment = seg.last_stage == k - 1;
    // One segment of several ranks: rank 0 deals the input by the work each rank has left.
    m.balanced = plan_.segments.size() == 1 && seg.ranks.size() > 1;
    double total = 0.0;
    for (int s = seg.first_stage; s <= seg.last_stage; ++s)
      total += std::max(costs[static_cast<std::size_t>(s)], 0.0);
    for (int s = seg.first_stage; s <= seg.last_stage; ++s) {
      const double cost = std::max(costs[static_cast<std::size_t>(s)], 0.0);
      m.stage_share.push_back(total > 0.0 ? cost / total
                                          : 1.0 / (seg.last_stage - seg.first_stage + 1));
      m.stage_steps.push_back(std::max(
          m.runners[static_cast<std::size_t>(s - seg.first_stage)].impl->cost_estimate(), 1.0));
    }
    if (!m.last_segment)
      make_overflow_chain();
    build_links();
    if (comm_.rank() == 0) {
      std::vector<detail::DownLink> feed;
      const systems::BatchCapacity cap = specs[static_cast<std::size_t>(seg.first_stage)].capacity;
      for (int r : plan_.segments.front().ranks)
        if (r != 0)
          feed.emplace_back(r, cap.systems, cap.atoms);
      m.feeder.emplace(source, std::move(ahead), max_atoms, std::move(feed), !streamed_,
                       m.resume.empty() ? nullptr : &m.resume);
      m.feeder->balance_by_load(m.balanced);
    }
    std::vector<int> sources;
    if (comm_.rank() == 0)
      for (int r : plan_.segments.back().ranks)
        if (r != 0)
          sources.push_back(r);
    m.collector.emplace(comm_, k, m.last_segment, comm_.rank() == 0 ? sink_ : nullptr,
                        std::move(sources));
    // The step's one read: every stage batch here, and a hand-off on every link into this rank.
    std::size_t snapshot_size = 0;
    for (detail::Runner& r : m.runners) {
      r.batch.defer_list_overflow(true);  // read with the snapshot, not by the stage's calls
      snapshot_size += detail::Snapshot::batch_size(r.batch.capacity());
    }
    for (detail::UpLink& u : m.up) {
      snapshot_size += systems::packed_index_size(static_cast<int>(u.share_systems));
      detail::allocate_handoff_buffers(u, k);
    }
    m.snapshot.emplace(snapshot_size);
  });
  const detail::LinkContext c = context(mode_into(seg.first_stage));
  if (c.mode != CommMode::sync)
    for (detail::UpLink& u : m.up)
      detail::post_handoff(c, u);
  node_rank_ = comm_.split_node().rank();
  timers_.reset_origin();
}

std::vector<double> Driver::stage_costs(SystemSource& source,
                                        std::deque<systems::HostSystem>& ahead) {
  const std::vector<StageSpec>& specs = pipeline_.stages();
  std::vector<double> costs;
  bool given = false;
  for (const StageSpec& spec : specs) {
    given = given || spec.cost > 0.0;
    costs.push_back(spec.cost > 0.0 ? spec.cost : spec.make()->cost_estimate());
  }
  // Measure only where the plan depends on it, and never mix given costs with measured ones.
  if (!settings_.calibrate || given || comm_.size() == 1 || !settings_.stage_ranks.empty() ||
      !settings_.ranks_per_stage.empty())
    return costs;
  // A sample of the first input systems that every stage's batch holds.
  systems::BatchCapacity room{std::numeric_limits<int>::max(), std::numeric_limits<int>::max()};
  for (const StageSpec& spec : specs)
    room = {std::min(room.systems, spec.capacity.systems),
            std::min(room.atoms, spec.capacity.atoms)};
  std::vector<systems::HostSystem> sample;
  while (ahead.size() < 8) {
    std::optional<systems::HostSystem> s = source.next();
    if (!s)
      break;
    ahead.push_back(std::move(*s));
    const systems::HostSystem& last = ahead.back();
    const auto atoms = static_cast<int>(last.size());
    if (!systems::host_system_problem(last).empty() || room.systems < 1 || room.atoms < atoms)
      break;  // the feeder reports a bad system; the sample ends before it
    room = {room.systems - 1, room.atoms - atoms};
    sample.push_back(last);
  }
  if (sample.empty())
    return costs;
  const std::vector<double> per =
      detail::seconds_per_atom_step(specs, sample, settings_.steps_per_call);
  if (std::any_of(per.begin(), per.end(), [](double t) { return !(t > 0.0); }))
    return costs;  // a stage took no step: nothing to weigh it by
  for (std::size_t s = 0; s < specs.size(); ++s)
    costs[s] *= per[s];
  return costs;
}

void Driver::make_overflow_chain() {
  const systems::BatchCapacity host = settings_.host_overflow;
  const bool later = host.systems > 0 || !settings_.spill_directory.empty();
  systems::BatchCapacity device = settings_.overflow;
  if (device.systems < 1 && later)  // the chain starts on the device: the next stage's size
    device = pipeline_
                 .stages()[static_cast<std::size_t>(
                     plan_.segments[static_cast<std::size_t>(segment_) + 1].first_stage)]
                 .capacity;
  if (device.systems < 1)
    return;
  const std::string spill = settings_.spill_directory.empty()
                                ? std::string()
                                : settings_.spill_directory + "/baton-spill." +
                                      std::to_string(::getpid()) + ".rank" +
                                      std::to_string(comm_.rank()) + ".bin";
  impl_->overflow.emplace(device, host, spill, static_cast<int>(pipeline_.size()));
}

long Driver::spilled_count() const noexcept {
  return impl_->overflow ? impl_->overflow->spilled() : 0;
}

void Driver::build_links() {
  Impl& m = *impl_;
  const std::vector<StageSpec>& specs = pipeline_.stages();
  const Segment& seg = plan_.segments[static_cast<std::size_t>(segment_)];
  const systems::BatchCapacity cap = specs[static_cast<std::size_t>(seg.first_stage)].capacity;
  if (segment_ > 0) {
    const Segment& prev = plan_.segments[static_cast<std::size_t>(segment_) - 1];
    const auto n_up = static_cast<std::int64_t>(prev.ranks.size());
    for (int r : prev.ranks)
      m.up.emplace_back(r, cap.systems / n_up, cap.atoms / n_up);
  } else if (comm_.rank() != 0) {
    m.up.emplace_back(0, cap.systems, cap.atoms);  // the input link from rank 0
  }
  if (!m.last_segment) {
    const Segment& next = plan_.segments[static_cast<std::size_t>(segment_) + 1];
    const systems::BatchCapacity next_cap =
        specs[static_cast<std::size_t>(next.first_stage)].capacity;
    const auto n_here = static_cast<std::int64_t>(seg.ranks.size());
    for (int r : next.ranks)
      m.down.emplace_back(r, next_cap.systems / n_here, next_cap.atoms / n_here);
    // Replicas start their round-robin at different downstream ranks.
    const auto replica = static_cast<std::size_t>(
        std::find(seg.ranks.begin(), seg.ranks.end(), comm_.rank()) - seg.ranks.begin());
    m.round_robin = replica % m.down.size();
  }
}

}  // namespace baton::pipeline
