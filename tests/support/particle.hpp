#pragma once
// The user type of docs/objects.md and its serialization hook, shared by the object tests and the
// object fuzz target.
#include <baton/transport/serialize.hpp>
#include <string>
#include <vector>

namespace baton::test {

struct Particle {
  std::string name;
  std::vector<double> position;
  bool operator==(const Particle& other) const {
    return name == other.name && position == other.position;
  }
};

}  // namespace baton::test

template <>
struct baton::Serializer<baton::test::Particle> {
  static void write(baton::ByteWriter& out, const baton::test::Particle& p) {
    out.write_object(p.name);
    out.write_object(p.position);
  }
  static baton::test::Particle read(baton::ByteReader& in) {
    baton::test::Particle p;
    p.name = in.read_object<std::string>();
    p.position = in.read_object<std::vector<double>>();
    return p;
  }
  static constexpr std::size_t min_size = 16;  // two u64 lengths
};
