#define DOCTEST_CONFIG_IMPLEMENT
#include "mpi_doctest.hpp"

#include <doctest/doctest.h>

#include <baton/core/check_mpi.hpp>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace baton::test {
namespace {
const Communicator* test_world = nullptr;
const Runtime* test_runtime = nullptr;
}  // namespace

const Communicator& world() {
  if (test_world == nullptr)
    throw Error("baton::test::world() used outside run_doctest");
  return *test_world;
}

const Runtime* runtime() {
  return test_runtime;
}

int run_doctest(int argc, char** argv, const Communicator& comm, const Runtime* runtime) {
  test_world = &comm;
  test_runtime = runtime;
  const int rank = comm.rank();
  const int size = comm.size();
  MPI_Comm raw = comm.raw();

  int launch_ok = 1;
  if (const char* expected = std::getenv("BATON_EXPECT_RANKS")) {
    if (std::atoi(expected) != size) {
      std::cerr << "baton test: expected " << expected << " ranks but this job has " << size
                << " (is the launcher from the same MPI as the library?)\n";
      launch_ok = 0;
    }
  }

  std::ostringstream captured;
  doctest::Context context;
  context.setOption("no-colors", isatty(STDOUT_FILENO) == 0);  // plain text in ctest logs
  context.applyCommandLine(argc, argv);
  if (rank != 0)
    context.setCout(&captured);
  int failed = context.run() != 0 ? 1 : 0;
  if (!launch_ok)
    failed = 1;

  // Every rank's verdict counts.
  int failed_ranks = 0;
  check_mpi(MPI_Allreduce(&failed, &failed_ranks, 1, MPI_INT, MPI_SUM, raw), "MPI_Allreduce", raw);

  // Reports of failing non-root ranks travel to rank 0, which prints them.
  std::string report = (failed && rank != 0) ? captured.str() : std::string();
  int length = static_cast<int>(report.size());
  std::vector<int> lengths(rank == 0 ? size : 0);
  check_mpi(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, raw), "MPI_Gather", raw);
  std::vector<int> offsets(lengths.size(), 0);
  int total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::vector<char> all(static_cast<std::size_t>(total) + 1);
  check_mpi(MPI_Gatherv(report.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                        MPI_CHAR, 0, raw),
            "MPI_Gatherv", raw);
  if (rank == 0) {
    for (int r = 1; r < size; ++r) {
      if (lengths[r] == 0)
        continue;
      std::cout << "---- report of rank " << r << " ----\n"
                << std::string(all.data() + offsets[r], static_cast<std::size_t>(lengths[r]));
    }
    if (failed_ranks == 0) {
      std::cout << "baton test: all " << size << " ranks passed\n";
    } else {
      std::cout << "baton test: " << failed_ranks << " of " << size << " ranks failed\n";
    }
    std::cout.flush();
  }
  test_world = nullptr;
  test_runtime = nullptr;
  return failed_ranks == 0 ? 0 : 1;
}

}  // namespace baton::test
