#pragma once
/// \file
/// Collectives of objects: gather_object, all_gather_object and scatter_object move values of any
/// type baton::Serializer knows (trivially copyable values, std::string, std::vector, std::pair,
/// user types that specialize the hook; see baton/transport/serialize.hpp), of a different size
/// on every rank. The sizes of the encodings are exchanged first, then the bytes in one
/// MPI_Gatherv / MPI_Allgatherv / MPI_Scatterv.
///
/// Failures: a rank that cannot encode its value (its serializer throws) makes every rank throw a
/// baton::Error naming that rank (the rank itself rethrows its own error); so do more than INT_MAX
/// bytes in all (MPI 3.1 displacements). A bad root throws on every rank that passed it, before
/// any MPI call. Received bytes that do not decode throw on the ranks that decode them (all ranks
/// alike for all_gather_object; the root for gather_object; the receiver for scatter_object), as
/// broadcast_object does: the collective itself is complete.

#include <cstddef>
#include <exception>
#include <string>
#include <vector>

#include "baton/comm/communicator.hpp"
#include "baton/core/error.hpp"
#include "baton/transport/bytes.hpp"
#include "baton/transport/serialize.hpp"

namespace baton {

namespace detail {

/// Every rank's encoding, concatenated by rank, with offsets (comm.size() + 1 of them).
struct GatheredBytes {
  std::vector<std::byte> bytes;
  std::vector<std::size_t> offsets;
};

/// Gathers the encodings (`mine`, or nullptr with `failure` when this rank could not encode) on
/// `root`, or on every rank when root < 0. Throws on every rank when any rank failed.
GatheredBytes gather_object_bytes(const Communicator& comm, const std::vector<std::byte>* mine,
                                  const std::string& failure, int root, const char* operation);

/// Scatters root's encodings (`parts`, one per rank; nullptr with `failure` on a root that could
/// not encode them) and returns this rank's. Throws on every rank when the root failed.
std::vector<std::byte> scatter_object_bytes(const Communicator& comm,
                                            const std::vector<std::vector<std::byte>>* parts,
                                            const std::string& failure, int root,
                                            const char* operation);

/// The error thrown where gathered bytes do not decode (names the rank they came from).
Error gathered_decode_error(const Communicator& comm, const char* operation, int from,
                            std::size_t size, const char* cause);

template <class T>
std::vector<T> decode_gathered(const Communicator& comm, const GatheredBytes& gathered,
                               const char* operation) {
  std::vector<T> values;
  values.reserve(static_cast<std::size_t>(comm.size()));
  for (int r = 0; r < comm.size(); ++r) {
    const std::size_t begin = gathered.offsets[r], size = gathered.offsets[r + 1] - begin;
    try {
      values.push_back(decode_object<T>(gathered.bytes.data() + begin, size));
    } catch (const Error& e) {
      throw gathered_decode_error(comm, operation, r, size, e.what());
    }
  }
  return values;
}

/// Encodes value; on failure, returns false and the error's text in `failure`, and keeps the
/// exception to rethrow.
template <class T>
bool try_encode(const T& value, std::vector<std::byte>& bytes, std::string& failure,
                std::exception_ptr& error) {
  try {
    bytes = encode_object(value);
    return true;
  } catch (const std::exception& e) {
    failure = e.what();
    error = std::current_exception();
  } catch (...) {
    failure = "an exception that is not a std::exception";
    error = std::current_exception();
  }
  return false;
}

}  // namespace detail

/// On `root`: every rank's value, by rank (comm.size() of them); on the other ranks: an empty
/// vector. Collective over comm.
template <class T>
std::vector<T> gather_object(const Communicator& comm, const T& value, int root) {
  static_assert(is_serializable_v<T>, "no baton::Serializer for this type (see serialize.hpp)");
  constexpr const char* op_name = "baton::gather_object";
  check_rank(comm, root, op_name);
  std::vector<std::byte> bytes;
  std::string failure;
  std::exception_ptr error;
  const bool encoded = detail::try_encode(value, bytes, failure, error);
  try {
    const detail::GatheredBytes gathered =
        detail::gather_object_bytes(comm, encoded ? &bytes : nullptr, failure, root, op_name);
    if (comm.rank() != root)
      return {};
    return detail::decode_gathered<T>(comm, gathered, op_name);
  } catch (const Error&) {
    if (error)
      std::rethrow_exception(error);
    throw;
  }
}

/// Every rank's value, by rank, on every rank. Collective over comm.
template <class T>
std::vector<T> all_gather_object(const Communicator& comm, const T& value) {
  static_assert(is_serializable_v<T>, "no baton::Serializer for this type (see serialize.hpp)");
  constexpr const char* op_name = "baton::all_gather_object";
  std::vector<std::byte> bytes;
  std::string failure;
  std::exception_ptr error;
  const bool encoded = detail::try_encode(value, bytes, failure, error);
  try {
    const detail::GatheredBytes gathered =
        detail::gather_object_bytes(comm, encoded ? &bytes : nullptr, failure, -1, op_name);
    return detail::decode_gathered<T>(comm, gathered, op_name);
  } catch (const Error&) {
    if (error)
      std::rethrow_exception(error);
    throw;
  }
}

/// Rank r gets root's values[r]. Only root's `values` is read, and it must hold comm.size()
/// values (otherwise every rank throws). Collective over comm.
template <class T>
T scatter_object(const Communicator& comm, const std::vector<T>& values, int root) {
  static_assert(is_serializable_v<T>, "no baton::Serializer for this type (see serialize.hpp)");
  constexpr const char* op_name = "baton::scatter_object";
  check_rank(comm, root, op_name);
  std::vector<std::vector<std::byte>> parts;
  std::string failure;
  std::exception_ptr error;
  if (comm.rank() == root) {
    if (values.size() != static_cast<std::size_t>(comm.size())) {
      failure = "root " + std::to_string(root) + " passed " + std::to_string(values.size()) +
                " values for " + std::to_string(comm.size()) + " ranks";
    } else {
      parts.resize(values.size());
      for (std::size_t r = 0; r < values.size() && failure.empty(); ++r)
        detail::try_encode(values[r], parts[r], failure, error);
    }
  }
  std::vector<std::byte> mine;
  try {
    mine = detail::scatter_object_bytes(comm, failure.empty() ? &parts : nullptr, failure, root,
                                        op_name);
  } catch (const Error&) {
    if (error)
      std::rethrow_exception(error);
    throw;
  }
  try {
    return decode_object<T>(mine.data(), mine.size());
  } catch (const Error& e) {
    throw detail::gathered_decode_error(comm, op_name, root, mine.size(), e.what());
  }
}

}  // namespace baton
