#include "baton/pipeline/detail/links.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "baton/core/error.hpp"
#include "baton/transport/objects.hpp"

namespace baton::pipeline::detail {

std::string counts(std::int64_t systems, std::int64_t atoms) {
  return std::to_string(systems) + (systems == 1 ? " system, " : " systems, ") +
         std::to_string(atoms) + " atoms";
}

void LinkContext::note(const std::string& what) const {
  if (log != nullptr)
    *log << "[baton::pipeline] step " << step << " rank " << comm.rank() << ": " << what << '\n';
}

namespace {

// A negative credit is a downstream rank's notice that it stopped with an error.
void add_credit(const LinkContext& c, DownLink& d, const HostInts& credit) {
  if (credit.extent(0) != 3 || credit(0) < 0 || credit(1) < 0) {
    d.open = false;
    throw Error("baton::pipeline: rank " + std::to_string(d.rank) + " (downstream of rank " +
                std::to_string(c.comm.rank()) +
                ") stopped with an error; its own message says why");
  }
  d.credit_systems += credit(0);
  d.credit_atoms += credit(1);
  d.reported_load = credit(2);
  d.unreported_load = 0.0;  // the credit answers the last hand-off: its load counts what that held
  c.note("credit from rank " + std::to_string(d.rank) + " (tag " + std::to_string(credit_tag) +
         "): " + counts(credit(0), credit(1)));
}

void send_credit(const LinkContext& c, int rank, std::int64_t systems, std::int64_t atoms,
                 std::int64_t load) {
  HostInts credit("baton::pipeline::credit", 3);
  credit(0) = systems;
  credit(1) = atoms;
  credit(2) = load;
  send_view(c.comm, credit, rank, credit_tag);
}

}  // namespace

void allocate_handoff_buffers(UpLink& u, int stages) {
  const std::size_t ints = systems::packed_int_count(u.share_systems, u.share_atoms, stages);
  const std::size_t reals = systems::packed_real_count(u.share_systems, u.share_atoms);
  for (int b = 0; b < 2; ++b) {
    u.int_buffers.push_back(
        IntView(Kokkos::view_alloc(Kokkos::WithoutInitializing, "baton::pipeline::handoff"), ints));
    u.real_buffers.push_back(RealView(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "baton::pipeline::handoff"), reals));
  }
}

void post_handoff(const LinkContext& c, UpLink& u) {
  const std::size_t b = u.next_buffers;
  u.next_buffers = 1 - b;
  // Two receives on one channel from one rank: MPI matches the integers, sent first, to the
  // first.
  u.ints.emplace(irecv_upto(c.comm, u.int_buffers.at(b), u.rank, data_tag));
  u.reals.emplace(irecv_upto(c.comm, u.real_buffers.at(b), u.rank, data_tag));
}

bool handoff_arrived(UpLink& u) {
  return u.ints && u.reals && u.ints->test() && u.reals->test();
}

systems::PackedSystems receive_handoff(const LinkContext& c, UpLink& u) {
  systems::PackedSystems wire;
  if (c.mode == CommMode::sync) {
    {
      auto t = c.timers.scope("wait");
      probe(c.comm, u.rank, data_tag);
    }
    auto t = c.timers.scope("receive");
    post_handoff(c, u);
    wire.ints = u.ints->wait();
    wire.reals = u.reals->wait();
  } else {
    auto t = c.timers.scope("wait");
    wire.ints = u.ints->wait();
    wire.reals = u.reals->wait();
  }
  u.ints.reset();
  u.reals.reset();
  u.received_step = c.step;
  return wire;
}

void accept_handoff(const LinkContext& c, UpLink& u, const systems::PackedHeader& h) {
  if (h.abort()) {
    u.open = false;
    throw Error("baton::pipeline: rank " + std::to_string(u.rank) + " (upstream of rank " +
                std::to_string(c.comm.rank()) +
                ") stopped with an error; its own message says why");
  }
  if (h.systems > u.outstanding_systems || h.atoms > u.outstanding_atoms)
    throw Error("baton::pipeline: rank " + std::to_string(u.rank) + " sent " +
                counts(h.systems, h.atoms) + " to rank " + std::to_string(c.comm.rank()) +
                " holding credit for only " + counts(u.outstanding_systems, u.outstanding_atoms));
  u.outstanding_systems -= h.systems;
  u.outstanding_atoms -= h.atoms;
  if (h.end_of_stream()) {
    u.open = false;
    u.outstanding_systems = 0;  // nothing more comes: the room it held is free again
    u.outstanding_atoms = 0;
  } else if (c.mode != CommMode::sync) {
    post_handoff(c, u);
  }
  c.note("received from rank " + std::to_string(u.rank) + " (tag " + std::to_string(data_tag) +
         "): " + counts(h.systems, h.atoms) + (h.end_of_stream() ? ", end of stream" : ""));
}

void grant_credit(const LinkContext& c, std::vector<UpLink>& links, systems::BatchCapacity room,
                  std::int64_t load) {
  std::int64_t free_systems = room.systems;
  std::int64_t free_atoms = room.atoms;
  for (const UpLink& u : links) {
    free_systems -= u.outstanding_systems;
    free_atoms -= u.outstanding_atoms;
  }
  for (UpLink& u : links) {
    if (!u.open || u.received_step != c.step)
      continue;
    const std::int64_t gs = std::clamp<std::int64_t>(u.share_systems - u.outstanding_systems, 0,
                                                     std::max<std::int64_t>(free_systems, 0));
    const std::int64_t ga = std::clamp<std::int64_t>(u.share_atoms - u.outstanding_atoms, 0,
                                                     std::max<std::int64_t>(free_atoms, 0));
    free_systems -= gs;
    free_atoms -= ga;
    u.outstanding_systems += gs;
    u.outstanding_atoms += ga;
    {
      auto t = c.timers.scope("send");
      send_credit(c, u.rank, gs, ga, load);
    }
    u.credited_step = c.step;
    c.note("granted rank " + std::to_string(u.rank) + " (tag " + std::to_string(credit_tag) +
           "): " + counts(gs, ga));
  }
}

bool credit_arrived(DownLink& d) {
  return !d.credit_owed || d.credit->test();
}

void collect_owed_credit(const LinkContext& c, DownLink& d) {
  if (!d.credit_owed)
    return;
  const HostInts credit = [&] {
    auto t = c.timers.scope("wait");
    return d.credit->wait();
  }();
  d.credit.reset();
  d.credit_owed = false;
  add_credit(c, d, credit);
}

std::int64_t send_species(const LinkContext& c, DownLink& d, const systems::SpeciesTable& species) {
  const std::vector<std::string>& names = species.names();
  if (names.size() <= d.species_sent)
    return 0;
  {
    auto t = c.timers.scope("wait");
    d.species_send.wait();
  }
  auto t = c.timers.scope("send");
  d.species_send = isend_object(c.comm, names, d.rank, species_tag);
  c.note("sent species to rank " + std::to_string(d.rank) + " (tag " + std::to_string(species_tag) +
         "): " + std::to_string(names.size()) + " labels");
  d.species_sent = names.size();
  return systems::packed_species;
}

void receive_species(const LinkContext& c, const UpLink& u, systems::SpeciesTable& species) {
  const std::vector<std::string> names = [&] {
    auto t = c.timers.scope("receive");
    return recv_object<std::vector<std::string>>(c.comm, u.rank, species_tag);
  }();
  const std::vector<std::string>& known = species.names();
  for (std::size_t i = 0; i < std::min(names.size(), known.size()); ++i)
    if (names[i] != known[i])
      throw Error("baton::pipeline: rank " + std::to_string(u.rank) + " names species " +
                  std::to_string(i) + " '" + names[i] + "', rank " + std::to_string(c.comm.rank()) +
                  " names it '" + known[i] + "' (an internal error)");
  for (const std::string& label : names)
    species.index(label);
  c.note("received species from rank " + std::to_string(u.rank) + " (tag " +
         std::to_string(species_tag) + "): " + std::to_string(names.size()) + " labels");
}

namespace {

// Sends the two Views of a hand-off on `d`; `keep` runs once the previous hand-off's sends are
// complete, before the new ones start (to keep host data alive until they complete).
// `wait_after`: complete the sends before returning; otherwise they complete in the background,
// and the next hand-off on `d` waits for them first.
template <class Ints, class Reals, class Keep>
void send_views(const LinkContext& c, DownLink& d, const Ints& ints, const Reals& reals,
                bool end_of_stream, const Keep& keep, bool wait_after) {
  if (!wait_after) {
    auto t = c.timers.scope("wait");
    d.ints_send.wait();
    d.reals_send.wait();
  }
  {
    auto t = c.timers.scope("send");
    keep();
    d.ints_send = isend_view(c.comm, ints(), d.rank, data_tag);
    d.reals_send = isend_view(c.comm, reals(), d.rank, data_tag);
    if (wait_after) {
      d.ints_send.wait();
      d.reals_send.wait();
    }
  }
  if (end_of_stream)
    d.open = false;
}

}  // namespace

void send_handoff(const LinkContext& c, DownLink& d, const systems::PackedSystems& wire,
                  bool end_of_stream) {
  send_views(
      c, d, [&] { return wire.ints; }, [&] { return wire.reals; }, end_of_stream, [] {},
      c.mode != CommMode::fully_async);
}

void send_handoff(const LinkContext& c, DownLink& d, systems::HostPacked wire, bool end_of_stream) {
  send_views(
      c, d, [&] { return systems::host_ints_view(d.host_wire); },
      [&] { return systems::host_reals_view(d.host_wire); }, end_of_stream,
      [&] { d.host_wire = std::move(wire); }, c.mode == CommMode::sync);
}

void expect_credit(const LinkContext& c, DownLink& d) {
  if (c.mode == CommMode::sync) {
    {
      auto t = c.timers.scope("wait");
      probe(c.comm, d.rank, credit_tag);
    }
    const HostInts credit = [&] {
      auto t = c.timers.scope("receive");
      return recv_view<HostInts>(c.comm, d.rank, credit_tag);
    }();
    add_credit(c, d, credit);
  } else {
    d.credit.emplace(irecv_view<HostInts>(c.comm, d.rank, credit_tag));
    d.credit_owed = true;
  }
}

void notify_failure(const LinkContext& c, std::vector<UpLink>& up, std::vector<DownLink*> down,
                    int stages) noexcept {
  // Best effort: the rank is failing already; a second error must not hide the first.
  try {
    // Every upstream rank gets a negative credit in place of the next credit it waits for. It may
    // still send one hand-off before reading it: the one of this step if not received yet, or the
    // next one if this step's credit went out already. Take that hand-off, so that no sender waits
    // forever on a large message (nor on the species labels sent before it).
    auto drain = [&](UpLink& u) {
      systems::PackedSystems wire;
      if (u.ints) {
        wire.ints = u.ints->wait();
        wire.reals = u.reals->wait();
        u.ints.reset();
        u.reals.reset();
      } else {
        wire.ints = recv_view<IntView>(c.comm, u.rank, data_tag);
        wire.reals = recv_view<RealView>(c.comm, u.rank, data_tag);
      }
      try {
        if (systems::read_packed_header(wire).new_species())
          recv_object<std::vector<std::string>>(c.comm, u.rank, species_tag);
      } catch (...) {  // a malformed hand-off: nothing more to take from it
      }
    };
    for (UpLink& u : up) {
      if (!u.open)
        continue;
      const bool pending = u.received_step != c.step;
      const bool credited = !pending && u.credited_step == c.step;
      if (pending)
        drain(u);
      send_credit(c, u.rank, -1, -1, 0);
      // In synchronized mode the upstream rank learns of the failure at this step's agreement and
      // sends no further hand-off.
      if (credited && !c.synchronized)
        drain(u);
    }
    for (DownLink* d : down)
      if (d->open) {
        d->ints_send.wait();
        d->reals_send.wait();
        d->species_send.wait();
        const systems::HostPacked w = systems::empty_host_packed(stages, systems::packed_abort);
        send_view(c.comm, systems::host_ints_view(w), d->rank, data_tag);
        send_view(c.comm, systems::host_reals_view(w), d->rank, data_tag);
      }
  } catch (...) {
  }
}

}  // namespace baton::pipeline::detail
