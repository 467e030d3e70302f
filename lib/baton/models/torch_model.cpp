// TorchModel: opens Baton's libtorch plugin (detail/torch_plugin.hpp) with dlopen when the first
// model is loaded, so that programs that never load one do not load libtorch.
#include "baton/models/torch_model.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <Kokkos_Core.hpp>
#include <cstdlib>
#include <mutex>
#include <type_traits>

#include "baton/core/error.hpp"
#include "baton/models/detail/torch_plugin.hpp"

namespace baton::models {

namespace {

constexpr const char* who = "baton::models::TorchModel";

[[maybe_unused]] bool exists(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0;
}

/// The plugin, opened once: $BATON_TORCH_PLUGIN, else the build tree's, else the installed one.
const detail::TorchPlugin& plugin() {
  static std::once_flag once;
  static const detail::TorchPlugin* loaded = nullptr;
  static std::string problem;
  std::call_once(once, [] {
    if (!torch_enabled()) {
      problem =
          "this Baton was built without libtorch; install it (Debian: apt-get install "
          "libtorch-dev) and configure Baton with -DBATON_ENABLE_TORCH=ON (Spack: "
          "baton+torch)";
      return;
    }
    const char* given = std::getenv("BATON_TORCH_PLUGIN");
    std::string path = given != nullptr ? given : "";
#ifdef BATON_TORCH_PLUGIN_BUILD
    if (path.empty() && exists(BATON_TORCH_PLUGIN_BUILD))
      path = BATON_TORCH_PLUGIN_BUILD;
#endif
#ifdef BATON_TORCH_PLUGIN_INSTALL
    if (path.empty())
      path = BATON_TORCH_PLUGIN_INSTALL;
#endif
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = ::dlerror();
      problem = "cannot open Baton's libtorch plugin '" + path + "': " + (why ? why : "?") +
                " (BATON_TORCH_PLUGIN names another)";
      return;
    }
    using Entry = const detail::TorchPlugin* (*)();
    const auto entry = reinterpret_cast<Entry>(::dlsym(handle, "baton_torch_plugin"));
    const detail::TorchPlugin* p = entry != nullptr ? entry() : nullptr;
    if (p == nullptr || p->abi != detail::torch_plugin_abi) {
      problem = "'" + path + "' is not this Baton's libtorch plugin";
      return;
    }
    loaded = p;
  });
  if (loaded == nullptr)
    throw Error(std::string(who) + ": " + problem);
  return *loaded;
}

}  // namespace

struct TorchModel::Impl {
  const detail::TorchPlugin* plugin = nullptr;
  void* model = nullptr;
  double cutoff = 0;
  std::vector<std::string> type_names;
  std::string dtype;
  ~Impl() {
    if (model != nullptr)
      plugin->destroy(model);
  }
};

TorchModel::TorchModel(const TorchOptions& options) : impl_(std::make_unique<Impl>()) {
  impl_->plugin = &plugin();
  std::string names;
  for (const std::string& name : options.type_names)
    names += (names.empty() ? "" : " ") + name;
  constexpr bool on_device =
      !Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                  systems::SystemsBatch::memory_space>::accessible;
  std::string got_names, error;
  impl_->model = impl_->plugin->load(options.file, options.cutoff, names, on_device, &impl_->cutoff,
                                     &got_names, &impl_->dtype, &error);
  if (impl_->model == nullptr)
    throw Error(std::string(who) + ": " + error);
  std::string name;
  for (const char c : got_names + " ") {
    if (c != ' ') {
      name += c;
    } else if (!name.empty()) {
      impl_->type_names.push_back(name);
      name.clear();
    }
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
  return impl_->dtype;
}

void TorchModel::evaluate(const dynamics::ModelInputs& in, const dynamics::ModelOutputs& out) {
  Kokkos::fence();  // the gathering kernels wrote the inputs
  detail::TorchArrays a;
  a.atoms = in.atoms;
  a.systems = in.systems;
  a.edges = in.edges;
  a.pos = in.pos.data();
  a.atom_types = in.atom_types.data();
  a.batch = in.batch.data();
  a.ptr = in.ptr.data();
  a.cell = in.cell.data();
  a.pbc = in.pbc.data();
  a.edge_index = in.edge_index.data();
  a.edge_stride = static_cast<std::int64_t>(in.edge_index.stride(0));
  a.edge_cell_shift = in.edge_cell_shift.data();
  a.energy = out.energy.data();
  a.forces = out.forces.data();
  a.virial = out.virial.data();
  a.on_device = !Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                            systems::SystemsBatch::memory_space>::accessible;
#ifdef KOKKOS_ENABLE_CUDA
  if constexpr (std::is_same_v<systems::SystemsBatch::execution_space, Kokkos::Cuda>)
    a.stream = systems::SystemsBatch::execution_space().cuda_stream();
#endif
  std::string error;
  if (!impl_->plugin->evaluate(impl_->model, a, &error))
    throw Error(std::string(who) + ": " + error);
}

std::int64_t TorchModel::state_bytes() const {
  return impl_->plugin->state_bytes(impl_->model);
}

void TorchModel::begin_memory_count() {
  impl_->plugin->memory_begin(impl_->model);
}

std::int64_t TorchModel::end_memory_count() {
  return impl_->plugin->memory_end(impl_->model);
}

bool torch_enabled() {
  return BATON_HAVE_TORCH_PLUGIN;
}

std::string torch_version() {
  return BATON_TORCH_VERSION;
}

std::shared_ptr<TorchModel> load_torch_model(const TorchOptions& options) {
  return std::make_shared<TorchModel>(options);
}

}  // namespace baton::models
