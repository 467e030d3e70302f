#pragma once
/// \file
/// Internal: what Baton's libtorch plugin (baton_torch_plugin, loaded with dlopen by
/// load_torch_model) exports. Only plain pointers and std::strings cross: the plugin links libtorch
/// and nothing of Baton or Kokkos, so that a program pays for libtorch (hundreds of shared
/// libraries, about a second to load) only when it loads a model.

#include <cstdint>
#include <string>

namespace baton::models::detail {

/// One call's arrays (row-major, float64 and int64 as in dynamics::ModelInputs and ModelOutputs).
struct TorchArrays {
  std::int64_t atoms = 0, systems = 0, edges = 0;
  const double* pos = nullptr;               // [N][3]
  const std::int64_t* atom_types = nullptr;  // [N]
  const std::int64_t* batch = nullptr;       // [N]
  const std::int64_t* ptr = nullptr;         // [S + 1]
  const double* cell = nullptr;              // [S][9]
  const int* pbc = nullptr;                  // [S][3]
  const std::int64_t* edge_index = nullptr;  // [2][edge_stride]
  std::int64_t edge_stride = 0;
  const double* edge_cell_shift = nullptr;  // [E][3]
  double* energy = nullptr;                 // [S]
  double* forces = nullptr;                 // [N][3]
  double* virial = nullptr;                 // [S][6]
  bool on_device = false;                   // the arrays are in CUDA device memory
  void* stream = nullptr;                   // on the device: the cudaStream_t libtorch runs on
};

/// The plugin's functions; each reports a problem in *error (one line) and returns null / false.
struct TorchPlugin {
  int abi = 0;  ///< torch_plugin_abi
  /// Loads `file`; cutoff > 0 and type_names (space-separated) override the file's entries.
  void* (*load)(const std::string& file, double cutoff, const std::string& type_names,
                bool on_device, double* cutoff_out, std::string* type_names_out,
                std::string* dtype_out, std::string* error) = nullptr;
  bool (*evaluate)(void* model, const TorchArrays& arrays, std::string* error) = nullptr;
  void (*destroy)(void* model) = nullptr;
  /// Bytes of the model's parameters and buffers.
  std::int64_t (*state_bytes)(void* model) = nullptr;
  /// Counting of the bytes libtorch allocates (the CPU allocator, or the CUDA caching allocator's
  /// statistics for a model on a GPU): begin, then the most held at once since (-1: cannot count).
  void (*memory_begin)(void* model) = nullptr;
  std::int64_t (*memory_end)(void* model) = nullptr;
};

inline constexpr int torch_plugin_abi = 2;

}  // namespace baton::models::detail

/// The plugin's one exported symbol.
extern "C" const baton::models::detail::TorchPlugin* baton_torch_plugin();
