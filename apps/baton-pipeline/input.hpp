#pragma once
// baton-pipeline's input and results: rank 0 opens the output (checked against this run with
// --resume) and the input (every frame checked before any work), and counts the results as they
// arrive.

#include <baton/baton.hpp>
#include <baton/pipeline/checkpoint.hpp>
#include <boost/program_options.hpp>
#include <memory>
#include <optional>
#include <string>

#include "options.hpp"
#include "stop.hpp"

namespace pipeline_app {

namespace dyn = baton::dynamics;
namespace sys = baton::systems;
namespace pl = baton::pipeline;

/// The checkpoints of running systems (--checkpoint-every) are FILE.part plus this, and plus
/// ".<rank>" for each rank's.
inline constexpr const char* checkpoint_suffix = ".ckpt";

// What the input's systems give a model's calls (--potential torch): their edges at its cutoff.
struct EdgeScan {
  std::int64_t most = 0;        // the most edges of one system
  std::int64_t most_id = 0;     // that system's id
  std::int64_t most_atoms = 0;  // and its atoms
  double density = 0;           // the most edges per atom of one system
  std::int64_t largest = 0;     // the most atoms of one system
  sys::HostSystem densest;      // the system with the most edges (the memory probe's sample)
};

// Rank 0's input and output. The input is streamed: an input file is read one frame at a time
// twice, first to check every frame before any work (exit 2 naming the frame), then by the run.
struct Input {
  std::unique_ptr<pl::SystemSource> source;
  std::unique_ptr<pl::XyzFileSink> file;    // unless --output none
  std::int64_t resumed = 0;                 // systems an earlier run finished (--resume)
  EdgeScan edges;                           // --potential torch with --input
  std::shared_ptr<pl::Checkpoints> resume;  // running systems that go on from a checkpoint
  std::string checkpoint_run;               // this run's description (every rank)
};

/// Rank 0 opens the output (with --resume, the unfinished run's FILE.part, after checking that it
/// is this run's) and then the input; every rank learns whether that worked (exit code 2 if not).
Input open_input(const baton::Communicator& world, const Options& o, const pl::Pipeline& pipeline,
                 const FilePotential& file, const po::variables_map& vm);

// Rank 0: counts the results and their lowest energy, and passes them on to the file (if any).
class Results : public pl::ResultSink {
 public:
  explicit Results(pl::XyzFileSink* file) : file_(file) {}
  void write(const std::vector<sys::HostSystem>& systems) override {
    for (const sys::HostSystem& s : systems) {
      ++count;
      if (s.failed)
        ++failed;
      else
        lowest = std::min(lowest, s.energy);
    }
    if (file_ != nullptr) {
      stop::WriteGuard guard;  // a signal during the write is handled after it
      file_->write(systems);
      guard.written(file_->in_file());
    }
  }
  void finish() override {
    if (file_ != nullptr)
      file_->finish();
  }
  /// Forgets the file (before it is closed and removed).
  void detach() noexcept { file_ = nullptr; }
  long count = 0, failed = 0;
  double lowest = 0;

 private:
  pl::XyzFileSink* file_;
};

}  // namespace pipeline_app
