#include "replay.hpp"

#include <algorithm>
#include <baton/baton.hpp>
#include <baton/transport/objects.hpp>
#include <cmath>
#include <set>

namespace replay {

namespace {
// Tags on a service group (agents and their buffer manager) and on the discovery group (managers
// and the coordinator).
constexpr int batch_tag = 1, scores_tag = 2, exit_tag = 3;
constexpr int modes_tag = 10, done_tag = 11, sync_tag = 12, final_tag = 13;

template <class V>
void count_view(Outcome& o, const V& v) {
  o.messages += 1;
  o.bytes +=
      static_cast<long>(baton::ViewEnvelope::wire_size + v.size() * sizeof(typename V::value_type));
}

// Modes of the states in `states` not yet in `seen`; adds them.
std::vector<int> new_modes(const Grid& g, const Kokkos::View<const int**>& states,
                           std::set<int>& seen) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), states);
  std::vector<int> found;
  for (std::size_t n = 0; n < h.extent(0); ++n) {
    const int m = mode_of(Kokkos::subview(h, n, Kokkos::ALL()), g);
    if (m >= 0 && seen.insert(m).second)
      found.push_back(m);
  }
  return found;
}

// Records the first update after which a logit of the policy is not finite (a learning rate too
// large for the rewards): the run goes on to its end, so no rank waits, and then reports failure.
void note_divergence(Outcome& out, const Kokkos::View<double*>& theta, long update) {
  if (out.diverged_at >= 0)
    return;
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), theta);
  for (std::size_t i = 0; i < h.extent(0); ++i)
    if (!std::isfinite(h(i))) {
      out.diverged_at = update + 1;
      return;
    }
}

// What a rank that scores does towards the coordinator (a buffer manager, or an agent when there
// are no buffers): reports newly found modes, takes the coordinator's syncs, and at the end sends
// its final set and waits for the coordinator's final message. Does nothing without a coordinator.
class ModeReporter {
 public:
  ModeReporter(const baton::Communicator& discovery, Outcome& out)
      : discovery_(discovery),
        out_(out),
        coordinator_(discovery.is_null() ? -1 : discovery.size() - 1) {}

  void report(const std::vector<int>& found) {
    if (coordinator_ < 0 || found.empty())
      return;
    reports_.push_back(baton::isend_object(discovery_, found, coordinator_, modes_tag));
    out_.messages += 1;
    out_.bytes += static_cast<long>(8 + found.size() * sizeof(int));
  }

  void drain_syncs() {
    while (coordinator_ >= 0 && baton::iprobe(discovery_, coordinator_, sync_tag)) {
      baton::recv_object<std::uint64_t>(discovery_, coordinator_, sync_tag);
      ++out_.syncs_received;
    }
  }

  void finish(const std::vector<int>& modes) {
    if (coordinator_ < 0)
      return;
    for (auto& r : reports_)
      r.wait();
    baton::send_object(discovery_, modes, coordinator_, done_tag);
    out_.messages += 1;
    // Syncs may still come until the coordinator's final message.
    for (;;) {
      const baton::MessageInfo info = baton::probe(discovery_, coordinator_, baton::any_tag);
      baton::recv_object<std::uint64_t>(discovery_, coordinator_, info.tag);
      if (info.tag == final_tag)
        break;
      ++out_.syncs_received;
    }
  }

 private:
  const baton::Communicator& discovery_;
  Outcome& out_;
  int coordinator_;
  std::vector<baton::SendHandle> reports_;
};
}  // namespace

SendMode parse_mode(const std::string& name) {
  if (name == "blocking")
    return SendMode::blocking;
  if (name == "late")
    return SendMode::late;
  if (name == "nonblocking")
    return SendMode::nonblocking;
  throw baton::Error("baton-replay: unknown send mode '" + name +
                     "' (blocking, late or nonblocking)");
}

const char* to_string(SendMode mode) {
  switch (mode) {
    case SendMode::blocking:
      return "blocking";
    case SendMode::late:
      return "late";
    case SendMode::nonblocking:
      return "nonblocking";
  }
  return "unknown";
}

Outcome run_agent(const baton::DistributedContext& ctx, const Settings& s,
                  baton::TimerRegistry& timers) {
  Outcome out;
  const Grid& g = s.grid;
  const baton::Communicator& service = ctx.service();
  const bool remote = !service.is_null();
  const int manager =
      remote ? service.size() - 1 : -1;  // the manager is the service group's last rank
  // Initial policy: every increment equally likely, stopping less likely (logit -1), so that early
  // trajectories reach past the first cells.
  Kokkos::View<double*> theta("theta", g.dims + 1);
  Kokkos::deep_copy(Kokkos::subview(theta, g.dims), -1.0);
  Kokkos::View<int**> states[2] = {Kokkos::View<int**>("states0", s.batch, g.dims),
                                   Kokkos::View<int**>("states1", s.batch, g.dims)};
  Kokkos::View<double**> grads[2] = {Kokkos::View<double**>("grads0", s.batch, g.dims + 1),
                                     Kokkos::View<double**>("grads1", s.batch, g.dims + 1)};
  Kokkos::View<double*> local_rewards("rewards", s.batch);
  std::set<int> seen;  // without a buffer, the agent scores and finds modes itself
  ModeReporter reporter(ctx.discovery(), out);
  baton::SendHandle pending;
  const std::uint64_t seed = s.seed * 1000003ULL + static_cast<std::uint64_t>(ctx.rank());
  long updates = 0;

  const auto receive_and_update = [&](int which) {
    const Kokkos::View<double*> rewards = [&] {
      auto t = timers.scope("wait_scores");
      return baton::recv_view<Kokkos::View<double*>>(service, manager, scores_tag);
    }();
    auto t = timers.scope("update");
    update(theta, grads[which], rewards, s.learning_rate);
    note_divergence(out, theta, updates++);
  };

  for (int it = 0; it < s.iterations; ++it) {
    const int cur = it % 2;
    {
      auto t = timers.scope("sample");
      sample(g, theta, seed, it, states[cur], grads[cur]);
    }
    if (!remote) {
      {
        auto t = timers.scope("score");
        score(g, states[cur], local_rewards);
        const std::vector<int> found = new_modes(g, states[cur], seen);
        out.modes.insert(out.modes.end(), found.begin(), found.end());
        ++out.batches_scored;
        reporter.report(found);
        reporter.drain_syncs();
      }
      auto t = timers.scope("update");
      update(theta, grads[cur], local_rewards, s.learning_rate);
      note_divergence(out, theta, updates++);
    } else {
      {
        auto t = timers.scope("send");
        if (s.mode == SendMode::nonblocking) {
          pending.wait();  // the previous batch's send (its buffer is reused two iterations later)
          pending = baton::isend_view(service, states[cur], manager, batch_tag);
        } else {
          baton::send_view(service, states[cur], manager, batch_tag);
        }
        count_view(out, states[cur]);
      }
      ++out.batches_sent;
      if (s.mode == SendMode::late) {
        if (it > 0)
          receive_and_update(1 - cur);  // scores of the previous batch
      } else {
        receive_and_update(cur);
      }
    }
    if (!ctx.agent_group().is_null()) {
      auto t = timers.scope("average");
      baton::average(ctx.agent_group(), theta);
    }
  }
  if (!remote)
    reporter.finish(out.modes);
  if (remote) {
    if (s.mode == SendMode::late && s.iterations > 0)
      receive_and_update((s.iterations - 1) % 2);
    pending.wait();
    baton::send(service, nullptr, 0, manager, exit_tag);
    out.messages += 1;
    // The manager answers with the number of this agent's batches it scored: exactly once each.
    const auto scored = baton::recv_object<long>(service, manager, exit_tag);
    out.mismatches = scored == out.batches_sent ? 0 : 1;
  }
  return out;
}

Outcome run_buffer(const baton::DistributedContext& ctx, const Settings& s,
                   baton::TimerRegistry& timers) {
  Outcome out;
  const Grid& g = s.grid;
  const baton::Communicator& service = ctx.service();
  ModeReporter reporter(ctx.discovery(), out);
  int agents_left = service.size() - 1;
  std::set<int> seen;
  std::vector<int> replay_buffer;  // every state received, D ints each
  std::vector<long> scored_for(static_cast<std::size_t>(service.size()), 0);  // per agent
  std::vector<baton::SendHandle> replies;
  while (agents_left > 0) {
    const baton::MessageInfo info = baton::probe(service, baton::any_source, baton::any_tag);
    if (info.tag == exit_tag) {
      baton::recv(service, info.source, exit_tag);
      baton::send_object(service, scored_for[static_cast<std::size_t>(info.source)], info.source,
                         exit_tag);
      out.messages += 1;
      --agents_left;
      continue;
    }
    const Kokkos::View<int**> states = [&] {
      auto t = timers.scope("receive");
      return baton::recv_view<Kokkos::View<int**>>(service, info.source, batch_tag);
    }();
    Kokkos::View<double*> rewards("rewards", states.extent(0));
    std::vector<int> found;
    {
      auto t = timers.scope("score");
      score(g, states, rewards);
      found = new_modes(g, states, seen);
      auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), states);
      replay_buffer.insert(replay_buffer.end(), h.data(), h.data() + h.size());
      ++out.batches_scored;
      long& count = scored_for[static_cast<std::size_t>(info.source)];
      if (!(s.drop_first_count && out.batches_scored == 1))
        ++count;
    }
    {
      // Non-blocking: in "late" mode the agent may be sending its next batch before it receives
      // these scores; two blocking sends of large messages would wait for each other.
      auto t = timers.scope("reply");
      replies.push_back(baton::isend_view(service, rewards, info.source, scores_tag));
      count_view(out, rewards);
      replies.erase(std::remove_if(replies.begin(), replies.end(),
                                   [](baton::SendHandle& h) { return h.test(); }),
                    replies.end());
    }
    reporter.report(found);
    reporter.drain_syncs();
  }
  for (auto& r : replies)
    r.wait();
  out.modes.assign(seen.begin(), seen.end());
  reporter.finish(out.modes);
  return out;
}

Outcome run_coordinator(const baton::DistributedContext& ctx, const Settings& s,
                        baton::TimerRegistry& timers) {
  Outcome out;
  const baton::Communicator& discovery = ctx.discovery();
  const int buffers = discovery.size() - 1;  // the ranks that report modes
  int buffers_left = buffers;
  long reports = 0;
  std::set<int> global;
  std::vector<baton::SendHandle> syncs;
  while (buffers_left > 0) {
    const baton::MessageInfo info = baton::probe(discovery, baton::any_source, baton::any_tag);
    auto t = timers.scope("merge");
    const auto modes = baton::recv_object<std::vector<int>>(discovery, info.source, info.tag);
    if (info.tag == done_tag) {
      // The final set of a buffer holds nothing its reports did not (checked at the end).
      --buffers_left;
      continue;
    }
    global.insert(modes.begin(), modes.end());
    if (++reports % s.sync_every == 0) {
      for (int b = 0; b < buffers; ++b) {
        syncs.push_back(
            baton::isend_object(discovery, static_cast<std::uint64_t>(global.size()), b, sync_tag));
        out.messages += 1;
        out.bytes += 8;
      }
    }
  }
  for (auto& h : syncs)
    h.wait();
  for (int b = 0; b < buffers; ++b) {
    baton::send_object(discovery, static_cast<std::uint64_t>(global.size()), b, final_tag);
    out.messages += 1;
    out.bytes += 8;
  }
  out.modes.assign(global.begin(), global.end());
  return out;
}

}  // namespace replay
