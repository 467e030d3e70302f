// TorchModel in a Baton built without libtorch: every use says how to enable it.
#include "baton/models/torch_model.hpp"

#include "baton/core/error.hpp"

namespace baton::models {

namespace {
[[noreturn]] void not_built() {
  throw Error(
      "baton::models::TorchModel: this Baton was built without libtorch; install it (Debian: "
      "apt-get install libtorch-dev) and configure Baton with -DBATON_ENABLE_TORCH=ON (Spack: "
      "baton+torch)");
}
}  // namespace

struct TorchModel::Impl {};

TorchModel::TorchModel(const TorchOptions&) {
  not_built();
}
TorchModel::~TorchModel() = default;
double TorchModel::cutoff() const {
  not_built();
}
const std::vector<std::string>& TorchModel::type_names() const {
  not_built();
}
std::string TorchModel::dtype() const {
  not_built();
}
void TorchModel::evaluate(const dynamics::ModelInputs&, const dynamics::ModelOutputs&) {
  not_built();
}

bool torch_enabled() {
  return false;
}

std::string torch_version() {
  return "";
}

std::shared_ptr<TorchModel> load_torch_model(const TorchOptions& options) {
  return std::make_shared<TorchModel>(options);
}

}  // namespace baton::models
