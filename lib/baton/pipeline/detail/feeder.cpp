#include "baton/pipeline/detail/feeder.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <utility>

#include "baton/core/error.hpp"
#include "baton/systems/host_transfer.hpp"

namespace baton::pipeline::detail {

void IdTally::add(std::int64_t id) {
  // splitmix64 of the id, summed: the same for the same ids in any order.
  auto z = static_cast<std::uint64_t>(id) + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  hash += z ^ (z >> 31);
  ++count;
}

Feeder::Feeder(SystemSource& source, std::deque<systems::HostSystem> ahead, std::int64_t max_atoms,
               std::vector<DownLink> links, bool keep_ids, const Checkpoints* resume)
    : source_(source),
      ahead_(std::move(ahead)),
      max_atoms_(max_atoms),
      links_(std::move(links)),
      keep_ids_(keep_ids),
      resume_(resume) {}

const systems::HostSystem* Feeder::peek() {
  if (!pending_ && !dry_) {
    if (!ahead_.empty()) {
      pending_ = std::move(ahead_.front());
      ahead_.pop_front();
    } else {
      pending_ = source_.next();
    }
    if (!pending_) {
      dry_ = true;
      return nullptr;
    }
    const systems::HostSystem& s = *pending_;
    const std::string wrong = systems::host_system_problem(s);
    if (!wrong.empty())
      throw Error("baton::pipeline::Driver: input system " + std::to_string(s.id) + " " + wrong);
    if (static_cast<std::int64_t>(s.size()) > max_atoms_)
      throw Error("baton::pipeline::Driver: input system " + std::to_string(s.id) + " has " +
                  std::to_string(s.size()) + " atoms, more than every stage can hold (" +
                  std::to_string(max_atoms_) + " atoms; see the stages' capacities)");
    tally_.add(s.id);
    if (keep_ids_)
      ids_.push_back(s.id);
    if (resume_ != nullptr && resume_->find(s.id) != nullptr) {
      pending_->failed = true;  // passes the stages before its checkpoint's without steps
      pending_->failure.clear();
    }
  }
  return pending_ ? &*pending_ : nullptr;
}

systems::HostSystem Feeder::pop() {
  systems::HostSystem s = std::move(*pending_);
  pending_.reset();
  return s;
}

bool Feeder::exhausted() {
  return peek() == nullptr;
}

std::vector<systems::HostSystem> Feeder::deal(const LinkContext& c, systems::BatchCapacity room,
                                              bool busy, double own_load) {
  const std::size_t n = links_.size();
  dealt_.assign(n, 0);
  shares_.assign(n, {});
  std::vector<systems::HostSystem> own;
  // The links whose credit is here, then this rank and they share out what waits.
  for (std::size_t j = 0; j < n; ++j) {
    DownLink& d = links_[j];
    if (!d.open || (c.mode != CommMode::sync && !credit_arrived(d)))
      continue;
    collect(c, j);
  }
  deal_to(own, room, own_load);
  // With nothing to step here, wait for the other links' credit rather than spin.
  if (busy || !own.empty())
    return own;
  bool waited = false;
  for (std::size_t j = 0; j < n; ++j) {
    DownLink& d = links_[j];
    if (!d.open || dealt_[j])
      continue;
    collect(c, j);
    waited = true;
  }
  if (waited)
    deal_to(own, room, own_load);
  return own;
}

void Feeder::collect(const LinkContext& c, std::size_t j) {
  collect_owed_credit(c, links_[j]);
  dealt_[j] = 1;
}

void Feeder::deal_to(std::vector<systems::HostSystem>& own, systems::BatchCapacity& room,
                     double& own_load) {
  const std::size_t n = links_.size();
  if (!balance_) {  // this rank's batch first, then the links in turn
    while (const systems::HostSystem* s = peek()) {
      const auto a = static_cast<int>(s->size());
      if (room.systems < 1 || room.atoms < a)
        break;
      room.systems -= 1;
      room.atoms -= a;
      own.push_back(pop());
    }
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t j = (round_robin_ + k) % n;
      DownLink& d = links_[j];
      if (!dealt_[j])
        continue;
      while (const systems::HostSystem* s = peek()) {
        const auto a = static_cast<std::int64_t>(s->size());
        if (!d.fits(a))
          break;
        d.take(a);
        shares_[j].push_back(pop());
      }
    }
    return;
  }
  while (const systems::HostSystem* s = peek()) {
    const auto a = static_cast<std::int64_t>(s->size());
    // The least load of all, and the least of those that can take the system now (-1: this rank).
    double least = own_load;
    double best_load =
        room.systems >= 1 && room.atoms >= a ? own_load : std::numeric_limits<double>::infinity();
    std::ptrdiff_t best = -1;
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t j = (round_robin_ + k) % n;
      const DownLink& d = links_[j];
      if (!d.open)
        continue;
      const double load = static_cast<double>(d.reported_load) / load_scale + d.unreported_load;
      least = std::min(least, load);
      if (dealt_[j] && d.fits(a) && load < best_load) {
        best_load = load;
        best = static_cast<std::ptrdiff_t>(j);
      }
    }
    if (best_load > least)
      break;  // it waits for the least loaded rank's room
    if (best < 0) {
      room.systems -= 1;
      room.atoms -= static_cast<int>(a);
      own_load += static_cast<double>(a);
      own.push_back(pop());
    } else {
      const auto j = static_cast<std::size_t>(best);
      links_[j].take(a);
      links_[j].unreported_load += static_cast<double>(a);
      shares_[j].push_back(pop());
    }
  }
}

void Feeder::feed(const LinkContext& c, systems::SpeciesTable& species, int stages) {
  for (std::size_t k = 0; k < links_.size(); ++k) {
    const std::size_t j = (round_robin_ + k) % links_.size();
    DownLink& d = links_[j];
    if (j >= dealt_.size() || !dealt_[j])
      continue;
    std::vector<systems::HostSystem> share = std::move(shares_[j]);
    shares_[j].clear();
    const bool eos = exhausted();
    systems::HostPacked w =
        systems::encode_host_systems(share, species, stages);  // names their labels
    if (eos)
      w.ints[5] |= systems::packed_end_of_stream;
    w.ints[5] |= send_species(c, d, species);
    const std::int64_t atoms = w.ints[3];
    if (!share.empty())
      copies_.add(1, 0);  // encode_host_systems(); MPI reads the host Views as they are
    // Encoded here on the host, sent from host memory: the receiving rank puts it on its device,
    // once, as it receives it (the receiver cannot tell).
    send_handoff(c, d, std::move(w), eos);
    c.note("fed rank " + std::to_string(d.rank) + ": " +
           counts(static_cast<std::int64_t>(share.size()), atoms) + (eos ? ", end of stream" : ""));
    if (!eos)
      expect_credit(c, d);
  }
  dealt_.assign(links_.size(), 0);
  if (!links_.empty())
    round_robin_ = (round_robin_ + 1) % links_.size();
}

}  // namespace baton::pipeline::detail
