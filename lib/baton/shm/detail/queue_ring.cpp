#include "baton/shm/detail/queue_ring.hpp"

#include <cstring>
#include <new>

namespace baton::detail {

namespace {
constexpr std::uint64_t magic = 0x42544e5152494e47ull;  // "BTNQRING"
static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "the queue needs lock-free (address-free) 64-bit atomics in shared memory");

std::size_t round_up(std::size_t n, std::size_t to) {
  return (n + to - 1) / to * to;
}

// Header line: magic, readers, chunks, chunk_bytes (plain words, written once before sharing).
// Chunk line: published (atomic), kind, size.
constexpr std::size_t kind_offset = 8;
constexpr std::size_t size_offset = 16;
}  // namespace

std::size_t QueueRing::bytes_needed(int readers, std::size_t chunks, std::size_t chunk_bytes) {
  return line + line * static_cast<std::size_t>(readers) +
         chunks * (line + round_up(chunk_bytes, line));
}

QueueRing::QueueRing(std::byte* base, int readers, std::size_t chunks, std::size_t chunk_bytes,
                     SyncHook sync, void* sync_context)
    : base_(base),
      readers_(readers),
      chunks_(chunks),
      chunk_bytes_(chunk_bytes),
      chunk_stride_(line + round_up(chunk_bytes, line)),
      sync_(sync),
      sync_context_(sync_context) {}

void QueueRing::initialise() {
  std::uint64_t header[4] = {magic, static_cast<std::uint64_t>(readers_), chunks_, chunk_bytes_};
  std::memcpy(base_, header, sizeof header);
  for (int r = 0; r < readers_; ++r)
    new (base_ + line * static_cast<std::size_t>(1 + r)) std::atomic<std::uint64_t>(0);
  for (std::size_t c = 0; c < chunks_; ++c)
    new (chunk(c)) std::atomic<std::uint64_t>(0);
  sync();
}

bool QueueRing::header_matches() const noexcept {
  std::uint64_t header[4];
  std::memcpy(header, base_, sizeof header);
  return header[0] == magic && header[1] == static_cast<std::uint64_t>(readers_) &&
         header[2] == chunks_ && header[3] == chunk_bytes_;
}

std::atomic<std::uint64_t>& QueueRing::consumed_counter(int reader) const noexcept {
  return *std::launder(reinterpret_cast<std::atomic<std::uint64_t>*>(
      base_ + line * static_cast<std::size_t>(1 + reader)));
}

std::byte* QueueRing::chunk(std::uint64_t seq) const noexcept {
  return base_ + line * static_cast<std::size_t>(1 + readers_) +
         chunk_stride_ * static_cast<std::size_t>(seq % chunks_);
}

std::atomic<std::uint64_t>& QueueRing::published(std::uint64_t seq) const noexcept {
  return *std::launder(reinterpret_cast<std::atomic<std::uint64_t>*>(chunk(seq)));
}

void QueueRing::sync() const {
  if (sync_ != nullptr)
    sync_(sync_context_);
}

bool QueueRing::all_consumed(std::uint64_t count) const noexcept {
  for (int r = 0; r < readers_; ++r) {
    if (consumed_counter(r).load(std::memory_order_acquire) < count)
      return false;
  }
  return true;
}

bool QueueRing::has_room(std::uint64_t seq) const noexcept {
  return seq < chunks_ || all_consumed(seq + 1 - chunks_);
}

bool QueueRing::wait_for_room(std::uint64_t seq, Clock::duration patience) const {
  return spin_then_yield([&] { return has_room(seq); }, patience);
}

std::vector<int> QueueRing::readers_below(std::uint64_t count) const {
  std::vector<int> behind;
  for (int r = 0; r < readers_; ++r) {
    if (consumed_counter(r).load(std::memory_order_acquire) < count)
      behind.push_back(r);
  }
  return behind;
}

std::vector<int> QueueRing::readers_behind(std::uint64_t seq) const {
  return seq < chunks_ ? std::vector<int>() : readers_below(seq + 1 - chunks_);
}

void QueueRing::publish(std::uint64_t seq, Kind kind, std::size_t size, const void* data) {
  std::byte* c = chunk(seq);
  sync();  // after the acquire loads in has_room(), before the stores below
  const auto k = static_cast<std::uint32_t>(kind);
  const auto n = static_cast<std::uint64_t>(size);
  std::memcpy(c + kind_offset, &k, sizeof k);
  std::memcpy(c + size_offset, &n, sizeof n);
  if (kind == Kind::message && size > 0)
    std::memcpy(c + line, data, size);
  sync();  // the stores above, before the release store that publishes them
  published(seq).store(seq + 1, std::memory_order_release);
}

bool QueueRing::is_published(std::uint64_t seq) const noexcept {
  return published(seq).load(std::memory_order_acquire) == seq + 1;
}

bool QueueRing::wait_published(std::uint64_t seq, Clock::duration patience) const {
  return spin_then_yield([&] { return is_published(seq); }, patience);
}

QueueRing::Slot QueueRing::read(std::uint64_t seq) const {
  sync();  // after the acquire load that saw the message, before reading it
  const std::byte* c = chunk(seq);
  std::uint32_t k = 0;
  std::uint64_t n = 0;
  std::memcpy(&k, c + kind_offset, sizeof k);
  std::memcpy(&n, c + size_offset, sizeof n);
  return Slot{static_cast<Kind>(k), static_cast<std::size_t>(n), c + line};
}

void QueueRing::finish(int reader, std::uint64_t seq) {
  sync();  // every read of the chunk, before the release store that frees it
  consumed_counter(reader).store(seq + 1, std::memory_order_release);
}

std::uint64_t QueueRing::consumed(int reader) const noexcept {
  return consumed_counter(reader).load(std::memory_order_acquire);
}

}  // namespace baton::detail
