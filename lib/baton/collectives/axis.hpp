#pragma once
/// \file
/// Gathers and reduce-scatters along any axis of a View (rank 1 to 8): all_gatherv, gatherv and
/// reduce_scatter with a baton::Axis. Along axis d, ranks may differ in extent d only; the result
/// has the other extents of the input and, along d, the ranks' slices concatenated by rank
/// (gathers) or this rank's equal share (reduce_scatter). Axis{0} is what the calls without an
/// Axis do.
///
/// No reordering copies: MPI reads and writes the slices in place through a derived datatype
/// (strided blocks of the row-major buffer), into the result View itself when the communicator
/// passes its memory directly; a View in another layout, or a staged one, goes through the usual
/// row-major host copy (collectives.hpp). reduce_scatter along d > 0 reorders instead (MPI reduces
/// only predefined datatypes): the slices are moved to the front before, and this rank's share
/// back after, one copy each on the View's side.
///
/// Checks as for the calls without an Axis: the gathers exchange every rank's shape and axis (in
/// both modes); reduce_scatter agrees on shape and axis in checked mode. An axis out of range is
/// a local error (every rank that passed it throws).

#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <array>
#include <cstddef>
#include <string>
#include <utility>

#include "baton/collectives/collectives.hpp"

namespace baton {

/// Which extent of a View a gather concatenates along, or a reduce-scatter splits (0: rows).
struct Axis {
  int dim = 0;
};

namespace detail {

/// A committed MPI datatype, freed on destruction: `blocks` blocks of `block` elements of `base`
/// (of `element_bytes` bytes), `stride` elements apart, resized to an extent of `block` elements.
/// The k-th of n consecutive items of this type holds elements a*stride + k*block + [0, block) of
/// the buffer, for every a < blocks: one slice along an axis of a row-major array.
class SliceDatatype {
 public:
  SliceDatatype(MPI_Datatype base, std::size_t element_bytes, int blocks, int block, int stride,
                MPI_Comm comm);
  ~SliceDatatype();
  SliceDatatype(const SliceDatatype&) = delete;
  SliceDatatype& operator=(const SliceDatatype&) = delete;
  MPI_Datatype type() const noexcept { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

/// Extents before `dim` multiplied (outer), extent `dim`, and extents after it multiplied (inner).
template <class V>
std::array<std::size_t, 3> around_axis(const V& v, int dim) {
  std::array<std::size_t, 3> s{1, v.extent(dim), 1};
  for (int d = 0; d < rank_v<V>; ++d) {
    if (d < dim)
      s[0] *= v.extent(d);
    else if (d > dim)
      s[2] *= v.extent(d);
  }
  return s;
}

/// Throws on this rank unless 0 <= axis < rank of V.
void check_axis(const Communicator& comm, int axis, int rank, const char* operation);

/// A LayoutRight View like `like` with extent `dim` set to `extent`, in like's memory space.
template <class V>
ResultView<V> allocate_along(const V& like, int dim, std::size_t extent, const char* label) {
  ViewEnvelope e = envelope_of(like, WireLayout::right);
  e.extents[dim] = extent;
  return allocate_like<ResultView<V>>(e, label);
}

/// The gathers along an axis (root < 0: to every rank).
template <class Exec, class V>
ResultView<V> gather_along(const Exec& space, const Communicator& comm, const V& send, int root,
                           int dim, const char* operation) {
  static_assert(rank_v<V> >= 1, "gathers along an axis need rank >= 1");
  check_axis(comm, dim, rank_v<V>, operation);
  if (root >= 0 || comm.is_null())
    check_rank(comm, root, operation);
  const std::array<std::size_t, 3> s = around_axis(send, dim);
  Layout parts(static_cast<std::size_t>(comm.size()));
  gather_layout(comm, send, operation, parts, root, dim, 1);  // counts in slices
  const bool receives = root < 0 || comm.rank() == root;
  // Not receiving: a View of 0 slices.
  auto result = allocate_along(send, dim, receives ? parts.total_rows : 0, "baton::gatherv");
  MpiBuffer<V, Exec> in(comm, send, true, space);
  MpiBuffer<decltype(result), Exec> out(comm, result, false, space);
  using T = value_t<V>;
  if (s[0] * s[2] == 0)  // every rank has no elements (the other extents agree)
    return result;
  const int blocks = checked_count(s[0], comm, operation);
  const int block = checked_count(s[2], comm, operation);
  const SliceDatatype mine(mpi_datatype<T>(), sizeof(T), blocks, block,
                           checked_count(s[1] * s[2], comm, operation), comm.raw());
  const SliceDatatype theirs(mpi_datatype<T>(), sizeof(T), blocks, block,
                             checked_count(parts.total_rows * s[2], comm, operation), comm.raw());
  const int count = static_cast<int>(s[1]);
  if (root < 0) {
    check_mpi(MPI_Allgatherv(in.data(), count, mine.type(), out.data(), parts.counts.data(),
                             parts.offsets.data(), theirs.type(), comm.raw()),
              "MPI_Allgatherv", comm.raw());
  } else {
    check_mpi(MPI_Gatherv(in.data(), count, mine.type(), out.data(), parts.counts.data(),
                          parts.offsets.data(), theirs.type(), root, comm.raw()),
              "MPI_Gatherv", comm.raw());
  }
  if (receives)
    out.write_back();
  return result;
}

}  // namespace detail

/// Every rank's slices along `axis`, concatenated by rank, on every rank. Ranks may differ in
/// that extent (discovered, not passed); all other extents must agree.
template <class Exec, class V, detail::if_space_t<Exec, V> Enabled = 0>
detail::ResultView<V> all_gatherv(const Exec& space, const Communicator& comm, const V& send,
                                  Axis axis) {
  return detail::gather_along(space, comm, send, -1, axis.dim, "baton::all_gatherv");
}

template <class V>
detail::ResultView<V> all_gatherv(const Communicator& comm, const V& send, Axis axis) {
  return all_gatherv(typename V::execution_space(), comm, send, axis);
}

/// On `root`: every rank's slices along `axis`, concatenated by rank; elsewhere a View with 0
/// slices.
template <class Exec, class V, detail::if_space_t<Exec, V> Enabled = 0>
detail::ResultView<V> gatherv(const Exec& space, const Communicator& comm, const V& send, int root,
                              Axis axis) {
  return detail::gather_along(space, comm, send, root, axis.dim, "baton::gatherv");
}

template <class V>
detail::ResultView<V> gatherv(const Communicator& comm, const V& send, int root, Axis axis) {
  return gatherv(typename V::execution_space(), comm, send, root, axis);
}

/// Reduces `send` over all ranks and gives rank r the r-th of comm.size() equal blocks along
/// `axis` (a new View; extent `axis` divided by comm.size(), the others as send's).
template <class Exec, class V, detail::if_space_t<Exec, V> Enabled = 0>
detail::ResultView<V> reduce_scatter(const Exec& space, const Communicator& comm, const V& send,
                                     ReduceOp op, Axis axis) {
  detail::check_reducible<V>();
  static_assert(detail::rank_v<V> >= 1, "reduce_scatter splits an axis: use rank >= 1");
  constexpr const char* op_name = "baton::reduce_scatter";
  const int dim = axis.dim;
  detail::check_axis(comm, dim, detail::rank_v<V>, op_name);
  if (dim == 0)
    return reduce_scatter(space, comm, send, op);
  const std::array<std::size_t, 3> s = detail::around_axis(send, dim);
  detail::agree_or_throw(
      comm, send, op_name, s[1] % comm.size() == 0,
      [&] {
        return "extent " + std::to_string(s[1]) + " of axis " + std::to_string(dim) +
               " does not split evenly over " + std::to_string(comm.size()) + " ranks";
      },
      dim);
  const std::size_t share = s[1] / comm.size();
  auto result = detail::allocate_along(send, dim, share, "baton::reduce_scatter");
  if (send.size() == 0)
    return result;
  // MPI reduces predefined operations over predefined types only (Open MPI rejects strided
  // datatypes there): the slices along `dim` are moved to the front (slice-major), reduced and
  // scattered as rows, and this rank's share is moved back, each a copy on the View's side.
  using T = detail::value_t<V>;
  using MS = typename V::memory_space;
  constexpr bool reaches = Kokkos::SpaceAccessibility<Exec, MS>::accessible;
  using Space = std::conditional_t<reaches, Exec, typename V::execution_space>;
  const Space on = detail::instance_as<Space>(space);
  using Cube = Kokkos::View<T***, Kokkos::LayoutRight, MS, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using Strided =
      Kokkos::View<T***, Kokkos::LayoutStride, MS, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  detail::ResultView<V> right;  // send, row-major and contiguous
  bool copied = true;
  if constexpr (std::is_same_v<typename V::array_layout, Kokkos::LayoutRight> &&
                std::is_same_v<typename V::value_type, T>) {  // assignable to ResultView<V>
    if (detail::in_wire_form(send)) {
      right = send;
      copied = false;
    }
  }
  if (copied) {
    right = detail::allocate_along(send, dim, s[1], "baton::reduce_scatter");
    detail::copy_view(on, right, send);
  }
  Kokkos::View<T***, Kokkos::LayoutRight, MS> slices(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "baton::reduce_scatter"), s[1], s[0], s[2]);
  const Strided slices_as_send(slices.data(),
                               Kokkos::LayoutStride(s[0], s[2], s[1], s[0] * s[2], s[2], 1));
  space.fence();
  Kokkos::deep_copy(on, slices_as_send, Cube(right.data(), s[0], s[1], s[2]));
  on.fence();
  const auto mine = reduce_scatter(on, comm, slices, op);  // (share, outer, inner)
  const Strided mine_as_result(mine.data(),
                               Kokkos::LayoutStride(s[0], s[2], share, s[0] * s[2], s[2], 1));
  Kokkos::deep_copy(on, Cube(result.data(), s[0], share, s[2]), mine_as_result);
  on.fence();
  return result;
}

template <class V>
detail::ResultView<V> reduce_scatter(const Communicator& comm, const V& send, ReduceOp op,
                                     Axis axis) {
  return reduce_scatter(typename V::execution_space(), comm, send, op, axis);
}

}  // namespace baton
