// Baton's libtorch plugin (baton_torch_plugin): the only Baton source that includes libtorch's
// headers, built as a module that load_torch_model() opens with dlopen. It links libtorch and
// nothing of Baton or Kokkos (see detail/torch_plugin.hpp): errors come back as text.
#include "baton/models/detail/torch_plugin.hpp"

#include <c10/core/CPUAllocator.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/script.h>
#ifdef BATON_TORCH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <vector>

namespace {

using baton::models::detail::TorchArrays;
using baton::models::detail::TorchPlugin;

/// A failure to report (one line).
struct Problem {
  std::string what;
};

/// The first line of libtorch's message (its messages carry a C++ or TorchScript backtrace).
std::string first_line(const std::string& text) {
  const std::size_t end = text.find('\n');
  return end == std::string::npos ? text : text.substr(0, end);
}

std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> names;
  std::string name;
  for (const char c : text + " ") {
    if (c == ' ' || c == ',' || c == '\t' || c == '\n') {
      if (!name.empty())
        names.push_back(name);
      name.clear();
    } else {
      name += c;
    }
  }
  return names;
}

struct Model {
  torch::jit::Module module;
  torch::Dtype dtype = torch::kFloat64;
  torch::Device device = torch::Device(torch::kCPU);
};

/// The model's energy, forces [N, 3] and virial [S, 3, 3] (float64) for one call's tensors: what
/// it does not return, by autograd through the positions and a symmetric strain of positions and
/// cells (as NequIP's own stress output does).
struct Results {
  torch::Tensor energy, forces, virial;
};
Results run(Model& m, std::int64_t n, std::int64_t s, torch::Tensor pos, torch::Tensor cell,
            const torch::Tensor& batch, const torch::Tensor& edge_index, torch::Tensor shift,
            const torch::Tensor& atom_types, const torch::Tensor& ptr, const torch::Tensor& pbc) {
  const auto dev = torch::TensorOptions().device(m.device);
  pos = pos.to(m.dtype).detach().requires_grad_(true);
  cell = cell.to(m.dtype);
  shift = shift.to(m.dtype);
  const torch::Tensor strain = torch::zeros({s, 3, 3}, dev.dtype(m.dtype)).requires_grad_(true);
  const torch::Tensor sym = 0.5 * (strain + strain.transpose(1, 2));
  c10::Dict<std::string, torch::Tensor> data;
  data.insert("pos", pos + torch::bmm(pos.unsqueeze(1), sym.index_select(0, batch)).squeeze(1));
  data.insert("edge_index", edge_index);
  data.insert("edge_cell_shift", shift);
  data.insert("cell", cell + torch::bmm(cell, sym));
  data.insert("atom_types", atom_types);
  data.insert("batch", batch);
  data.insert("ptr", ptr);
  data.insert("pbc", pbc);

  const c10::IValue result = m.module.forward({c10::IValue(data)});
  if (!result.isGenericDict())
    throw Problem{std::string("the model returned a ") + result.tagKind() +
                  ", not a Dict[str, Tensor]"};
  const c10::impl::GenericDict dict = result.toGenericDict();
  const auto get = [&](const char* key) -> torch::Tensor {
    const auto it = dict.find(c10::IValue(std::string(key)));
    return it == dict.end() ? torch::Tensor() : it->value().toTensor();
  };
  Results r{get("total_energy"), get("forces"), get("virial")};
  if (!r.energy.defined())
    throw Problem{"the model's output has no total_energy"};
  if (r.energy.numel() != s)
    throw Problem{"the model's total_energy has " + std::to_string(r.energy.numel()) +
                  " values for " + std::to_string(s) + " systems (shape [S] or [S, 1] expected)"};
  r.energy = r.energy.reshape({s});
  const bool grad_forces = !r.forces.defined(), grad_virial = !r.virial.defined();
  if (grad_forces || grad_virial) {
    if (!r.energy.requires_grad())
      throw Problem{
          "the model's total_energy does not depend on pos, and the model returns no "
          "forces and virial to use instead"};
    std::vector<torch::Tensor> leaves;
    if (grad_forces)
      leaves.push_back(pos);
    if (grad_virial)
      leaves.push_back(strain);
    const auto grads = torch::autograd::grad({r.energy.sum()}, leaves, {}, false, false, true);
    std::size_t g = 0;
    if (grad_forces) {
      r.forces = grads[g].defined() ? -grads[g] : torch::zeros({n, 3}, dev.dtype(m.dtype));
      ++g;
    }
    if (grad_virial)
      r.virial = grads[g].defined() ? -grads[g] : torch::zeros({s, 3, 3}, dev.dtype(m.dtype));
  }
  if (r.forces.numel() != 3 * n)
    throw Problem{"the model's forces have " + std::to_string(r.forces.numel()) + " values for " +
                  std::to_string(n) + " atoms ([N, 3] expected)"};
  if (r.virial.numel() != 9 * s)
    throw Problem{"the model's virial has " + std::to_string(r.virial.numel()) + " values for " +
                  std::to_string(s) + " systems ([S, 3, 3] expected)"};
  torch::NoGradGuard no_grad;
  r.energy = r.energy.detach().to(torch::kFloat64);
  r.forces = r.forces.detach().reshape({n, 3}).to(torch::kFloat64);
  r.virial = r.virial.detach().reshape({s, 3, 3}).to(torch::kFloat64);
  return r;
}

/// One call on two atoms of the first species at half the cutoff: a model whose output does not
/// follow the convention fails here, when it is loaded, rather than at its first batch.
void probe(Model& m, double cutoff) {
  const auto dev = torch::TensorOptions().device(m.device);
  const auto f64 = dev.dtype(torch::kFloat64), i64 = dev.dtype(torch::kInt64);
  const torch::Tensor pos =
      torch::tensor({0.0, 0.0, 0.0, 0.5 * cutoff, 0.0, 0.0}, f64).reshape({2, 3});
  run(m, 2, 1, pos, torch::zeros({1, 3, 3}, f64), torch::zeros({2}, i64),
      torch::tensor({0, 1, 1, 0}, i64).reshape({2, 2}), torch::zeros({2, 3}, f64),
      torch::zeros({2}, i64), torch::tensor({0, 2}, i64),
      torch::zeros({1, 3}, dev.dtype(torch::kBool)));
}

void* load(const std::string& file, double cutoff, const std::string& type_names, bool on_device,
           double* cutoff_out, std::string* type_names_out, std::string* dtype_out,
           std::string* error) {
  auto m = std::make_unique<Model>();
  try {
    if (on_device)
      m->device = torch::Device(torch::kCUDA);
    if (!std::ifstream(file))
      throw Problem{"cannot read the model file '" + file + "'"};
    std::unordered_map<std::string, std::string> extra{
        {"r_max", ""}, {"type_names", ""}, {"model_dtype", ""}};
    try {
      m->module = torch::jit::load(file, m->device, extra);
    } catch (const std::exception& e) {
      throw Problem{"'" + file +
                    "' is not a TorchScript model libtorch can load: " + first_line(e.what())};
    }
    m->module.eval();
    // TorchScript's optimising executor profiles the first calls and then runs another graph
    // (fused kernels): the same input would give other last bits from the third call on, so
    // results would depend on how many calls came before. Every call runs the same graph.
    torch::jit::setGraphExecutorOptimize(false);
    if (!(cutoff > 0)) {
      std::istringstream in(extra["r_max"]);
      if (!(in >> cutoff) || !(cutoff > 0) || !std::isfinite(cutoff))
        throw Problem{"'" + file + "' gives no usable cutoff (its _extra_files entry r_max is '" +
                      extra["r_max"] +
                      "'); give one in TorchOptions::cutoff (baton-pipeline: --model-cutoff)"};
    }
    const std::vector<std::string> names =
        split_names(type_names.empty() ? extra["type_names"] : type_names);
    if (names.empty())
      throw Problem{"'" + file +
                    "' names no species (no _extra_files entry type_names); give them in "
                    "TorchOptions::type_names (baton-pipeline: --model-species)"};
    const std::string dtype = extra["model_dtype"];
    if (dtype == "float32") {
      m->dtype = torch::kFloat32;
    } else if (dtype.empty()) {  // the parameters' type, if any
      for (const auto& p : m->module.parameters()) {
        if (p.is_floating_point()) {
          m->dtype = p.scalar_type() == torch::kFloat32 ? torch::kFloat32 : torch::kFloat64;
          break;
        }
      }
    } else if (dtype != "float64") {
      throw Problem{"'" + file + "' has model_dtype '" + dtype +
                    "'; Baton runs float64 and float32 models"};
    }
    try {
      probe(*m, cutoff);
    } catch (const Problem&) {
      throw;
    } catch (const std::exception& e) {
      throw Problem{"the model failed on a dimer: " + first_line(e.what())};
    }
    *cutoff_out = cutoff;
    type_names_out->clear();
    for (const std::string& name : names)
      *type_names_out += (type_names_out->empty() ? "" : " ") + name;
    *dtype_out = m->dtype == torch::kFloat32 ? "float32" : "float64";
    return m.release();
  } catch (const Problem& p) {
    *error = p.what;
  } catch (const std::exception& e) {
    *error = first_line(e.what());
  }
  return nullptr;
}

bool evaluate(void* model, const TorchArrays& a, std::string* error) {
  Model& m = *static_cast<Model*>(model);
  try {
#ifdef BATON_TORCH_CUDA
    // On the device, libtorch runs on the stream of Kokkos' execution space instance, so that the
    // model's kernels follow the gathering kernels and precede the scatter without a fence.
    std::optional<c10::cuda::CUDAStreamGuard> on_stream;
    if (a.on_device && a.stream != nullptr)
      on_stream.emplace(c10::cuda::getStreamFromExternal(static_cast<cudaStream_t>(a.stream),
                                                         c10::cuda::current_device()));
#endif
    const auto dev = torch::TensorOptions().device(m.device);
    const auto f64 = dev.dtype(torch::kFloat64), i64 = dev.dtype(torch::kInt64);
    const std::int64_t n = a.atoms, s = a.systems, e = a.edges;
    const auto wrap = [](const void* p, at::IntArrayRef sizes, torch::TensorOptions o) {
      return torch::from_blob(const_cast<void*>(p), sizes, o);  // read only: never written
    };
    // The arrays wrapped as they are (float64, int64); a float32 model gets converted copies.
    const Results r = run(
        m, n, s, wrap(a.pos, {n, 3}, f64), wrap(a.cell, {s, 3, 3}, f64), wrap(a.batch, {n}, i64),
        torch::from_blob(const_cast<std::int64_t*>(a.edge_index), {2, e}, {a.edge_stride, 1}, i64),
        wrap(a.edge_cell_shift, {e, 3}, f64), wrap(a.atom_types, {n}, i64),
        wrap(a.ptr, {s + 1}, i64), wrap(a.pbc, {s, 3}, dev.dtype(torch::kInt32)).to(torch::kBool));
    torch::NoGradGuard no_grad;
    const torch::Tensor& v = r.virial;
    const torch::Tensor w = torch::stack(
        {v.select(1, 0).select(1, 0), v.select(1, 1).select(1, 1), v.select(1, 2).select(1, 2),
         0.5 * (v.select(1, 0).select(1, 1) + v.select(1, 1).select(1, 0)),
         0.5 * (v.select(1, 0).select(1, 2) + v.select(1, 2).select(1, 0)),
         0.5 * (v.select(1, 1).select(1, 2) + v.select(1, 2).select(1, 1))},
        1);
    torch::from_blob(a.energy, {s}, f64).copy_(r.energy);
    torch::from_blob(a.forces, {n, 3}, f64).copy_(r.forces);
    torch::from_blob(a.virial, {s, 6}, f64).copy_(w);
    return true;
  } catch (const Problem& p) {
    *error = p.what;
  } catch (const std::exception& ex) {
    *error = "the model failed: " + first_line(ex.what());
  }
  return false;
}

void destroy(void* model) {
  delete static_cast<Model*>(model);
}

std::int64_t state_bytes(void* model) {
  const Model& m = *static_cast<Model*>(model);
  std::int64_t bytes = 0;
  for (const auto& p : m.module.parameters())
    bytes += static_cast<std::int64_t>(p.numel()) * static_cast<std::int64_t>(p.element_size());
  for (const auto& b : m.module.buffers())
    bytes += static_cast<std::int64_t>(b.numel()) * static_cast<std::int64_t>(b.element_size());
  return bytes;
}

/// libtorch's CPU allocator with a count of the bytes it holds and the most it held, installed
/// while a memory count runs (every thread's allocations go through it). What it allocated before
/// it was installed is freed through the allocator that allocated it.
class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* inner) : inner_(inner) {}
  c10::DataPtr allocate(std::size_t n) const override {
    auto* block = new Block{inner_->allocate(n), n};
    const std::int64_t now = live_ += static_cast<std::int64_t>(n);
    std::int64_t seen = peak_.load();
    while (now > seen && !peak_.compare_exchange_weak(seen, now)) {
    }
    void* data = block->inner.get();
    return c10::DataPtr(data, block, &release, block->inner.device());
  }
  void reset() { peak_ = live_.load(); }
  std::int64_t peak_above(std::int64_t base) const { return peak_.load() - base; }
  std::int64_t live() const { return live_.load(); }

 private:
  struct Block {
    c10::DataPtr inner;
    std::size_t n;
  };
  static void release(void* ctx) {
    auto* block = static_cast<Block*>(ctx);
    live_ -= static_cast<std::int64_t>(block->n);
    delete block;  // frees through the inner allocator
  }
  c10::Allocator* inner_;
  static std::atomic<std::int64_t> live_, peak_;
};
std::atomic<std::int64_t> CountingAllocator::live_{0};
std::atomic<std::int64_t> CountingAllocator::peak_{0};

struct MemoryCount {
  c10::Allocator* previous = nullptr;
  std::unique_ptr<CountingAllocator> counting;
  std::int64_t base = 0;
};
MemoryCount& memory_count() {
  static MemoryCount count;
  return count;
}

void memory_begin(void* model) {
  const Model& m = *static_cast<Model*>(model);
#ifdef BATON_TORCH_CUDA
  if (m.device.is_cuda()) {
    const int d = c10::cuda::current_device();
    c10::cuda::CUDACachingAllocator::resetPeakStats(d);
    memory_count().base =
        c10::cuda::CUDACachingAllocator::getDeviceStats(d).allocated_bytes[0].current;
    return;
  }
#endif
  (void)m;
  MemoryCount& c = memory_count();
  if (!c.counting) {
    c.previous = c10::GetCPUAllocator();
    c.counting = std::make_unique<CountingAllocator>(c.previous);
  }
  c10::SetCPUAllocator(c.counting.get(), 255);
  c.counting->reset();
  c.base = c.counting->live();
}

std::int64_t memory_end(void* model) {
  const Model& m = *static_cast<Model*>(model);
#ifdef BATON_TORCH_CUDA
  if (m.device.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(c10::cuda::current_device());
    return stats.allocated_bytes[0].peak - memory_count().base;
  }
#endif
  (void)m;
  MemoryCount& c = memory_count();
  if (!c.counting)
    return -1;
  const std::int64_t peak = c.counting->peak_above(c.base);
  c10::SetCPUAllocator(c.previous,
                       255);  // the counting one stays alive: its blocks free through it
  return peak;
}

}  // namespace

extern "C" const TorchPlugin* baton_torch_plugin() {
  static const TorchPlugin plugin{baton::models::detail::torch_plugin_abi,
                                  &load,
                                  &evaluate,
                                  &destroy,
                                  &state_bytes,
                                  &memory_begin,
                                  &memory_end};
  return &plugin;
}
