#include "baton/shm/gather.hpp"

#include <sys/statvfs.h>
#include <unistd.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>

#include "baton/collectives/agreement.hpp"
#include "baton/collectives/collectives.hpp"
#include "baton/core/check_mpi.hpp"
#include "baton/transport/bytes.hpp"

namespace baton {

namespace {

// The one tag on a NodeGather's own communicator: a remote member's record to the first rank.
constexpr int record_tag = 1;
// Segments are whole pages.
constexpr std::size_t page = 4096;

using HostInts = Kokkos::View<std::int64_t*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;

std::size_t round_to_pages(std::size_t bytes) {
  return bytes > SIZE_MAX - page ? bytes : (bytes + page - 1) / page * page;
}

// True when rank 0 of `comm` is also a rank of `node` (local: MPI_Group_translate_ranks).
bool holds_rank_zero(const Communicator& comm, const Communicator& node) {
  MPI_Group from = MPI_GROUP_NULL, to = MPI_GROUP_NULL;
  int translated = MPI_UNDEFINED;
  const int zero = 0;
  try {
    check_mpi(MPI_Comm_group(comm.raw(), &from), "MPI_Comm_group", comm.raw());
    check_mpi(MPI_Comm_group(node.raw(), &to), "MPI_Comm_group", comm.raw());
    check_mpi(MPI_Group_translate_ranks(from, 1, &zero, to, &translated),
              "MPI_Group_translate_ranks", comm.raw());
  } catch (...) {
    if (from != MPI_GROUP_NULL)
      MPI_Group_free(&from);
    if (to != MPI_GROUP_NULL)
      MPI_Group_free(&to);
    throw;
  }
  MPI_Group_free(&from);
  MPI_Group_free(&to);
  return translated != MPI_UNDEFINED;
}

// Bytes of shared memory that can still be had: what /dev/shm has free (where both Open MPI and
// MPICH keep node shared memory on Linux), else the free physical memory.
std::size_t free_shared_memory() {
  struct statvfs fs {};
  if (statvfs("/dev/shm", &fs) == 0)
    return static_cast<std::size_t>(fs.f_bavail) * static_cast<std::size_t>(fs.f_frsize);
  const long pages = sysconf(_SC_AVPHYS_PAGES);
  const long size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(size)
                               : SIZE_MAX;
}

std::string text_of(const std::exception& e) {
  return e.what();
}

}  // namespace

Record copy_record(const Record& record) {
  return make_record(record.config, record.views);
}

Record make_record(const std::string& config, const ViewBundle& views) {
  Record out;
  out.config = config;
  for (const ViewBundle::Entry& entry : views.entries())
    out.views.put({entry.name, entry.envelope, ByteBuffer(entry.data.data(), entry.data.size())});
  return out;
}

Record EncodedEntry::decode() const {
  if (size == 0)
    return Record();
  try {
    return decode_record(data, size);
  } catch (const std::exception& e) {
    throw Error("baton::EncodedEntry::decode: the record of group rank " + std::to_string(rank) +
                " is not valid: " + text_of(e));
  }
}

NodeGather::NodeGather(const Group& group, NodeGatherOptions options)
    : options_(std::move(options)) {
  if (!group.is_member())
    return;  // non-members take no part
  comm_ = group.comm().duplicate();
  const int size = comm_.size();
  const int me = comm_.rank();
  std::string problem;
  char mine = 0;
  for (int r : options_.remote) {
    if ((r <= 0 || r >= size) && problem.empty()) {
      problem = "baton::NodeGather: NodeGatherOptions::remote lists group rank " +
                std::to_string(r) + "; only ranks 1 to " + std::to_string(size - 1) +
                " of the group can be treated as remote (rank 0 is the first rank)";
    }
  }
  try {
    const Communicator node = comm_.split_node();
    const bool forced =
        std::find(options_.remote.begin(), options_.remote.end(), me) != options_.remote.end();
    mine = holds_rank_zero(comm_, node) && !forced ? 1 : 0;
  } catch (const std::exception& e) {
    if (problem.empty())
      problem = "baton::NodeGather: group rank " + std::to_string(me) + ": " + text_of(e);
  }
  agree_on_failure(comm_, problem, problem.empty() ? 0 : 1);

  // Which members share the first rank's node: each member knows it of itself.
  shared_.assign(static_cast<std::size_t>(size), 0);
  Kokkos::View<char, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> flag(&mine);
  Kokkos::View<char*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> flags(shared_.data(),
                                                                        shared_.size());
  all_gather(comm_, flag, flags);
  node_rank_.assign(static_cast<std::size_t>(size), -1);
  int next = 0;
  for (std::size_t g = 0; g < shared_.size(); ++g) {
    if (shared_[g])
      node_rank_[g] = next++;
  }
  node_ = comm_.split(mine ? 0 : Communicator::undefined, me);
  capacities_.assign(static_cast<std::size_t>(size), 0);
  sizes_.assign(static_cast<std::size_t>(size), 0);
  received_.resize(static_cast<std::size_t>(size));
}

void NodeGather::grow(const std::vector<std::size_t>& needed, bool exact, const char* operation) {
  std::vector<std::size_t> wanted = capacities_;
  for (std::size_t g = 0; g < wanted.size(); ++g) {
    if (shared_[g] && needed[g] > capacities_[g]) {
      const std::size_t old = capacities_[g];
      wanted[g] = round_to_pages(exact ? needed[g] : std::max(needed[g], old + old / 2));
    }
  }
  // Until every member has its new segment, no member has one.
  std::fill(capacities_.begin(), capacities_.end(), std::size_t(0));
  std::size_t total = 0;
  std::size_t largest = 0;
  for (std::size_t g = 0; g < wanted.size(); ++g) {
    total = wanted[g] > SIZE_MAX - total ? SIZE_MAX : total + wanted[g];
    largest = wanted[g] > wanted[largest] ? g : largest;
  }
  const std::string prefix = std::string(operation) + ": cannot allocate node shared memory";
  std::string problem;
  if (!node_.is_null()) {
    try {
      window_.free();  // the old segments first: both need not fit at once
      // Some MPIs (Open MPI's osc/sm) leave the other ranks waiting when one rank's part of
      // MPI_Win_allocate_shared fails, so a request that cannot fit is refused before asking.
      const std::size_t free_bytes = free_shared_memory();
      if (total > free_bytes) {
        problem = prefix + ": the members on the first rank's node need " + std::to_string(total) +
                  " bytes together (group rank " + std::to_string(largest) + " alone " +
                  std::to_string(wanted[largest]) + "), and " + std::to_string(free_bytes) +
                  " are free; gather smaller records, or run fewer ranks per node";
      }
    } catch (const std::exception& e) {
      problem = prefix + ": " + text_of(e);
    }
  }
  agree_on_failure(comm_, problem, problem.empty() ? 0 : 1);
  if (!node_.is_null()) {
    try {
      window_ = NodeWindow(node_, wanted[static_cast<std::size_t>(comm_.rank())], operation);
    } catch (const std::exception& e) {
      problem = prefix + " (" + std::to_string(total) +
                " bytes for the node's members together): " + text_of(e);
    }
  }
  agree_on_failure(comm_, problem, problem.empty() ? 0 : 1);
  capacities_ = std::move(wanted);
}

void NodeGather::reserve(std::size_t bytes) {
  if (!is_member())
    return;
  const auto size = static_cast<std::size_t>(comm_.size());
  std::int64_t mine = static_cast<std::int64_t>(std::min<std::size_t>(bytes, INT64_MAX));
  std::vector<std::int64_t> all(size, 0);
  Kokkos::View<std::int64_t, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> value(&mine);
  all_gather(comm_, value, HostInts(all.data(), size));
  std::vector<std::size_t> needed(size, 0);
  bool grows = false;
  for (std::size_t g = 0; g < size; ++g) {
    needed[g] = shared_[g] ? static_cast<std::size_t>(all[g]) : 0;
    grows = grows || needed[g] > capacities_[g];
  }
  if (grows)
    grow(needed, true, "baton::NodeGather::reserve");
}

void NodeGather::run(const Record& record, Record* movable, Mode mode, const char* operation,
                     std::vector<GatherEntry>* owned, std::vector<EncodedEntry>* encoded) {
  const int me = comm_.rank();
  const auto size = static_cast<std::size_t>(comm_.size());
  const bool first = me == 0;
  const bool shared = shared_[static_cast<std::size_t>(me)] != 0;
  const bool empty = record.config.empty() && record.views.empty();
  const std::size_t bytes = empty ? 0 : encoded_size(record);
  auto on_me = [&](const std::exception& e) {
    return std::string(operation) + ": group rank " + std::to_string(me) + ": " + text_of(e);
  };

  // 1. A remote member encodes into its message now, so that a failure is known before anyone
  //    waits for it.
  std::string problem;
  ByteBuffer message;
  if (!shared && bytes > 0) {
    try {
      message = ByteBuffer(bytes);
      encode_record_into(record, message.data(), message.size());
      if (options_.after_encode)
        options_.after_encode(message.data(), message.size());
    } catch (const std::exception& e) {
      problem = on_me(e);
    }
  }

  // 2. Every member's size (MPI_Gatherv needs counts too), and whether a remote encoding failed.
  std::int64_t mine[2] = {problem.empty() ? 0 : 1, static_cast<std::int64_t>(bytes)};
  std::vector<std::int64_t> all(2 * size, 0);
  all_gather(comm_, HostInts(mine, 2), HostInts(all.data(), all.size()));
  bool failed = false;
  bool grows = false;
  std::vector<std::size_t> needed(size, 0);
  for (std::size_t g = 0; g < size; ++g) {
    failed = failed || all[2 * g] != 0;
    sizes_[g] = all[2 * g + 1];
    // The first rank copies its own record in owned mode: it needs no segment then.
    const bool in_segment = shared_[g] && !(g == 0 && mode == Mode::owned);
    needed[g] = in_segment ? static_cast<std::size_t>(sizes_[g]) : 0;
    grows = grows || needed[g] > capacities_[g];
  }
  if (failed)
    agree_on_failure(comm_, problem, problem.empty() ? 0 : 1);  // throws on every member

  // 3. Shared memory that fits every record on the first rank's node (collective, rarely).
  if (grows)
    grow(needed, false, operation);

  // 4. Members on the first rank's node write their record into their own segment.
  if (shared && needed[static_cast<std::size_t>(me)] > 0) {
    try {
      encode_record_into(record, window_.local(), bytes);
      if (options_.after_encode)
        options_.after_encode(window_.local(), bytes);
    } catch (const std::exception& e) {
      problem = on_me(e);
    }
  }
  // Stores before the agreement, loads after it (NodeWindow's epoch: sync, synchronise, sync).
  if (window_)
    window_.sync();
  agree_on_failure(comm_, problem, problem.empty() ? 0 : 1);
  if (window_)
    window_.sync();

  // 5. Remote members send; the first rank reads every record.
  if (!shared && bytes > 0)
    send(comm_, message, 0, record_tag);
  if (first) {
    std::string corrupt;
    for (std::size_t g = 0; g < size; ++g) {
      const int rank = static_cast<int>(g);
      const auto length = static_cast<std::size_t>(sizes_[g]);
      try {
        const std::byte* data = nullptr;
        Message received;
        if (length == 0) {
          // an empty entry
        } else if (g == 0 && mode == Mode::owned) {
          owned->push_back({rank, movable ? std::move(*movable) : copy_record(record)});
          continue;
        } else if (shared_[g]) {
          data = window_.segment(node_rank_[g]);
        } else {
          received = recv(comm_, rank, record_tag);
          if (received.bytes.size() != length) {
            // Caught below and reported inside the first rank's "baton::NodeGather" message.
            throw std::runtime_error("its message has " + std::to_string(received.bytes.size()) +
                                     " bytes, it announced " + std::to_string(length));
          }
          data = received.bytes.data();
          if (mode == Mode::encoded) {  // kept until the next gather
            received_[g] = std::move(received.bytes);
            data = received_[g].data();
          }
        }
        if (mode == Mode::encoded) {
          encoded->push_back({rank, data, length});
        } else {
          owned->push_back({rank, length ? decode_record(data, length) : Record()});
        }
      } catch (const std::exception& e) {
        if (!corrupt.empty())
          corrupt += "; ";
        corrupt += "group rank " + std::to_string(rank) + ": " + text_of(e);
      }
    }
    if (!corrupt.empty()) {
      problem =
          std::string(operation) + ": the first rank could not read every record (" + corrupt + ")";
    }
  }
  // 6. Every member learns whether the first rank read everything; then the segments are free.
  agree_on_failure(comm_, problem, problem.empty() ? 0 : 1);
}

std::vector<GatherEntry> NodeGather::gather(const Record& record) {
  std::vector<GatherEntry> out;
  if (!is_member())
    return out;
  if (is_first())
    out.reserve(static_cast<std::size_t>(size()));
  run(record, nullptr, Mode::owned, "baton::NodeGather::gather", &out, nullptr);
  return out;
}

std::vector<GatherEntry> NodeGather::gather(Record&& record) {
  std::vector<GatherEntry> out;
  if (!is_member())
    return out;
  if (is_first())
    out.reserve(static_cast<std::size_t>(size()));
  run(record, &record, Mode::owned, "baton::NodeGather::gather", &out, nullptr);
  return out;
}

std::vector<EncodedEntry> NodeGather::gather_encoded(const Record& record) {
  std::vector<EncodedEntry> out;
  if (!is_member())
    return out;
  for (ByteBuffer& b : received_)
    b = ByteBuffer();
  if (is_first())
    out.reserve(static_cast<std::size_t>(size()));
  run(record, nullptr, Mode::encoded, "baton::NodeGather::gather_encoded", nullptr, &out);
  return out;
}

std::vector<GatherEntry> gather_to_first(const Group& group, const Record& record,
                                         const NodeGatherOptions& options) {
  if (!group.is_member())
    return {};
  NodeGather gather(group, options);
  return gather.gather(record);
}

std::vector<GatherEntry> gather_to_first(const Group& group, Record&& record,
                                         const NodeGatherOptions& options) {
  if (!group.is_member())
    return {};
  NodeGather gather(group, options);
  return gather.gather(std::move(record));
}

std::vector<GatherEntry> gather_to_first(const Group& group, const std::string& config,
                                         const ViewBundle& views,
                                         const NodeGatherOptions& options) {
  if (!group.is_member())
    return {};
  return gather_to_first(group, make_record(config, views), options);  // moved on the first
}

}  // namespace baton
