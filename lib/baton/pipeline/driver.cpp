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
#include "baton/dynamics/host_transfer.hpp"
#include "baton/pipeline/calibrate.hpp"
#include "baton/pipeline/collector.hpp"
#include "baton/pipeline/feeder.hpp"
#include "baton/pipeline/links.hpp"
#include "baton/pipeline/overflow.hpp"
#include "baton/pipeline/runner.hpp"
#include "baton/pipeline/wire.hpp"
#include "baton/runtime/error.hpp"
#include "baton/transport/objects.hpp"

namespace baton::pipeline {

using detail::counts;
using dynamics::BatchCapacity;
using dynamics::HostSystem;
using dynamics::SystemsBatch;
using dynamics::SystemStatus;

struct Driver::Impl {
  std::vector<detail::Runner> runners;
  std::vector<detail::UpLink> up;      // chain links, or rank 0's input link
  std::vector<detail::DownLink> down;  // chain links
  std::optional<detail::OverflowChain> overflow;
  std::optional<detail::Feeder> feeder;  // rank 0
  std::optional<detail::Collector> collector;
  std::optional<VectorSource> vector_source;  // setup(vector)
  bool last_segment = false;
  std::size_t round_robin = 0;
  bool eos_sent = false;
  bool ended = false;  // the collector's end went out
};

Driver::Driver(const Communicator& comm, Pipeline pipeline, Settings settings)
    : comm_(Communicator::duplicate(comm.raw())),
      pipeline_(std::move(pipeline)),
      settings_(std::move(settings)),
      impl_(std::make_unique<Impl>()) {
  timers_.limit_iterations(settings_.timer_iterations);
}

namespace {

// Communicators of Drivers that failed, freed when MPI_Finalize starts (by the delete callback of
// an attribute on MPI_COMM_SELF, which MPI calls first thing in MPI_Finalize).
std::vector<Communicator>* kept_communicators = nullptr;

int free_kept_communicators(MPI_Comm, int, void*, void*) {
  delete kept_communicators;
  kept_communicators = nullptr;
  return MPI_SUCCESS;
}

}  // namespace

Driver::~Driver() {
  impl_.reset();  // sends in flight complete before the communicator goes
  if (!failed_)
    return;
  // A failure leaves messages nobody will receive (abort notices to ranks that stopped first). MPI
  // may give a later communicator the same context, where they could match: keep this one until
  // MPI_Finalize. Best effort: a destructor must not throw, so a failing MPI call here only means
  // the communicator is freed now after all.
  if (kept_communicators == nullptr) {
    int key = MPI_KEYVAL_INVALID;
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_kept_communicators, &key, nullptr) !=
            MPI_SUCCESS ||
        MPI_Comm_set_attr(MPI_COMM_SELF, key, nullptr) != MPI_SUCCESS)
      return;
    kept_communicators = new std::vector<Communicator>();
  }
  kept_communicators->push_back(std::move(comm_));
}

std::vector<StageCounters> Driver::counters() const {
  std::vector<StageCounters> out;
  for (const detail::Runner& r : impl_->runners)
    out.push_back(r.counters);
  return out;
}

long Driver::failed_count() const noexcept {
  return impl_->collector ? static_cast<long>(impl_->collector->failed()) : 0;
}

void Driver::setup(const std::vector<HostSystem>& input) {
  // Rank 0's copy, given away system by system as the run takes them in.
  impl_->vector_source.emplace(comm_.rank() == 0 ? input : std::vector<HostSystem>{});
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
                              BatchCapacity overflow, BatchCapacity host, std::int64_t largest) {
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

void check_specs(const std::vector<StageSpec>& specs, const Settings& settings) {
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
  std::vector<double> costs;     // of each stage, decided on rank 0
  std::deque<HostSystem> ahead;  // rank 0: input read to measure the costs
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
  plan_ = settings_.stage_ranks.empty()
              ? plan_ranks(comm_.size(), costs, settings_.ranks_per_stage)
              : plan_ranks_explicit(comm_.size(), k, settings_.stage_ranks);
  broadcast_object(comm_, facts, 0);
  // Every rank names species alike (hooks see labels); labels a source meets later are named on
  // rank 0 only.
  std::vector<std::string> names = species_.names();
  broadcast_object(comm_, names, 0);
  for (const std::string& label : names)
    species_.index(label);
  input_count_ = static_cast<long>(facts[0]);
  streamed_ = facts[2] != 0;
  segment_ = plan_.segment_of(comm_.rank());
  const Segment& seg = plan_.segments[static_cast<std::size_t>(segment_)];
  // The same checks on every rank, from the same numbers: they throw alike.
  const std::int64_t max_atoms =
      check_capacities(plan_, specs, settings_.overflow, settings_.host_overflow, facts[1]);

  // Everything this rank allocates, agreed on: one rank out of memory stops every rank.
  Impl& m = *impl_;
  on_every_rank(comm_, [&] {
    for (int s = seg.first_stage; s <= seg.last_stage; ++s) {
      const StageSpec& spec = specs[static_cast<std::size_t>(s)];
      detail::Runner r{spec.make(), SystemsBatch(spec.capacity, k), StageCounters{}};
      r.counters.stage = s;
      r.counters.name = spec.name;
      m.runners.push_back(std::move(r));
    }
    m.last_segment = seg.last_stage == k - 1;
    if (!m.last_segment)
      make_overflow_chain();
    build_links();
    if (comm_.rank() == 0) {
      std::vector<detail::DownLink> feed;
      const BatchCapacity cap = specs[static_cast<std::size_t>(seg.first_stage)].capacity;
      for (int r : plan_.segments.front().ranks)
        if (r != 0)
          feed.emplace_back(r, cap.systems, cap.atoms);
      m.feeder.emplace(source, std::move(ahead), max_atoms, std::move(feed), !streamed_);
    }
    std::vector<int> sources;
    if (comm_.rank() == 0)
      for (int r : plan_.segments.back().ranks)
        if (r != 0)
          sources.push_back(r);
    m.collector.emplace(comm_, k, m.last_segment, comm_.rank() == 0 ? sink_ : nullptr,
                        std::move(sources));
  });
  const detail::LinkContext c = context(mode_into(seg.first_stage));
  if (c.mode != CommMode::sync)
    for (detail::UpLink& u : m.up)
      detail::post_handoff(c, u);
  node_rank_ = comm_.split_node().rank();
  timers_.reset_origin();
}

std::vector<double> Driver::stage_costs(SystemSource& source, std::deque<HostSystem>& ahead) {
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
  BatchCapacity room{std::numeric_limits<int>::max(), std::numeric_limits<int>::max()};
  for (const StageSpec& spec : specs)
    room = {std::min(room.systems, spec.capacity.systems),
            std::min(room.atoms, spec.capacity.atoms)};
  std::vector<HostSystem> sample;
  while (ahead.size() < 8) {
    std::optional<HostSystem> s = source.next();
    if (!s)
      break;
    ahead.push_back(std::move(*s));
    const HostSystem& last = ahead.back();
    const auto atoms = static_cast<int>(last.size());
    if (!dynamics::host_system_problem(last).empty() || room.systems < 1 || room.atoms < atoms)
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
  const BatchCapacity host = settings_.host_overflow;
  const bool later = host.systems > 0 || !settings_.spill_directory.empty();
  BatchCapacity device = settings_.overflow;
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
  const BatchCapacity cap = specs[static_cast<std::size_t>(seg.first_stage)].capacity;
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
    const BatchCapacity next_cap = specs[static_cast<std::size_t>(next.first_stage)].capacity;
    const auto n_here = static_cast<std::int64_t>(seg.ranks.size());
    for (int r : next.ranks)
      m.down.emplace_back(r, next_cap.systems / n_here, next_cap.atoms / n_here);
    // Replicas start their round-robin at different downstream ranks.
    const auto replica = static_cast<std::size_t>(
        std::find(seg.ranks.begin(), seg.ranks.end(), comm_.rank()) - seg.ranks.begin());
    m.round_robin = replica % m.down.size();
  }
}

CommMode Driver::mode_into(int stage) const {
  const StageSpec& spec = pipeline_.stages()[static_cast<std::size_t>(stage)];
  return spec.mode ? *spec.mode : settings_.mode;
}

detail::LinkContext Driver::context(CommMode mode) {
  return detail::LinkContext{
      comm_, mode, timers_, step_, settings_.debug ? &log() : nullptr, settings_.synchronized};
}

std::pair<int, int> Driver::local_stages() const {
  if (segment_ < 0)
    return {-1, -1};
  const Segment& seg = plan_.segments[static_cast<std::size_t>(segment_)];
  return {seg.first_stage, seg.last_stage};
}

std::ostream& Driver::log() const {
  return settings_.log != nullptr ? *settings_.log : std::cerr;
}

bool Driver::poll_progress() {
  Impl& m = *impl_;
  if (comm_.rank() != 0 || !m.collector)
    return false;
  const bool pending = m.collector->poll(species_);
  finished_seen_ = static_cast<long>(m.collector->finished());
  return pending;
}

bool Driver::step() {
  if (segment_ < 0)
    throw Error("baton::pipeline::Driver::step: call setup() first");
  if (failed_)
    throw Error("baton::pipeline::Driver::step: the pipeline stopped with an error before");
  std::exception_ptr error;
  if (!done_) {
    if (start_ < 0)
      start_ = TimerRegistry::now();
    try {
      step_once();
      if (done_)
        wall_ = TimerRegistry::now() - start_;
    } catch (...) {
      failed_ = true;
      error = std::current_exception();
      if (settings_.debug) {
        try {
          std::rethrow_exception(error);
        } catch (const std::exception& e) {
          log() << "[baton::pipeline] step " << step_ << " rank " << comm_.rank()
                << ": stopping with an error: " << e.what() << '\n';
        } catch (...) {
        }
      }
      stop_neighbours();
    }
  }
  if (settings_.synchronized) {
    // All ranks agree every step: still running anywhere? failed anywhere?
    int all[2] = {done_ ? 0 : 1, failed_ ? 1 : 0};
    all_reduce(
        comm_,
        Kokkos::View<int*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(all, 2),
        ReduceOp::max);
    if (all[1] != 0) {
      failed_ = true;
      impl_->collector->fail();  // every rank knows now: results senders end, rank 0 drains
      if (error)
        std::rethrow_exception(error);
      throw Error("baton::pipeline: another rank stopped with an error; its own message says why");
    }
    return all[0] != 0;
  }
  if (error)
    std::rethrow_exception(error);
  return !done_;
}

void Driver::stop_neighbours() noexcept {
  Impl& m = *impl_;
  const detail::LinkContext c = context(settings_.mode);  // draining does not depend on the mode
  std::vector<detail::DownLink*> down;
  for (detail::DownLink& d : m.down)
    down.push_back(&d);
  if (m.feeder)
    for (detail::DownLink& d : m.feeder->links())
      down.push_back(&d);
  detail::notify_failure(c, m.up, down, static_cast<int>(pipeline_.size()));
  if (m.collector && !settings_.synchronized)
    m.collector->fail();  // synchronized: after the step's agreement, on every rank
}

void Driver::step_once() {
  ++step_;
  take_in();
  advance_stages();
  hand_on();
  if (comm_.rank() == 0)
    poll_progress();
  else
    finished_seen_ = static_cast<long>(impl_->collector->finished());
  update_done();
}

void Driver::take_in() {
  Impl& m = *impl_;
  const detail::LinkContext c = context(mode_into(m.runners.front().counters.stage));
  detail::Runner& first = m.runners.front();
  for (detail::UpLink& u : m.up) {
    if (!u.open)
      continue;
    WireHeader h;
    const WireBatch wire = detail::receive_handoff(c, u, h);
    if (h.systems > 0) {
      int slot = 0;
      {
        auto t = timers_.scope("receive");
        slot = unpack_systems(first.batch, wire);
      }
      auto t = timers_.scope(first.counters.name + " compute");
      first.impl->enter(first.batch, slot, static_cast<int>(h.systems));
    }
  }
  if (!m.up.empty())
    detail::grant_credit(c, m.up, first.batch.free());
  if (m.feeder) {
    std::vector<HostSystem> take = m.feeder->take(first.batch.free());
    if (!take.empty()) {
      const int slot = first.batch.num_systems();
      dynamics::append_systems(first.batch, take, species_);
      auto t = timers_.scope(first.counters.name + " compute");
      first.impl->enter(first.batch, slot, static_cast<int>(take.size()));
    }
    m.feeder->feed(c, species_, static_cast<int>(pipeline_.size()));
  }
}

void Driver::advance_stages() {
  Impl& m = *impl_;
  for (std::size_t i = 0; i < m.runners.size(); ++i) {
    detail::Runner& r = m.runners[i];
    call_hooks(r, detail::advance(r, settings_.steps_per_call, timers_));
    if (i + 1 < m.runners.size()) {
      auto t = timers_.scope(m.runners[i + 1].counters.name + " compute");
      detail::move_held(r.batch, m.runners[i + 1].batch, m.runners[i + 1].impl.get());
    } else if (m.last_segment) {
      const std::vector<int> done =
          detail::slots_with(r.batch.status_on_host(), SystemStatus::Held);
      if (!done.empty()) {
        m.collector->add(pack_systems(r.batch, done), species_);
        r.batch.remove(done);
      }
    } else if (m.overflow) {
      m.overflow->take(r.batch);
    }
  }
}

void Driver::call_hooks(detail::Runner& r, const std::vector<int>& finished) {
  std::vector<Hook*> hooks;
  for (const auto& h : pipeline_.stages()[static_cast<std::size_t>(r.counters.stage)].hooks)
    hooks.push_back(h.get());
  for (const auto& h : settings_.hooks)
    hooks.push_back(h.get());
  hooks.erase(std::remove(hooks.begin(), hooks.end(), nullptr), hooks.end());
  if (hooks.empty())
    return;
  const HookContext where{r.counters.stage, r.counters.name, step_, comm_.rank()};
  if (!finished.empty()) {
    const std::vector<HostSystem> systems =
        dynamics::copy_systems_to_host(r.batch, finished, species_);
    for (Hook* h : hooks)
      h->on_finished(where, systems);
  }
  const auto due = [&](const Hook* h) { return h->every() > 0 && step_ % h->every() == 0; };
  if (std::none_of(hooks.begin(), hooks.end(), due))
    return;
  const std::vector<int> running =
      detail::slots_with(r.batch.status_on_host(), SystemStatus::Active);
  if (running.empty())
    return;
  const std::vector<HostSystem> systems =
      dynamics::copy_systems_to_host(r.batch, running, species_);
  for (Hook* h : hooks)
    if (due(h))
      h->on_step(where, systems);
}

bool Driver::inputs_done() {
  Impl& m = *impl_;
  return std::none_of(m.up.begin(), m.up.end(), [](const detail::UpLink& u) { return u.open; }) &&
         (!m.feeder || m.feeder->exhausted());
}

long Driver::systems_here() const {
  const Impl& m = *impl_;
  long n = m.overflow ? m.overflow->systems() : 0;
  for (const detail::Runner& r : m.runners)
    n += r.batch.num_systems();
  return n;
}

// Assigns the systems waiting in `out` (in slot order) to downstream links with credit,
// round-robin.
std::vector<std::vector<int>> Driver::assign_downstream(const SystemsBatch& out, bool all) {
  Impl& m = *impl_;
  const std::vector<int> status = out.status_on_host();
  const std::vector<int> atoms = out.count_on_host();
  std::vector<std::vector<int>> assigned(m.down.size());
  for (std::size_t s = 0; s < status.size(); ++s) {
    if (!all && status[s] != static_cast<int>(SystemStatus::Held))
      continue;
    for (std::size_t j = 0; j < m.down.size(); ++j) {
      const std::size_t l = (m.round_robin + j) % m.down.size();
      detail::DownLink& d = m.down[l];
      if (d.fits(atoms[s])) {
        d.take(atoms[s]);
        assigned[l].push_back(static_cast<int>(s));
        m.round_robin = (l + 1) % m.down.size();
        break;
      }
    }
  }
  return assigned;
}

void Driver::hand_on() {
  Impl& m = *impl_;
  if (m.down.empty())
    return;
  const detail::LinkContext c =
      context(mode_into(plan_.segments[static_cast<std::size_t>(segment_) + 1].first_stage));
  if (c.mode != CommMode::sync)
    for (detail::DownLink& d : m.down)
      detail::collect_owed_credit(c, d);
  // In the overflow sink every system is waiting; in a stage batch only the Held ones.
  SystemsBatch& out = m.overflow ? m.overflow->device() : m.runners.back().batch;
  const std::vector<std::vector<int>> assigned = assign_downstream(out, m.overflow.has_value());
  std::vector<int> all_assigned;
  for (const std::vector<int>& a : assigned)
    all_assigned.insert(all_assigned.end(), a.begin(), a.end());
  std::sort(all_assigned.begin(), all_assigned.end());
  const bool eos = inputs_done() && systems_here() == static_cast<long>(all_assigned.size());
  for (std::size_t l = 0; l < m.down.size(); ++l) {
    detail::DownLink& d = m.down[l];
    const WireBatch wire = pack_systems(out, assigned[l], eos ? wire_end_of_stream : 0);
    detail::send_handoff(c, d, wire, eos);
    c.note("sent to rank " + std::to_string(d.rank) + " (tag " + std::to_string(detail::data_tag) +
           "): " + std::to_string(assigned[l].size()) + " systems" +
           (eos ? ", end of stream" : ""));
  }
  out.remove(all_assigned);
  if (m.overflow) {
    m.overflow->refill();
    m.overflow->take(m.runners.back().batch);
  }
  if (settings_.error_when_full)
    check_not_full();
  if (eos) {
    m.eos_sent = true;
    return;
  }
  for (detail::DownLink& d : m.down)
    detail::expect_credit(c, d);
}

// error_when_full: anything finished that went neither downstream nor into the sink is an error.
void Driver::check_not_full() {
  Impl& m = *impl_;
  const std::vector<int> last = m.runners.back().batch.status_on_host();
  const long waiting = std::count(last.begin(), last.end(), static_cast<int>(SystemStatus::Held));
  if (waiting > 0)
    throw Error("baton::pipeline: rank " + std::to_string(comm_.rank()) + ", stage '" +
                m.runners.back().counters.name + "': " + std::to_string(waiting) +
                " finished systems have nowhere to go: the next stage granted no room and " +
                (m.overflow ? m.overflow->describe() + " is full"
                            : std::string("there is no overflow chain")) +
                " (error_when_full is set)");
}

void Driver::update_done() {
  Impl& m = *impl_;
  if (m.down.empty())
    done_ = inputs_done() && systems_here() == 0;
  else
    done_ = m.eos_sent;
  if (m.feeder)
    done_ = done_ && std::none_of(m.feeder->links().begin(), m.feeder->links().end(),
                                  [](const detail::DownLink& d) { return d.open; });
  if (!done_)
    return;
  for (detail::DownLink& d : m.down) {
    d.ints_send.wait();
    d.reals_send.wait();
  }
  if (m.feeder)
    for (detail::DownLink& d : m.feeder->links()) {
      d.ints_send.wait();
      d.reals_send.wait();
    }
  m.collector->end();
}

// Rank 0 at the end of a run in which no rank stopped: what came out is what went in.
void Driver::check_conservation() {
  Impl& m = *impl_;
  if (comm_.rank() != 0 || m.collector->aborted())
    return;
  const detail::IdTally& in = m.feeder->tally();
  const detail::IdTally& out = m.collector->tally();
  if (in.count != out.count || in.hash != out.hash)
    throw Error("baton::pipeline: " + std::to_string(in.count) + " systems went in and " +
                std::to_string(out.count) + " came out" +
                (in.count == out.count ? ", with other ids" : std::string()));
}

void Driver::run(const std::function<void()>& after_step) {
  if (segment_ < 0)
    throw Error("baton::pipeline::Driver::run: call setup() first");
  if (start_ < 0) {
    barrier(comm_);
    start_ = TimerRegistry::now();
    timers_.reset_origin(start_);
  }
  std::string problem;
  try {
    if (!failed_)
      while (step())
        if (after_step)
          after_step();
    // Rank 0 takes every last-stage rank's last results (a failing rank sends its end too).
    while (!failed_ && poll_progress()) {
      if (after_step)
        after_step();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (!failed_)
      check_conservation();
  } catch (const std::exception& e) {
    if (!failed_) {
      failed_ = true;
      impl_->collector->fail();
    }
    problem = e.what();
  }
  // Every rank ends here, so that an error anywhere reaches all ranks before the next collective.
  try {
    agree_on_failure(comm_, problem, problem.empty() ? 0 : 1);
  } catch (const CollectiveError&) {
    failed_ = true;
    if (!problem.empty())
      throw Error(problem);  // the failing ranks their own error
    throw Error("baton::pipeline: another rank stopped with an error; its own message says why");
  }
  // Success everywhere: the streamed output is complete.
  on_every_rank(comm_, [&] {
    if (comm_.rank() == 0 && sink_ != nullptr)
      sink_->finish();
  });
}

std::vector<HostSystem> Driver::gather_results(int root) {
  Impl& m = *impl_;
  if (streamed_)  // known alike on every rank since setup
    throw Error("baton::pipeline::Driver::gather_results: the results went to the sink");
  check_rank(comm_, root, "baton::pipeline::Driver::gather_results");
  std::vector<HostSystem> out;
  std::string problem;
  if (comm_.rank() == 0) {
    out = std::move(m.collector->kept());
    std::vector<std::int64_t> expected = m.feeder->ids();
    std::sort(expected.begin(), expected.end());
    std::sort(out.begin(), out.end(),
              [](const HostSystem& a, const HostSystem& b) { return a.id < b.id; });
    std::vector<std::int64_t> got;
    for (const HostSystem& s : out)
      got.push_back(s.id);
    if (got != expected) {
      std::ostringstream why;
      why << "baton::pipeline: " << expected.size() << " systems went in and " << got.size()
          << " came out";
      for (std::size_t i = 1; i < got.size(); ++i)
        if (got[i] == got[i - 1]) {
          why << "; system " << got[i] << " came out more than once";
          break;
        }
      std::vector<std::int64_t> missing;
      std::set_difference(expected.begin(), expected.end(), got.begin(), got.end(),
                          std::back_inserter(missing));
      if (!missing.empty())
        why << "; system " << missing.front() << " never came out";
      problem = why.str();
    }
  }
  broadcast_object(comm_, problem, 0);
  if (!problem.empty())
    throw CollectiveError(problem);
  if (root == 0)
    return out;
  // Root gets them from rank 0, in the wire format, and the species names to read them.
  std::vector<std::string> names = species_.names();
  broadcast_object(comm_, names, 0);
  if (comm_.rank() == 0) {
    dynamics::SpeciesTable table = species_;
    const HostWire w = encode_host_systems(out, table, static_cast<int>(pipeline_.size()));
    send_view(comm_, host_ints_view(w), root, detail::data_tag);
    send_view(comm_, host_reals_view(w), root, detail::data_tag);
    return {};
  }
  if (comm_.rank() != root)
    return {};
  for (const std::string& label : names)
    species_.index(label);
  const auto ints = recv_view<detail::HostInts>(comm_, 0, detail::data_tag);
  const auto reals = recv_view<detail::HostReals>(comm_, 0, detail::data_tag);
  return decode_host_systems(ints.data(), ints.extent(0), reals.data(), reals.extent(0), species_);
}

}  // namespace baton::pipeline
