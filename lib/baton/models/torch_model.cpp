// The libtorch backend of TorchModel: the only Baton file that includes libtorch's headers.
#include "baton/models/torch_model.hpp"

#include <torch/csrc/autograd/autograd.h>
#include <torch/script.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "baton/core/error.hpp"

namespace baton::models {

namespace {

constexpr const char* who = "baton::models::TorchModel";

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

/// Where Baton's Views are: the CPU for host memory spaces, else the current CUDA device.
torch::Device views_device() {
  using Space = systems::SystemsBatch::memory_space;
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, Space>::accessible)
    return torch::Device(torch::kCPU);
  else
    return torch::Device(torch::kCUDA);
}

}  // namespace

struct TorchModel::Impl {
  torch::jit::Module module;
  double cutoff = 0;
  std::vector<std::string> type_names;
  torch::Dtype dtype = torch::kFloat64;
  torch::Device device = views_device();
};

TorchModel::TorchModel(const TorchOptions& options) : impl_(std::make_unique<Impl>()) {
  if (!std::ifstream(options.file))
    throw Error(std::string(who) + ": cannot read the model file '" + options.file + "'");
  std::unordered_map<std::string, std::string> extra{
      {"r_max", ""}, {"type_names", ""}, {"model_dtype", ""}};
  try {
    impl_->module = torch::jit::load(options.file, impl_->device, extra);
  } catch (const std::exception& e) {
    throw Error(std::string(who) + ": '" + options.file +
                "' is not a TorchScript model libtorch can load: " + first_line(e.what()));
  }
  impl_->module.eval();
  // TorchScript's optimising executor profiles the first calls and then runs another graph (fused
  // kernels): the same input would give other last bits from the third call on, so results would
  // depend on how many calls came before. Every call runs the same graph.
  torch::jit::setGraphExecutorOptimize(false);
  impl_->cutoff = options.cutoff;
  if (!(impl_->cutoff > 0)) {
    std::istringstream in(extra["r_max"]);
    if (!(in >> impl_->cutoff) || !(impl_->cutoff > 0) || !std::isfinite(impl_->cutoff))
      throw Error(std::string(who) + ": '" + options.file +
                  "' gives no usable cutoff (its _extra_files entry r_max is '" + extra["r_max"] +
                  "'); give one in TorchOptions::cutoff (baton-pipeline: --model-cutoff)");
  }
  impl_->type_names =
      options.type_names.empty() ? split_names(extra["type_names"]) : options.type_names;
  if (impl_->type_names.empty())
    throw Error(std::string(who) + ": '" + options.file +
                "' names no species (no _extra_files entry type_names); give them in "
                "TorchOptions::type_names (baton-pipeline: --model-species)");
  const std::string dtype = extra["model_dtype"];
  if (dtype == "float32") {
    impl_->dtype = torch::kFloat32;
  } else if (dtype.empty() || dtype == "float64") {
    for (const auto& p : impl_->module.parameters()) {  // else the parameters' type, if any
      if (p.is_floating_point()) {
        impl_->dtype = p.scalar_type() == torch::kFloat32 ? torch::kFloat32 : torch::kFloat64;
        break;
      }
    }
    if (dtype == "float64")
      impl_->dtype = torch::kFloat64;
  } else {
    throw Error(std::string(who) + ": '" + options.file + "' has model_dtype '" + dtype +
                "'; Baton runs float64 and float32 models");
  }
}

TorchModel::~TorchModel() = default;

double TorchModel::cutoff() const {
  return impl_->cutoff;
}
const std::vector<std::string>& TorchModel::type_names() const {
  return impl_->type_names;
}
std::string TorchModel::dtype() const {
  return impl_->dtype == torch::kFloat32 ? "float32" : "float64";
}

void TorchModel::evaluate(const dynamics::ModelInputs& in, const dynamics::ModelOutputs& out) {
  const std::int64_t n = in.atoms, s = in.systems, e = in.edges;
  const auto dev = torch::TensorOptions().device(impl_->device);
  const auto f64 = dev.dtype(torch::kFloat64);
  const auto i64 = dev.dtype(torch::kInt64);
  const torch::Dtype dtype = impl_->dtype;
  Kokkos::fence();  // the gathering kernels wrote the Views
  try {
    // Views wrapped as they are (float64, int64); a float32 model gets converted copies.
    torch::Tensor pos = torch::from_blob(in.pos.data(), {n, 3}, f64).to(dtype);
    torch::Tensor cell = torch::from_blob(in.cell.data(), {s, 3, 3}, f64).to(dtype);
    const torch::Tensor batch = torch::from_blob(in.batch.data(), {n}, i64);
    const auto edge_stride = static_cast<std::int64_t>(in.edge_index.stride(0));
    const torch::Tensor edge_index =
        torch::from_blob(in.edge_index.data(), {2, e}, {edge_stride, 1}, i64);
    const torch::Tensor shift = torch::from_blob(in.edge_cell_shift.data(), {e, 3}, f64).to(dtype);
    // The positions and a symmetric strain of positions and cells are the leaves that autograd
    // differentiates the energy by (forces and virial), as NequIP's own stress output does.
    pos = pos.detach().requires_grad_(true);
    const torch::Tensor strain = torch::zeros({s, 3, 3}, dev.dtype(dtype)).requires_grad_(true);
    const torch::Tensor sym = 0.5 * (strain + strain.transpose(1, 2));
    const torch::Tensor strained_pos =
        pos + torch::bmm(pos.unsqueeze(1), sym.index_select(0, batch)).squeeze(1);
    const torch::Tensor strained_cell = cell + torch::bmm(cell, sym);

    c10::Dict<std::string, torch::Tensor> data;
    data.insert("pos", strained_pos);
    data.insert("edge_index", edge_index);
    data.insert("edge_cell_shift", shift);
    data.insert("cell", strained_cell);
    data.insert("atom_types", torch::from_blob(in.atom_types.data(), {n}, i64));
    data.insert("batch", batch);
    data.insert("ptr", torch::from_blob(in.ptr.data(), {s + 1}, i64));
    data.insert("pbc",
                torch::from_blob(in.pbc.data(), {s, 3}, dev.dtype(torch::kInt32)).to(torch::kBool));

    const c10::IValue result = impl_->module.forward({c10::IValue(data)});
    if (!result.isGenericDict())
      throw Error(std::string(who) + ": the model returned a " + result.tagKind() +
                  ", not a Dict[str, Tensor]");
    const c10::impl::GenericDict dict = result.toGenericDict();
    const auto get = [&](const char* key) -> torch::Tensor {
      const auto it = dict.find(c10::IValue(std::string(key)));
      return it == dict.end() ? torch::Tensor() : it->value().toTensor();
    };
    torch::Tensor energy = get("total_energy");
    if (!energy.defined())
      throw Error(std::string(who) + ": the model's output has no total_energy");
    if (energy.numel() != s)
      throw Error(std::string(who) + ": the model's total_energy has " +
                  std::to_string(energy.numel()) + " values for " + std::to_string(s) +
                  " systems (shape [S] or [S, 1] expected)");
    energy = energy.reshape({s});
    torch::Tensor forces = get("forces");
    torch::Tensor virial = get("virial");
    const bool grad_forces = !forces.defined(), grad_virial = !virial.defined();
    if (grad_forces || grad_virial) {
      if (!energy.requires_grad())
        throw Error(std::string(who) +
                    ": the model's total_energy does not depend on pos, and the model returns "
                    "no forces and virial to use instead");
      std::vector<torch::Tensor> leaves;
      if (grad_forces)
        leaves.push_back(pos);
      if (grad_virial)
        leaves.push_back(strain);
      const auto grads = torch::autograd::grad({energy.sum()}, leaves, {}, false, false, true);
      std::size_t g = 0;
      if (grad_forces) {
        forces = grads[g].defined() ? -grads[g] : torch::zeros({n, 3}, f64);
        ++g;
      }
      if (grad_virial)
        virial = grads[g].defined() ? -grads[g] : torch::zeros({s, 3, 3}, f64);
    }
    if (forces.numel() != 3 * n)
      throw Error(std::string(who) + ": the model's forces have " + std::to_string(forces.numel()) +
                  " values for " + std::to_string(n) + " atoms ([N, 3] expected)");
    if (virial.numel() != 9 * s)
      throw Error(std::string(who) + ": the model's virial has " + std::to_string(virial.numel()) +
                  " values for " + std::to_string(s) + " systems ([S, 3, 3] expected)");
    torch::NoGradGuard no_grad;
    virial = virial.reshape({s, 3, 3}).to(torch::kFloat64);
    const torch::Tensor w =
        torch::stack({virial.select(1, 0).select(1, 0), virial.select(1, 1).select(1, 1),
                      virial.select(1, 2).select(1, 2),
                      0.5 * (virial.select(1, 0).select(1, 1) + virial.select(1, 1).select(1, 0)),
                      0.5 * (virial.select(1, 0).select(1, 2) + virial.select(1, 2).select(1, 0)),
                      0.5 * (virial.select(1, 1).select(1, 2) + virial.select(1, 2).select(1, 1))},
                     1);
    torch::from_blob(out.energy.data(), {s}, f64).copy_(energy.detach());
    torch::from_blob(out.forces.data(), {n, 3}, f64).copy_(forces.detach().reshape({n, 3}));
    torch::from_blob(out.virial.data(), {s, 6}, f64).copy_(w);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& ex) {
    throw Error(std::string(who) + ": the model failed: " + first_line(ex.what()));
  }
}

bool torch_enabled() {
  return true;
}

std::string torch_version() {
  return BATON_TORCH_VERSION;
}

std::shared_ptr<TorchModel> load_torch_model(const TorchOptions& options) {
  return std::make_shared<TorchModel>(options);
}

}  // namespace baton::models
