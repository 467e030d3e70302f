#pragma once
/// \file
/// Collectives on Kokkos Views (host or device memory, direct or staged through host memory):
/// barrier, all_reduce (sum, prod, max, min; in place or not), average, all_gather, all_gatherv,
/// gather, gatherv, reduce_scatter, reduce_scatter_v, broadcast, broadcast_view.
///
/// Rows: the gathers concatenate along the first extent ("rows"); the other extents of every rank
/// must agree. Results are LayoutRight Views in the memory space of the input.
///
/// Checked and unchecked mode (comm.collective_checks(), per communicator):
/// - Checked: before moving data, the ranks agree on every rank's shape, value type and root, and
///   on whether any rank found a problem with its own arguments, with one small extra collective
///   (an MPI_Allreduce of 25 int64). A mismatch or a problem throws the same baton::Error on every
///   rank, naming each rank's shape, and the communicator stays usable.
/// - Unchecked: the call goes straight to MPI. Every rank still checks its own arguments (a root
///   out of range, a count past INT_MAX, a recv View that cannot hold the result, rows that do not
///   split evenly) and throws alone. Those local checks give the same answer on every rank whenever
///   the ranks agree on the call (the same shapes, value types, roots and row counts), which is
///   exactly what checked mode verifies; a call on which the ranks disagree is the caller's
///   undefined behaviour, as in MPI: wrong results, an MPI error, or a hang. Run tests and CI with
///   checks on.
/// all_gatherv, gatherv and broadcast_view check always: they exchange shapes anyway.
///
/// The default, decided once per process (baton::collective_checks_default()):
/// BATON_CHECK_COLLECTIVES=0 turns the checks off and any other non-empty value (e.g. 1) turns
/// them on; unset, they are on when Baton's library was compiled without NDEBUG (a Debug build)
/// and off when it was compiled with NDEBUG (Release, RelWithDebInfo, MinSizeRel). That is decided
/// in the library's communicator.cpp, so the flags of the program including this header do not
/// matter. Communicator::set_collective_checks() changes one communicator.
///
/// Execution space instances: every collective has an overload taking an instance first
/// (`all_reduce(space, comm, v, op)`): that instance is fenced before MPI reads a View, never the
/// whole space, and the copies Baton makes (staging, packing) and average's scaling run on it,
/// fenced before the call returns. Without one, the default instance of the View's execution space.
///
/// Counts are limited to INT_MAX elements per rank (MPI 3.1).

#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "baton/collectives/mpi_type.hpp"
#include "baton/comm/communicator.hpp"
#include "baton/core/check_mpi.hpp"
#include "baton/transport/bytes.hpp"
#include "baton/transport/detail/view_wire.hpp"

namespace baton {

/// MPI_Barrier on comm.
void barrier(const Communicator& comm);

namespace detail {

/// Value type, rank, the 8 extents, one extra number (e.g. a hash of per-rank counts) and the root
/// (-1 for collectives without one).
struct ShapeSignature {
  static constexpr int fields = 12;
  std::int64_t values[fields] = {};
  std::string describe() const;
};

template <class V>
ShapeSignature signature_of(const V& v, std::int64_t extra = 0, int root = -1) {
  ShapeSignature s;
  s.values[0] = static_cast<std::int64_t>(value_type_of<value_t<V>>());
  s.values[1] = rank_v<V>;
  for (int d = 0; d < rank_v<V>; ++d)
    s.values[2 + d] = static_cast<std::int64_t>(v.extent(d));
  s.values[10] = extra;
  s.values[11] = root;
  return s;
}

/// Throws the same baton::Error on every rank unless all ranks passed the same signature and none
/// found a `problem` with its own arguments (an empty string means none).
void agree(const Communicator& comm, const ShapeSignature& mine, const char* operation,
           const std::string& problem = std::string());

/// Throws baton::Error "<operation>: <what> (on rank <r>)" (error paths only: kept out of line).
[[noreturn]] void throw_on_rank(const Communicator& comm, const char* operation,
                                const std::string& what);

/// Throws the error of a count past INT_MAX (out of line).
[[noreturn]] void throw_count_too_large(const Communicator& comm, const char* operation,
                                        std::size_t n);

/// Validates one rank's own arguments. With collective checks on, the problem is shared through
/// agree() (with v's signature) so every rank throws; with them off, this rank throws alone (the
/// others are then left in the collective: that is the price of unchecked mode). `what` is a
/// callable returning the problem's text; it is only called when `ok` is false, and the signature
/// is only built when the checks are on.
template <class V, class What>
void agree_or_throw(const Communicator& comm, const V& v, const char* operation, bool ok,
                    const What& what, std::int64_t extra = 0) {
  if (comm.collective_checks()) {
    agree(comm, signature_of(v, extra), operation, ok ? std::string() : what());
  } else if (!ok) {
    throw_on_rank(comm, operation, what());
  }
}

/// Why `root` is not a rank of comm (for agree()).
std::string root_problem(const Communicator& comm, int root);

/// n as an MPI count; throws (on this rank) when it exceeds INT_MAX.
inline int checked_count(std::size_t n, const Communicator& comm, const char* operation) {
  if (n > static_cast<std::size_t>(INT_MAX))
    throw_count_too_large(comm, operation, n);
  return static_cast<int>(n);
}

template <class V>
std::size_t rows_of(const V& v) {
  if constexpr (rank_v<V> == 0) {
    return 1;
  } else {
    return v.extent(0);
  }
}

template <class V>
std::size_t row_elements(const V& v) {
  std::size_t n = 1;
  for (int d = 1; d < rank_v<V>; ++d)
    n *= v.extent(d);
  return n;
}

/// n elements of a trivial type T: on the stack up to `Inline`, else on the heap. Not initialised
/// (the caller writes before reading). For the per-rank arrays of the v-variants, so that small
/// communicators allocate nothing.
template <class T, std::size_t Inline>
class ScratchArray {
 public:
  explicit ScratchArray(std::size_t n) : n_(n), heap_(n > Inline ? n : 0) {}
  T* data() noexcept { return n_ > Inline ? heap_.data() : local_; }
  const T* data() const noexcept { return n_ > Inline ? heap_.data() : local_; }
  T& operator[](std::size_t i) noexcept { return data()[i]; }
  const T& operator[](std::size_t i) const noexcept { return data()[i]; }
  std::size_t size() const noexcept { return n_; }

 private:
  std::size_t n_;
  T local_[Inline];
  std::vector<T> heap_;
};

/// True when a View in V's memory space, of V's layout, is handed to MPI as is on `comm`.
template <class V>
bool mpi_reads_directly(const Communicator& comm, const V& v) {
  return pass_directly<typename V::memory_space>(comm) && in_wire_form(v) &&
         (natural_layout<V>() == WireLayout::right ||
          layouts_agree(envelope_of(v, natural_layout<V>()), WireLayout::right));
}

/// Contiguous, row-major memory for one View that MPI can read or write: the View itself when it
/// already is that and the communicator passes its memory space directly, else a host copy.
template <class V, class Exec = typename V::execution_space>
class MpiBuffer {
 public:
  using T = value_t<V>;
  /// `v` must outlive the buffer. With `read`, the instance `space` is fenced first (kernels that
  /// wrote v there are done) and a staged buffer gets v's contents; copies run on `space`.
  MpiBuffer(const Communicator& comm, const V& v, bool read, const Exec& space = Exec())
      : view_(v),
        space_(space),
        direct_(mpi_reads_directly(comm, v)),
        staging_(direct_ ? Kokkos::View<T*, StagingSpace>() : staging_buffer<T>(v.size())),
        data_(direct_ ? const_cast<T*>(v.data()) : staging_.data()) {
    if (read) {
      space_.fence();
      if (!direct_)
        copy_to_host(space_, v, staging_.data(), WireLayout::right);
    }
  }
  T* data() const noexcept { return data_; }
  bool direct() const noexcept { return direct_; }
  /// Copies a staged result back into the View (nothing to do when direct).
  void write_back() const {
    if (!direct_)
      copy_from_host(space_, view_, staging_.data(), WireLayout::right);
  }

 private:
  const V& view_;
  Exec space_;
  bool direct_;
  Kokkos::View<T*, StagingSpace> staging_;
  T* data_;
};

/// `space` when it is a Space, else a default Space instance.
template <class Space, class Exec>
Space instance_as(const Exec& space) {
  if constexpr (std::is_same_v<Space, Exec>) {
    return space;
  } else {
    return Space();
  }
}

/// The LayoutRight View type that holds results shaped like V, in V's memory space.
template <class V>
using ResultView =
    Kokkos::View<typename V::non_const_data_type, Kokkos::LayoutRight, typename V::memory_space>;

template <class V>
ResultView<V> allocate_rows(const V& like, std::size_t rows, const char* label) {
  ViewEnvelope e = envelope_of(like, WireLayout::right);
  if (rank_v < V >> 0)
    e.extents[0] = rows;
  return allocate_like<ResultView<V>>(e, label);
}

/// Per-rank arrays on the stack for communicators of up to this many ranks.
inline constexpr std::size_t inline_ranks = 16;

/// Checks that all ranks' signatures (`all`: `ranks` times ShapeSignature::fields values, by rank)
/// agree on everything but extent `axis` (the first by default); otherwise throws the same
/// baton::Error on every rank, naming each rank's shape.
void check_rows(const std::int64_t* all, std::size_t ranks, const char* operation, int axis = 0);

/// Where each rank's rows go in a gathered result: element counts and offsets per rank.
struct Layout {
  explicit Layout(std::size_t ranks) : counts(ranks), offsets(ranks) {}
  ScratchArray<int, inline_ranks> counts, offsets;
  std::size_t total_rows = 0;
};

/// Exchanges every rank's shape and root (always: the v-variants check rows against each other)
/// and lays the rows out by rank. Along another `axis`, the "rows" are the slices along it and
/// the counts are in units of `unit` elements (by default one row's elements).
template <class V>
void gather_layout(const Communicator& comm, const V& send, const char* operation, Layout& layout,
                   int root = -1, int axis = 0, std::size_t unit = 0) {
  const auto ranks = static_cast<std::size_t>(comm.size());
  constexpr int fields = ShapeSignature::fields;
  const ShapeSignature mine = signature_of(send, axis, root);
  ScratchArray<std::int64_t, inline_ranks * fields> all(ranks * fields);
  check_mpi(
      MPI_Allgather(mine.values, fields, MPI_INT64_T, all.data(), fields, MPI_INT64_T, comm.raw()),
      "MPI_Allgather", comm.raw());
  check_rows(all.data(), ranks, operation, axis);
  const std::size_t per_row = unit ? unit : row_elements(send);
  std::size_t total = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    const auto rows = static_cast<std::size_t>(all[r * fields + 2 + axis]);
    layout.counts[r] = checked_count(rows * per_row, comm, operation);
    layout.offsets[r] = checked_count(total * per_row, comm, operation);
    total += rows;
  }
  layout.total_rows = total;
}

template <class V>
void check_reducible() {
  using T = value_t<V>;
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>,
                "reductions need a numeric value type");
}

}  // namespace detail

namespace detail {
/// The checks of all_reduce and iall_reduce: a reducible value type, send and recv of one shape
/// (agreed on every rank in checked mode); returns the element count.
template <class S, class R>
int check_all_reduce(const Communicator& comm, const S& send, const R& recv, const char* op_name) {
  check_reducible<S>();
  static_assert(std::is_same_v<value_t<S>, value_t<R>>, "send and recv need the same value type");
  bool same = rank_v<S> == rank_v<R>;
  for (int d = 0; same && d < rank_v<S>; ++d)
    same = send.extent(d) == recv.extent(d);
  agree_or_throw(comm, send, op_name, same, [&] {
    return "send " + describe_view(send) + " and recv " + describe_view(recv) + " differ";
  });
  return checked_count(send.size(), comm, op_name);
}
}  // namespace detail

/// recv = op over all ranks of send (same shapes everywhere; send and recv may differ in layout and
/// space).
template <class Exec, class S, class R, detail::if_space_t<Exec, S> Enabled = 0,
          detail::if_space_t<Exec, R> EnabledR = 0>
void all_reduce(const Exec& space, const Communicator& comm, const S& send, const R& recv,
                ReduceOp op) {
  constexpr const char* op_name = "baton::all_reduce";
  const int count = detail::check_all_reduce(comm, send, recv, op_name);
  detail::MpiBuffer<S, Exec> in(comm, send, true, space);
  detail::MpiBuffer<R, Exec> out(comm, recv, false, space);
  check_mpi(MPI_Allreduce(in.data(), out.data(), count, mpi_datatype<detail::value_t<S>>(),
                          to_mpi(op), comm.raw()),
            "MPI_Allreduce", comm.raw());
  out.write_back();
}

template <class S, class R>
void all_reduce(const Communicator& comm, const S& send, const R& recv, ReduceOp op) {
  all_reduce(typename S::execution_space(), comm, send, recv, op);
}

/// v = op over all ranks of v, in place.
template <class Exec, class V, detail::if_space_t<Exec, V> Enabled = 0>
void all_reduce(const Exec& space, const Communicator& comm, const V& v, ReduceOp op) {
  detail::check_reducible<V>();
  constexpr const char* op_name = "baton::all_reduce";
  if (comm.collective_checks())
    detail::agree(comm, detail::signature_of(v), op_name);
  const int count = detail::checked_count(v.size(), comm, op_name);
  detail::MpiBuffer<V, Exec> buffer(comm, v, true, space);
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, buffer.data(), count, mpi_datatype<detail::value_t<V>>(),
                          to_mpi(op), comm.raw()),
            "MPI_Allreduce", comm.raw());
  buffer.write_back();
}

template <class V>
void all_reduce(const Communicator& comm, const V& v, ReduceOp op) {
  all_reduce(typename V::execution_space(), comm, v, op);
}

/// v = (sum over the ranks of comm of v) / comm.size(), in place. Divides by the size of the
/// communicator given, so averaging over a subgroup divides by the subgroup's size.
template <class Exec, class V, detail::if_space_t<Exec, V> Enabled = 0>
void average(const Exec& space, const Communicator& comm, const V& v) {
  using T = detail::value_t<V>;
  static_assert(std::is_floating_point_v<T>, "baton::average needs a floating-point View");
  constexpr const char* op_name = "baton::average";
  if (comm.collective_checks())
    detail::agree(comm, detail::signature_of(v), op_name);
  const int count = detail::checked_count(v.size(), comm, op_name);
  detail::MpiBuffer<V, Exec> buffer(comm, v, true, space);
  check_mpi(
      MPI_Allreduce(MPI_IN_PLACE, buffer.data(), count, mpi_datatype<T>(), MPI_SUM, comm.raw()),
      "MPI_Allreduce", comm.raw());
  const T scale = T(1) / T(comm.size());
  if (buffer.direct()) {
    // On the instance given when it reaches v's memory, else on v's own execution space.
    using MS = typename V::memory_space;
    constexpr bool reaches = Kokkos::SpaceAccessibility<Exec, MS>::accessible;
    using Space = std::conditional_t<reaches, Exec, typename V::execution_space>;
    const Space on = detail::instance_as<Space>(space);
    Kokkos::View<T*, MS, Kokkos::MemoryTraits<Kokkos::Unmanaged>> flat(buffer.data(), v.size());
    Kokkos::parallel_for(
        "baton::average", Kokkos::RangePolicy<Space>(on, 0, v.size()),
        KOKKOS_LAMBDA(std::size_t i) { flat(i) *= scale; });
    on.fence();
  } else {
    T* data = buffer.data();
    for (std::size_t i = 0; i < v.size(); ++i)
      data[i] *= scale;
    buffer.write_back();
  }
}

template <class V>
void average(const Communicator& comm, const V& v) {
  average(typename V::execution_space(), comm, v);
}

/// recv (comm.size() * send rows) = every rank's send, concatenated by rank.
template <class Exec, class S, class R, detail::if_space_t<Exec, S> Enabled = 0,
          detail::if_space_t<Exec, R> EnabledR = 0>
void all_gather(const Exec& space, const Communicator& comm, const S& send, const R& recv) {
  static_assert(std::is_same_v<detail::value_t<S>, detail::value_t<R>>,
                "send and recv need the same value type");
  static_assert(
      detail::rank_v<S> == detail::rank_v<R> || (detail::rank_v<S> == 0 && detail::rank_v<R> == 1),
      "recv has the rank of send (or 1 for scalar sends)");
  constexpr const char* op_name = "baton::all_gather";
  const std::size_t rows = detail::rows_of(send);
  bool fits =
      detail::rows_of(recv) == rows * comm.size() && recv.size() == send.size() * comm.size();
  detail::agree_or_throw(comm, send, op_name, fits, [&] {
    return "recv " + detail::describe_view(recv) + " cannot hold " + std::to_string(comm.size()) +
           " x send " + detail::describe_view(send);
  });
  const int count = detail::checked_count(send.size(), comm, op_name);
  detail::MpiBuffer<S, Exec> in(comm, send, true, space);
  detail::MpiBuffer<R, Exec> out(comm, recv, false, space);
  const MPI_Datatype type = mpi_datatype<detail::value_t<S>>();
  check_mpi(MPI_Allgather(in.data(), count, type, out.data(), count, type, comm.raw()),
            "MPI_Allgather", comm.raw());
  out.write_back();
}

template <class S, class R>
void all_gather(const Communicator& comm, const S& send, const R& recv) {
  all_gather(typename S::execution_space(), comm, send, recv);
}

/// Every rank's rows, concatenated by rank, on every rank. Ranks may have different row counts
/// (discovered, not passed); all other extents must agree.
template <class Exec, class V, detail::if_space_t<Exec, V> Enabled = 0>
detail::ResultView<V> all_gatherv(const Exec& space, const Communicator& comm, const V& send) {
  static_assert(detail::rank_v<V> >= 1, "all_gatherv concatenates rows: use rank >= 1");
  constexpr const char* op_name = "baton::all_gatherv";
  detail::Layout parts(static_cast<std::size_t>(comm.size()));
  detail::gather_layout(comm, send, op_name, parts);
  // A label of at most 15 characters stays in std::string's own buffer: no heap allocation.
  auto result = detail::allocate_rows(send, parts.total_rows, "baton::gatherv");
  detail::MpiBuffer<V, Exec> in(comm, send, true, space);
  detail::MpiBuffer<decltype(result), Exec> out(comm, result, false, space);
  const MPI_Datatype type = mpi_datatype<detail::value_t<V>>();
  check_mpi(MPI_Allgatherv(in.data(), parts.counts[comm.rank()], type, out.data(),
                           parts.counts.data(), parts.offsets.data(), type, comm.raw()),
            "MPI_Allgatherv", comm.raw());
  out.write_back();
  return result;
}

template <class V>
detail::ResultView<V> all_gatherv(const Communicator& comm, const V& send) {
  return all_gatherv(typename V::execution_space(), comm, send);
}

/// On `root`: every rank's rows concatenated by rank (ranks may have different row counts); on the
/// other ranks: a View with 0 rows.
template <class Exec, class V, detail::if_space_t<Exec, V> Enabled = 0>
detail::ResultView<V> gatherv(const Exec& space, const Communicator& comm, const V& send,
                              int root) {
  static_assert(detail::rank_v<V> >= 1, "gatherv concatenates rows: use rank >= 1");
  constexpr const char* op_name = "baton::gatherv";
  if (comm.is_null())
    check_rank(comm, root, op_name);  // throws: no communicator to exchange shapes on
  detail::Layout parts(static_cast<std::size_t>(comm.size()));
  detail::gather_layout(comm, send, op_name, parts, root);
  check_rank(comm, root, op_name);  // every rank passed this root: all throw or none
  const bool is_root = comm.rank() == root;
  auto result = detail::allocate_rows(send, is_root ? parts.total_rows : 0, "baton::gatherv");
  detail::MpiBuffer<V, Exec> in(comm, send, true, space);
  detail::MpiBuffer<decltype(result), Exec> out(comm, result, false, space);
  const MPI_Datatype type = mpi_datatype<detail::value_t<V>>();
  check_mpi(MPI_Gatherv(in.data(), parts.counts[comm.rank()], type, out.data(), parts.counts.data(),
                        parts.offsets.data(), type, root, comm.raw()),
            "MPI_Gatherv", comm.raw());
  if (is_root)
    out.write_back();
  return result;
}

template <class V>
detail::ResultView<V> gatherv(const Communicator& comm, const V& send, int root) {
  return gatherv(typename V::execution_space(), comm, send, root);
}

/// gatherv where every rank has the same row count (checked when collective checks are on).
template <class Exec, class V, detail::if_space_t<Exec, V> Enabled = 0>
detail::ResultView<V> gather(const Exec& space, const Communicator& comm, const V& send, int root) {
  if (comm.collective_checks())
    detail::agree(comm, detail::signature_of(send, 0, root), "baton::gather");
  return gatherv(space, comm, send, root);
}

template <class V>
detail::ResultView<V> gather(const Communicator& comm, const V& send, int root) {
  return gather(typename V::execution_space(), comm, send, root);
}

/// Reduces `send` over all ranks and gives rank r the r-th of comm.size() equal row blocks.
template <class Exec, class V, detail::if_space_t<Exec, V> Enabled = 0>
detail::ResultView<V> reduce_scatter(const Exec& space, const Communicator& comm, const V& send,
                                     ReduceOp op) {
  detail::check_reducible<V>();
  static_assert(detail::rank_v<V> >= 1, "reduce_scatter splits rows: use rank >= 1");
  constexpr const char* op_name = "baton::reduce_scatter";
  const std::size_t rows = send.extent(0);
  detail::agree_or_throw(comm, send, op_name, rows % comm.size() == 0, [&] {
    return std::to_string(rows) + " rows do not split evenly over " + std::to_string(comm.size()) +
           " ranks";
  });
  auto result = detail::allocate_rows(send, rows / comm.size(), "baton::reduce_scatter");
  const int count = detail::checked_count(result.size(), comm, op_name);
  detail::MpiBuffer<V, Exec> in(comm, send, true, space);
  detail::MpiBuffer<decltype(result), Exec> out(comm, result, false, space);
  check_mpi(MPI_Reduce_scatter_block(in.data(), out.data(), count,
                                     mpi_datatype<detail::value_t<V>>(), to_mpi(op), comm.raw()),
            "MPI_Reduce_scatter_block", comm.raw());
  out.write_back();
  return result;
}

template <class V>
detail::ResultView<V> reduce_scatter(const Communicator& comm, const V& send, ReduceOp op) {
  return reduce_scatter(typename V::execution_space(), comm, send, op);
}

/// Reduces `send` over all ranks and gives rank r the next rows_per_rank[r] rows.
template <class Exec, class V, detail::if_space_t<Exec, V> Enabled = 0>
detail::ResultView<V> reduce_scatter_v(const Exec& space, const Communicator& comm, const V& send,
                                       const std::vector<std::size_t>& rows_per_rank, ReduceOp op) {
  detail::check_reducible<V>();
  static_assert(detail::rank_v<V> >= 1, "reduce_scatter_v splits rows: use rank >= 1");
  constexpr const char* op_name = "baton::reduce_scatter_v";
  std::size_t total = 0;
  std::uint64_t hash =
      1469598103934665603ULL;  // FNV-1a over the counts (unsigned: it wraps by design)
  for (std::size_t r : rows_per_rank) {
    total += r;
    hash = (hash ^ static_cast<std::uint64_t>(r)) * 1099511628211ULL;
  }
  const bool ok =
      rows_per_rank.size() == static_cast<std::size_t>(comm.size()) && total == send.extent(0);
  // The 63 low bits: a non-negative int64 that all ranks compute alike.
  const auto counts_hash = static_cast<std::int64_t>(hash >> 1);
  detail::agree_or_throw(
      comm, send, op_name, ok,
      [&] {
        return std::to_string(rows_per_rank.size()) + " row counts adding up to " +
               std::to_string(total) + " for " + std::to_string(comm.size()) + " ranks and " +
               std::to_string(send.extent(0)) + " rows";
      },
      counts_hash);
  const std::size_t per_row = detail::row_elements(send);
  std::vector<int> counts(rows_per_rank.size());
  for (std::size_t r = 0; r < counts.size(); ++r)
    counts[r] = detail::checked_count(rows_per_rank[r] * per_row, comm, op_name);
  auto result = detail::allocate_rows(send, rows_per_rank[comm.rank()], "baton::reduce_scatter_v");
  detail::MpiBuffer<V, Exec> in(comm, send, true, space);
  detail::MpiBuffer<decltype(result), Exec> out(comm, result, false, space);
  check_mpi(MPI_Reduce_scatter(in.data(), out.data(), counts.data(),
                               mpi_datatype<detail::value_t<V>>(), to_mpi(op), comm.raw()),
            "MPI_Reduce_scatter", comm.raw());
  out.write_back();
  return result;
}

template <class V>
detail::ResultView<V> reduce_scatter_v(const Communicator& comm, const V& send,
                                       const std::vector<std::size_t>& rows_per_rank, ReduceOp op) {
  return reduce_scatter_v(typename V::execution_space(), comm, send, rows_per_rank, op);
}

/// Copies root's v into v on every rank; v has the same shape everywhere.
template <class Exec, class V, detail::if_space_t<Exec, V> Enabled = 0>
void broadcast(const Exec& space, const Communicator& comm, const V& v, int root) {
  constexpr const char* op_name = "baton::broadcast";
  if (comm.collective_checks() && !comm.is_null()) {
    // A root out of range on some ranks only is an error on every rank, like a mismatched shape.
    const bool root_ok = root >= 0 && root < comm.size();
    detail::agree(comm, detail::signature_of(v, 0, root), op_name,
                  root_ok ? std::string() : detail::root_problem(comm, root));
  }
  check_rank(comm, root, op_name);  // with checks on, every rank passed this root
  const int count = detail::checked_count(v.size(), comm, op_name);
  const bool is_root = comm.rank() == root;
  detail::MpiBuffer<V, Exec> buffer(comm, v, is_root, space);
  check_mpi(MPI_Bcast(buffer.data(), count, mpi_datatype<detail::value_t<V>>(), root, comm.raw()),
            "MPI_Bcast", comm.raw());
  if (!is_root)
    buffer.write_back();
}

template <class V>
void broadcast(const Communicator& comm, const V& v, int root) {
  broadcast(typename V::execution_space(), comm, v, root);
}

/// Root's View on every rank: the others allocate a V shaped like root's (only root's `v` is read).
template <class Exec, class V, detail::if_space_t<Exec, V> Enabled = 0>
V broadcast_view(const Exec& space, const Communicator& comm, const V& v, int root,
                 const std::string& label = "baton::broadcast_view") {
  static_assert(detail::left_or_right_v<V>,
                "broadcast_view allocates LayoutLeft or LayoutRight Views");
  constexpr const char* op_name = "baton::broadcast_view";
  check_rank(comm, root, op_name);
  const bool is_root = comm.rank() == root;
  auto header = encode_envelope(detail::envelope_of(v, WireLayout::right));
  check_mpi(MPI_Bcast(header.data(), static_cast<int>(header.size()), MPI_BYTE, root, comm.raw()),
            "MPI_Bcast", comm.raw());
  // Every rank must be able to hold root's View before any data moves, or all throw together.
  V result = v;
  int ok = 1;
  std::string why;
  if (!is_root) {
    try {
      const ViewEnvelope sent = decode_envelope_header(header.data());
      detail::check_allocatable<V>(sent, [root, op_name] {
        return std::pair<std::string, std::string>(op_name, "root " + std::to_string(root));
      });
      result = detail::allocate_like<V>(sent, label);
    } catch (const Error& error) {
      ok = 0;
      why = error.what();
    }
  }
  int all_ok = 0;
  check_mpi(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm.raw()), "MPI_Allreduce",
            comm.raw());
  if (!all_ok)
    throw Error(why.empty() ? std::string(op_name) + ": another rank cannot hold root's View"
                            : why);
  const int count = detail::checked_count(result.size(), comm, op_name);
  detail::MpiBuffer<V, Exec> buffer(comm, result, is_root, space);
  check_mpi(MPI_Bcast(buffer.data(), count, mpi_datatype<detail::value_t<V>>(), root, comm.raw()),
            "MPI_Bcast", comm.raw());
  if (!is_root)
    buffer.write_back();
  return result;
}

template <class V>
V broadcast_view(const Communicator& comm, const V& v, int root,
                 const std::string& label = "baton::broadcast_view") {
  return broadcast_view(typename V::execution_space(), comm, v, root, label);
}

}  // namespace baton
