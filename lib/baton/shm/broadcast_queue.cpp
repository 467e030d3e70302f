#include "baton/shm/broadcast_queue.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "baton/collectives/agreement.hpp"
#include "baton/collectives/collectives.hpp"
#include "baton/core/error.hpp"

namespace baton {

namespace {

constexpr int overflow_tag = 1;
using Kind = detail::QueueRing::Kind;

void window_sync(void* window) {
  static_cast<const NodeWindow*>(window)->sync();
}

/// Every rank passes the same writer and ring shape: the smallest and largest of each agree. (The
/// deadline may differ: it is each rank's own patience.)
void require_same_everywhere(const Communicator& comm, int writer, const QueueOptions& options) {
  const bool bad_deadline =
      !(options.deadline.count() > 0) || !std::isfinite(options.deadline.count());
  double mine[4] = {double(writer), double(options.chunks), double(options.chunk_bytes),
                    double(bad_deadline)};
  double low[4], high[4];
  std::memcpy(low, mine, sizeof mine);
  std::memcpy(high, mine, sizeof mine);
  using Values = Kokkos::View<double[4], Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
  all_reduce(comm, Values(low), ReduceOp::min);
  all_reduce(comm, Values(high), ReduceOp::max);
  if (high[3] != 0)
    throw CollectiveError("baton::BroadcastQueue: every rank's deadline must be a finite time > 0");
  const char* names[3] = {"writer", "chunks", "chunk_bytes"};
  for (int i = 0; i < 3; ++i) {
    if (low[i] != high[i]) {
      throw CollectiveError(std::string("baton::BroadcastQueue: the ranks passed different ") +
                            names[i] + " (from " + std::to_string(low[i]) + " to " +
                            std::to_string(high[i]) + "): every rank must pass the same");
    }
  }
}

std::string list(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks)
    out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
}

/// The ranks of MPI_COMM_WORLD that `ranks` of `comm` are (for messages a person reads).
std::vector<int> world_ranks(const Communicator& comm, const std::vector<int>& ranks) {
  std::vector<int> out(ranks.size(), MPI_UNDEFINED);
  MPI_Group mine = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  if (ranks.empty() || MPI_Comm_group(comm.raw(), &mine) != MPI_SUCCESS)
    return out;
  if (MPI_Comm_group(MPI_COMM_WORLD, &world) == MPI_SUCCESS) {
    MPI_Group_translate_ranks(mine, static_cast<int>(ranks.size()), ranks.data(), world,
                              out.data());
    MPI_Group_free(&world);
  }
  MPI_Group_free(&mine);
  return out;
}

std::string ranks_text(const Communicator& comm, const std::vector<int>& ranks) {
  std::string text = (ranks.size() == 1 ? "rank " : "ranks ") + list(ranks);
  const std::vector<int> world = world_ranks(comm, ranks);
  if (world != ranks && world.end() == std::find(world.begin(), world.end(), MPI_UNDEFINED))
    text += " (MPI_COMM_WORLD " + list(world) + ")";
  return text;
}

}  // namespace

BroadcastQueue::BroadcastQueue(const Communicator& comm, int writer, QueueOptions options)
    : comm_(comm.duplicate()), writer_(writer), options_(options) {
  require_same_everywhere(comm_, writer, options);
  // The values agree on every rank, so these checks throw alike everywhere.
  if (writer < 0 || writer >= comm_.size()) {
    throw CollectiveError("baton::BroadcastQueue: writer " + std::to_string(writer) +
                          " is not a rank of the communicator (size " +
                          std::to_string(comm_.size()) + ")");
  }
  if (options.chunks < 1 || options.chunks > (1u << 20))
    throw CollectiveError("baton::BroadcastQueue: chunks must be 1 to 2^20, not " +
                          std::to_string(options.chunks));
  if (options.chunk_bytes > (std::size_t(1) << 30))
    throw CollectiveError("baton::BroadcastQueue: chunk_bytes must be at most 1 GiB, not " +
                          std::to_string(options.chunk_bytes));
  const int reader_count = comm_.size() - 1;
  const std::size_t bytes =
      detail::QueueRing::bytes_needed(reader_count, options.chunks, options.chunk_bytes);
  window_ = NodeWindow(comm_, is_writer() ? bytes : 0, "baton::BroadcastQueue");
  ring_ = detail::QueueRing(window_.segment(writer_), reader_count, options.chunks,
                            options.chunk_bytes, &window_sync, &window_);
  if (is_writer())
    ring_.initialise();
  window_.barrier();
  const bool matches = ring_.header_matches();
  agree_on_failure(comm_,
                   matches ? ""
                           : "baton::BroadcastQueue: the ring's header in shared memory "
                             "does not match this rank's options",
                   matches ? 0 : 1);
}

BroadcastQueue::~BroadcastQueue() {
  if (is_writer() && !closed_ && ring_.has_room(next_)) {
    try {
      ring_.publish(next_, Kind::abandoned, 0, nullptr);
    } catch (...) {
    }
  }
  // A send whose reader never took it (that reader failed) cannot complete: leak its buffer rather
  // than wait forever in ~SendHandle.
  for (SendHandle& send : pending_) {
    bool done = false;
    try {
      done = send.test();
    } catch (...) {
    }
    if (!done)
      new SendHandle(std::move(send));  // never deleted: MPI may still read its buffer
  }
  pending_.clear();
  // window_ is freed by its destructor (collective), then comm_.
}

void BroadcastQueue::require_writer(const char* operation) const {
  if (!is_writer()) {
    throw Error(std::string("baton::BroadcastQueue::") + operation + ": rank " +
                std::to_string(comm_.rank()) + " is a reader; only the writer (rank " +
                std::to_string(writer_) + ") may call it");
  }
  if (closed_) {
    throw Error(std::string("baton::BroadcastQueue::") + operation +
                ": the queue is closed (close() was called)");
  }
}

void BroadcastQueue::require_reader(const char* operation) const {
  if (is_writer()) {
    throw Error(std::string("baton::BroadcastQueue::") + operation + ": rank " +
                std::to_string(comm_.rank()) + " is the writer; only readers may call it");
  }
}

std::chrono::steady_clock::duration BroadcastQueue::patience() const {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(options_.deadline);
}

void BroadcastQueue::throw_readers_behind(const char* operation, std::uint64_t count) const {
  std::vector<int> stuck;
  for (int reader : ring_.readers_below(count))
    stuck.push_back(comm_rank_of_reader(reader));
  throw Error(std::string("baton::BroadcastQueue::") + operation + ": reader " +
              ranks_text(comm_, stuck) + " did not consume message " + std::to_string(count - 1) +
              " within " + std::to_string(options_.deadline.count()) + " s (the writer, rank " +
              std::to_string(writer_) + ", waited for it" +
              (std::string(operation) == "push"
                   ? " to free a chunk of the full ring of " + std::to_string(options_.chunks) + ")"
                   : ")"));
}

template <class Ready>
bool BroadcastQueue::wait_writer(Ready&& ready) {
  // While sends are in flight, each poll also tests the oldest: some MPIs (MPICH) move a large
  // message only while its sender calls MPI, and a reader waiting for it holds up the ring.
  return detail::spin_then_yield(
      [&] {
        if (!pending_.empty())
          complete_sends(false);
        return ready();
      },
      patience());
}

void BroadcastQueue::wait_for_room(const char* operation) {
  if (!wait_writer([&] { return ring_.has_room(next_); }))
    throw_readers_behind(operation, next_ + 1 - options_.chunks);
}

void BroadcastQueue::complete_sends(bool all) {
  while (!pending_.empty()) {
    if (all)
      pending_.front().wait();
    else if (!pending_.front().test())
      return;
    pending_.pop_front();
  }
}

void BroadcastQueue::push(const void* data, std::size_t size) {
  require_writer("push");
  if (size > 0 && data == nullptr)
    throw Error("baton::BroadcastQueue::push: data is null for a message of " +
                std::to_string(size) + " bytes");
  wait_for_room("push");
  if (size <= options_.chunk_bytes) {
    ring_.publish(next_, Kind::message, size, data);
  } else {
    // Too large for a chunk: one MPI send per reader from one shared copy; the ring carries a
    // marker in the message's place, so readers take it in order.
    auto copy = std::make_shared<ByteBuffer>(static_cast<const std::byte*>(data), size);
    for (int reader = 0; reader < readers(); ++reader) {
      pending_.emplace_back(comm_, copy, copy->data(), size, comm_rank_of_reader(reader),
                            overflow_tag);
    }
    ring_.publish(next_, Kind::overflow, size, nullptr);
  }
  ++next_;
  complete_sends(false);
}

bool BroadcastQueue::pop(std::vector<std::byte>& message) {
  require_reader("pop");
  if (closed_)
    return false;
  if (!ring_.wait_published(next_, patience())) {
    throw Error("baton::BroadcastQueue::pop: rank " + std::to_string(comm_.rank()) +
                " received nothing from the writer (" + ranks_text(comm_, {writer_}) + ") within " +
                std::to_string(options_.deadline.count()) + " s (waiting for message " +
                std::to_string(next_) + ")");
  }
  const detail::QueueRing::Slot slot = ring_.read(next_);
  const int reader = comm_.rank() < writer_ ? comm_.rank() : comm_.rank() - 1;
  switch (slot.kind) {
    case Kind::message:
      message.resize(slot.size);
      if (slot.size > 0)
        std::memcpy(message.data(), slot.payload, slot.size);
      break;
    case Kind::overflow: {
      detail::Matched matched =
          detail::mprobe(comm_, writer_, overflow_tag, "baton::BroadcastQueue::pop");
      if (matched.info.size != slot.size) {
        message.resize(matched.info.size);
        detail::mrecv_bytes(comm_, matched, message.data());
        throw Error("baton::BroadcastQueue::pop: message " + std::to_string(next_) + " has " +
                    std::to_string(matched.info.size) + " bytes, the ring announced " +
                    std::to_string(slot.size));
      }
      message.resize(slot.size);
      detail::mrecv_bytes(comm_, matched, message.data());
      break;
    }
    case Kind::closed:
      ring_.finish(reader, next_);
      closed_ = true;
      return false;
    case Kind::abandoned:
      throw Error("baton::BroadcastQueue::pop: the writer (" + ranks_text(comm_, {writer_}) +
                  ") abandoned the stream after " + std::to_string(next_) +
                  " messages (its queue was destroyed without close(), e.g. by an exception)");
    default:
      throw Error("baton::BroadcastQueue::pop: message " + std::to_string(next_) +
                  " has an unknown kind in shared memory");
  }
  ring_.finish(reader, next_);
  ++next_;
  return true;
}

std::optional<std::vector<std::byte>> BroadcastQueue::pop() {
  std::vector<std::byte> message;
  if (!pop(message))
    return std::nullopt;
  return message;
}

void BroadcastQueue::drain() {
  require_writer("drain");
  if (!wait_writer([&] { return ring_.all_consumed(next_); }))
    throw_readers_behind("drain", next_);
}

void BroadcastQueue::close() {
  if (!is_writer() || closed_)
    return;
  wait_for_room("close");
  ring_.publish(next_, Kind::closed, 0, nullptr);
  ++next_;
  closed_ = true;
  if (!wait_writer([&] { return ring_.all_consumed(next_); }))
    throw_readers_behind("close", next_);
  complete_sends(true);  // every reader took its sends before consuming the end
}

}  // namespace baton
