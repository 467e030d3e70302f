// Pure logic of the runtime: no MPI calls.
#include <doctest/doctest.h>

#include <baton/comm/communicator.hpp>
#include <baton/core/device.hpp>
#include <baton/core/error.hpp>
#include <baton/core/gpu_aware.hpp>
#include <baton/runtime/runtime.hpp>
#include <string>

TEST_CASE("select_device_id deals node-local ranks round-robin over the devices") {
  CHECK(baton::select_device_id(0, 4) == 0);
  CHECK(baton::select_device_id(3, 4) == 3);
  CHECK(baton::select_device_id(5, 4) == 1);
  CHECK(baton::select_device_id(7, 1) == 0);
  CHECK(baton::select_device_id(2, 0) == -1);
  CHECK(baton::select_device_id(-1, 2) == -1);
}

TEST_CASE("thread levels round-trip through their names and reject unknown ones") {
  for (auto level : {baton::ThreadLevel::single, baton::ThreadLevel::funneled,
                     baton::ThreadLevel::serialized, baton::ThreadLevel::multiple}) {
    CHECK(baton::parse_thread_level(baton::to_string(level)) == level);
  }
  CHECK_THROWS_WITH_AS(
      baton::parse_thread_level("several"),
      doctest::Contains("baton::parse_thread_level: unknown MPI thread level 'several'"),
      baton::Error);
}

TEST_CASE("GPU awareness: environment, then build default, then the MPI query") {
  baton::MpiGpuQuery cuda_yes;
  cuda_yes.cuda = true;
  baton::MpiGpuQuery nothing;

  SUBCASE("the environment wins") {
    auto a = baton::decide_gpu_awareness("0", "ON", "cuda", cuda_yes);
    CHECK_FALSE(a.aware);
    CHECK(a.decided_by == "BATON_GPU_AWARE");
    CHECK(baton::decide_gpu_awareness("1", "OFF", "", nothing).aware);
  }
  SUBCASE("a bad environment value is an error naming it") {
    CHECK_THROWS_WITH_AS(baton::decide_gpu_awareness("yes", "AUTO", "cuda", cuda_yes),
                         "baton::decide_gpu_awareness: BATON_GPU_AWARE must be 0 or 1, not 'yes'",
                         baton::Error);
  }
  SUBCASE("the build default applies when the environment is silent") {
    auto a = baton::decide_gpu_awareness(nullptr, "ON", "", nothing);
    CHECK(a.aware);
    CHECK(a.decided_by == "BATON_GPU_AWARE_MPI=ON");
    CHECK_FALSE(baton::decide_gpu_awareness("", "OFF", "cuda", cuda_yes).aware);
  }
  SUBCASE("AUTO asks the MPI for the backend Kokkos uses") {
    auto a = baton::decide_gpu_awareness(nullptr, "AUTO", "cuda", cuda_yes);
    CHECK(a.aware);
    CHECK(a.decided_by == "MPIX_Query_cuda_support");
    baton::MpiGpuQuery cuda_no;
    cuda_no.cuda = false;
    CHECK_FALSE(baton::decide_gpu_awareness(nullptr, "AUTO", "cuda", cuda_no).aware);
    auto hip = baton::decide_gpu_awareness(nullptr, "AUTO", "hip", cuda_yes);
    CHECK_FALSE(hip.aware);
    CHECK(hip.decided_by == "no query available");
    CHECK(baton::decide_gpu_awareness(nullptr, "AUTO", "", cuda_yes).decided_by ==
          "no GPU backend in Kokkos");
  }
}

TEST_CASE("baton::Error keeps its message and MPI code") {
  baton::Error plain("bad tag 7");
  CHECK(std::string(plain.what()) == "bad tag 7");
  CHECK(plain.mpi_error_code() == MPI_SUCCESS);
  CHECK(plain.mpi_error_class() == MPI_SUCCESS);
}

TEST_CASE("collective checks: BATON_CHECK_COLLECTIVES decides, else the build type") {
  SUBCASE("unset or empty: on in a Debug build, off in a Release build") {
    CHECK(baton::decide_collective_checks(nullptr, true).on);
    CHECK_FALSE(baton::decide_collective_checks(nullptr, false).on);
    CHECK(baton::decide_collective_checks("", true).on);
    CHECK_FALSE(baton::decide_collective_checks("", false).on);
    CHECK(std::string(baton::decide_collective_checks(nullptr, false).decided_by) ==
          "a Release build of Baton (NDEBUG defined)");
    CHECK(std::string(baton::decide_collective_checks("", true).decided_by) ==
          "a Debug build of Baton (NDEBUG not defined)");
  }
  SUBCASE("0 turns them off anywhere") {
    CHECK_FALSE(baton::decide_collective_checks("0", true).on);
    CHECK_FALSE(baton::decide_collective_checks("0", false).on);
    CHECK(std::string(baton::decide_collective_checks("0", true).decided_by) ==
          "BATON_CHECK_COLLECTIVES=0");
  }
  SUBCASE("1, or any other value, turns them on anywhere") {
    CHECK(baton::decide_collective_checks("1", false).on);
    CHECK(baton::decide_collective_checks("1", true).on);
    CHECK(baton::decide_collective_checks("yes", false).on);
    CHECK(baton::decide_collective_checks("00", false).on);
    CHECK(std::string(baton::decide_collective_checks("1", false).decided_by) ==
          "BATON_CHECK_COLLECTIVES (set, not 0)");
  }
}
