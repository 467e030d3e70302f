// transport_tour: byte messages, View messages and a receive with a deadline.
//   mpiexec -n 2 transport_tour
#include <Kokkos_Core.hpp>
#include <baton/baton.hpp>
#include <chrono>
#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  try {
    baton::Runtime runtime(argc, argv);
    const baton::Communicator& world = runtime.world();
    if (world.size() < 2) {
      std::printf("transport_tour: run with at least 2 ranks\n");
      return 0;
    }
    const int me = world.rank();
    if (me == 0) {
      // Bytes: the receiver learns the size.
      const std::string hello = "hello from rank 0";
      baton::send(world, hello.data(), hello.size(), 1, /*tag=*/1);
      // A 2-D View in LayoutLeft; the receiver allocates a LayoutRight View of the same shape.
      Kokkos::View<double**, Kokkos::LayoutLeft> grid("grid", 3, 4);
      Kokkos::parallel_for(
          "fill", Kokkos::RangePolicy<>(0, 3), KOKKOS_LAMBDA(int i) {
            for (int j = 0; j < 4; ++j)
              grid(i, j) = 10.0 * i + j;
          });
      baton::SendHandle handle = baton::isend_view(world, grid, 1, /*tag=*/2);
      handle.wait();  // the handle kept `grid` alive until MPI was done with it
    } else if (me == 1) {
      baton::Message message = baton::recv(world, baton::any_source, 1);
      std::printf("rank 1 got %zu bytes from rank %d: %.*s\n", message.bytes.size(), message.source,
                  static_cast<int>(message.bytes.size()),
                  reinterpret_cast<const char*>(message.bytes.data()));
      auto grid = baton::recv_view<Kokkos::View<double**>>(world, 0, 2);
      // It lives in the default memory space (a GPU's, where there is one): read it on the host.
      const auto seen = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), grid);
      std::printf("rank 1 got a %zux%zu View, grid(2,3) = %.1f\n", seen.extent(0), seen.extent(1),
                  seen(2, 3));
      // Nothing is sent on tag 3: the receive gives up after 100 ms with a clear error.
      try {
        baton::recv(world, 0, 3, std::chrono::milliseconds(100));
      } catch (const baton::Error& e) {
        std::printf("rank 1: %s\n", e.what());
      }
    }
    return 0;
  } catch (const baton::Error& e) {
    std::fprintf(stderr, "transport_tour: %s\n", e.what());
    return 1;
  }
}
