#include "lammps.hpp"

#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace bench {

Lammps::Lammps(std::string executable) : exe_(std::move(executable)) {
  if (!exe_.empty())
    return;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; exe_.empty() && std::getline(dirs, dir, ':');)
    for (const char* name : {"lmp", "lmp_serial", "lmp_mpi"}) {
      const std::string candidate = dir + "/" + name;
      if (!dir.empty() && access(candidate.c_str(), X_OK) == 0) {
        exe_ = candidate;
        break;
      }
    }
}

Lammps::Result Lammps::run(const std::string& dir, const std::string& name,
                           const std::string& input) const {
  {
    std::ofstream in(dir + "/" + name + ".in");
    in << input;
    if (!in)
      throw std::runtime_error("cannot write " + dir + "/" + name + ".in");
  }
  // LAMMPS is itself an MPI program: started with the job's MPI variables it would try to join
  // this job. `env -i` gives it a clean environment (a singleton MPI run on one thread).
  const char* home = std::getenv("HOME");
  const char* path = std::getenv("PATH");
  const std::string command =
      "cd '" + dir + "' && env -i PATH='" + std::string(path ? path : "/usr/bin:/bin") +
      "' HOME='" + std::string(home ? home : "/tmp") +
      "' OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 '" + exe_ +
      "' -in " + name + ".in -log " + name + ".log -screen none -nocite > " + name + ".out 2>&1";
  const double start = MPI_Wtime();
  const int status = std::system(command.c_str());
  Result result;
  result.wall_seconds = MPI_Wtime() - start;
  std::ifstream log(dir + "/" + name + ".log");
  std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  if (status != 0)
    throw std::runtime_error("LAMMPS (" + exe_ + ") failed on " + dir + "/" + name + ".in:\n" +
                             text.substr(text.size() > 2000 ? text.size() - 2000 : 0));
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    Loop loop;
    if (std::sscanf(line.c_str(), "Loop time of %lf on %*d procs for %ld steps with %ld atoms",
                    &loop.seconds, &loop.steps, &loop.atoms) == 3)
      result.loops.push_back(loop);
  }
  return result;
}

}  // namespace bench
