#pragma once
// The three roles of baton-replay and what they report.
#include <baton/roles/context.hpp>
#include <baton/timing/timers.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "hypergrid.hpp"

namespace replay {

enum class SendMode { blocking, late, nonblocking };
SendMode parse_mode(const std::string& name);  // "blocking", "late", "nonblocking"
const char* to_string(SendMode mode);

struct Settings {
  Grid grid;
  int batch = 256;      // states per batch
  int iterations = 50;  // batches per agent
  double learning_rate = 0.05;
  std::uint64_t seed = 1;
  SendMode mode = SendMode::blocking;
  int sync_every = 4;  // the coordinator syncs the buffers after this many mode reports
  // A fault for tests: each manager leaves the first batch it scores out of that agent's count,
  // so the end-of-run check fails (exit 3).
  bool drop_first_count = false;
};

/// What one rank did, for the end-of-run summary.
struct Outcome {
  long messages = 0;        // messages this rank sent
  long bytes = 0;           // bytes this rank sent (envelopes included)
  long batches_sent = 0;    // agents
  long batches_scored = 0;  // buffers (or agents without a buffer)
  std::vector<int> modes;   // modes this rank found (buffers; agents without a buffer); the
                            // coordinator's merged set
  long syncs_received = 0;  // buffers
  long mismatches = 0;    // agents: 1 if the manager scored another number of this agent's batches
  long diverged_at = -1;  // agents: the first update after which a logit was not finite (-1: none)
};

Outcome run_agent(const baton::DistributedContext& ctx, const Settings& s,
                  baton::TimerRegistry& timers);
Outcome run_buffer(const baton::DistributedContext& ctx, const Settings& s,
                   baton::TimerRegistry& timers);
Outcome run_coordinator(const baton::DistributedContext& ctx, const Settings& s,
                        baton::TimerRegistry& timers);

}  // namespace replay
