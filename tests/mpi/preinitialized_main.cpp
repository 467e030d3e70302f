// A program that starts MPI and Kokkos itself, uses baton::Runtime, and finalizes both itself.
#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <baton/runtime/runtime.hpp>
#include <iostream>

#include "mpi_doctest.hpp"

namespace {
int saved_argc = 0;
char** saved_argv = nullptr;
}  // namespace

TEST_CASE("Runtime over an MPI and Kokkos the program started leaves both running") {
  {
    // MPI_Init provides at least MPI_THREAD_SINGLE; ask for no more than that.
    baton::Runtime runtime(saved_argc, saved_argv,
                           baton::RuntimeOptions{baton::ThreadLevel::single});
    CHECK_FALSE(runtime.started_mpi());
    CHECK_FALSE(runtime.started_kokkos());
    CHECK(runtime.world().size() == baton::test::world().size());
    CHECK(runtime.world().raw() != MPI_COMM_WORLD);
  }
  int finalized = 1;
  MPI_Finalized(&finalized);
  CHECK(finalized == 0);
  CHECK(Kokkos::is_initialized());
}

int main(int argc, char** argv) {
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
    return 2;
  Kokkos::initialize(argc, argv);
  saved_argc = argc;
  saved_argv = argv;
  int result = 1;
  {
    baton::Communicator world = baton::Communicator::duplicate(MPI_COMM_WORLD);
    result = baton::test::run_doctest(argc, argv, world);
  }
  Kokkos::finalize();
  if (MPI_Finalize() != MPI_SUCCESS) {
    std::cerr << "MPI_Finalize failed after baton::Runtime was destroyed\n";
    return 3;
  }
  return result;
}
