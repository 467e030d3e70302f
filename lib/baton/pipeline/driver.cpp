#include "baton/pipeline/driver.hpp"
#include "baton/pipeline/detail/driver_impl.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

#include "baton/collectives/agreement.hpp"
#include "baton/collectives/collectives.hpp"
#include "baton/core/error.hpp"
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
using systems::SystemStatus;

Driver::Driver(const Communicator& comm, Pipeline pipeline, DriverOptions settings)
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

HandoffCopies Driver::handoff_copies() const noexcept {
  HandoffCopies out = impl_->copies;
  if (impl_->feeder)
    out.input_sent = impl_->feeder->copies();
  if (impl_->collector)
    out.collected = impl_->collector->copies();
  return out;
}

long Driver::failed_count() const noexcept {
  return impl_->collector ? static_cast<long>(impl_->collector->failed()) : 0;
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
    const systems::HostSyncs before = systems::host_syncs();
    const auto count_syncs = [&] {
      const systems::HostSyncs after = systems::host_syncs();
      host_syncs_.bookkeeping += after.bookkeeping - before.bookkeeping;
      host_syncs_.payload += after.payload - before.payload;
    };
    try {
      step_once();
      count_syncs();
      if (done_)
        wall_ = TimerRegistry::now() - start_;
    } catch (...) {
      count_syncs();
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

// One step (docs/pipeline.md, "A step"): this step's hand-offs in; the one read of the step's
// bookkeeping (the snapshot); from it, on the host: arrivals unpacked, finished systems counted and
// moved on, hand-offs out, credit and input; then each stage's call, which the next step's
// snapshot reads.
void Driver::step_once() {
  ++step_;
  if (impl_->checkpoint_interval > 0 && step_ > 1 && (step_ - 1) % impl_->checkpoint_interval == 0)
    write_checkpoint();
  receive_handoffs();
  take_snapshot();
  take_in();
  finish_stages();
  const bool credit_expected = send_downstream();
  grant_and_feed();
  if (credit_expected)
    expect_credit();
  advance_stages();
  if (comm_.rank() == 0) {
    poll_progress();
  } else {
    impl_->collector->progress();
    finished_seen_ = static_cast<long>(impl_->collector->finished());
  }
  update_done();
}

// Every running system here, as the last step's calls left it, in this rank's checkpoint file
// (written atomically: a kill leaves the previous one).
void Driver::write_checkpoint() {
  auto t = timers_.scope("checkpoint");
  std::vector<SystemCheckpoint> all;
  for (const detail::Runner& r : impl_->runners) {
    std::vector<SystemCheckpoint> some = detail::capture(r.batch, r.counters.stage);
    std::move(some.begin(), some.end(), std::back_inserter(all));
  }
  write_checkpoints(settings_.checkpoint_prefix + "." + std::to_string(comm_.rank()),
                    settings_.checkpoint_run, all);
}

// Systems that just arrived in `r`'s batch from slot `first` on and go on from a checkpoint of
// this stage: their state is the checkpoint's (they arrived marked failed, unstepped, and enter()
// left them alone).
void Driver::resume_arrivals(detail::Runner& r, int first) {
  Impl& m = *impl_;
  const int n = r.batch.num_systems() - first;
  if (m.resume.empty() || n <= 0)
    return;
  const std::vector<std::int64_t> ids = detail::slot_ids(r.batch, first, n);
  std::vector<std::pair<int, const SystemCheckpoint*>> here;
  for (int k = 0; k < n; ++k) {
    const SystemCheckpoint* c = m.resume.find(ids[static_cast<std::size_t>(k)]);
    if (c != nullptr && c->stage == r.counters.stage)
      here.emplace_back(first + k, c);
    // A checkpoint of an earlier stage that this rank runs is restored here and forgotten (the
    // ranks of later stages forget it at setup): one still known is one that was passed by.
    if (c != nullptr && c->stage < r.counters.stage)
      throw Error("baton::pipeline: system " + std::to_string(c->id) + " reached stage '" +
                  r.counters.name + "' without the state of its checkpoint in stage " +
                  std::to_string(c->stage));
  }
  if (here.empty())
    return;
  detail::restore(r.batch, here);
  for (const auto& [slot, c] : here)
    if (c->entering)  // as an arrival enters: the stage's entry (velocities, forces)
      r.impl->enter(r.batch, slot, 1);
  for (const auto& [slot, c] : here) {
    if (static_cast<std::size_t>(slot) < r.failed.size())
      r.failed[static_cast<std::size_t>(slot)] = 0;
    // The counters count the steps taken in this run: take_finished() adds them all.
    r.counters.steps -= static_cast<long>(c->steps);
    r.counters.atom_steps -= static_cast<long>(c->steps) * c->atoms;
  }
  std::vector<std::int64_t> done;
  for (const auto& [slot, c] : here)
    done.push_back(c->id);
  m.resume.erase(done);  // each system arrives in its checkpoint's stage once
}

void Driver::receive_handoffs() {
  Impl& m = *impl_;
  m.arrivals.clear();
  const detail::LinkContext c = context(mode_into(m.runners.front().counters.stage));
  // The input links (rank 0's feeder to the other ranks of the first segment), in the async modes:
  // a rank with systems to step takes a hand-off only once it is there, so that its steps do not
  // wait for rank 0's (which also reads the input and takes the results). Rank 0 feeds a link once
  // its credit is back (Feeder::feed); a rank with nothing to step waits as on any link.
  const bool input_links = segment_ == 0 && c.mode != CommMode::sync && has_running();
  for (std::size_t l = 0; l < m.up.size(); ++l) {
    detail::UpLink& u = m.up[l];
    if (!u.open)
      continue;
    if (input_links && !detail::handoff_arrived(u))
      continue;
    const auto credit = static_cast<int>(u.outstanding_systems);
    m.arrivals.push_back(detail::Arrival{l, detail::receive_handoff(c, u), credit, 0});
  }
}

// The step's one device-to-host read: the stage batches' statuses, steps and list overflow, and
// the indexes of the hand-offs just received. The host works from it until the next step.
void Driver::take_snapshot() {
  Impl& m = *impl_;
  detail::Snapshot& snapshot = *m.snapshot;
  snapshot.clear();
  m.runner_at.clear();
  for (const detail::Runner& r : m.runners)
    m.runner_at.push_back(snapshot.add(r.batch));
  for (detail::Arrival& a : m.arrivals)
    a.at = snapshot.add(a.wire, a.max_systems);
  snapshot.take();
  for (std::size_t i = 0; i < m.runners.size(); ++i)
    snapshot.apply(m.runners[i].batch, m.runner_at[i], m.runners[i].failed);
}

void Driver::take_in() {
  Impl& m = *impl_;
  const detail::LinkContext c = context(mode_into(m.runners.front().counters.stage));
  detail::Runner& first = m.runners.front();
  for (detail::Arrival& a : m.arrivals) {
    const systems::PackedIndex index = m.snapshot->index(a.wire, a.max_systems, a.at);
    detail::accept_handoff(c, m.up[a.link], index.header);
    if (index.header.new_species())  // labels the sender named since its last hand-off here
      detail::receive_species(c, m.up[a.link], species_);
    if (index.header.systems == 0)
      continue;
    a.wire.index = std::make_shared<const systems::PackedIndex>(index);
    int slot = 0;
    {
      auto t = timers_.scope("receive");
      slot = systems::unpack_systems(first.batch, a.wire);  // failed systems arrive Finished
      detail::note_arrivals(first, slot);
      m.copies.received.add(1, 0);  // the unpacking kernel
    }
    auto t = timers_.scope(first.counters.name + " compute");
    first.impl->enter(first.batch, slot, static_cast<int>(index.header.systems));
    resume_arrivals(first, slot);
  }
  m.arrivals.clear();
}

// What the stages' last calls finished: counted, shown to the hooks, moved to the next stage here,
// to the results, or into the overflow chain.
void Driver::finish_stages() {
  Impl& m = *impl_;
  for (std::size_t i = 0; i < m.runners.size(); ++i) {
    detail::Runner& r = m.runners[i];
    const std::vector<int> finished = detail::take_finished(r);
    if (i + 1 < m.runners.size()) {
      call_hooks(r, finished, nullptr);
      auto t = timers_.scope(m.runners[i + 1].counters.name + " compute");
      const int arrived = m.runners[i + 1].batch.num_systems();
      if (detail::move_held(r, m.runners[i + 1])) {
        m.copies.local.add(1, 0);  // one kernel, batch to batch
        resume_arrivals(m.runners[i + 1], arrived);
      }
    } else if (m.last_segment) {
      const std::vector<int> done = detail::slots_with(r.batch, systems::SystemStatus::held);
      std::shared_ptr<systems::HostPacked> host;
      if (!done.empty()) {
        host = std::make_shared<systems::HostPacked>(
            systems::to_host(systems::pack_systems(r.batch, done)));
        m.copies.results.add(3, 2);  // packed; its integers and its doubles to the host
      }
      // Hooks see the results' download: one copy to the host for both. (The last stage's Held
      // systems are those it just finished: every step sends them all to the results.)
      call_hooks(r, finished, finished == done ? host.get() : nullptr);
      if (host) {
        m.collector->add(std::move(host), species_);
        r.batch.remove(done);
      }
    } else {
      call_hooks(r, finished, nullptr);
      if (m.overflow)
        m.overflow->take(r.batch);
    }
  }
}

void Driver::advance_stages() {
  for (detail::Runner& r : impl_->runners)
    detail::advance(r, settings_.steps_per_call, timers_);
}

// `downloaded`: the finished systems already copied to the host for the results (null: none).
void Driver::call_hooks(detail::Runner& r, const std::vector<int>& finished,
                        const systems::HostPacked* downloaded) {
  std::vector<Hook*> hooks;
  for (const auto& h : pipeline_.stages()[static_cast<std::size_t>(r.counters.stage)].hooks)
    hooks.push_back(h.get());
  for (const auto& h : settings_.hooks)
    hooks.push_back(h.get());
  hooks.erase(std::remove(hooks.begin(), hooks.end(), nullptr), hooks.end());
  if (hooks.empty())
    return;
  const HookContext where{r.counters.stage, r.counters.name, step_, comm_.rank(),
                          pipeline_.names()};
  Impl& m = *impl_;
  if (!finished.empty()) {
    std::vector<systems::HostSystem> systems;
    if (downloaded != nullptr) {
      systems = systems::decode_host_systems(downloaded->ints.data(), downloaded->ints.size(),
                                             downloaded->reals.data(), downloaded->reals.size(),
                                             species_);
      m.copies.hooks.add(1, 0);  // decoded from the results' download
    } else {
      systems = systems::copy_systems_to_host(r.batch, finished, species_);
      m.copies.hooks.add(4, 2);  // packed, to the host (integers, doubles), decoded
    }
    if (!m.resume.empty())  // not those passing on to their checkpoint's stage
      systems.erase(std::remove_if(systems.begin(), systems.end(),
                                   [&](const systems::HostSystem& x) {
                                     const SystemCheckpoint* c = m.resume.find(x.id);
                                     return c != nullptr && c->stage > r.counters.stage;
                                   }),
                    systems.end());
    for (Hook* h : hooks)
      h->on_finished(where, systems);
  }
  const auto due = [&](const Hook* h) { return h->every() > 0 && step_ % h->every() == 0; };
  if (std::none_of(hooks.begin(), hooks.end(), due))
    return;
  const std::vector<int> running = detail::slots_with(r.batch, systems::SystemStatus::active);
  if (running.empty())
    return;
  const std::vector<systems::HostSystem> systems =
      systems::copy_systems_to_host(r.batch, running, species_);
  m.copies.hooks.add(4, 2);  // packed, to the host (integers, doubles), decoded
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

// Some system on this rank is stepping (as the last snapshot or arrival saw it).
bool Driver::has_running() const {
  for (const detail::Runner& r : impl_->runners)
    for (const systems::HostSlot& slot : r.batch.host_slots())
      if (slot.status == static_cast<int>(systems::SystemStatus::active))
        return true;
  return false;
}

// The work left on this rank, in atoms (Feeder::balance_by_load): each system's atoms times the
// share of the segment's cost still ahead of it, the stage it is in counted by its steps so far
// against the steps the stage expects (none past them).
double Driver::remaining_work() const {
  const Impl& m = *impl_;
  double work = 0.0;
  for (std::size_t i = 0; i < m.runners.size(); ++i) {
    double after = 0.0;
    for (std::size_t j = i + 1; j < m.stage_share.size(); ++j)
      after += m.stage_share[j];
    const double share = m.stage_share[i];
    const double steps = m.stage_steps[i];
    for (const systems::HostSlot& slot : m.runners[i].batch.host_slots()) {
      double ahead = after;
      if (slot.status == static_cast<int>(systems::SystemStatus::active))
        ahead += share * std::max(0.0, 1.0 - static_cast<double>(slot.steps) / steps);
      work += slot.count * ahead;
    }
  }
  return work;
}

// Assigns the systems waiting in `out` (in slot order) to downstream links with credit,
// round-robin.
std::vector<std::vector<int>> Driver::assign_downstream(const systems::SystemsBatch& out,
                                                        bool all) {
  Impl& m = *impl_;
  const std::vector<systems::HostSlot>& slots = out.host_slots();
  std::vector<std::vector<int>> assigned(m.down.size());
  for (std::size_t s = 0; s < slots.size(); ++s) {
    if (!all && slots[s].status != static_cast<int>(systems::SystemStatus::held))
      continue;
    const int atoms = slots[s].count;
    for (std::size_t j = 0; j < m.down.size(); ++j) {
      const std::size_t l = (m.round_robin + j) % m.down.size();
      detail::DownLink& d = m.down[l];
      if (d.fits(atoms)) {
        d.take(atoms);
        assigned[l].push_back(static_cast<int>(s));
        m.round_robin = (l + 1) % m.down.size();
        break;
      }
    }
  }
  return assigned;
}

// Hands the waiting systems on to the next segment's ranks with credit; returns whether they answer
// with credit (each hand-off but the one that ends the stream).
bool Driver::send_downstream() {
  Impl& m = *impl_;
  if (m.down.empty())
    return false;
  const detail::LinkContext c =
      context(mode_into(plan_.segments[static_cast<std::size_t>(segment_) + 1].first_stage));
  if (c.mode != CommMode::sync)
    for (detail::DownLink& d : m.down)
      detail::collect_owed_credit(c, d);
  // In the overflow sink every system is waiting; in a stage batch only the Held ones.
  systems::SystemsBatch& out = m.overflow ? m.overflow->device() : m.runners.back().batch;
  const std::vector<std::vector<int>> assigned = assign_downstream(out, m.overflow.has_value());
  std::vector<int> all_assigned;
  for (const std::vector<int>& a : assigned)
    all_assigned.insert(all_assigned.end(), a.begin(), a.end());
  std::sort(all_assigned.begin(), all_assigned.end());
  const bool eos = inputs_done() && systems_here() == static_cast<long>(all_assigned.size());
  for (std::size_t l = 0; l < m.down.size(); ++l) {
    detail::DownLink& d = m.down[l];
    const std::int64_t flags =
        (eos ? systems::packed_end_of_stream : 0) | detail::send_species(c, d, species_);
    const systems::PackedSystems wire = systems::pack_systems(out, assigned[l], flags);
    if (!assigned[l].empty())
      m.copies.sent.add(1, 0);  // the packing kernel; the transport sends the device Views
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
  if (eos)
    m.eos_sent = true;
  return !eos;
}

// Credit to the ranks upstream for the room this rank has now, and on rank 0 the input: systems
// for its own first stage and hand-offs to the other first-stage ranks.
void Driver::grant_and_feed() {
  Impl& m = *impl_;
  const detail::LinkContext c = context(mode_into(m.runners.front().counters.stage));
  detail::Runner& first = m.runners.front();
  if (!m.up.empty())
    detail::grant_credit(
        c, m.up, first.batch.free(),
        m.balanced ? std::llround(remaining_work() * detail::load_scale) : std::int64_t{0});
  if (m.feeder) {
    std::vector<systems::HostSystem> take =
        m.feeder->deal(c, first.batch.free(), has_running(), m.balanced ? remaining_work() : 0.0);
    if (!take.empty()) {
      const int slot = first.batch.num_systems();
      systems::append_systems(first.batch, take, species_);
      m.copies.input_local.add(4, 2);  // encoded, to the device (integers, doubles), unpacked
      auto t = timers_.scope(first.counters.name + " compute");
      first.impl->enter(first.batch, slot, static_cast<int>(take.size()));
      resume_arrivals(first, slot);
    }
    m.feeder->feed(c, species_, static_cast<int>(pipeline_.size()));
  }
}

void Driver::expect_credit() {
  Impl& m = *impl_;
  const detail::LinkContext c =
      context(mode_into(plan_.segments[static_cast<std::size_t>(segment_) + 1].first_stage));
  for (detail::DownLink& d : m.down)
    detail::expect_credit(c, d);
}

// error_when_full: anything finished that went neither downstream nor into the sink is an error.
void Driver::check_not_full() {
  Impl& m = *impl_;
  const auto waiting = static_cast<long>(
      detail::slots_with(m.runners.back().batch, systems::SystemStatus::held).size());
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
    d.species_send.wait();
  }
  if (m.feeder)
    for (detail::DownLink& d : m.feeder->links()) {
      d.ints_send.wait();
      d.reals_send.wait();
      d.species_send.wait();
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
  // Success everywhere: no checkpoint is needed any more (removed first: a crash before the
  // results are complete leaves them all written, which --resume finishes), and the streamed
  // output is complete.
  if (!settings_.checkpoint_prefix.empty())
    on_every_rank(comm_, [&] {
      std::remove((settings_.checkpoint_prefix + "." + std::to_string(comm_.rank())).c_str());
      if (comm_.rank() == 0)
        std::remove(settings_.checkpoint_prefix.c_str());
    });
  on_every_rank(comm_, [&] {
    if (comm_.rank() == 0 && sink_ != nullptr)
      sink_->finish();
  });
}

std::vector<systems::HostSystem> Driver::gather_results(int root) {
  Impl& m = *impl_;
  if (streamed_)  // known alike on every rank since setup
    throw Error("baton::pipeline::Driver::gather_results: the results went to the sink");
  check_rank(comm_, root, "baton::pipeline::Driver::gather_results");
  std::vector<systems::HostSystem> out;
  std::string problem;
  if (comm_.rank() == 0) {
    out = std::move(m.collector->kept());
    std::vector<std::int64_t> expected = m.feeder->ids();
    std::sort(expected.begin(), expected.end());
    std::sort(
        out.begin(), out.end(),
        [](const systems::HostSystem& a, const systems::HostSystem& b) { return a.id < b.id; });
    std::vector<std::int64_t> got;
    for (const systems::HostSystem& s : out)
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
    systems::SpeciesTable table = species_;
    const systems::HostPacked w =
        systems::encode_host_systems(out, table, static_cast<int>(pipeline_.size()));
    send_view(comm_, systems::host_ints_view(w), root, detail::data_tag);
    send_view(comm_, systems::host_reals_view(w), root, detail::data_tag);
    return {};
  }
  if (comm_.rank() != root)
    return {};
  for (const std::string& label : names)
    species_.index(label);
  const auto ints = recv_view<detail::HostInts>(comm_, 0, detail::data_tag);
  const auto reals = recv_view<detail::HostReals>(comm_, 0, detail::data_tag);
  return systems::decode_host_systems(ints.data(), ints.extent(0), reals.data(), reals.extent(0),
                                      species_);
}

}  // namespace baton::pipeline
