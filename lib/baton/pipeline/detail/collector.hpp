#pragma once
/// \file
/// Results (internal to the driver): every system that leaves the last stage goes to rank 0 as it
/// finishes. Rank 0 hands it to the ResultSink (streamed output) or keeps it for gather_results,
/// counts it, and checks at the end that what came out is what went in.
///
/// Protocol: a last-segment rank other than 0 sends each step's finished systems as one wire
/// message (ints, then doubles, `results_tag`); its last message has the end-of-stream flag, or
/// the abort flag when it stopped with an error. It waits for a send only when two are still in
/// flight. Rank 0 takes them whenever it polls (every step, and after its own work until every
/// such rank has ended).

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "baton/pipeline/detail/feeder.hpp"
#include "baton/pipeline/detail/links.hpp"
#include "baton/pipeline/sink.hpp"
#include "baton/pipeline/stage_counters.hpp"
#include "baton/systems/host_system.hpp"

namespace baton::pipeline::detail {

class Collector {
 public:
  /// `last_segment`: this rank runs the last stage; `sink`: rank 0's sink (null: keep the results
  /// in memory); `sources`: rank 0, the last-segment ranks other than 0 (others: empty).
  Collector(const Communicator& comm, int stages, bool last_segment, ResultSink* sink,
            std::vector<int> sources);
  ~Collector();
  Collector(const Collector&) = delete;
  Collector& operator=(const Collector&) = delete;

  /// A last-segment rank: systems that just finished, packed from its last batch and copied to the
  /// host (once: hooks see the same copy).
  void add(std::shared_ptr<systems::HostPacked> host, const systems::SpeciesTable& species);
  /// A last-segment rank other than 0, every step: tests the sends in flight, so that a large
  /// message moves on while this rank computes (MPI progresses a send only inside MPI calls, and
  /// rank 0 would otherwise wait on its data until this rank's next send), and releases those done.
  void progress();
  /// A last-segment rank other than 0, once it is done: the end-of-stream message, and waits for
  /// every send. (Called once.)
  void end();
  /// Rank 0: takes the messages that arrived. True while some source has not ended.
  bool poll(const systems::SpeciesTable& species);
  /// On a failing rank, best effort: a last-segment rank other than 0 sends the abort message; rank
  /// 0 takes messages until every source has ended, so that no sender is left blocked.
  void fail() noexcept;

  /// Rank 0: systems received so far (from every rank); elsewhere: sent so far.
  std::int64_t finished() const noexcept { return finished_; }
  /// Rank 0: how many of them failed.
  std::int64_t failed() const noexcept { return failed_; }
  /// Rank 0: some source stopped with an error.
  bool aborted() const noexcept { return aborted_; }
  /// Rank 0: the ids that came out.
  const IdTally& tally() const noexcept { return tally_; }
  /// Rank 0 without a sink: the results so far.
  std::vector<systems::HostSystem>& kept() noexcept { return kept_; }
  /// Rank 0: the copies of decoding results (HandoffCopies::collected).
  const CopyCount& copies() const noexcept { return copies_; }

 private:
  void take(std::vector<systems::HostSystem> systems);
  void send(std::shared_ptr<systems::HostPacked> wire);

  struct Outgoing {
    std::shared_ptr<systems::HostPacked> wire;
    SendHandle ints, reals;
  };
  const Communicator& comm_;
  int stages_;
  bool source_;  // sends its results to rank 0
  ResultSink* sink_;
  std::vector<int> sources_;  // rank 0: sources that have not ended
  std::deque<Outgoing> outgoing_;
  bool ended_ = false;
  bool aborted_ = false;
  std::int64_t finished_ = 0;
  std::int64_t failed_ = 0;
  IdTally tally_;
  std::vector<systems::HostSystem> kept_;
  CopyCount copies_;
};

}  // namespace baton::pipeline::detail
