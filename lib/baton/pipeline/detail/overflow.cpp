#include "baton/pipeline/detail/overflow.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "baton/core/error.hpp"
#include "baton/pipeline/detail/links.hpp"
#include "baton/pipeline/detail/runner.hpp"

namespace baton::pipeline::detail {

using systems::BatchCapacity;
using systems::SystemStatus;

namespace {

// A systems::HostPacked of one system: its atom count.
int atoms_of(const systems::HostPacked& w) {
  return static_cast<int>(w.ints[3]);
}

}  // namespace

namespace {
void refuse_existing(const std::string& path) {
  if (::access(path.c_str(), F_OK) == 0)
    throw Error("baton::pipeline: the spill file '" + path +
                "' exists already; it is not this run's, so it is left as it is");
}
}  // namespace

OverflowChain::OverflowChain(systems::BatchCapacity device, systems::BatchCapacity host,
                             std::string spill_path, int stages)
    : device_(device, stages), host_cap_(host), spill_path_(std::move(spill_path)) {
  if (!spill_path_.empty())  // checked before any work, and again when the file is first opened
    refuse_existing(spill_path_);
}

OverflowChain::~OverflowChain() {
  if (spill_.is_open()) {
    spill_.close();
    std::remove(spill_path_.c_str());
  }
}

long OverflowChain::systems() const noexcept {
  return device_.num_systems() + static_cast<long>(host_.size()) +
         static_cast<long>(spill_atoms_.size());
}

std::string OverflowChain::describe() const {
  return "the overflow chain (device batch " +
         counts(device_.capacity().systems, device_.capacity().atoms) +
         (host_cap_.systems > 0 ? "; host buffer " + counts(host_cap_.systems, host_cap_.atoms)
                                : "") +
         (spill_path_.empty() ? "" : "; spill file " + spill_path_) + ")";
}

namespace {
// The operating system's reason for the last failed stream operation ("No space left on device"),
// or "" when it left none.
std::string os_reason() {
  return errno != 0 ? std::string(": ") + std::strerror(errno) : std::string();
}
}  // namespace

void OverflowChain::spill(const systems::HostPacked& w) {
  errno = 0;
  if (!spill_.is_open()) {
    // Its name is this process's own; a file there already is someone else's, never overwritten.
    refuse_existing(spill_path_);
    spill_.open(spill_path_, std::ios::binary | std::ios::in | std::ios::out | std::ios::trunc);
    if (!spill_)
      throw Error("baton::pipeline: cannot create the spill file '" + spill_path_ + "'" +
                  os_reason());
  }
  const std::int64_t sizes[2] = {static_cast<std::int64_t>(w.ints.size()),
                                 static_cast<std::int64_t>(w.reals.size())};
  spill_.seekp(0, std::ios::end);
  spill_.write(reinterpret_cast<const char*>(sizes), sizeof sizes);
  spill_.write(reinterpret_cast<const char*>(w.ints.data()),
               static_cast<std::streamsize>(w.ints.size() * sizeof(std::int64_t)));
  spill_.write(reinterpret_cast<const char*>(w.reals.data()),
               static_cast<std::streamsize>(w.reals.size() * sizeof(double)));
  spill_.flush();
  if (!spill_)
    throw Error("baton::pipeline: writing the spill file '" + spill_path_ + "' failed" +
                os_reason());
  spill_atoms_.push_back(atoms_of(w));
  ++spilled_total_;
}

systems::HostPacked OverflowChain::unspill() {
  std::int64_t sizes[2] = {0, 0};
  errno = 0;
  spill_.seekg(read_at_);
  spill_.read(reinterpret_cast<char*>(sizes), sizeof sizes);
  systems::HostPacked w;
  w.ints.resize(static_cast<std::size_t>(sizes[0]));
  w.reals.resize(static_cast<std::size_t>(sizes[1]));
  spill_.read(reinterpret_cast<char*>(w.ints.data()),
              static_cast<std::streamsize>(w.ints.size() * sizeof(std::int64_t)));
  spill_.read(reinterpret_cast<char*>(w.reals.data()),
              static_cast<std::streamsize>(w.reals.size() * sizeof(double)));
  if (!spill_)
    throw Error("baton::pipeline: reading the spill file '" + spill_path_ + "' back failed" +
                os_reason());
  read_at_ = static_cast<std::int64_t>(spill_.tellg());
  spill_atoms_.pop_front();
  if (spill_atoms_.empty()) {  // all read back: start the file over
    spill_.close();
    spill_.open(spill_path_, std::ios::binary | std::ios::in | std::ios::out | std::ios::trunc);
    read_at_ = 0;
  }
  return w;
}

void OverflowChain::take(systems::SystemsBatch& from) {
  move_held(from, device_, nullptr);
  const std::vector<int> held = slots_with(from, systems::SystemStatus::held);
  if (held.empty() || (host_cap_.systems < 1 && spill_path_.empty()))
    return;
  const std::vector<int> atoms = from.count_on_host();
  std::vector<int> moved;
  for (int s : held) {
    const int a = atoms[static_cast<std::size_t>(s)];
    // Behind earlier spills, a system goes to disk too, so that the chain stays oldest first.
    const bool host_room = spill_atoms_.empty() && host_used_.systems < host_cap_.systems &&
                           host_used_.atoms + a <= host_cap_.atoms;
    if (!host_room && spill_path_.empty())
      break;
    systems::HostPacked w = systems::to_host(systems::pack_systems(from, {s}));
    if (host_room) {
      host_used_ = {host_used_.systems + 1, host_used_.atoms + a};
      host_.push_back(std::move(w));
    } else {
      spill(w);
    }
    moved.push_back(s);
  }
  from.remove(moved);
}

void OverflowChain::refill() {
  // Host entries are older than spilled ones (take() spills behind earlier spills).
  while (!host_.empty() || !spill_atoms_.empty()) {
    const bool from_host = !host_.empty();
    const int a = from_host ? atoms_of(host_.front()) : spill_atoms_.front();
    const systems::BatchCapacity room = device_.free();
    if (room.systems < 1 || room.atoms < a)
      return;
    systems::HostPacked w;
    if (from_host) {
      w = std::move(host_.front());
      host_.pop_front();
      host_used_ = {host_used_.systems - 1, host_used_.atoms - a};
    } else {
      w = unspill();
    }
    const systems::PackedSystems wire = systems::to_device(w, "baton::pipeline::overflow");
    systems::unpack_systems(device_,
                            wire);  // whatever its status: in the chain every system waits to go
  }
}

}  // namespace baton::pipeline::detail
