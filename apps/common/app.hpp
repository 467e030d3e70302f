#pragma once
// What every Baton app shares: one exit-code convention, a command line split between Kokkos and
// the app, options checked before any work, and errors printed once.
//
// Exit codes (every app, documented in each --help):
//   0 success; 1 the run failed; 2 a bad option or bad input; 3 the run finished but its result is
//   inconsistent (baton-replay's checks); 4 the run finished but some systems failed; 5 stopped by
//   SIGTERM or SIGINT (baton-pipeline).
// An error every rank meets alike (a baton::CollectiveError) is printed once, by rank 0; when ranks
// failed differently, the message names the ranks of each text. An error on some ranks only that
// did not go through an agreement is printed by those ranks and ends the job (MPI_Abort), so no
// rank is left waiting.
#include <baton/collectives/agreement.hpp>
#include <baton/runtime/runtime.hpp>
#include <boost/program_options.hpp>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

namespace app {

namespace po = boost::program_options;

enum Exit : int {
  exit_ok = 0,
  exit_failure = 1,
  exit_usage = 2,
  exit_inconsistent = 3,
  exit_systems_failed = 4,  ///< the run finished; some systems failed (reported, written as failed)
  exit_stopped = 5  ///< stopped by SIGTERM or SIGINT (baton-pipeline: results kept for --resume)
};

/// The lines every --help ends with: exit codes and Kokkos' flags.
std::string help_footer();

/// A bad option or bad input (exit code 2).
struct UsageError : baton::Error {
  using baton::Error::Error;
};

/// `default_value(v)` shown as written: 0.05, not 0.050000000000000003.
std::string shortest(double v);
template <class T, class U>
po::typed_value<T>* value(T* target, const U& v) {
  const T typed = static_cast<T>(v);
  if constexpr (std::is_floating_point_v<T>)
    return po::value(target)->default_value(typed, shortest(typed));
  else
    return po::value(target)->default_value(typed);
}

/// Option checks; each throws UsageError("--name: ...").
void require(bool ok, const std::string& option, const std::string& what);
void require_finite(double v, const std::string& option);
/// A file that exists and can be read, not a directory.
void require_input_file(const std::string& path, const std::string& option);
/// A file that can be created or replaced: its directory exists and is writable, and the path is
/// not a directory. Nothing is created.
void require_output_file(const std::string& path, const std::string& option);
/// Whether two paths name the same file: the same inode when both exist, otherwise the same name in
/// the same directory.
bool same_file(const std::string& a, const std::string& b);
/// A file an option names.
struct FileRole {
  std::string path;
  std::string option;  // without "--"
};
/// Throws UsageError naming the options unless every output is a file of its own: none is an input
/// or another output.
void require_distinct_files(const std::vector<FileRole>& inputs,
                            const std::vector<FileRole>& outputs);

/// How an app describes itself to run().
struct AppSpec {
  std::string name;                               // e.g. "baton-info"
  po::options_description options;                // its options ("help,h" is added)
  po::positional_options_description positional;  // positional words it takes (none by default)
  std::string config_option;                      // an option naming a config file, or ""
  std::string usage;                              // lines printed before the options in --help
  std::string thread_level_option;                // an option naming the MPI thread level, or ""
};

/// Parses the command line (no MPI yet: Kokkos' --kokkos-* flags go to Kokkos), starts the Runtime,
/// prints --help or a parse error once (rank 0), then calls `body`. Errors from `body` are printed
/// once when they are CollectiveErrors; their code is returned (UsageError: 2, otherwise 1).
int run(int argc, char** argv, AppSpec spec,
        const std::function<int(baton::Runtime&, const po::variables_map&)>& body);

}  // namespace app
