#pragma once
/// \file
/// MPI datatypes and reduction operators for arithmetic element types.

#include <mpi.h>

#include <cstdint>
#include <type_traits>

namespace baton {

/// Reductions available on Views.
enum class ReduceOp { sum, prod, max, min };

/// "sum", "prod", "max" or "min".
const char* to_string(ReduceOp op) noexcept;
MPI_Op to_mpi(ReduceOp op) noexcept;

/// The predefined MPI datatype of arithmetic type T (for reductions).
template <class T>
MPI_Datatype mpi_datatype() noexcept {
  using U = std::remove_cv_t<T>;
  static_assert(std::is_arithmetic_v<U>,
                "only arithmetic types have a predefined MPI datatype here");
  if constexpr (std::is_same_v<U, bool>)
    return MPI_C_BOOL;
  else if constexpr (std::is_same_v<U, float>)
    return MPI_FLOAT;
  else if constexpr (std::is_same_v<U, double>)
    return MPI_DOUBLE;
  else if constexpr (std::is_same_v<U, long double>)
    return MPI_LONG_DOUBLE;
  else if constexpr (std::is_same_v<U, char>)
    return MPI_CHAR;
  else if constexpr (std::is_signed_v<U> && sizeof(U) == 1)
    return MPI_INT8_T;
  else if constexpr (std::is_signed_v<U> && sizeof(U) == 2)
    return MPI_INT16_T;
  else if constexpr (std::is_signed_v<U> && sizeof(U) == 4)
    return MPI_INT32_T;
  else if constexpr (std::is_signed_v<U> && sizeof(U) == 8)
    return MPI_INT64_T;
  else if constexpr (sizeof(U) == 1)
    return MPI_UINT8_T;
  else if constexpr (sizeof(U) == 2)
    return MPI_UINT16_T;
  else if constexpr (sizeof(U) == 4)
    return MPI_UINT32_T;
  else
    return MPI_UINT64_T;
}

}  // namespace baton
