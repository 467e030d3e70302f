#pragma once
/// \file
/// sparse_exchange: every rank sends rank-1 Views to the ranks it chooses, and receives from the
/// ranks that chose it without knowing in advance which (or how many) they are. The NBX protocol
/// (Hoefler, Siebert, Lumsdaine 2010): synchronous sends (MPI_Issend), matched probes for what
/// arrives, and a non-blocking barrier (MPI_Ibarrier) entered once all of this rank's sends have
/// been received; when the barrier completes, every message has arrived. Its cost grows with the
/// number of partners, not with comm.size(): no count exchange over all ranks.
///
/// Messages travel on the communicator's two largest tags (comm.tag_ub() - 1 and comm.tag_ub()),
/// alternating from one exchange to the next so that a rank already in the next exchange cannot be
/// mistaken for one in this exchange; do not use those two tags for other messages on the same
/// communicator while an exchange runs.
///
/// Checks: checked mode (comm.collective_checks()) first agrees, with one small MPI_Allreduce, on
/// the value type and on whether any rank found a problem with its own arguments (a destination out
/// of range or given twice, a message past INT_MAX bytes), so such a problem throws a baton::Error
/// on every rank. Unchecked, the rank with the problem throws alone and the others wait in the
/// exchange (the caller's undefined behaviour, as for the other unchecked collectives). A message
/// whose size is not a whole number of elements (a sender with another value type, unchecked) is
/// received and dropped, and the receiver throws after the exchange has completed everywhere.

#include <mpi.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "baton/collectives/collectives.hpp"

namespace baton {

namespace detail {

/// One outgoing message of the byte-level exchange.
struct SparseSend {
  int dest;
  const void* data;
  int bytes;
};

/// The tag of this exchange on comm (alternates between comm.tag_ub() - 1 and comm.tag_ub(), per
/// communicator: a counter cached on the MPI communicator as an attribute).
int sparse_exchange_tag(const Communicator& comm);

/// Where an arriving message of `bytes` bytes from `source` is received: land(context, source,
/// bytes) returns the place (nullptr: into a scratch buffer, then dropped; a message of 0 bytes
/// needs no place).
using LandFunction = void* (*)(void* context, int source, std::size_t bytes);

/// The NBX protocol on bytes: sends every message, and receives every message that arrives where
/// `land` says. Returns when every rank's messages have arrived.
void nbx(const Communicator& comm, const SparseSend* sends, std::size_t n, int tag,
         LandFunction land, void* context);

/// Agreement of checked mode: the value type and any rank's problem (empty: none).
void sparse_agree(const Communicator& comm, ValueType type, const std::string& problem,
                  const char* operation);

}  // namespace detail

/// The Views received by sparse_exchange, by source rank.
template <class T, class MemorySpace>
using SparseMessages = std::map<int, Kokkos::View<T*, MemorySpace>>;

/// Sends each (destination, rank-1 View) of `outgoing` (a std::map<int, V>, a
/// std::vector<std::pair<int, V>>, ...) and returns the Views that other ranks sent to this one,
/// by source rank, in V's memory space. Ranks that send nothing here are absent from the result;
/// a rank may send to itself, and an empty View is a message too (it arrives as an empty View).
/// Collective: every rank of comm calls it, with or without messages.
template <class Exec, class Outgoing>
SparseMessages<detail::value_t<typename Outgoing::value_type::second_type>,
               typename Outgoing::value_type::second_type::memory_space>
sparse_exchange(const Exec& space, const Communicator& comm, const Outgoing& outgoing) {
  using V = typename Outgoing::value_type::second_type;
  using T = detail::value_t<V>;
  using MS = typename V::memory_space;
  static_assert(Kokkos::is_view<V>::value && detail::rank_v<V> == 1,
                "sparse_exchange sends rank-1 Views");
  static_assert(detail::usable_space_v<Exec, V>, "the execution space cannot reach the Views");
  static_assert(std::is_arithmetic_v<T>, "sparse_exchange sends Views of arithmetic values");
  constexpr const char* op_name = "baton::sparse_exchange";
  std::string problem;
  // Destinations given twice: none in a std::map or any container in increasing order; others
  // are sorted (a copy) to find out.
  bool increasing = true;
  int last = -1;
  for (const auto& [dest, view] : outgoing) {
    if (dest < 0 || dest >= comm.size()) {
      problem = "destination " + std::to_string(dest) + " is out of range for a communicator of " +
                std::to_string(comm.size()) + " ranks";
    } else if (view.size() * sizeof(T) > static_cast<std::size_t>(INT_MAX)) {
      problem = "a message of " + std::to_string(view.size() * sizeof(T)) +
                " bytes exceeds INT_MAX bytes";
    }
    increasing = increasing && dest > last;
    last = dest;
  }
  if (problem.empty() && !increasing) {
    std::vector<int> dests;
    for (const auto& entry : outgoing)
      dests.push_back(entry.first);
    std::sort(dests.begin(), dests.end());
    const auto twice = std::adjacent_find(dests.begin(), dests.end());
    if (twice != dests.end())
      problem = "destination " + std::to_string(*twice) + " is given twice";
  }
  if (comm.collective_checks())
    detail::sparse_agree(comm, value_type_of<T>(), problem, op_name);
  else if (!problem.empty())
    detail::throw_on_rank(comm, op_name, problem);

  // Outgoing data MPI can read: the Views themselves, or host copies kept until the end.
  space.fence();
  detail::ScratchArray<detail::SparseSend, 8> sends(outgoing.size());
  std::vector<Kokkos::View<T*, detail::StagingSpace>> staged_out;
  std::size_t k = 0;
  for (const auto& [dest, view] : outgoing) {
    const void* data = view.data();
    if (!detail::mpi_reads_directly(comm, view)) {
      staged_out.push_back(detail::staging_buffer<T>(view.size()));
      detail::copy_to_host(space, view, staged_out.back().data(), WireLayout::right);
      data = staged_out.back().data();
    }
    sends[k++] = {dest, data, static_cast<int>(view.size() * sizeof(T))};
  }

  struct Landing {
    SparseMessages<T, MS> received;
    bool direct;
    std::vector<std::pair<int, Kokkos::View<T*, detail::StagingSpace>>> staged_in;
    std::optional<std::pair<int, std::size_t>> misfit;  // (source, bytes) of a message not of T
    static void* land(void* context, int source, std::size_t bytes) {
      auto& self = *static_cast<Landing*>(context);
      if (bytes % sizeof(T) != 0) {
        self.misfit.emplace(source, bytes);
        return nullptr;
      }
      const std::size_t n = bytes / sizeof(T);
      Kokkos::View<T*, MS> view(Kokkos::view_alloc(Kokkos::WithoutInitializing, "baton::sparse"),
                                n);  // no heap label
      self.received[source] = view;
      if (self.direct)
        return view.data();
      self.staged_in.emplace_back(source, detail::staging_buffer<T>(n));
      return self.staged_in.back().second.data();
    }
  };
  Landing landing{{}, detail::pass_directly<MS>(comm), {}, {}};
  detail::nbx(comm, sends.data(), sends.size(), detail::sparse_exchange_tag(comm), &Landing::land,
              &landing);
  SparseMessages<T, MS>& received = landing.received;
  const auto& staged_in = landing.staged_in;
  const auto& misfit = landing.misfit;
  for (const auto& [source, host] : staged_in)
    detail::copy_from_host(space, received[source], host.data(), WireLayout::right);
  if (misfit) {
    detail::throw_on_rank(comm, op_name,
                          "the message from rank " + std::to_string(misfit->first) + " has " +
                              std::to_string(misfit->second) + " bytes, not a whole number of " +
                              std::to_string(sizeof(T)) + "-byte values");
  }
  return std::move(landing.received);
}

template <class Outgoing>
auto sparse_exchange(const Communicator& comm, const Outgoing& outgoing) {
  using V = typename Outgoing::value_type::second_type;
  return sparse_exchange(typename V::execution_space(), comm, outgoing);
}

}  // namespace baton
