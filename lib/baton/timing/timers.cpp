#include "baton/timing/timers.hpp"

#include <chrono>
#include <utility>

#include "baton/core/check_mpi.hpp"
#include "baton/core/config.hpp"
#include "baton/transport/bytes.hpp"
#include "baton/transport/serialize.hpp"
#if defined(BATON_HAVE_CUDA) && __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>
#define BATON_NVTX 1
#elif defined(BATON_HAVE_CUDA) && __has_include(<nvToolsExt.h>)
#include <nvToolsExt.h>
#define BATON_NVTX 1
#endif

namespace baton {

TimerRegistry::TimerRegistry() : origin_(now()) {}

double TimerRegistry::now() noexcept {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

StepRecord& TimerRegistry::step(const std::string& name) {
  for (StepRecord& s : steps_) {
    if (s.name == name)
      return s;
  }
  steps_.push_back(StepRecord{name, {}, {}});
  dropped_.emplace_back(0.0, 0);
  return steps_.back();
}

void TimerRegistry::record(const std::string& name, double start, double duration) {
  StepRecord& s = step(name);
  if (limit_ > 0 && s.durations.size() >= limit_) {
    auto& d = dropped_[static_cast<std::size_t>(&s - steps_.data())];
    d.first += duration;
    d.second += 1;
    return;
  }
  s.starts.push_back(start - origin_);
  s.durations.push_back(duration);
}

double TimerRegistry::total(const std::string& name) const {
  double sum = 0.0;
  for (std::size_t i = 0; i < steps_.size(); ++i)
    if (steps_[i].name == name) {
      for (double d : steps_[i].durations)
        sum += d;
      sum += dropped_[i].first;
    }
  return sum;
}

std::size_t TimerRegistry::dropped_iterations() const noexcept {
  std::size_t n = 0;
  for (const auto& d : dropped_)
    n += d.second;
  return n;
}

ScopedTimer TimerRegistry::scope(const std::string& name) {
  return ScopedTimer(*this, name);
}

ScopedTimer::ScopedTimer(TimerRegistry& registry, std::string step)
    : registry_(&registry), step_(std::move(step)), start_(TimerRegistry::now()) {
#ifdef BATON_NVTX
  nvtxRangePushA(step_.c_str());
#endif
}

ScopedTimer::ScopedTimer(ScopedTimer&& other) noexcept
    : registry_(std::exchange(other.registry_, nullptr)),
      step_(std::move(other.step_)),
      start_(other.start_) {}

double ScopedTimer::stop() {
  if (registry_ == nullptr)
    return 0;
  const double duration = TimerRegistry::now() - start_;
  registry_->record(step_, start_, duration);
  registry_ = nullptr;
#ifdef BATON_NVTX
  nvtxRangePop();
#endif
  return duration;
}

ScopedTimer::~ScopedTimer() {
  try {
    stop();
  } catch (...) {
    // out of memory while recording: the iteration is lost, the program goes on
  }
}

namespace {
ByteBuffer encode(const TimerRegistry& timers) {
  ByteWriter out;
  out.write_size(timers.steps().size());
  for (const StepRecord& s : timers.steps()) {
    out.write_object(s.name);
    out.write_object(s.starts);
    out.write_object(s.durations);
  }
  const auto& bytes = out.bytes();
  return ByteBuffer(bytes.data(), bytes.size());
}

RankRecord decode(int rank, const std::byte* data, std::size_t size) {
  ByteReader in(data, size);
  RankRecord record{rank, {}};
  const std::uint64_t steps = in.read_count(1);
  for (std::uint64_t i = 0; i < steps; ++i) {
    StepRecord s;
    s.name = in.read_object<std::string>();
    s.starts = in.read_object<std::vector<double>>();
    s.durations = in.read_object<std::vector<double>>();
    record.steps.push_back(std::move(s));
  }
  in.expect_end();
  return record;
}
}  // namespace

std::vector<RankRecord> gather_records(const Communicator& comm, const TimerRegistry& timers,
                                       int root) {
  check_rank(comm, root, "baton::gather_records");
  const ByteBuffer mine = encode(timers);
  const int length = static_cast<int>(mine.size());
  const bool is_root = comm.rank() == root;
  std::vector<int> lengths(is_root ? comm.size() : 0), offsets(lengths.size());
  check_mpi(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, root, comm.raw()),
            "MPI_Gather", comm.raw());
  std::size_t total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = static_cast<int>(total);
    total += static_cast<std::size_t>(lengths[r]);
  }
  ByteBuffer all(total);
  check_mpi(MPI_Gatherv(mine.data(), length, MPI_BYTE, all.data(), lengths.data(), offsets.data(),
                        MPI_BYTE, root, comm.raw()),
            "MPI_Gatherv", comm.raw());
  std::vector<RankRecord> records;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    records.push_back(
        decode(static_cast<int>(r), all.data() + offsets[r], static_cast<std::size_t>(lengths[r])));
  }
  return records;
}

}  // namespace baton
