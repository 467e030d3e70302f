#include "baton/collectives/collectives.hpp"
#include "baton/core/check_mpi.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace baton {

const char* to_string(ReduceOp op) noexcept {
  switch (op) {
    case ReduceOp::sum:
      return "sum";
    case ReduceOp::prod:
      return "prod";
    case ReduceOp::max:
      return "max";
    case ReduceOp::min:
      return "min";
  }
  return "unknown";
}

MPI_Op to_mpi(ReduceOp op) noexcept {
  switch (op) {
    case ReduceOp::sum:
      return MPI_SUM;
    case ReduceOp::prod:
      return MPI_PROD;
    case ReduceOp::max:
      return MPI_MAX;
    case ReduceOp::min:
      return MPI_MIN;
  }
  return MPI_OP_NULL;
}

void barrier(const Communicator& comm) {
  if (comm.is_null())
    throw Error("baton::barrier: the communicator is null");
  check_mpi(MPI_Barrier(comm.raw()), "MPI_Barrier", comm.raw());
}

namespace detail {

void agree(const Communicator& comm, const ShapeSignature& mine, const char* operation,
           const std::string& problem) {
  // One MPI_Allreduce(MAX) over (x, -x, problem?) gives max and -min of every field and whether
  // any rank found a problem with its own arguments.
  constexpr int n = ShapeSignature::fields;
  std::int64_t both[2 * n + 1];
  for (int i = 0; i < n; ++i) {
    both[i] = mine.values[i];
    both[n + i] = -mine.values[i];
  }
  both[2 * n] = problem.empty() ? 0 : 1;
  std::int64_t result[2 * n + 1];
  check_mpi(MPI_Allreduce(both, result, 2 * n + 1, MPI_INT64_T, MPI_MAX, comm.raw()),
            "MPI_Allreduce", comm.raw());
  bool same = result[2 * n] == 0;
  for (int i = 0; i < n; ++i)
    same = same && result[i] == -result[n + i];
  if (same)
    return;
  // Error path only: every rank gathers all shapes and problems and throws the same text.
  std::vector<std::int64_t> all(static_cast<std::size_t>(n) * comm.size());
  check_mpi(MPI_Allgather(mine.values, n, MPI_INT64_T, all.data(), n, MPI_INT64_T, comm.raw()),
            "MPI_Allgather", comm.raw());
  constexpr int text_size = 200;
  char own[text_size] = {};
  problem.copy(own, text_size - 1);
  std::vector<char> texts(static_cast<std::size_t>(text_size) * comm.size());
  check_mpi(MPI_Allgather(own, text_size, MPI_CHAR, texts.data(), text_size, MPI_CHAR, comm.raw()),
            "MPI_Allgather", comm.raw());
  std::string text = std::string(operation) + ": ranks passed different or unusable arguments:";
  for (int r = 0; r < comm.size(); ++r) {
    ShapeSignature s;
    for (int i = 0; i < n; ++i)
      s.values[i] = all[static_cast<std::size_t>(r) * n + i];
    text += " rank " + std::to_string(r) + " " + s.describe();
    const char* why = texts.data() + static_cast<std::size_t>(r) * text_size;
    if (*why)
      text += std::string(" (") + why + ")";
    text += r + 1 < comm.size() ? ";" : "";
  }
  throw Error(text);
}

void check_rows(const std::int64_t* all, std::size_t ranks, const char* operation, int axis) {
  constexpr int n = ShapeSignature::fields;
  bool same = true;
  for (std::size_t r = 1; r < ranks && same; ++r) {
    for (int i = 0; i < n; ++i) {
      if (i != 2 + axis && all[r * n + i] != all[i])
        same = false;
    }
  }
  if (same)
    return;
  std::string text =
      std::string(operation) + ": ranks passed " +
      (axis == 0 ? std::string("rows") : "slices along axis " + std::to_string(axis)) +
      " of different shapes:";
  for (std::size_t r = 0; r < ranks; ++r) {
    ShapeSignature s;
    for (int i = 0; i < n; ++i)
      s.values[i] = all[r * n + i];
    text += " rank " + std::to_string(r) + " " + s.describe() + (r + 1 < ranks ? ";" : "");
  }
  throw Error(text);
}

std::string root_problem(const Communicator& comm, int root) {
  return "root " + std::to_string(root) + " is out of range for a communicator of " +
         std::to_string(comm.size()) + " ranks";
}

void throw_on_rank(const Communicator& comm, const char* operation, const std::string& what) {
  throw Error(std::string(operation) + ": " + what + " (on rank " + std::to_string(comm.rank()) +
              ")");
}

void throw_count_too_large(const Communicator& comm, const char* operation, std::size_t n) {
  throw_on_rank(comm, operation,
                std::to_string(n) +
                    " elements exceed INT_MAX, the most one MPI 3.1 collective moves per rank");
}

std::string ShapeSignature::describe() const {
  ViewEnvelope e;
  e.value_type = static_cast<ValueType>(values[0]);
  e.rank = static_cast<std::uint8_t>(values[1]);
  for (int d = 0; d < e.rank && d < 8; ++d)
    e.extents[d] = static_cast<std::uint64_t>(values[2 + d]);
  std::string text = e.describe();
  text = text.substr(0, text.rfind(' '));  // without the layout
  if (values[10] != 0)
    text += " #" + std::to_string(values[10] & 0xffff);  // e.g. the counts' hash
  if (values[11] >= 0)
    text += " root " + std::to_string(values[11]);
  return text;
}

}  // namespace detail
}  // namespace baton
