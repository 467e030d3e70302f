#pragma once
/// \file
/// A pipeline description: stages in order, each with the capacity of the batch it runs on,
/// composed with `|`. It says what runs; the Driver (driver.hpp) says where and runs it.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "baton/dynamics/stage.hpp"
#include "baton/pipeline/driver_options.hpp"
#include "baton/pipeline/hooks.hpp"
#include "baton/systems/systems_batch.hpp"

namespace baton::pipeline {

/// Makes one stage object; called once on every rank that runs the stage.
using StageFactory = std::function<std::unique_ptr<dynamics::Stage>()>;

/// One stage of a pipeline description.
struct StageSpec {
  std::string name;                             ///< as in reports and XYZ keys
  StageFactory make;                            ///< builds the stage on the ranks that run it
  systems::BatchCapacity capacity{256, 16384};  ///< batch of each rank that runs it
  double cost = 0.0;  ///< relative cost per system; 0: ask the stage's cost_estimate()
  /// Called on the ranks that run this stage (hooks.hpp); shared by those ranks' copies of the spec
  /// within a process.
  std::vector<std::shared_ptr<Hook>> hooks;
  /// How the links into this stage complete their hand-offs (both ends); unset:
  /// DriverOptions::mode.
  std::optional<CommMode> mode;
};

/// Makes a StageSpec for a stage type constructed from `args` (copied into the factory).
template <class S, class... Args>
StageSpec make_stage(systems::BatchCapacity capacity, Args... args) {
  StageSpec spec;
  spec.make = [args...] { return std::unique_ptr<dynamics::Stage>(new S(args...)); };
  spec.name = spec.make()->name();
  spec.capacity = capacity;
  return spec;
}

/// The same for a stage class template, its arguments deduced from `args` as in `S s(args...)`:
/// `make_stage<dynamics::FireStage>(capacity, dynamics::Morse{}, fire)` makes a
/// `FireStage<Morse>`.
template <template <class...> class S, class... Args>
StageSpec make_stage(systems::BatchCapacity capacity, Args... args) {
  StageSpec spec;
  spec.make = [args...] { return std::unique_ptr<dynamics::Stage>(new S(args...)); };
  spec.name = spec.make()->name();
  spec.capacity = capacity;
  return spec;
}

/// Stages in order. `a | b` chains two pipelines (or stages) into one, renumbered 0..n-1.
class Pipeline {
 public:
  Pipeline() = default;
  Pipeline(StageSpec stage) { stages_.push_back(std::move(stage)); }  // NOLINT: implicit on purpose
  const std::vector<StageSpec>& stages() const noexcept { return stages_; }
  std::size_t size() const noexcept { return stages_.size(); }
  std::vector<std::string> names() const;

  /// Appends the stages of `other`.
  Pipeline& then(const Pipeline& other) {
    stages_.insert(stages_.end(), other.stages_.begin(), other.stages_.end());
    return *this;
  }

 private:
  std::vector<StageSpec> stages_;
};

/// `a | b`: the stages of a, then those of b, renumbered 0..n-1 (StageSpecs convert to Pipelines).
inline Pipeline operator|(Pipeline a, const Pipeline& b) {
  return std::move(a.then(b));
}

}  // namespace baton::pipeline
