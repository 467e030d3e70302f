#include <doctest/doctest.h>

#include <baton/comm/communicator.hpp>
#include <baton/core/check_mpi.hpp>
#include <string>

#include "mpi_doctest.hpp"

namespace {
std::string error_class_text(int error_class) {
  return baton::mpi_error_string(error_class);
}

int hook_calls = 0;
int hook_code = MPI_SUCCESS;
void counting_hook(const baton::MpiFailure& failure) {
  ++hook_calls;
  hook_code = failure.code;
}
}  // namespace

TEST_CASE("a real MPI error becomes baton::Error naming the operation, the rank and MPI's text") {
  baton::Communicator comm = baton::test::world().duplicate();
  const int invalid_rank = comm.size();  // one past the last rank
  int value = 42;
  try {
    baton::check_mpi(MPI_Send(&value, 1, MPI_INT, invalid_rank, 0, comm.raw()), "MPI_Send",
                     comm.raw());
    FAIL("MPI_Send to an invalid rank did not fail");
  } catch (const baton::Error& e) {
    const std::string what = e.what();
    CHECK(e.mpi_error_class() == MPI_ERR_RANK);
    CHECK(what.find("MPI_Send failed") != std::string::npos);
    CHECK(what.find("on rank " + std::to_string(comm.rank()) + " of " +
                    std::to_string(comm.size())) != std::string::npos);
    CHECK(what.find(baton::mpi_error_string(e.mpi_error_code())) != std::string::npos);
    INFO("message: " << what << "; class text: " << error_class_text(MPI_ERR_RANK));
  }
}

TEST_CASE("the error hook sees every failure, and Baton still throws when it returns") {
  baton::Communicator comm = baton::test::world().duplicate();
  hook_calls = 0;
  baton::MpiErrorHook previous = baton::set_mpi_error_hook(counting_hook);
  int value = 0;
  CHECK_THROWS_AS(
      baton::check_mpi(MPI_Send(&value, 1, MPI_INT, -5, 0, comm.raw()), "MPI_Send", comm.raw()),
      baton::Error);
  baton::set_mpi_error_hook(previous);
  CHECK(hook_calls == 1);
  CHECK(hook_code != MPI_SUCCESS);
  // The default is back: no more calls to the counting hook.
  CHECK_THROWS_AS(baton::check_mpi(MPI_ERR_ARG, "MPI_Fake"), baton::Error);
  CHECK(hook_calls == 1);
}

TEST_CASE("an error without a communicator names the world rank") {
  try {
    baton::check_mpi(MPI_ERR_COUNT, "MPI_Imaginary");
    FAIL("check_mpi did not throw");
  } catch (const baton::Error& e) {
    const std::string what = e.what();
    CHECK(what.find("MPI_Imaginary failed on rank " +
                    std::to_string(baton::test::world().rank())) != std::string::npos);
    CHECK(what.find("(world)") != std::string::npos);
    CHECK(e.mpi_error_class() == MPI_ERR_COUNT);
  }
}
