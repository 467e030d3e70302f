#include "baton/runtime/runtime.hpp"

#include <Kokkos_Core.hpp>
#include <cstdlib>
#include <cstring>
#include <string>

#include "baton/core/check_mpi.hpp"
#include "baton/core/device.hpp"

namespace baton {

const char* to_string(ThreadLevel level) noexcept {
  switch (level) {
    case ThreadLevel::single:
      return "single";
    case ThreadLevel::funneled:
      return "funneled";
    case ThreadLevel::serialized:
      return "serialized";
    case ThreadLevel::multiple:
      return "multiple";
  }
  return "unknown";
}

ThreadLevel parse_thread_level(const char* name) {
  for (ThreadLevel level : {ThreadLevel::single, ThreadLevel::funneled, ThreadLevel::serialized,
                            ThreadLevel::multiple}) {
    if (name != nullptr && std::strcmp(name, to_string(level)) == 0)
      return level;
  }
  throw Error(std::string("baton::parse_thread_level: unknown MPI thread level '") +
              (name ? name : "") + "' (expected single, funneled, serialized or multiple)");
}

namespace {

// MPI_THREAD_* constants are ordered in every MPI we support, but the standard only promises
// monotonic values, so compare through the enum's underlying value.
bool at_least(int provided, ThreadLevel wanted) {
  return provided >= static_cast<int>(wanted);
}

ThreadLevel from_mpi(int level) {
  for (ThreadLevel l : {ThreadLevel::multiple, ThreadLevel::serialized, ThreadLevel::funneled}) {
    if (level >= static_cast<int>(l))
      return l;
  }
  return ThreadLevel::single;
}

// "--flag" or "--flag=value".
bool is_flag(const char* arg, const char* flag) {
  const std::size_t n = std::strlen(flag);
  return std::strncmp(arg, flag, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

// Did the user already pick the device, on the command line or in the environment?
bool device_chosen_by_user(int argc, char** argv) {
  for (const char* var : {"KOKKOS_DEVICE_ID", "KOKKOS_NUM_DEVICES", "KOKKOS_MAP_DEVICE_ID_BY"}) {
    const char* value = std::getenv(var);
    if (value != nullptr && *value != '\0')
      return true;
  }
  for (int i = 1; argv != nullptr && i < argc; ++i) {
    if (argv[i] == nullptr)
      continue;
    for (const char* flag : {"--kokkos-device-id", "--device-id", "--kokkos-num-devices",
                             "--kokkos-ndevices", "--ndevices", "--kokkos-map-device-id-by"}) {
      if (is_flag(argv[i], flag))
        return true;
    }
  }
  return false;
}

}  // namespace

Runtime::Runtime(int& argc, char**& argv, RuntimeOptions options) {
  start(&argc, &argv, options);
}

Runtime::Runtime(RuntimeOptions options) {
  start(nullptr, nullptr, options);
}

Runtime::~Runtime() {
  stop();
}

void Runtime::start(int* argc, char*** argv, const RuntimeOptions& options) {
  int finalized = 0;
  check_mpi(MPI_Finalized(&finalized), "MPI_Finalized");
  if (finalized)
    throw Error("baton::Runtime: MPI was already finalized; it cannot be started again");

  int initialized = 0;
  check_mpi(MPI_Initialized(&initialized), "MPI_Initialized");
  int provided = MPI_THREAD_SINGLE;
  if (!initialized) {
    check_mpi(MPI_Init_thread(argc, argv, static_cast<int>(options.thread_level), &provided),
              "MPI_Init_thread");
    started_mpi_ = true;
  } else {
    check_mpi(MPI_Query_thread(&provided), "MPI_Query_thread");
  }
  provided_ = from_mpi(provided);

  try {
    if (!at_least(provided, options.thread_level)) {
      throw Error(std::string("baton::Runtime: MPI thread level '") +
                  to_string(options.thread_level) + "' requested, but MPI provides only '" +
                  to_string(provided_) + "'");
    }
    world_ = Communicator::duplicate(MPI_COMM_WORLD);
    node_ = world_.split_node();

    if (!Kokkos::is_initialized()) {
      const bool have_args = argc != nullptr && argv != nullptr;
      if (options.select_device &&
          !device_chosen_by_user(have_args ? *argc : 0, have_args ? *argv : nullptr)) {
        device_id_ = select_device_id(node_.rank(), visible_device_count());
        // Kokkos reads KOKKOS_DEVICE_ID in 3.x, 4.x and 5.x; a command-line flag would still win.
        if (device_id_ >= 0)
          setenv("KOKKOS_DEVICE_ID", std::to_string(device_id_).c_str(), 0);
      }
      if (have_args) {
        Kokkos::initialize(*argc, *argv);
      } else {
        Kokkos::initialize();
      }
      started_kokkos_ = true;
    }
  } catch (...) {
    stop();
    throw;
  }
}

void Runtime::stop() noexcept {
  node_ = Communicator();
  world_ = Communicator();
  if (started_kokkos_) {
    Kokkos::finalize();
    started_kokkos_ = false;
  }
  if (started_mpi_) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized)
      MPI_Finalize();
    started_mpi_ = false;
  }
}

}  // namespace baton
