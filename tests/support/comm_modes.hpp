#pragma once
// The communicators the collectives tests run every case on: each View path (automatic, and
// staged, which copies every View through a host buffer: a GPU build's device path, on a
// host-only build) in checked and unchecked mode, whatever the process default.

#include <baton/comm/communicator.hpp>

#include "mpi_doctest.hpp"

namespace baton::test {

/// A duplicate of the test's world with `path` and collective checks `checks`.
inline Communicator comm_with(ViewPath path, bool checks = true) {
  Communicator comm = world().duplicate();
  comm.set_view_path(path);
  comm.set_collective_checks(checks);
  return comm;
}

inline constexpr ViewPath view_paths[] = {ViewPath::automatic, ViewPath::staged};
inline constexpr bool check_modes[] = {true, false};

}  // namespace baton::test
