#pragma once
/// \file
/// Where a pipeline's input systems come from. The driver pulls them on rank 0, one at a time, only
/// as batches open room: a campaign of any length runs in memory bounded by the batches, never by
/// the campaign.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "baton/systems/host_system.hpp"
#include "baton/systems/xyz.hpp"

namespace baton::pipeline {

/// A stream of input systems, read on rank 0 only.
class SystemSource {
 public:
  virtual ~SystemSource() = default;
  /// The next system, or nullopt when there are no more. May throw baton::Error (bad input): the
  /// run then stops on every rank with that message.
  virtual std::optional<systems::HostSystem> next() = 0;
  /// How many systems next() will give, if known (-1: unknown); for progress reports.
  virtual std::int64_t count() const { return -1; }
  /// The most atoms of any system next() will give, if known (-1: unknown). When known, setup()
  /// checks every capacity against it before any work; otherwise each system is checked as it is
  /// read.
  virtual std::int64_t largest() const { return -1; }
  /// Species labels next() will use, if known (named on every rank from the start, in this order;
  /// others are named as they come, and reach the other ranks with the systems that use them).
  virtual std::vector<std::string> species() const { return {}; }
};

/// The systems of a vector, in order, each moved out as it is taken.
class VectorSource : public SystemSource {
 public:
  explicit VectorSource(std::vector<systems::HostSystem> systems);
  std::optional<systems::HostSystem> next() override;
  std::int64_t count() const override { return static_cast<std::int64_t>(systems_.size()); }
  std::int64_t largest() const override { return largest_; }
  std::vector<std::string> species() const override;
  /// What is wrong with the first system that cannot be loaded ("input system 3 has ..."), or "".
  std::string problem() const;

 private:
  std::vector<systems::HostSystem> systems_;
  std::size_t next_ = 0;
  std::int64_t largest_ = 0;
};

/// Systems from a callback (a generator): each call returns the next, nullopt at the end.
class FunctionSource : public SystemSource {
 public:
  using Next = std::function<std::optional<systems::HostSystem>()>;
  explicit FunctionSource(Next next, std::int64_t count = -1, std::int64_t largest = -1,
                          std::vector<std::string> species = {})
      : next_(std::move(next)), count_(count), largest_(largest), species_(std::move(species)) {}
  std::optional<systems::HostSystem> next() override { return next_(); }
  std::int64_t count() const override { return count_; }
  std::int64_t largest() const override { return largest_; }
  std::vector<std::string> species() const override { return species_; }

 private:
  Next next_;
  std::int64_t count_;
  std::int64_t largest_;
  std::vector<std::string> species_;
};

/// The frames of an extended-XYZ file, read one at a time (systems::XyzReader). `check` (if
/// given) sees each system first and may complete it (e.g. masses) or return what is wrong with
/// it; the error then names the file, the line and the system. Systems whose id is in `skip`
/// (sorted) are passed over (a resumed run: their results are written already). `count`,
/// `largest` and `species`, when the caller knows them (e.g. from a first pass over the file),
/// are what count(), largest() and species() say.
class XyzFileSource : public SystemSource {
 public:
  using Check = std::function<std::string(systems::HostSystem&)>;
  explicit XyzFileSource(const std::string& path, Check check = {},
                         std::vector<std::int64_t> skip = {}, std::int64_t count = -1,
                         std::int64_t largest = -1, std::vector<std::string> species = {});
  std::optional<systems::HostSystem> next() override;
  std::int64_t count() const override { return count_; }
  std::int64_t largest() const override { return largest_; }
  std::vector<std::string> species() const override { return species_; }
  /// Systems passed over because their id was in `skip`.
  std::int64_t skipped() const noexcept { return skipped_; }

 private:
  std::string path_;
  systems::XyzReader reader_;
  Check check_;
  std::vector<std::int64_t> skip_;
  std::int64_t count_, largest_;
  std::vector<std::string> species_;
  std::int64_t skipped_ = 0;
};

}  // namespace baton::pipeline
