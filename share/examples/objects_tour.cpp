#include <baton/baton.hpp>
#include <baton/transport/objects.hpp>

#include <cstdio>
#include <string>
#include <vector>

struct Particle {
  std::string name;
  std::vector<double> position;
};

template <>
struct baton::Serializer<Particle> {
  static void write(baton::ByteWriter& out, const Particle& p) {
    out.write_object(p.name);
    out.write_object(p.position);
  }
  static Particle read(baton::ByteReader& in) {
    Particle p;
    p.name = in.read_object<std::string>();
    p.position = in.read_object<std::vector<double>>();
    return p;
  }
  static constexpr std::size_t min_size = 16;  // an empty name (8) and an empty position (8)
};

int main(int argc, char** argv) {
  try {
    baton::Runtime runtime(argc, argv);
    const baton::Communicator& world = runtime.world();
    const int next = (world.rank() + 1) % world.size();

    // A ring of user types: every rank sends to the next and receives from any rank.
    Particle mine{"p" + std::to_string(world.rank()), {1.0 * world.rank(), 0.5}};
    baton::SendHandle sending = baton::isend_object(world, mine, next, /*tag=*/1);
    baton::MessageInfo info;
    const Particle got = baton::recv_object<Particle>(world, baton::any_source, 1, &info);
    sending.wait();
    std::printf("rank %d got %s (%zu coordinates) from rank %d\n", world.rank(), got.name.c_str(),
                got.position.size(), info.source);

    // A broadcast from the last rank.
    std::vector<std::string> names;
    if (world.rank() == world.size() - 1)
      names = {"alpha", "beta"};
    baton::broadcast_object(world, names, world.size() - 1);

    // A mismatch is an error, and the message is gone: the channel goes on.
    baton::send_object(world, 42, world.rank(), /*tag=*/2);  // an int, 4 bytes
    baton::send_object(world, 2.5, world.rank(), 2);         // a double, 8 bytes
    try {
      (void)baton::recv_object<double>(world, world.rank(), 2);  // gets the int: throws
    } catch (const baton::Error& e) {
      if (world.rank() == 0)
        std::printf("caught: %s\n", e.what());
    }
    const double d = baton::recv_object<double>(world, world.rank(), 2);
    if (world.rank() == 0)
      std::printf("%zu names, then %.1f\n", names.size(), d);
    return 0;
  } catch (const baton::Error& e) {
    std::fprintf(stderr, "objects_tour: %s\n", e.what());
    return 1;
  }
}
