#include "baton/collectives/object_collectives.hpp"

#include <mpi.h>

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "baton/core/check_mpi.hpp"

namespace baton::detail {

namespace {

/// The size sent for an encoding that failed.
constexpr std::uint64_t failed = UINT64_MAX;

std::string on_rank(const Communicator& comm) {
  return " (on rank " + std::to_string(comm.rank()) + ")";
}

}  // namespace

GatheredBytes gather_object_bytes(const Communicator& comm, const std::vector<std::byte>* mine,
                                  const std::string& failure, int root, const char* operation) {
  const auto ranks = static_cast<std::size_t>(comm.size());
  const std::uint64_t size = mine ? mine->size() : failed;
  std::vector<std::uint64_t> sizes(ranks);
  // Every rank learns every size (also for a gather to one root): then all of them see a failure.
  check_mpi(MPI_Allgather(&size, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, comm.raw()),
            "MPI_Allgather", comm.raw());
  GatheredBytes out;
  out.offsets.assign(ranks + 1, 0);
  std::vector<int> counts(ranks), displacements(ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    if (sizes[r] == failed) {
      throw Error(
          std::string(operation) + ": rank " + std::to_string(r) + " could not encode its value" +
          (static_cast<int>(r) == comm.rank() ? ": " + failure : std::string()) + on_rank(comm));
    }
    out.offsets[r + 1] = out.offsets[r] + sizes[r];
    if (out.offsets[r + 1] > static_cast<std::uint64_t>(INT_MAX)) {
      throw Error(std::string(operation) + ": " + std::to_string(out.offsets[r + 1]) +
                  "+ bytes in all exceed INT_MAX, the most one MPI 3.1 collective gathers" +
                  on_rank(comm));
    }
    counts[r] = static_cast<int>(sizes[r]);
    displacements[r] = static_cast<int>(out.offsets[r]);
  }
  const bool receives = root < 0 || comm.rank() == root;
  if (receives)
    out.bytes.resize(out.offsets[ranks]);
  if (root < 0) {
    check_mpi(MPI_Allgatherv(mine->data(), static_cast<int>(size), MPI_BYTE, out.bytes.data(),
                             counts.data(), displacements.data(), MPI_BYTE, comm.raw()),
              "MPI_Allgatherv", comm.raw());
  } else {
    check_mpi(MPI_Gatherv(mine->data(), static_cast<int>(size), MPI_BYTE, out.bytes.data(),
                          counts.data(), displacements.data(), MPI_BYTE, root, comm.raw()),
              "MPI_Gatherv", comm.raw());
  }
  return out;
}

std::vector<std::byte> scatter_object_bytes(const Communicator& comm,
                                            const std::vector<std::vector<std::byte>>* parts,
                                            const std::string& failure, int root,
                                            const char* operation) {
  const auto ranks = static_cast<std::size_t>(comm.size());
  const bool is_root = comm.rank() == root;
  std::vector<std::uint64_t> sizes;
  std::vector<int> counts, displacements;
  std::string problem = failure;
  if (is_root) {
    sizes.assign(ranks, failed);
    if (parts) {
      counts.resize(ranks);
      displacements.resize(ranks);
      std::uint64_t total = 0;
      for (std::size_t r = 0; r < ranks; ++r) {
        counts[r] = static_cast<int>((*parts)[r].size());
        displacements[r] = static_cast<int>(total);
        total += (*parts)[r].size();
      }
      if (total > static_cast<std::uint64_t>(INT_MAX)) {
        problem = std::to_string(total) +
                  " bytes in all exceed INT_MAX, the most one MPI 3.1 collective scatters";
      } else {
        for (std::size_t r = 0; r < ranks; ++r)
          sizes[r] = (*parts)[r].size();
      }
    }
  }
  std::uint64_t size = 0;
  check_mpi(MPI_Scatter(sizes.data(), 1, MPI_UINT64_T, &size, 1, MPI_UINT64_T, root, comm.raw()),
            "MPI_Scatter", comm.raw());
  if (size == failed) {
    throw Error(std::string(operation) + ": root " + std::to_string(root) +
                " could not send its values" + (is_root ? ": " + problem : std::string()) +
                on_rank(comm));
  }
  std::vector<std::byte> mine(size);
  // The root's own part is copied out of parts by MPI like any other.
  std::vector<std::byte> packed;
  if (is_root) {
    packed.reserve(static_cast<std::size_t>(displacements.back()) + counts.back());
    for (const auto& part : *parts)
      packed.insert(packed.end(), part.begin(), part.end());
  }
  check_mpi(MPI_Scatterv(packed.data(), counts.data(), displacements.data(), MPI_BYTE, mine.data(),
                         static_cast<int>(size), MPI_BYTE, root, comm.raw()),
            "MPI_Scatterv", comm.raw());
  return mine;
}

Error gathered_decode_error(const Communicator& comm, const char* operation, int from,
                            std::size_t size, const char* cause) {
  return Error(std::string(operation) + ": the value of rank " + std::to_string(from) + " (" +
               std::to_string(size) + " bytes) does not decode: " + cause + on_rank(comm));
}

}  // namespace baton::detail
