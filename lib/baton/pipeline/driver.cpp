#include "baton/pipeline/driver.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

#include "baton/collectives/agreement.hpp"
#include "baton/collectives/collectives.hpp"
#include "baton/dynamics/cell.hpp"
#include "baton/dynamics/host_transfer.hpp"
#include "baton/pipeline/wire.hpp"
#include "baton/runtime/error.hpp"
#include "baton/transport/bytes.hpp"
#include "baton/transport/objects.hpp"
#include "baton/transport/view_message.hpp"

namespace baton::pipeline {

namespace {

using dynamics::BatchCapacity;
using dynamics::HostSystem;
using dynamics::SystemsBatch;
using dynamics::SystemStatus;

constexpr int data_tag = 1;      // upstream -> downstream: hand-offs (ints, then reals)
constexpr int credit_tag = 2;    // downstream -> upstream: room granted
constexpr int progress_tag = 3;  // last stage -> rank 0: finished counts (only with progress)

using IntView = Kokkos::View<std::int64_t*, SystemsBatch::memory_space>;
using RealView = Kokkos::View<double*, SystemsBatch::memory_space>;
using HostInts = Kokkos::View<std::int64_t*, Kokkos::HostSpace>;

struct Runner {
  std::unique_ptr<Stage> impl;
  SystemsBatch batch;
  StageCounters counters;
};

struct UpLink {
  int rank = 0;
  bool open = true;
  std::int64_t share_systems = 0;  // room this link may hold at once
  std::int64_t share_atoms = 0;
  std::int64_t outstanding_systems = 0;  // granted, not yet received
  std::int64_t outstanding_atoms = 0;
  long received_step = 0;                       // the last step whose hand-off was received
  long credited_step = 0;                       // the last step whose credit was sent
  std::optional<ViewRecvHandle<IntView>> ints;  // posted receives (async modes)
  std::optional<ViewRecvHandle<RealView>> reals;
};

struct DownLink {
  int rank = 0;
  bool open = true;
  std::int64_t credit_systems = 0;
  std::int64_t credit_atoms = 0;
  bool credit_owed = false;  // a credit answers our last hand-off
  std::optional<ViewRecvHandle<HostInts>> credit;
  SendHandle ints_send;
  SendHandle reals_send;
};

// A negative credit is a downstream rank's notice that it stopped with an error.
void check_credit(const HostInts& c, DownLink& d, int me) {
  if (c.extent(0) != 2 || c(0) < 0 || c(1) < 0) {
    d.open = false;
    throw Error("baton::pipeline: rank " + std::to_string(d.rank) + " (downstream of rank " +
                std::to_string(me) + ") stopped with an error; its own message says why");
  }
}

// Broadcasts `problem` from root; if it is not empty, every rank throws it (a CollectiveError).
void throw_on_every_rank(const Communicator& comm, std::string problem, int root) {
  broadcast_object(comm, problem, root);
  if (!problem.empty())
    throw CollectiveError(problem);
}

std::string counts(std::int64_t systems, std::int64_t atoms) {
  return std::to_string(systems) + (systems == 1 ? " system, " : " systems, ") +
         std::to_string(atoms) + " atoms";
}

}  // namespace

struct Driver::Impl {
  std::vector<Runner> runners;
  std::vector<UpLink> up;
  std::vector<DownLink> down;
  std::optional<SystemsBatch> overflow;
  std::vector<HostSystem> input;
  std::size_t next_input = 0;
  std::vector<std::int64_t> input_ids;  // rank 0: every input id, for the conservation check
  std::vector<HostWire> results;
  bool last_segment = false;
  std::size_t round_robin = 0;
  bool eos_sent = false;
  // progress reports (track_progress)
  long finished_local = 0;
  long reported = -1;
  SendHandle progress_send;
  HostInts progress_buffer;
  std::vector<int> progress_sources;  // rank 0: last-stage ranks still to report done
  std::vector<long> progress_counts;
};

Driver::Driver(const Communicator& comm, Pipeline pipeline, Settings settings)
    : comm_(Communicator::duplicate(comm.raw())),
      pipeline_(std::move(pipeline)),
      settings_(std::move(settings)),
      impl_(std::make_unique<Impl>()) {}

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
  for (const Runner& r : impl_->runners)
    out.push_back(r.counters);
  return out;
}

void Driver::setup(const std::vector<HostSystem>& input) {
  const std::vector<StageSpec>& specs = pipeline_.stages();
  if (specs.empty())
    throw Error("baton::pipeline::Driver: the pipeline has no stages");
  if (settings_.steps_per_call < 1)
    throw Error("baton::pipeline::Driver: steps per call must be >= 1, got " +
                std::to_string(settings_.steps_per_call));
  std::vector<double> costs;
  for (std::size_t s = 0; s < specs.size(); ++s) {
    const StageSpec& spec = specs[s];
    if (!spec.make)
      throw Error("baton::pipeline::Driver: stage " + std::to_string(s) + " '" + spec.name +
                  "' has no factory");
    if (spec.capacity.systems < 1 || spec.capacity.atoms < 1)
      throw Error("baton::pipeline::Driver: stage " + std::to_string(s) + " '" + spec.name +
                  "' has capacity " + counts(spec.capacity.systems, spec.capacity.atoms) +
                  "; it needs at least 1 of each");
    costs.push_back(spec.cost > 0.0 ? spec.cost : spec.make()->cost_estimate());
  }
  plan_ = plan_ranks(comm_.size(), costs, settings_.ranks_per_stage);
  segment_ = plan_.segment_of(comm_.rank());
  const Segment& seg = plan_.segments[static_cast<std::size_t>(segment_)];

  // Rank 0's input decides the largest system and the count, for the checks below.
  std::int64_t facts[2] = {0, 0};
  std::string problem;
  if (comm_.rank() == 0) {
    facts[0] = static_cast<std::int64_t>(input.size());
    for (const HostSystem& s : input) {
      facts[1] = std::max<std::int64_t>(facts[1], static_cast<std::int64_t>(s.size()));
      const std::string wrong = host_system_problem(s);
      if (problem.empty() && !wrong.empty())
        problem =
            "baton::pipeline::Driver::setup: input system " + std::to_string(s.id) + " " + wrong;
    }
  }
  throw_on_every_rank(comm_, problem, 0);
  check_mpi(MPI_Bcast(facts, 2, MPI_INT64_T, 0, comm_.raw()), "MPI_Bcast", comm_.raw());
  input_count_ = static_cast<long>(facts[0]);
  const std::int64_t largest = facts[1];

  // Capacities: every stage holds the largest system; every link's share of a batch does too.
  for (std::size_t g = 0; g < plan_.segments.size(); ++g) {
    const Segment& sg = plan_.segments[g];
    for (int s = sg.first_stage; s <= sg.last_stage; ++s) {
      const StageSpec& spec = specs[static_cast<std::size_t>(s)];
      const std::int64_t upstream =
          (s == sg.first_stage && g > 0)
              ? static_cast<std::int64_t>(plan_.segments[g - 1].ranks.size())
              : 1;
      const std::int64_t share_atoms = spec.capacity.atoms / upstream;
      const std::int64_t share_systems = spec.capacity.systems / upstream;
      if (share_atoms < largest || share_systems < 1)
        throw Error("baton::pipeline::Driver: stage " + std::to_string(s) + " '" + spec.name +
                    "' has capacity " + counts(spec.capacity.systems, spec.capacity.atoms) +
                    (upstream > 1 ? " shared by " + std::to_string(upstream) + " upstream ranks (" +
                                        counts(share_systems, share_atoms) + " each)"
                                  : std::string()) +
                    ", but the largest input system has " + std::to_string(largest) + " atoms");
    }
  }
  if ((settings_.overflow.systems > 0 || settings_.overflow.atoms > 0) &&
      (settings_.overflow.systems < 1 || settings_.overflow.atoms < largest))
    throw Error("baton::pipeline::Driver: the overflow sink (" +
                counts(settings_.overflow.systems, settings_.overflow.atoms) +
                ") cannot hold the largest input system (" + std::to_string(largest) + " atoms)");

  // This rank's stages.
  Impl& m = *impl_;
  const int k = static_cast<int>(specs.size());
  for (int s = seg.first_stage; s <= seg.last_stage; ++s) {
    const StageSpec& spec = specs[static_cast<std::size_t>(s)];
    Runner r;
    r.impl = spec.make();
    r.batch = SystemsBatch(spec.capacity, k);
    r.counters.stage = s;
    r.counters.name = spec.name;
    m.runners.push_back(std::move(r));
  }
  m.last_segment = seg.last_stage == k - 1;
  if (!m.last_segment && settings_.overflow.systems > 0)
    m.overflow.emplace(settings_.overflow, k);

  // Neighbours and their initial credit.
  if (segment_ > 0) {
    const Segment& prev = plan_.segments[static_cast<std::size_t>(segment_) - 1];
    const BatchCapacity cap = specs[static_cast<std::size_t>(seg.first_stage)].capacity;
    const auto n_up = static_cast<std::int64_t>(prev.ranks.size());
    for (int r : prev.ranks) {
      UpLink u;
      u.rank = r;
      u.share_systems = u.outstanding_systems = cap.systems / n_up;
      u.share_atoms = u.outstanding_atoms = cap.atoms / n_up;
      m.up.push_back(std::move(u));
    }
  }
  if (!m.last_segment) {
    const Segment& next = plan_.segments[static_cast<std::size_t>(segment_) + 1];
    const BatchCapacity cap = specs[static_cast<std::size_t>(next.first_stage)].capacity;
    const auto n_here = static_cast<std::int64_t>(seg.ranks.size());
    for (int r : next.ranks) {
      DownLink d;
      d.rank = r;
      d.credit_systems = cap.systems / n_here;
      d.credit_atoms = cap.atoms / n_here;
      m.down.push_back(std::move(d));
    }
    // Replicas start their round-robin at different downstream ranks.
    const auto replica = static_cast<std::size_t>(
        std::find(seg.ranks.begin(), seg.ranks.end(), comm_.rank()) - seg.ranks.begin());
    m.round_robin = replica % m.down.size();
  }

  // Species: rank 0 names them (Settings::species first, then the input's in order of first use)
  // and every rank gets the same table.
  {
    std::string names;
    if (comm_.rank() == 0) {
      for (const std::string& label : settings_.species)
        species_.index(label);
      for (const HostSystem& s : input)
        for (const std::string& label : s.species)
          species_.index(label);
      for (const std::string& label : species_.names())
        names += label + '\n';
    }
    std::int64_t length = static_cast<std::int64_t>(names.size());
    check_mpi(MPI_Bcast(&length, 1, MPI_INT64_T, 0, comm_.raw()), "MPI_Bcast", comm_.raw());
    names.resize(static_cast<std::size_t>(length));
    check_mpi(MPI_Bcast(names.data(), static_cast<int>(length), MPI_CHAR, 0, comm_.raw()),
              "MPI_Bcast", comm_.raw());
    if (comm_.rank() != 0) {
      std::istringstream in(names);
      for (std::string label; std::getline(in, label);)
        species_.index(label);
    }
  }

  // Input: rank 0 keeps positions 0, R, 2R, ... and sends the other first-segment replicas theirs.
  const Segment& head = plan_.segments.front();
  const auto replicas = head.ranks.size();
  if (comm_.rank() == 0) {
    for (const HostSystem& s : input)
      m.input_ids.push_back(s.id);
    for (std::size_t r = 0; r < replicas; ++r) {
      std::vector<HostSystem> share;
      for (std::size_t i = r; i < input.size(); i += replicas)
        share.push_back(input[i]);
      if (r == 0) {
        m.input = std::move(share);
        continue;
      }
      HostWire w = encode_host_systems(share, species_, k);
      using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
      send_view(
          comm_,
          Kokkos::View<std::int64_t*, Kokkos::HostSpace, Unmanaged>(w.ints.data(), w.ints.size()),
          head.ranks[r], data_tag);
      send_view(comm_,
                Kokkos::View<double*, Kokkos::HostSpace, Unmanaged>(w.reals.data(), w.reals.size()),
                head.ranks[r], data_tag);
    }
  } else if (segment_ == 0) {
    const auto ints = recv_view<HostInts>(comm_, 0, data_tag);
    const auto reals = recv_view<Kokkos::View<double*, Kokkos::HostSpace>>(comm_, 0, data_tag);
    m.input =
        decode_host_systems(ints.data(), ints.extent(0), reals.data(), reals.extent(0), species_);
  }

  if (settings_.mode != CommMode::sync)
    for (UpLink& u : m.up) {
      u.ints.emplace(irecv_view<IntView>(comm_, u.rank, data_tag));
      u.reals.emplace(irecv_view<RealView>(comm_, u.rank, data_tag));
    }
  if (progress_ && comm_.rank() == 0)
    for (int r : plan_.segments.back().ranks)
      if (r != 0) {
        m.progress_sources.push_back(r);
        m.progress_counts.push_back(0);
      }
  timers_.reset_origin();
}

namespace {

std::ostream& log_of(const Settings& s) {
  return s.log != nullptr ? *s.log : std::cerr;
}

// Slots of `batch` whose status is `status`, ascending.
std::vector<int> slots_with(const std::vector<int>& statuses, SystemStatus status) {
  std::vector<int> out;
  for (std::size_t s = 0; s < statuses.size(); ++s)
    if (statuses[s] == static_cast<int>(status))
      out.push_back(static_cast<int>(s));
  return out;
}

// Records the steps of newly Finished systems as their step count for `stage`, marks them Held, and
// counts them.
void record_finished(Runner& r, const std::vector<int>& finished) {
  if (finished.empty())
    return;
  Kokkos::View<int*, SystemsBatch::memory_space> d_slots("baton::pipeline::finished",
                                                         finished.size());
  {
    auto h = Kokkos::create_mirror_view(d_slots);
    for (std::size_t i = 0; i < finished.size(); ++i)
      h(i) = finished[i];
    Kokkos::deep_copy(d_slots, h);
  }
  auto steps = r.batch.steps;
  auto stage_steps = r.batch.stage_steps;
  auto status = r.batch.status;
  const int stage = r.counters.stage;
  Kokkos::parallel_for(
      "baton::pipeline::record_finished",
      Kokkos::RangePolicy<SystemsBatch::execution_space>(0, static_cast<int>(finished.size())),
      KOKKOS_LAMBDA(int i) {
        const int s = d_slots(i);
        stage_steps(s, stage) = steps(s);
        status(s) = static_cast<int>(SystemStatus::Held);
      });
  auto h_steps = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), steps);
  const std::vector<int> atoms = r.batch.count_on_host();
  for (int s : finished) {
    r.counters.systems += 1;
    r.counters.steps += static_cast<long>(h_steps(s));
    r.counters.atom_steps += static_cast<long>(h_steps(s)) * atoms[static_cast<std::size_t>(s)];
  }
}

// Takes Held systems of `from` (slot order) that fit `to`, moves them there as Active, and calls
// `enter` on them when a stage is given. Returns how many moved.
int move_held(SystemsBatch& from, SystemsBatch& to, Stage* enter) {
  const std::vector<int> held = slots_with(from.status_on_host(), SystemStatus::Held);
  if (held.empty())
    return 0;
  const std::vector<int> atoms = from.count_on_host();
  BatchCapacity room = to.free();
  std::vector<int> chosen;
  for (int s : held) {
    const int a = atoms[static_cast<std::size_t>(s)];
    if (room.systems >= 1 && room.atoms >= a) {
      chosen.push_back(s);
      room.systems -= 1;
      room.atoms -= a;
    }
  }
  if (chosen.empty())
    return 0;
  const WireBatch wire = pack_systems(from, chosen);
  const int first = unpack_systems(to, wire);
  from.remove(chosen);
  if (enter != nullptr)
    enter->enter(to, first, static_cast<int>(chosen.size()));
  return static_cast<int>(chosen.size());
}

}  // namespace

bool Driver::poll_progress() {
  Impl& m = *impl_;
  if (!progress_ || comm_.rank() != 0)
    return false;
  while (auto info = iprobe(comm_, any_source, progress_tag)) {
    const HostInts c = recv_view<HostInts>(comm_, info->source, progress_tag);
    for (std::size_t i = 0; i < m.progress_sources.size(); ++i)
      if (m.progress_sources[i] == info->source) {
        m.progress_counts[i] = static_cast<long>(c(0));
        if (c(1) != 0)
          m.progress_sources[i] = -1 - m.progress_sources[i];  // done: remember, stop waiting
      }
  }
  long seen = m.finished_local;
  for (long c : m.progress_counts)
    seen += c;
  finished_seen_ = seen;
  return std::any_of(m.progress_sources.begin(), m.progress_sources.end(),
                     [](int r) { return r >= 0; });
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
          log_of(settings_) << "[baton::pipeline] step " << step_ << " rank " << comm_.rank()
                            << ": stopping with an error: " << e.what() << '\n';
        } catch (...) {
        }
      }
      stop_neighbours();
    }
  }
  if (settings_.synchronized) {
    // All ranks agree every step: still running anywhere? failed anywhere?
    int mine[2] = {done_ ? 0 : 1, failed_ ? 1 : 0};
    int all[2] = {0, 0};
    check_mpi(MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, comm_.raw()), "MPI_Allreduce",
              comm_.raw());
    if (error)
      std::rethrow_exception(error);
    if (all[1] != 0) {
      failed_ = true;
      throw Error("baton::pipeline: another rank stopped with an error; its own message says why");
    }
    return all[0] != 0;
  }
  if (error)
    std::rethrow_exception(error);
  return !done_;
}

void Driver::stop_neighbours() {
  // Best effort: the rank is failing already; a second error must not hide the first.
  Impl& m = *impl_;
  try {
    // Every upstream rank gets a negative credit in place of the next credit it waits for. It may
    // still send one hand-off before reading it: the one of this step if not received yet, or the
    // next one if this step's credit went out already. Take that hand-off, so that no sender waits
    // forever on a large message.
    auto drain = [&](UpLink& u) {
      if (u.ints) {
        u.ints->wait();
        u.reals->wait();
        u.ints.reset();
        u.reals.reset();
      } else {
        recv_view<IntView>(comm_, u.rank, data_tag);
        recv_view<RealView>(comm_, u.rank, data_tag);
      }
    };
    for (UpLink& u : m.up) {
      if (!u.open)
        continue;
      const bool pending = u.received_step != step_;
      const bool credited = !pending && u.credited_step == step_;
      if (pending)
        drain(u);
      HostInts credit("baton::pipeline::credit", 2);
      credit(0) = credit(1) = -1;
      send_view(comm_, credit, u.rank, credit_tag);
      // In synchronized mode the upstream rank learns of the failure at this step's agreement and
      // sends no further hand-off.
      if (credited && !settings_.synchronized)
        drain(u);
    }
    if (progress_ && m.last_segment && comm_.rank() != 0) {
      m.progress_send.wait();
      m.progress_buffer = HostInts("baton::pipeline::progress", 2);
      m.progress_buffer(0) = m.finished_local;
      m.progress_buffer(1) = 2;  // failed: rank 0 stops waiting for this rank
      send_view(comm_, m.progress_buffer, 0, progress_tag);
    }
    for (DownLink& d : m.down)
      if (d.open) {
        d.ints_send.wait();
        d.reals_send.wait();
        SystemsBatch empty(BatchCapacity{1, 1}, static_cast<int>(pipeline_.size()));
        const WireBatch wire = pack_systems(empty, {}, wire_abort);
        send_view(comm_, wire.ints, d.rank, data_tag);
        send_view(comm_, wire.reals, d.rank, data_tag);
      }
  } catch (...) {
  }
}

void Driver::step_once() {
  Impl& m = *impl_;
  {
    ++step_;
    std::ostream& log = log_of(settings_);
    const std::string who = "[baton::pipeline] step " + std::to_string(step_) + " rank " +
                            std::to_string(comm_.rank()) + ": ";
    Runner& first = m.runners.front();

    // 1. Take in: hand-offs from upstream ranks, or input.
    if (!m.up.empty()) {
      for (UpLink& u : m.up) {
        if (!u.open)
          continue;
        WireBatch wire;
        if (settings_.mode == CommMode::sync) {
          {
            auto t = timers_.scope("wait");
            probe(comm_, u.rank, data_tag);
          }
          auto t = timers_.scope("receive");
          wire.ints = recv_view<IntView>(comm_, u.rank, data_tag);
          wire.reals = recv_view<RealView>(comm_, u.rank, data_tag);
        } else {
          auto t = timers_.scope("wait");
          wire.ints = u.ints->wait();
          wire.reals = u.reals->wait();
          u.ints.reset();
          u.reals.reset();
        }
        u.received_step = step_;
        const WireHeader h = read_wire_header(wire);
        if (h.abort()) {
          u.open = false;
          throw Error("baton::pipeline: rank " + std::to_string(u.rank) + " (upstream of rank " +
                      std::to_string(comm_.rank()) +
                      ") stopped with an error; its own message says why");
        }
        if (h.systems > u.outstanding_systems || h.atoms > u.outstanding_atoms)
          throw Error("baton::pipeline: rank " + std::to_string(u.rank) + " sent " +
                      counts(h.systems, h.atoms) + " to rank " + std::to_string(comm_.rank()) +
                      " holding credit for only " +
                      counts(u.outstanding_systems, u.outstanding_atoms));
        if (h.systems > 0) {
          int slot = 0;
          {
            auto t = timers_.scope("receive");
            slot = unpack_systems(first.batch, wire);
          }
          auto t = timers_.scope(first.counters.name + " compute");
          first.impl->enter(first.batch, slot, static_cast<int>(h.systems));
        }
        u.outstanding_systems -= h.systems;
        u.outstanding_atoms -= h.atoms;
        if (h.end_of_stream()) {
          u.open = false;
          u.outstanding_systems = 0;  // nothing more comes: the room it held is free again
          u.outstanding_atoms = 0;
        } else if (settings_.mode != CommMode::sync) {
          u.ints.emplace(irecv_view<IntView>(comm_, u.rank, data_tag));
          u.reals.emplace(irecv_view<RealView>(comm_, u.rank, data_tag));
        }
        if (settings_.debug)
          log << who << "received from rank " << u.rank << " (tag " << data_tag
              << "): " << counts(h.systems, h.atoms) << (h.end_of_stream() ? ", end of stream" : "")
              << '\n';
      }
      // Grant what the first batch can take beyond what is already promised.
      std::int64_t free_systems = first.batch.free().systems;
      std::int64_t free_atoms = first.batch.free().atoms;
      for (const UpLink& u : m.up) {
        free_systems -= u.outstanding_systems;
        free_atoms -= u.outstanding_atoms;
      }
      for (UpLink& u : m.up) {
        if (!u.open)
          continue;
        const std::int64_t gs = std::clamp<std::int64_t>(u.share_systems - u.outstanding_systems, 0,
                                                         std::max<std::int64_t>(free_systems, 0));
        const std::int64_t ga = std::clamp<std::int64_t>(u.share_atoms - u.outstanding_atoms, 0,
                                                         std::max<std::int64_t>(free_atoms, 0));
        free_systems -= gs;
        free_atoms -= ga;
        u.outstanding_systems += gs;
        u.outstanding_atoms += ga;
        HostInts credit("baton::pipeline::credit", 2);
        credit(0) = gs;
        credit(1) = ga;
        {
          auto t = timers_.scope("send");
          send_view(comm_, credit, u.rank, credit_tag);
        }
        u.credited_step = step_;
        if (settings_.debug)
          log << who << "granted rank " << u.rank << " (tag " << credit_tag
              << "): " << counts(gs, ga) << '\n';
      }
    } else if (m.next_input < m.input.size()) {
      std::vector<HostSystem> take;
      BatchCapacity room = first.batch.free();
      while (m.next_input < m.input.size()) {
        const auto a = static_cast<int>(m.input[m.next_input].size());
        if (room.systems < 1 || room.atoms < a)
          break;
        room.systems -= 1;
        room.atoms -= a;
        take.push_back(std::move(m.input[m.next_input++]));
      }
      if (!take.empty()) {
        const int slot = first.batch.num_systems();
        dynamics::append_systems(first.batch, take, species_);
        auto t = timers_.scope(first.counters.name + " compute");
        first.impl->enter(first.batch, slot, static_cast<int>(take.size()));
      }
      if (m.next_input == m.input.size())
        std::vector<HostSystem>().swap(m.input);
    }

    // 2. Advance every local stage; move finished systems on locally.
    for (std::size_t i = 0; i < m.runners.size(); ++i) {
      Runner& r = m.runners[i];
      if (r.batch.empty())
        continue;
      std::vector<int> status = r.batch.status_on_host();
      if (std::find(status.begin(), status.end(), static_cast<int>(SystemStatus::Active)) !=
          status.end()) {
        const double t0 = TimerRegistry::now();
        r.impl->advance(r.batch, settings_.steps_per_call);
        Kokkos::fence();
        const double dt = TimerRegistry::now() - t0;
        timers_.record(r.counters.name + " compute", t0 - timers_.origin(), dt);
        r.counters.compute_seconds += dt;
        status = r.batch.status_on_host();
      }
      record_finished(r, slots_with(status, SystemStatus::Finished));
      if (i + 1 < m.runners.size()) {
        auto t = timers_.scope(m.runners[i + 1].counters.name + " compute");
        move_held(r.batch, m.runners[i + 1].batch, m.runners[i + 1].impl.get());
      } else if (m.last_segment) {
        const std::vector<int> done = slots_with(r.batch.status_on_host(), SystemStatus::Held);
        if (!done.empty()) {
          m.results.push_back(copy_to_host(pack_systems(r.batch, done)));
          r.batch.remove(done);
          m.finished_local += static_cast<long>(done.size());
        }
      } else if (m.overflow) {
        move_held(r.batch, *m.overflow, nullptr);
      }
    }

    // 3. Hand on to downstream ranks, within their credit.
    if (!m.down.empty()) {
      if (settings_.mode != CommMode::sync)
        for (DownLink& d : m.down)
          if (d.credit_owed) {
            const HostInts c = [&] {
              auto t = timers_.scope("wait");
              return d.credit->wait();
            }();
            d.credit.reset();
            d.credit_owed = false;
            check_credit(c, d, comm_.rank());
            d.credit_systems += c(0);
            d.credit_atoms += c(1);
            if (settings_.debug)
              log << who << "credit from rank " << d.rank << " (tag " << credit_tag
                  << "): " << counts(c(0), c(1)) << '\n';
          }
      SystemsBatch& out = m.overflow ? *m.overflow : m.runners.back().batch;
      const std::vector<int> status = out.status_on_host();
      const std::vector<int> atoms = out.count_on_host();
      std::vector<std::vector<int>> assigned(m.down.size());
      std::vector<int> all_assigned;
      for (std::size_t s = 0; s < status.size(); ++s) {
        // In the overflow sink every system is waiting; in a stage batch only the Held ones.
        if (!m.overflow && status[s] != static_cast<int>(SystemStatus::Held))
          continue;
        const std::int64_t a = atoms[s];
        for (std::size_t j = 0; j < m.down.size(); ++j) {
          const std::size_t l = (m.round_robin + j) % m.down.size();
          DownLink& d = m.down[l];
          if (d.credit_systems >= 1 && d.credit_atoms >= a) {
            d.credit_systems -= 1;
            d.credit_atoms -= a;
            assigned[l].push_back(static_cast<int>(s));
            all_assigned.push_back(static_cast<int>(s));
            m.round_robin = (l + 1) % m.down.size();
            break;
          }
        }
      }
      std::sort(all_assigned.begin(), all_assigned.end());
      long remaining = m.overflow ? m.overflow->num_systems() : 0;
      for (const Runner& r : m.runners)
        remaining += r.batch.num_systems();
      remaining -= static_cast<long>(all_assigned.size());
      const bool inputs_done = m.up.empty() ? m.input.empty()
                                            : std::none_of(m.up.begin(), m.up.end(),
                                                           [](const UpLink& u) { return u.open; });
      const bool eos = inputs_done && remaining == 0;
      for (std::size_t l = 0; l < m.down.size(); ++l) {
        DownLink& d = m.down[l];
        const WireBatch wire = pack_systems(out, assigned[l], eos ? wire_end_of_stream : 0);
        if (settings_.mode == CommMode::fully_async) {
          {
            auto t = timers_.scope("wait");
            d.ints_send.wait();
            d.reals_send.wait();
          }
          auto t = timers_.scope("send");
          d.ints_send = isend_view(comm_, wire.ints, d.rank, data_tag);
          d.reals_send = isend_view(comm_, wire.reals, d.rank, data_tag);
        } else {
          auto t = timers_.scope("send");
          d.ints_send = isend_view(comm_, wire.ints, d.rank, data_tag);
          d.reals_send = isend_view(comm_, wire.reals, d.rank, data_tag);
          d.ints_send.wait();
          d.reals_send.wait();
        }
        if (settings_.debug) {
          std::int64_t a = 0;
          for (int s : assigned[l])
            a += atoms[static_cast<std::size_t>(s)];
          log << who << "sent to rank " << d.rank << " (tag " << data_tag
              << "): " << counts(static_cast<std::int64_t>(assigned[l].size()), a)
              << (eos ? ", end of stream" : "") << '\n';
        }
      }
      out.remove(all_assigned);
      if (m.overflow)
        move_held(m.runners.back().batch, *m.overflow, nullptr);
      // Anything finished that went neither downstream nor into the sink waits in its batch slot.
      if (settings_.error_when_full) {
        const std::vector<int> last = m.runners.back().batch.status_on_host();
        const long waiting =
            std::count(last.begin(), last.end(), static_cast<int>(SystemStatus::Held));
        if (waiting > 0)
          throw Error("baton::pipeline: rank " + std::to_string(comm_.rank()) + ", stage '" +
                      m.runners.back().counters.name + "': " + std::to_string(waiting) +
                      " finished systems have nowhere to go: the next stage granted no room and " +
                      (m.overflow
                           ? "the overflow sink (" +
                                 counts(settings_.overflow.systems, settings_.overflow.atoms) +
                                 ") is full"
                           : std::string("there is no overflow sink")) +
                      " (error_when_full is set)");
      }
      if (eos) {
        for (DownLink& d : m.down)
          d.open = false;
        m.eos_sent = true;
      } else {
        for (DownLink& d : m.down) {
          if (settings_.mode == CommMode::sync) {
            {
              auto t = timers_.scope("wait");
              probe(comm_, d.rank, credit_tag);
            }
            const HostInts c = [&] {
              auto t = timers_.scope("receive");
              return recv_view<HostInts>(comm_, d.rank, credit_tag);
            }();
            check_credit(c, d, comm_.rank());
            d.credit_systems += c(0);
            d.credit_atoms += c(1);
            if (settings_.debug)
              log << who << "credit from rank " << d.rank << " (tag " << credit_tag
                  << "): " << counts(c(0), c(1)) << '\n';
          } else {
            d.credit.emplace(irecv_view<HostInts>(comm_, d.rank, credit_tag));
            d.credit_owed = true;
          }
        }
      }
    }

    // 4. Progress reports to rank 0.
    if (progress_ && m.last_segment && comm_.rank() != 0) {
      const bool finished_here =
          std::none_of(m.up.begin(), m.up.end(), [](const UpLink& u) { return u.open; }) &&
          std::all_of(m.runners.begin(), m.runners.end(),
                      [](const Runner& r) { return r.batch.empty(); });
      if (m.finished_local != m.reported || finished_here) {
        m.progress_send.wait();
        m.progress_buffer = HostInts("baton::pipeline::progress", 2);
        m.progress_buffer(0) = m.finished_local;
        m.progress_buffer(1) = finished_here ? 1 : 0;
        m.progress_send = isend_view(comm_, m.progress_buffer, 0, progress_tag);
        m.reported = m.finished_local;
      }
    }
    if (progress_ && comm_.rank() == 0)
      poll_progress();
    else
      finished_seen_ = m.finished_local;

    // 5. Done?
    const bool inputs_done = m.up.empty() ? m.input.empty()
                                          : std::none_of(m.up.begin(), m.up.end(),
                                                         [](const UpLink& u) { return u.open; });
    const bool empty = std::all_of(m.runners.begin(), m.runners.end(),
                                   [](const Runner& r) { return r.batch.empty(); }) &&
                       (!m.overflow || m.overflow->empty());
    done_ = m.down.empty() ? inputs_done && empty : m.eos_sent;
    if (done_) {
      for (DownLink& d : m.down) {
        d.ints_send.wait();
        d.reals_send.wait();
      }
      if (progress_ && m.last_segment && comm_.rank() != 0) {
        // Make sure the final "done" report went out.
        if (m.reported != m.finished_local || m.progress_buffer.extent(0) == 0 ||
            m.progress_buffer(1) == 0) {
          m.progress_send.wait();
          m.progress_buffer = HostInts("baton::pipeline::progress", 2);
          m.progress_buffer(0) = m.finished_local;
          m.progress_buffer(1) = 1;
          m.progress_send = isend_view(comm_, m.progress_buffer, 0, progress_tag);
        }
        m.progress_send.wait();
      }
    }
  }
}

void Driver::run(const std::function<void()>& after_step) {
  if (segment_ < 0)
    throw Error("baton::pipeline::Driver::run: call setup() first");
  if (start_ < 0) {
    check_mpi(MPI_Barrier(comm_.raw()), "MPI_Barrier", comm_.raw());
    start_ = TimerRegistry::now();
    timers_.reset_origin(start_);
  }
  std::exception_ptr error;
  try {
    if (!failed_)
      while (step())
        if (after_step)
          after_step();
    // Rank 0 takes every last-stage rank's final progress report (a failing rank sends one too).
    while (!failed_ && poll_progress()) {
      if (after_step)
        after_step();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  } catch (...) {
    error = std::current_exception();
  }
  // Every rank ends here, so that an error anywhere reaches all ranks before the next collective.
  int mine = failed_ || error ? 1 : 0;
  int any = 0;
  check_mpi(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm_.raw()), "MPI_Allreduce",
            comm_.raw());
  if (error)
    std::rethrow_exception(error);
  if (any != 0) {
    failed_ = true;
    throw Error("baton::pipeline: another rank stopped with an error; its own message says why");
  }
}

std::vector<HostSystem> Driver::gather_results(int root) {
  Impl& m = *impl_;
  std::vector<std::int64_t> ints;
  std::vector<double> reals;
  for (const HostWire& w : m.results) {
    ints.insert(ints.end(), w.ints.begin(), w.ints.end());
    reals.insert(reals.end(), w.reals.begin(), w.reals.end());
  }
  using HI = Kokkos::View<std::int64_t*, Kokkos::HostSpace>;
  using HR = Kokkos::View<double*, Kokkos::HostSpace>;
  HI hi("baton::pipeline::results_ints", ints.size());
  HR hr("baton::pipeline::results_reals", reals.size());
  std::copy(ints.begin(), ints.end(), hi.data());
  std::copy(reals.begin(), reals.end(), hr.data());
  const HI all_ints = gatherv(comm_, hi, root);
  const HR all_reals = gatherv(comm_, hr, root);
  // The input ids live on rank 0; the check runs on root.
  if (root != 0 && comm_.rank() == 0)
    send_view(comm_,
              Kokkos::View<const std::int64_t*, Kokkos::HostSpace,
                           Kokkos::MemoryTraits<Kokkos::Unmanaged>>(m.input_ids.data(),
                                                                    m.input_ids.size()),
              root, data_tag);
  if (root != 0 && comm_.rank() == root) {
    const HI ids = recv_view<HI>(comm_, 0, data_tag);
    m.input_ids.assign(ids.data(), ids.data() + ids.extent(0));
  }
  std::vector<HostSystem> out;
  std::string problem;
  if (comm_.rank() == root) {
    try {
      out = decode_host_systems(all_ints.data(), all_ints.extent(0), all_reals.data(),
                                all_reals.extent(0), species_);
    } catch (const Error& e) {
      problem = e.what();
    }
    std::sort(out.begin(), out.end(),
              [](const HostSystem& a, const HostSystem& b) { return a.id < b.id; });
    for (HostSystem& s : out)
      dynamics::wrap_positions(s);  // results: every atom inside its periodic cell
    if (problem.empty()) {
      std::vector<std::int64_t> expected = m.input_ids;
      std::sort(expected.begin(), expected.end());
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
  }
  throw_on_every_rank(comm_, problem, root);
  return out;
}

}  // namespace baton::pipeline
