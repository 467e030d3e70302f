// xyz_roundtrip IN OUT: reads the extended-XYZ file IN with read_xyz_file and writes what it read
// to OUT with write_xyz_file. Used by check_ase_interop.py (ASE writes IN and reads OUT back). No
// MPI.
#include <baton/core/error.hpp>
#include <baton/systems/xyz.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: xyz_roundtrip IN.xyz OUT.xyz\n");
    return 2;
  }
  try {
    const auto systems = baton::systems::read_xyz_file(argv[1]);
    baton::systems::write_xyz_file(argv[2], systems);
    std::printf("xyz_roundtrip: %zu frames from %s to %s\n", systems.size(), argv[1], argv[2]);
  } catch (const baton::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
