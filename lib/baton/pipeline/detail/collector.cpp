#include "baton/pipeline/detail/collector.hpp"

#include <algorithm>
#include <utility>

#include "baton/core/error.hpp"
#include "baton/systems/cell.hpp"
#include "baton/transport/view_message.hpp"

namespace baton::pipeline::detail {

Collector::Collector(const Communicator& comm, int stages, bool last_segment, ResultSink* sink,
                     std::vector<int> sources)
    : comm_(comm),
      stages_(stages),
      source_(last_segment && comm.rank() != 0),
      sink_(sink),
      sources_(std::move(sources)) {}

Collector::~Collector() {
  outgoing_.clear();  // waits for the sends still in flight
}

void Collector::take(std::vector<systems::HostSystem> systems) {
  for (systems::HostSystem& s : systems) {
    systems::wrap_positions(s);  // results: every atom inside its periodic cell
    tally_.add(s.id);
    failed_ += s.failed ? 1 : 0;
  }
  finished_ += static_cast<std::int64_t>(systems.size());
  if (sink_ != nullptr) {
    sink_->write(systems);
  } else {
    kept_.insert(kept_.end(), std::make_move_iterator(systems.begin()),
                 std::make_move_iterator(systems.end()));
  }
}

void Collector::send(std::shared_ptr<systems::HostPacked> wire) {
  while (outgoing_.size() >= 2) {  // at most two in flight: memory stays bounded
    outgoing_.front().ints.wait();
    outgoing_.front().reals.wait();
    outgoing_.pop_front();
  }
  Outgoing o;
  o.ints = isend_view(comm_, systems::host_ints_view(*wire), 0, results_tag);
  o.reals = isend_view(comm_, systems::host_reals_view(*wire), 0, results_tag);
  o.wire = std::move(wire);
  outgoing_.push_back(std::move(o));
}

void Collector::add(std::shared_ptr<systems::HostPacked> host,
                    const systems::SpeciesTable& species) {
  const systems::PackedHeader h =
      systems::decode_packed_header(host->ints.data(), host->ints.size(), host->reals.size());
  if (h.systems == 0)
    return;
  if (comm_.rank() == 0) {
    copies_.add(1, 0);  // decode_host_systems()
    take(systems::decode_host_systems(host->ints.data(), host->ints.size(), host->reals.data(),
                                      host->reals.size(), species));
    return;
  }
  finished_ += h.systems;
  send(std::move(host));
}

void Collector::progress() {
  for (Outgoing& o : outgoing_) {
    o.ints.test();
    o.reals.test();
  }
  while (!outgoing_.empty() && !outgoing_.front().ints.active() &&
         !outgoing_.front().reals.active())
    outgoing_.pop_front();
}

void Collector::end() {
  if (!source_ || ended_)
    return;
  ended_ = true;
  send(std::make_shared<systems::HostPacked>(
      systems::empty_host_packed(stages_, systems::packed_end_of_stream)));
  for (Outgoing& o : outgoing_) {
    o.ints.wait();
    o.reals.wait();
  }
  outgoing_.clear();
}

bool Collector::poll(const systems::SpeciesTable& species) {
  if (comm_.rank() != 0)
    return false;
  while (!sources_.empty()) {
    const std::optional<MessageInfo> info = iprobe(comm_, any_source, results_tag);
    if (!info)
      break;
    const auto ints = recv_view<HostInts>(comm_, info->source, results_tag);
    const auto reals = recv_view<HostReals>(comm_, info->source, results_tag);
    const systems::PackedHeader h =
        systems::decode_packed_header(ints.data(), ints.extent(0), reals.extent(0));
    if (h.systems > 0 && !aborted_) {
      copies_.add(1, 0);  // decode_host_systems()
      take(systems::decode_host_systems(ints.data(), ints.extent(0), reals.data(), reals.extent(0),
                                        species));
    }
    if (h.end_of_stream() || h.abort()) {
      aborted_ = aborted_ || h.abort();
      sources_.erase(std::remove(sources_.begin(), sources_.end(), info->source), sources_.end());
    }
  }
  return !sources_.empty();
}

void Collector::fail() noexcept {
  try {
    if (comm_.rank() != 0) {
      if (source_ && !ended_) {
        ended_ = true;
        send(std::make_shared<systems::HostPacked>(
            systems::empty_host_packed(stages_, systems::packed_abort)));
      }
      return;
    }
    // Rank 0: every source learns of the failure (through its links) and ends; take what they
    // send meanwhile, so that none waits on a large message forever.
    aborted_ = true;
    systems::SpeciesTable none;
    while (poll(none)) {
    }
  } catch (...) {
  }
}

}  // namespace baton::pipeline::detail
