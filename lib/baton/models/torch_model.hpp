#pragma once
/// \file
/// A TorchScript model file as a batch model (dynamics/model.hpp), through libtorch: the batched
/// NequIP/Allegro convention (docs/models.md has the table of keys). This header does not include
/// libtorch's; Baton built without libtorch (BATON_ENABLE_TORCH=OFF, or AUTO where CMake found no
/// Torch) still has it, and load_torch_model() then throws, saying how to enable it.

#include <memory>
#include <string>
#include <vector>

#include "baton/dynamics/model.hpp"

namespace baton::models {

/// Where the model is, and what to take from it.
struct TorchOptions {
  std::string file;  ///< the TorchScript file (torch.jit.save)
  /// Interaction cutoff; <= 0: the file's `r_max` (an _extra_files entry, as NequIP deploys).
  double cutoff = 0;
  /// Species names, in the order of the model's atom_types; empty: the file's `type_names`
  /// (space- or comma-separated).
  std::vector<std::string> type_names;
};

/// A TorchScript model. evaluate() calls its forward() with a Dict[str, Tensor] of the keys pos,
/// edge_index, edge_cell_shift, cell, atom_types, batch, ptr and pbc; it must return a dict with
/// total_energy ([S] or [S, 1]) and may return forces ([N, 3]) and virial ([S, 3, 3], -dE/dstrain):
/// what it does not return is taken from total_energy by autograd (with respect to the positions,
/// and to a symmetric strain of positions and cells). float64 or float32, as the model's
/// parameters are (or its `model_dtype` entry says).
class TorchModel : public dynamics::BatchModel {
 public:
  /// Loads the file; throws baton::Error with libtorch's reason in one line when it is missing or
  /// not a TorchScript model, or when it gives no cutoff or species names and `options` neither.
  explicit TorchModel(const TorchOptions& options);
  ~TorchModel() override;
  TorchModel(const TorchModel&) = delete;
  TorchModel& operator=(const TorchModel&) = delete;

  double cutoff() const override;
  /// The species names, index = atom_types value.
  const std::vector<std::string>& type_names() const;
  /// "float64" or "float32".
  std::string dtype() const;
  void evaluate(const dynamics::ModelInputs& in, const dynamics::ModelOutputs& out) override;
  /// Bytes of the model's parameters and buffers.
  std::int64_t state_bytes() const override;
  /// Counts what libtorch allocates while the model runs: on the host through a counting CPU
  /// allocator installed until end_memory_count(), on a GPU from the CUDA caching allocator's
  /// peak statistics.
  void begin_memory_count() override;
  std::int64_t end_memory_count() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Whether this Baton was built with libtorch.
bool torch_enabled();
/// The libtorch version Baton was built with ("1.13.0"), or "" without libtorch.
std::string torch_version();

/// A Model handle over a TorchModel loaded from `options` (baton::Error as TorchModel()).
std::shared_ptr<TorchModel> load_torch_model(const TorchOptions& options);

}  // namespace baton::models
