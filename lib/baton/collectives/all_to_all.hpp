#pragma once
/// \file
/// All-to-all on Kokkos Views (host or device memory, direct or staged through host memory):
/// all_to_all (every rank sends the same number of rows to every rank) and all_to_allv (each rank
/// says how many rows go to each rank; the receivers discover how many come to them).
///
/// Rows are the first extent; every other extent, and the value type, must agree across ranks.
/// Checks as for the other collectives (collectives.hpp): all_to_all agrees on the shapes first in
/// checked mode only; all_to_allv exchanges the row counts anyway (one MPI_Alltoall of a uint64
/// per rank pair: the rows, and a 32-bit code of the rest of the shape) and so checks the shapes in
/// both modes: ranks with rows of different shapes, or a rank whose row counts do not add up to its
/// rows, throw the same baton::Error on every rank before any data moves. One limit is local:
/// more than INT_MAX elements arriving at one rank throw there alone (MPI 3.1 counts).

#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "baton/collectives/collectives.hpp"

namespace baton {

/// What all_to_allv returns: the rows received, concatenated by source rank, and how many rows
/// came from each rank (rows_from[r] rows from rank r, starting at row offset(r)).
template <class R>
struct AllToAllvResult {
  R rows;
  std::vector<std::size_t> rows_from;
  /// The first row of `rows` that came from rank r.
  std::size_t offset(int r) const {
    std::size_t first = 0;
    for (int k = 0; k < r; ++k)
      first += rows_from[static_cast<std::size_t>(k)];
    return first;
  }
};

namespace detail {

/// A 32-bit number that stands for everything in a signature but the rows (value type, rank, the
/// other extents): the same on ranks whose rows can travel together. Never `no_shape`.
std::uint32_t shape_code(const ShapeSignature& s);

/// The code of a rank that found a problem with its own arguments.
inline constexpr std::uint32_t no_shape = 0xffffffffu;

/// One rank's record for one destination: the code in the high 32 bits, the rows in the low 32.
inline std::uint64_t exchange_record(std::uint32_t code, std::size_t rows) {
  return (static_cast<std::uint64_t>(code) << 32) | static_cast<std::uint64_t>(rows);
}

/// Checks the records received by MPI_Alltoall (`all`, one per source rank) against this rank's
/// own code (`problem`: this rank's own problem, empty if none). Every rank receives every rank's
/// code, so all of them see a mismatch alike: then they all exchange the full signatures and
/// problems (agree()) and throw the same baton::Error.
void check_exchange(const Communicator& comm, const std::uint64_t* all, const ShapeSignature& mine,
                    const char* operation, const std::string& problem);

}  // namespace detail

/// recv block i (of comm.size() equal row blocks) = rank i's send block for this rank. send and
/// recv have the same shape, which splits evenly into comm.size() row blocks.
template <class Exec, class S, class R, detail::if_space_t<Exec, S> Enabled = 0,
          detail::if_space_t<Exec, R> EnabledR = 0>
void all_to_all(const Exec& space, const Communicator& comm, const S& send, const R& recv) {
  static_assert(std::is_same_v<detail::value_t<S>, detail::value_t<R>>,
                "send and recv need the same value type");
  static_assert(detail::rank_v<S> >= 1 && detail::rank_v<S> == detail::rank_v<R>,
                "all_to_all splits rows: send and recv of the same rank >= 1");
  constexpr const char* op_name = "baton::all_to_all";
  bool same = true;
  for (int d = 0; same && d < detail::rank_v<S>; ++d)
    same = send.extent(d) == recv.extent(d);
  const bool ok = same && send.extent(0) % comm.size() == 0;
  detail::agree_or_throw(comm, send, op_name, ok, [&] {
    return same ? std::to_string(send.extent(0)) + " rows do not split evenly over " +
                      std::to_string(comm.size()) + " ranks"
                : "send " + detail::describe_view(send) + " and recv " +
                      detail::describe_view(recv) + " differ";
  });
  const int count = detail::checked_count(send.size() / comm.size(), comm, op_name);
  detail::MpiBuffer<S, Exec> in(comm, send, true, space);
  detail::MpiBuffer<R, Exec> out(comm, recv, false, space);
  const MPI_Datatype type = mpi_datatype<detail::value_t<S>>();
  check_mpi(MPI_Alltoall(in.data(), count, type, out.data(), count, type, comm.raw()),
            "MPI_Alltoall", comm.raw());
  out.write_back();
}

template <class S, class R>
void all_to_all(const Communicator& comm, const S& send, const R& recv) {
  all_to_all(typename S::execution_space(), comm, send, recv);
}

/// Sends the first rows_per_rank[0] rows of `send` to rank 0, the next rows_per_rank[1] to rank
/// 1, and so on; returns the rows every rank sent to this one, concatenated by source rank (a new
/// LayoutRight View in send's memory space) with the count from each. The row counts of the
/// receivers are discovered, not passed.
template <class Exec, class V, detail::if_space_t<Exec, V> Enabled = 0>
AllToAllvResult<detail::ResultView<V>> all_to_allv(const Exec& space, const Communicator& comm,
                                                   const V& send,
                                                   const std::vector<std::size_t>& rows_per_rank) {
  static_assert(detail::rank_v<V> >= 1, "all_to_allv sends rows: use rank >= 1");
  constexpr const char* op_name = "baton::all_to_allv";
  const auto ranks = static_cast<std::size_t>(comm.size());
  std::size_t total = 0;
  for (std::size_t r : rows_per_rank)
    total += r;
  const std::size_t per_row = detail::row_elements(send);
  std::string problem;
  if (rows_per_rank.size() != ranks || total != send.extent(0)) {
    problem = std::to_string(rows_per_rank.size()) + " row counts adding up to " +
              std::to_string(total) + " for " + std::to_string(ranks) + " ranks and " +
              std::to_string(send.extent(0)) + " rows";
  } else if (total * per_row > static_cast<std::size_t>(INT_MAX) || total > 0xffffffffu) {
    problem = std::to_string(total * per_row) +
              " elements exceed INT_MAX, the most one MPI 3.1 collective moves per rank";
  }
  // Every rank tells every rank the rows it sends there and its shape code (or a problem), one
  // uint64 per pair of ranks.
  const detail::ShapeSignature mine = detail::signature_of(send);
  const std::uint32_t code = problem.empty() ? detail::shape_code(mine) : detail::no_shape;
  detail::ScratchArray<std::uint64_t, detail::inline_ranks> out_rec(ranks), in_rec(ranks);
  for (std::size_t r = 0; r < ranks; ++r)
    out_rec[r] = detail::exchange_record(code, problem.empty() ? rows_per_rank[r] : 0);
  check_mpi(
      MPI_Alltoall(out_rec.data(), 1, MPI_UINT64_T, in_rec.data(), 1, MPI_UINT64_T, comm.raw()),
      "MPI_Alltoall", comm.raw());
  detail::check_exchange(comm, in_rec.data(), mine, op_name, problem);
  detail::ScratchArray<int, detail::inline_ranks> send_counts(ranks), send_offsets(ranks),
      recv_counts(ranks), recv_offsets(ranks);
  AllToAllvResult<detail::ResultView<V>> result;
  result.rows_from.resize(ranks);
  std::size_t sent = 0, received = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    const auto from = static_cast<std::size_t>(in_rec[r] & 0xffffffffu);
    result.rows_from[r] = from;
    send_counts[r] = static_cast<int>(rows_per_rank[r] * per_row);
    send_offsets[r] = static_cast<int>(sent * per_row);
    recv_counts[r] = detail::checked_count(from * per_row, comm, op_name);
    recv_offsets[r] = detail::checked_count(received * per_row, comm, op_name);
    sent += rows_per_rank[r];
    received += from;
  }
  // A receive past INT_MAX elements throws on the receiving rank only: the senders had no way to
  // know. checked_count above did that.
  detail::checked_count(received * per_row, comm, op_name);
  // A label of at most 15 characters stays in std::string's own buffer: no heap allocation.
  result.rows = detail::allocate_rows(send, received, "baton::alltoall");
  detail::MpiBuffer<V, Exec> in(comm, send, true, space);
  detail::MpiBuffer<detail::ResultView<V>, Exec> out(comm, result.rows, false, space);
  const MPI_Datatype type = mpi_datatype<detail::value_t<V>>();
  check_mpi(MPI_Alltoallv(in.data(), send_counts.data(), send_offsets.data(), type, out.data(),
                          recv_counts.data(), recv_offsets.data(), type, comm.raw()),
            "MPI_Alltoallv", comm.raw());
  out.write_back();
  return result;
}

template <class V>
AllToAllvResult<detail::ResultView<V>> all_to_allv(const Communicator& comm, const V& send,
                                                   const std::vector<std::size_t>& rows_per_rank) {
  return all_to_allv(typename V::execution_space(), comm, send, rows_per_rank);
}

}  // namespace baton
