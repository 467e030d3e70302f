#pragma once
// Test harness for Baton's MPI tests: doctest on every rank, output on rank 0 only, failures of
// every rank counted.

#include <baton/comm/communicator.hpp>
#include <baton/runtime/runtime.hpp>

namespace baton::test {

/// The communicator the tests run on (a duplicate of MPI_COMM_WORLD made by the test main).
const Communicator& world();
/// The Runtime of the test main, or nullptr when the test has its own main.
const Runtime* runtime();

/// Runs doctest on every rank of `comm`. Rank 0 prints its report; other ranks' reports are kept
/// and sent to rank 0 only when they failed. Returns the same exit code on every rank: 0 when every
/// rank passed. Also fails when BATON_EXPECT_RANKS is set and differs from comm.size().
int run_doctest(int argc, char** argv, const Communicator& comm, const Runtime* runtime = nullptr);

}  // namespace baton::test
