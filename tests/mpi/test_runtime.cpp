#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <baton/core/error.hpp>
#include <baton/runtime/runtime.hpp>

#include "mpi_doctest.hpp"

TEST_CASE("the test main's Runtime started MPI and Kokkos with at least funneled") {
  const baton::Runtime* runtime = baton::test::runtime();
  REQUIRE(runtime != nullptr);
  CHECK(runtime->started_mpi());
  CHECK(runtime->started_kokkos());
  CHECK(Kokkos::is_initialized());
  CHECK(static_cast<int>(runtime->thread_level()) >=
        static_cast<int>(baton::ThreadLevel::funneled));
  int world_size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  CHECK(runtime->world().size() == world_size);
  CHECK(runtime->world().raw() != MPI_COMM_WORLD);
  CHECK(runtime->node().size() >= 1);
}

TEST_CASE("a Runtime inside a running program starts and stops nothing") {
  {
    baton::Runtime inner;
    CHECK_FALSE(inner.started_mpi());
    CHECK_FALSE(inner.started_kokkos());
    CHECK(inner.world().size() == baton::test::world().size());
    CHECK(inner.selected_device_id() == -1);
  }
  int finalized = 1;
  MPI_Finalized(&finalized);
  CHECK(finalized == 0);
  CHECK(Kokkos::is_initialized());
}

TEST_CASE("asking more threads of a running MPI than it provides is an error naming both levels") {
  const baton::ThreadLevel provided = baton::test::runtime()->thread_level();
  if (provided == baton::ThreadLevel::multiple) {
    baton::Runtime inner(baton::RuntimeOptions{baton::ThreadLevel::multiple});
    CHECK(inner.thread_level() == baton::ThreadLevel::multiple);
  } else {
    const std::string expected = std::string("'multiple' requested, but MPI provides only '") +
                                 baton::to_string(provided) + "'";
    CHECK_THROWS_WITH_AS(baton::Runtime(baton::RuntimeOptions{baton::ThreadLevel::multiple}),
                         doctest::Contains(expected.c_str()), baton::Error);
    int finalized = 1;
    MPI_Finalized(&finalized);
    CHECK(finalized == 0);  // the failed Runtime did not stop the MPI it did not start
  }
}

TEST_CASE("Kokkos works under the Runtime") {
  Kokkos::View<double*> v("v", 100);
  Kokkos::parallel_for(
      "fill", Kokkos::RangePolicy<>(0, 100), KOKKOS_LAMBDA(int i) { v(i) = i; });
  double sum = 0;
  Kokkos::parallel_reduce(
      "sum", Kokkos::RangePolicy<>(0, 100), KOKKOS_LAMBDA(int i, double& s) { s += v(i); }, sum);
  CHECK(sum == doctest::Approx(4950.0));
}
