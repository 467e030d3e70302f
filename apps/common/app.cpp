#include "app.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <typeinfo>

namespace app {

std::string help_footer() {
  return "\nExit codes: 0 success, 1 the run failed, 2 a bad option or bad input, 3 the run "
         "finished but its result is inconsistent, 4 the run finished but some systems failed "
         "(their reasons are in the output), 5 stopped by SIGTERM or SIGINT (baton-pipeline: it "
         "says "
         "how many complete results FILE.part holds for --resume).\n"
         "Kokkos' own flags (--kokkos-num-threads=N, --kokkos-device-id=N, ...; --kokkos-help "
         "lists "
         "them) are passed to Kokkos.\n";
}

std::string shortest(double v) {
  char text[64];
  const auto result = std::to_chars(text, text + sizeof text, v);
  return std::string(text, result.ptr);
}

void require(bool ok, const std::string& option, const std::string& what) {
  if (!ok)
    throw UsageError("--" + option + ": " + what);
}

void require_finite(double v, const std::string& option) {
  require(std::isfinite(v), option, "must be a finite number, not " + shortest(v));
}

namespace {

std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

void require_input_file(const std::string& path, const std::string& option) {
  struct stat st {};
  require(::stat(path.c_str(), &st) == 0, option, "'" + path + "' does not exist");
  require(!S_ISDIR(st.st_mode), option, "'" + path + "' is a directory, not a file");
  require(::access(path.c_str(), R_OK) == 0, option, "'" + path + "' cannot be read");
}

void require_output_file(const std::string& path, const std::string& option) {
  require(!path.empty(), option, "give a file name");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    require(!S_ISDIR(st.st_mode), option, "'" + path + "' is a directory, not a file");
    require(::access(path.c_str(), W_OK) == 0, option, "'" + path + "' cannot be written");
  }
  const std::string dir = directory_of(path);
  struct stat dst {};
  require(::stat(dir.c_str(), &dst) == 0 && S_ISDIR(dst.st_mode), option,
          "the directory '" + dir + "' of '" + path + "' does not exist");
  require(::access(dir.c_str(), W_OK | X_OK) == 0, option,
          "cannot create files in the directory '" + dir + "' of '" + path + "'");
}

namespace {

// What names a file: its device and inode when it exists, otherwise its name in the canonical path
// of its directory ("out.xyz" and "./out.xyz" alike).
std::string file_key(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0)
    return "inode " + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  const auto slash = path.find_last_of('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  char resolved[PATH_MAX];
  if (::realpath(directory_of(path).c_str(), resolved) == nullptr)
    return "path " + path;
  return "path " + std::string(resolved) + "/" + name;
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  return file_key(a) == file_key(b);
}

void require_distinct_files(const std::vector<FileRole>& inputs,
                            const std::vector<FileRole>& outputs) {
  std::map<std::string, const FileRole*> in, out;
  for (const FileRole& f : inputs)
    in.emplace(file_key(f.path), &f);
  for (const FileRole& f : outputs) {
    const std::string key = file_key(f.path);
    if (const auto hit = in.find(key); hit != in.end())
      throw UsageError("--" + f.option + ": '" + f.path + "' is the --" + hit->second->option +
                       " file; an output never goes over an input: choose another name");
    if (const auto [hit, fresh] = out.emplace(key, &f); !fresh)
      throw UsageError("--" + f.option + ": '" + f.path + "' is also written by --" +
                       hit->second->option + "; give each output its own file");
  }
}

namespace {

/// The parsed command line of an app.
struct CommandLine {
  po::variables_map vm;
  std::string problem;  // the parse error, if any
  bool help = false;
};

void print_once(const baton::Communicator& comm, const std::string& text) {
  if (comm.rank() == 0) {
    std::cout << text << std::flush;
  }
}

// Boost reads "-1" into an unsigned option as its largest value: a count or size given as a
// negative number is refused instead.
void reject_negative_unsigned(const po::parsed_options& parsed, const po::variables_map& vm) {
  for (const po::option& opt : parsed.options) {
    const auto found = vm.find(opt.string_key);
    if (found == vm.end())
      continue;
    const std::type_info& type = found->second.value().type();
    if (type != typeid(unsigned) && type != typeid(unsigned long) &&
        type != typeid(unsigned long long))
      continue;
    for (const std::string& token : opt.value) {
      const auto first = token.find_first_not_of(" \t");
      require(first == std::string::npos || token[first] != '-', opt.string_key,
              "must not be negative, not '" + token + "'");
    }
  }
}

CommandLine parse(const std::vector<std::string>& args, const AppSpec& spec) {
  CommandLine cl;
  try {
    const po::parsed_options command_line =
        po::command_line_parser(args).options(spec.options).positional(spec.positional).run();
    po::store(command_line, cl.vm);
    reject_negative_unsigned(command_line, cl.vm);
    cl.help = cl.vm.count("help") > 0;
    if (!cl.help && !spec.config_option.empty() && cl.vm.count(spec.config_option)) {
      const std::string path = cl.vm[spec.config_option].as<std::string>();
      require_input_file(path, spec.config_option);
      std::ifstream file(path);
      const po::parsed_options config = po::parse_config_file(file, spec.options);
      po::store(config, cl.vm);
      reject_negative_unsigned(config, cl.vm);
    }
    if (!cl.help)
      po::notify(cl.vm);
  } catch (const std::exception& e) {
    cl.problem = e.what();
  }
  return cl;
}

}  // namespace

int run(int argc, char** argv, AppSpec spec,
        const std::function<int(baton::Runtime&, const po::variables_map&)>& body) {
  spec.options.add_options()("help,h", "print this help and exit");
  // Kokkos' flags go to Kokkos (and only they: --help stays the app's).
  std::vector<char*> kokkos_argv{argv[0]};
  std::vector<std::string> app_args;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]).rfind("--kokkos-", 0) == 0)
      kokkos_argv.push_back(argv[i]);
    else
      app_args.emplace_back(argv[i]);
  }
  kokkos_argv.push_back(nullptr);
  CommandLine cl = parse(app_args, spec);

  baton::RuntimeOptions runtime_options;
  if (cl.problem.empty() && !cl.help && !spec.thread_level_option.empty()) {
    try {
      runtime_options.thread_level =
          baton::parse_thread_level(cl.vm[spec.thread_level_option].as<std::string>().c_str());
    } catch (const std::exception& e) {
      cl.problem = "--" + spec.thread_level_option + ": " + e.what();
    }
  }
  int kokkos_argc = static_cast<int>(kokkos_argv.size()) - 1;
  char** kokkos_args = kokkos_argv.data();
  std::optional<baton::Runtime> runtime;
  try {
    runtime.emplace(kokkos_argc, kokkos_args, runtime_options);
  } catch (const std::exception& e) {
    std::cerr << spec.name << ": " << e.what() << '\n';
    return exit_failure;
  }
  const baton::Communicator& world = runtime->world();
  if (cl.help) {
    std::ostringstream help;
    help << spec.usage << spec.options << help_footer();
    print_once(world, help.str());
    return exit_ok;
  }
  try {
    baton::agree_on_failure(world, cl.problem, cl.problem.empty() ? 0 : exit_usage);
    return body(*runtime, cl.vm);
  } catch (const baton::CollectiveError& e) {
    if (world.rank() == 0) {
      std::cerr << spec.name << ": " << (e.code() == exit_usage ? "" : "error: ") << e.what()
                << (e.code() == exit_usage ? " (see --help)" : "") << '\n';
    }
    return e.code();
  } catch (const std::exception& e) {
    // Not agreed: the other ranks may be waiting for this one. Say why, then end the job.
    const int code = dynamic_cast<const UsageError*>(&e) ? exit_usage : exit_failure;
    std::cerr << spec.name << " (rank " << world.rank() << " of " << world.size()
              << "): error: " << e.what() << std::endl;
    if (world.size() > 1)
      MPI_Abort(world.raw(), code);
    return code;
  }
}

}  // namespace app
