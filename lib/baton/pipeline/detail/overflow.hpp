#pragma once
/// \file
/// The overflow chain (internal to the driver): where finished systems wait when the next stage has
/// no room, tried in order: a device batch (hand-offs are packed from it), a bounded host buffer,
/// a spill file on disk. Nothing is ever dropped: what finds the whole chain full stays in its
/// stage batch (Held), and that stage takes in less. Systems move back up the chain (disk -> host
/// -> device) as the device batch empties, oldest first.

#include <cstdint>
#include <deque>
#include <fstream>
#include <optional>
#include <string>

#include "baton/systems/codec.hpp"
#include "baton/systems/systems_batch.hpp"

namespace baton::pipeline::detail {

class OverflowChain {
 public:
  /// `device`: the device batch (at least one system); `host`: the host buffer ({0, 0}: none);
  /// `spill_path`: the spill file (empty: none), created when first needed and removed with the
  /// chain.
  OverflowChain(systems::BatchCapacity device, systems::BatchCapacity host, std::string spill_path,
                int stages);
  ~OverflowChain();
  OverflowChain(const OverflowChain&) = delete;
  OverflowChain& operator=(const OverflowChain&) = delete;

  /// The device batch: every system in it waits for a hand-off.
  systems::SystemsBatch& device() noexcept { return device_; }
  /// Moves the Held systems of `from` into the chain, each to the first link with room.
  void take(systems::SystemsBatch& from);
  /// Moves waiting systems up the chain (disk -> host -> device) while there is room.
  void refill();
  /// Systems anywhere in the chain.
  long systems() const noexcept;
  /// Systems written to the spill file so far (in all).
  long spilled() const noexcept { return spilled_total_; }
  /// "the overflow chain (device 4 systems, 120 atoms; host ...; spill file ...)".
  std::string describe() const;

 private:
  void spill(const systems::HostPacked& w);
  systems::HostPacked unspill();

  systems::SystemsBatch device_;
  systems::BatchCapacity host_cap_;
  systems::BatchCapacity host_used_{0, 0};
  std::deque<systems::HostPacked> host_;  // one system each, oldest first
  std::string spill_path_;
  std::fstream spill_;
  std::int64_t read_at_ = 0;     // next record to read back
  std::deque<int> spill_atoms_;  // atoms of each record not read back yet, oldest first
  long spilled_total_ = 0;
};

}  // namespace baton::pipeline::detail
