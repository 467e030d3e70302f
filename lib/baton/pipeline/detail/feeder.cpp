#include "baton/pipeline/detail/feeder.hpp"

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

std::vector<systems::HostSystem> Feeder::take(systems::BatchCapacity room) {
  std::vector<systems::HostSystem> out;
  while (const systems::HostSystem* s = peek()) {
    const auto a = static_cast<int>(s->size());
    if (room.systems < 1 || room.atoms < a)
      break;
    room.systems -= 1;
    room.atoms -= a;
    out.push_back(pop());
  }
  return out;
}

void Feeder::feed(const LinkContext& c, systems::SpeciesTable& species, int stages, bool busy) {
  for (std::size_t j = 0; j < links_.size(); ++j) {
    DownLink& d = links_[(round_robin_ + j) % links_.size()];
    if (!d.open)
      continue;
    if (busy && c.mode != CommMode::sync && !credit_arrived(d))
      continue;
    collect_owed_credit(c, d);
    std::vector<systems::HostSystem> share;
    while (const systems::HostSystem* s = peek()) {
      const auto a = static_cast<std::int64_t>(s->size());
      if (!d.fits(a))
        break;
      d.take(a);
      share.push_back(pop());
    }
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
  if (!links_.empty())
    round_robin_ = (round_robin_ + 1) % links_.size();
}

}  // namespace baton::pipeline::detail
