// main() of Baton's MPI tests: MPI then Kokkos through baton::Runtime, then doctest on every rank.
#include <baton/runtime/runtime.hpp>
#include <exception>
#include <iostream>

#include "mpi_doctest.hpp"

int main(int argc, char** argv) {
  try {
    baton::Runtime runtime(argc, argv);
    return baton::test::run_doctest(argc, argv, runtime.world(), &runtime);
  } catch (const std::exception& e) {
    std::cerr << "baton test main: " << e.what() << '\n';
    return 2;
  }
}
