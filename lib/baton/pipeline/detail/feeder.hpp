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
  /// Balance the input by load (a plan of one segment: every rank runs every stage). A rank's load
  /// is the work it has left, in atoms, each stage weighed by its share of the stages' cost: a
  /// system not started counts its atoms, one half through counts half of them. The other ranks
  /// report theirs with every credit; what was dealt to them since counts in full. Each system goes
  /// to a rank with room whose load is the least of all the segment's ranks, or waits for one.
  /// Off: rank 0 fills its own batch first, then the links in turn.
  void balance_by_load(bool on) { balance_ = on; }
  /// This step's input, in input order: the systems for this rank's first batch (returned), as
  /// many as `room` takes, and a share for every open input link whose credit is here (collected),
  /// which feed() sends. `own_load`: this rank's load (read when balancing). In the async modes, a
  /// link whose credit for the last hand-off has not come is skipped while this rank has systems to
  /// step (`busy`, or systems dealt to it now): the next step feeds it; otherwise this waits for
  /// that credit.
  std::vector<systems::HostSystem> deal(const LinkContext& c, systems::BatchCapacity room,
                                        bool busy, double own_load);
  /// Sends the shares dealt: one hand-off to every link dealt to, within its credit; the end of
  /// stream once the source is dry. Names the species of what it sends in `species`, and sends a
  /// rank the labels it was not sent yet before the hand-off that needs them.
  void feed(const LinkContext& c, systems::SpeciesTable& species, int stages);
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
  /// Collects link j's credit (waits for it if owed) and marks it dealt to this step.
  void collect(const LinkContext& c, std::size_t j);
  /// Deals systems to this rank (`own`, within `room`) and to the links marked in `dealt_`.
  void deal_to(std::vector<systems::HostSystem>& own, systems::BatchCapacity& room,
               double& own_load);

  SystemSource& source_;
  std::deque<systems::HostSystem> ahead_;
  std::int64_t max_atoms_;
  std::vector<DownLink> links_;
  bool keep_ids_;
  const Checkpoints* resume_;
  std::optional<systems::HostSystem> pending_;
  bool dry_ = false;
  std::size_t round_robin_ = 0;
  bool balance_ = false;
  std::vector<char> dealt_;                               ///< per link: gets a hand-off this step
  std::vector<std::vector<systems::HostSystem>> shares_;  ///< per link, this step's
  IdTally tally_;
  std::vector<std::int64_t> ids_;
  CopyCount copies_;
};

}  // namespace baton::pipeline::detail
