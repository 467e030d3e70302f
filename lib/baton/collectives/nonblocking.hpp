#pragma once
/// \file
/// Non-blocking collectives on Kokkos Views: iall_reduce, ibroadcast, iall_gather, iall_gatherv,
/// ireduce_scatter. Each posts one MPI non-blocking collective and returns a baton::Request (or a
/// ViewRequest that also hands back the View it allocated) that keeps every View and staging
/// buffer of the call alive until the collective has completed.
///
/// Staging (a View MPI cannot read as is, see collectives.hpp): the inputs are copied to host
/// buffers when the collective is posted, and the results are copied back into the Views by
/// wait() (or by the test() that finds the collective complete), on the execution space instance
/// given at the post, fenced before wait() returns. Until then a staged result View holds its old
/// contents; a direct one is being written by MPI and must not be read or written.
///
/// Checks: the same as the blocking collective of the same name. Checked (comm.collective_checks())
/// posts first agree on every rank's shapes and roots with a small blocking MPI_Allreduce, so a
/// mismatch throws the same baton::Error on every rank before anything is posted; unchecked posts
/// return at once after the local checks. iall_gatherv exchanges the shapes (blocking) in both
/// modes, as all_gatherv does, and posts only the data exchange.
///
/// A Request dropped before completion waits for it in its destructor (MPI cannot cancel a
/// collective): the Views then hold the result, and errors of that wait go to stderr. Call wait()
/// to see them as exceptions.

#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "baton/collectives/collectives.hpp"

namespace baton {

class Request;

namespace detail {

/// What a posted collective keeps until it completes; finish() runs once, after completion.
struct PendingCollective {
  virtual ~PendingCollective() = default;
  virtual void finish() = 0;
};

template <class F>
struct PendingWith final : PendingCollective {
  explicit PendingWith(F&& f) : state(std::move(f)) {}
  void finish() override { state(); }
  F state;
};

struct RequestAccess;

}  // namespace detail

/// A posted non-blocking collective. Move-only. wait() and test() rethrow MPI errors as
/// baton::Error; the destructor of an active request waits for it (see the file comment).
class Request {
 public:
  Request() noexcept = default;
  ~Request();
  Request(Request&& other) noexcept;
  Request& operator=(Request&& other) noexcept;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;

  /// Makes progress without blocking; true once the collective has completed (and staged results
  /// have been copied back). True for an empty or finished request.
  bool test();
  /// Blocks until the collective has completed and staged results have been copied back.
  void wait();
  /// True while the collective is posted and not yet completed by wait() or test().
  bool active() const noexcept { return request_ != MPI_REQUEST_NULL || pending_ != nullptr; }

 private:
  friend struct detail::RequestAccess;
  void complete();
  void wait_quietly() noexcept;

  MPI_Request request_ = MPI_REQUEST_NULL;
  MPI_Comm comm_ = MPI_COMM_NULL;
  const char* operation_ = "";
  std::unique_ptr<detail::PendingCollective> pending_;
};

/// A Request that also hands back the View it fills (allocated by the call).
template <class R>
class ViewRequest : public Request {
 public:
  ViewRequest() = default;
  ViewRequest(Request request, R view) : Request(std::move(request)), view_(std::move(view)) {}
  /// Blocks until complete; returns the result View.
  R wait() {
    Request::wait();
    return view_;
  }
  /// The result View (its contents are the result once test() returned true or wait() returned).
  const R& view() const noexcept { return view_; }

 private:
  R view_;
};

/// Waits for every request (one MPI_Waitall), then copies staged results back.
void wait_all(std::vector<Request>& requests);

namespace detail {

struct RequestAccess {
  /// An empty request of `comm` that will keep `state` and call it once the collective completes.
  template <class F>
  static Request make(const Communicator& comm, const char* operation, F&& state) {
    Request r;
    r.comm_ = comm.raw();
    r.operation_ = operation;
    r.pending_ = std::make_unique<PendingWith<std::decay_t<F>>>(std::forward<F>(state));
    return r;
  }
  static MPI_Request* slot(Request& r) noexcept { return &r.request_; }
  /// One MPI_Waitall over the requests, then each one's finish().
  static void wait_all(Request* const* requests, std::size_t n);
};

/// Contiguous row-major memory of one View for a non-blocking collective: the View itself when
/// MPI reads it directly, else a host buffer. Holds the View (keeps it alive). Copyable.
template <class V, class Exec>
class OwnedMpiBuffer {
 public:
  using T = value_t<V>;
  /// With `read`, a staged buffer gets v's contents (copied on `space`; fence `space` first).
  OwnedMpiBuffer(const Communicator& comm, const V& v, bool read, const Exec& space)
      : view_(v),
        space_(space),
        direct_(mpi_reads_directly(comm, v)),
        staging_(direct_ ? Kokkos::View<T*, StagingSpace>() : staging_buffer<T>(v.size())),
        data_(direct_ ? const_cast<T*>(v.data()) : staging_.data()) {
    if (read && !direct_)
      copy_to_host(space_, v, staging_.data(), WireLayout::right);
  }
  T* data() const noexcept { return data_; }
  bool direct() const noexcept { return direct_; }
  const V& view() const noexcept { return view_; }
  /// Copies a staged result back into the View (nothing to do when direct).
  void write_back() const {
    if (!direct_)
      copy_from_host(space_, view_, staging_.data(), WireLayout::right);
  }

 private:
  V view_;
  Exec space_;
  bool direct_;
  Kokkos::View<T*, StagingSpace> staging_;
  T* data_;
};

template <class... Rs>
inline constexpr bool all_requests_v = (std::is_base_of_v<Request, Rs> && ...);

}  // namespace detail

/// Waits for every request given (one MPI_Waitall), then copies staged results back. Requests may
/// be of different operations (Request and ViewRequest).
template <class... Rs, std::enable_if_t<detail::all_requests_v<Rs...>, int> = 0>
void wait_all(Rs&... requests) {
  Request* const list[] = {static_cast<Request*>(&requests)...};
  detail::RequestAccess::wait_all(list, sizeof...(Rs));
}

/// Posts recv = op over all ranks of send (same shapes everywhere; send and recv may differ in
/// layout and space). send must not change and recv must not be touched until completion.
template <class Exec, class S, class R, detail::if_space_t<Exec, S> Enabled = 0,
          detail::if_space_t<Exec, R> EnabledR = 0>
Request iall_reduce(const Exec& space, const Communicator& comm, const S& send, const R& recv,
                    ReduceOp op) {
  constexpr const char* op_name = "baton::iall_reduce";
  const int count = detail::check_all_reduce(comm, send, recv, op_name);
  space.fence();
  detail::OwnedMpiBuffer<S, Exec> in(comm, send, true, space);
  detail::OwnedMpiBuffer<R, Exec> out(comm, recv, false, space);
  void* const in_data = in.data();
  void* const out_data = out.data();
  Request request = detail::RequestAccess::make(
      comm, op_name, [in = std::move(in), out = std::move(out)] { out.write_back(); });
  check_mpi(MPI_Iallreduce(in_data, out_data, count, mpi_datatype<detail::value_t<S>>(), to_mpi(op),
                           comm.raw(), detail::RequestAccess::slot(request)),
            "MPI_Iallreduce", comm.raw());
  return request;
}

template <class S, class R>
Request iall_reduce(const Communicator& comm, const S& send, const R& recv, ReduceOp op) {
  return iall_reduce(typename S::execution_space(), comm, send, recv, op);
}

/// Posts v = op over all ranks of v, in place.
template <class Exec, class V, detail::if_space_t<Exec, V> Enabled = 0>
Request iall_reduce(const Exec& space, const Communicator& comm, const V& v, ReduceOp op) {
  detail::check_reducible<V>();
  constexpr const char* op_name = "baton::iall_reduce";
  if (comm.collective_checks())
    detail::agree(comm, detail::signature_of(v), op_name);
  const int count = detail::checked_count(v.size(), comm, op_name);
  space.fence();
  detail::OwnedMpiBuffer<V, Exec> buffer(comm, v, true, space);
  void* const data = buffer.data();
  Request request = detail::RequestAccess::make(
      comm, op_name, [buffer = std::move(buffer)] { buffer.write_back(); });
  check_mpi(MPI_Iallreduce(MPI_IN_PLACE, data, count, mpi_datatype<detail::value_t<V>>(),
                           to_mpi(op), comm.raw(), detail::RequestAccess::slot(request)),
            "MPI_Iallreduce", comm.raw());
  return request;
}

template <class V>
Request iall_reduce(const Communicator& comm, const V& v, ReduceOp op) {
  return iall_reduce(typename V::execution_space(), comm, v, op);
}

/// Posts the copy of root's v into v on every rank (same shape everywhere).
template <class Exec, class V, detail::if_space_t<Exec, V> Enabled = 0>
Request ibroadcast(const Exec& space, const Communicator& comm, const V& v, int root) {
  constexpr const char* op_name = "baton::ibroadcast";
  if (comm.collective_checks() && !comm.is_null()) {
    const bool root_ok = root >= 0 && root < comm.size();
    detail::agree(comm, detail::signature_of(v, 0, root), op_name,
                  root_ok ? std::string() : detail::root_problem(comm, root));
  }
  check_rank(comm, root, op_name);
  const int count = detail::checked_count(v.size(), comm, op_name);
  const bool is_root = comm.rank() == root;
  space.fence();
  detail::OwnedMpiBuffer<V, Exec> buffer(comm, v, is_root, space);
  void* const data = buffer.data();
  Request request =
      detail::RequestAccess::make(comm, op_name, [buffer = std::move(buffer), is_root] {
        if (!is_root)
          buffer.write_back();
      });
  check_mpi(MPI_Ibcast(data, count, mpi_datatype<detail::value_t<V>>(), root, comm.raw(),
                       detail::RequestAccess::slot(request)),
            "MPI_Ibcast", comm.raw());
  return request;
}

template <class V>
Request ibroadcast(const Communicator& comm, const V& v, int root) {
  return ibroadcast(typename V::execution_space(), comm, v, root);
}

/// Posts recv (comm.size() * send rows) = every rank's send, concatenated by rank.
template <class Exec, class S, class R, detail::if_space_t<Exec, S> Enabled = 0,
          detail::if_space_t<Exec, R> EnabledR = 0>
Request iall_gather(const Exec& space, const Communicator& comm, const S& send, const R& recv) {
  static_assert(std::is_same_v<detail::value_t<S>, detail::value_t<R>>,
                "send and recv need the same value type");
  static_assert(
      detail::rank_v<S> == detail::rank_v<R> || (detail::rank_v<S> == 0 && detail::rank_v<R> == 1),
      "recv has the rank of send (or 1 for scalar sends)");
  constexpr const char* op_name = "baton::iall_gather";
  const std::size_t rows = detail::rows_of(send);
  const bool fits =
      detail::rows_of(recv) == rows * comm.size() && recv.size() == send.size() * comm.size();
  detail::agree_or_throw(comm, send, op_name, fits, [&] {
    return "recv " + detail::describe_view(recv) + " cannot hold " + std::to_string(comm.size()) +
           " x send " + detail::describe_view(send);
  });
  const int count = detail::checked_count(send.size(), comm, op_name);
  space.fence();
  detail::OwnedMpiBuffer<S, Exec> in(comm, send, true, space);
  detail::OwnedMpiBuffer<R, Exec> out(comm, recv, false, space);
  void* const in_data = in.data();
  void* const out_data = out.data();
  Request request = detail::RequestAccess::make(
      comm, op_name, [in = std::move(in), out = std::move(out)] { out.write_back(); });
  const MPI_Datatype type = mpi_datatype<detail::value_t<S>>();
  check_mpi(MPI_Iallgather(in_data, count, type, out_data, count, type, comm.raw(),
                           detail::RequestAccess::slot(request)),
            "MPI_Iallgather", comm.raw());
  return request;
}

template <class S, class R>
Request iall_gather(const Communicator& comm, const S& send, const R& recv) {
  return iall_gather(typename S::execution_space(), comm, send, recv);
}

/// Posts the gather of every rank's rows, concatenated by rank, on every rank; row counts may
/// differ. The shapes are exchanged (and checked) before the post, blocking, as in all_gatherv;
/// wait() returns the new View.
template <class Exec, class V, detail::if_space_t<Exec, V> Enabled = 0>
ViewRequest<detail::ResultView<V>> iall_gatherv(const Exec& space, const Communicator& comm,
                                                const V& send) {
  static_assert(detail::rank_v<V> >= 1, "iall_gatherv concatenates rows: use rank >= 1");
  constexpr const char* op_name = "baton::iall_gatherv";
  const auto ranks = static_cast<std::size_t>(comm.size());
  detail::Layout parts(ranks);
  detail::gather_layout(comm, send, op_name, parts);
  auto result = detail::allocate_rows(send, parts.total_rows, "baton::gatherv");
  // MPI reads the counts and offsets until completion: they live with the request.
  std::vector<int> layout(2 * ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    layout[r] = parts.counts[r];
    layout[ranks + r] = parts.offsets[r];
  }
  space.fence();
  detail::OwnedMpiBuffer<V, Exec> in(comm, send, true, space);
  detail::OwnedMpiBuffer<decltype(result), Exec> out(comm, result, false, space);
  void* const in_data = in.data();
  void* const out_data = out.data();
  const int* const counts = layout.data();
  Request request = detail::RequestAccess::make(
      comm, op_name,
      [in = std::move(in), out = std::move(out), layout = std::move(layout)] { out.write_back(); });
  const MPI_Datatype type = mpi_datatype<detail::value_t<V>>();
  check_mpi(MPI_Iallgatherv(in_data, counts[comm.rank()], type, out_data, counts, counts + ranks,
                            type, comm.raw(), detail::RequestAccess::slot(request)),
            "MPI_Iallgatherv", comm.raw());
  return ViewRequest<detail::ResultView<V>>(std::move(request), std::move(result));
}

template <class V>
ViewRequest<detail::ResultView<V>> iall_gatherv(const Communicator& comm, const V& send) {
  return iall_gatherv(typename V::execution_space(), comm, send);
}

/// Posts the reduction of `send` over all ranks; wait() returns this rank's block, the r-th of
/// comm.size() equal row blocks (a new View).
template <class Exec, class V, detail::if_space_t<Exec, V> Enabled = 0>
ViewRequest<detail::ResultView<V>> ireduce_scatter(const Exec& space, const Communicator& comm,
                                                   const V& send, ReduceOp op) {
  detail::check_reducible<V>();
  static_assert(detail::rank_v<V> >= 1, "ireduce_scatter splits rows: use rank >= 1");
  constexpr const char* op_name = "baton::ireduce_scatter";
  const std::size_t rows = send.extent(0);
  detail::agree_or_throw(comm, send, op_name, rows % comm.size() == 0, [&] {
    return std::to_string(rows) + " rows do not split evenly over " + std::to_string(comm.size()) +
           " ranks";
  });
  auto result = detail::allocate_rows(send, rows / comm.size(), "baton::reduce_scatter");
  const int count = detail::checked_count(result.size(), comm, op_name);
  space.fence();
  detail::OwnedMpiBuffer<V, Exec> in(comm, send, true, space);
  detail::OwnedMpiBuffer<decltype(result), Exec> out(comm, result, false, space);
  void* const in_data = in.data();
  void* const out_data = out.data();
  Request request = detail::RequestAccess::make(
      comm, op_name, [in = std::move(in), out = std::move(out)] { out.write_back(); });
  check_mpi(MPI_Ireduce_scatter_block(in_data, out_data, count, mpi_datatype<detail::value_t<V>>(),
                                      to_mpi(op), comm.raw(), detail::RequestAccess::slot(request)),
            "MPI_Ireduce_scatter_block", comm.raw());
  return ViewRequest<detail::ResultView<V>>(std::move(request), std::move(result));
}

template <class V>
ViewRequest<detail::ResultView<V>> ireduce_scatter(const Communicator& comm, const V& send,
                                                   ReduceOp op) {
  return ireduce_scatter(typename V::execution_space(), comm, send, op);
}

}  // namespace baton
