#pragma once
/// \file
/// Input distribution (internal to the driver): rank 0 pulls systems from the SystemSource only as
/// room opens, for its own first stage and, over input links, for the other ranks of the first
/// segment. It holds at most one system read ahead (and, at the start, the few systems setup read
/// to measure the stages' costs).

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "baton/pipeline/checkpoint.hpp"
#include "baton/pipeline/detail/links.hpp"
#include "baton/pipeline/source.hpp"
#include "baton/pipeline/stage_counters.hpp"
#include "baton/systems/host_system.hpp"

namespace baton::pipeline::detail {

/// What went in, to compare with what came out: a count and an order-free hash of the ids.
struct IdTally {
  std::int64_t count = 0;
  std::uint64_t hash = 0;
  void add(std::int64_t id);
};

class Feeder {
 public:
  /// `max_atoms`: the largest system every stage can hold; `links`: to the other first-segment
  /// ranks; `keep_ids`: remember every id (for gather_results' exact check).
  /// `ahead`: systems already read from the source (they come first). `resume`: systems that go
  /// on from a checkpoint (null: none); they go in marked failed, so that the stages before
  /// theirs pass them on without steps (the driver restores them in theirs).
  Feeder(SystemSource& source, std::deque<systems::HostSystem> ahead, std::int64_t max_atoms,
         std::vector<DownLink> links, bool keep_ids, const Checkpoints* resume = nullptr);
  /// Systems for this rank's first batch, in input order, as many as `room` takes.
  std::vector<systems::HostSystem> take(systems::BatchCapacity room);
  /// One hand-off to every open input link, within its credit; the end of stream once the source
  /// is dry. Names the species of what it sends in `species`, and sends a rank the labels it was
  /// not sent yet before the hand-off that needs them. In the async modes, `busy` (rank 0 has
  /// systems to step) skips a link whose credit for the last hand-off has not come yet, where the
  /// feeder would otherwise wait for it: the next step feeds it.
  void feed(const LinkContext& c, systems::SpeciesTable& species, int stages, bool busy);
  /// The source is dry and nothing is held.
  bool exhausted();
  std::vector<DownLink>& links() noexcept { return links_; }
  const IdTally& tally() const noexcept { return tally_; }
  const std::vector<std::int64_t>& ids() const noexcept { return ids_; }
  /// The copies of the hand-offs it sent (HandoffCopies::input_sent).
  const CopyCount& copies() const noexcept { return copies_; }

 private:
  const systems::HostSystem* peek();
  systems::HostSystem pop();

  SystemSource& source_;
  std::deque<systems::HostSystem> ahead_;
  std::int64_t max_atoms_;
  std::vector<DownLink> links_;
  bool keep_ids_;
  const Checkpoints* resume_;
  std::optional<systems::HostSystem> pending_;
  bool dry_ = false;
  std::size_t round_robin_ = 0;
  IdTally tally_;
  std::vector<std::int64_t> ids_;
  CopyCount copies_;
};

}  // namespace baton::pipeline::detail
