#pragma once
/// \file
/// Codes for the arithmetic value types that travel in View messages.

#include <cstdint>
#include <type_traits>

namespace baton {

/// The element type of a View message, as it travels on the wire.
enum class ValueType : std::uint8_t {
  boolean = 1,
  int8,
  uint8,
  int16,
  uint16,
  int32,
  uint32,
  int64,
  uint64,
  float32,
  float64,
  float128,  ///< long double where it is 16 bytes
};

/// "int32", "float64", ...; "unknown" for a code outside the enum.
const char* to_string(ValueType type) noexcept;
/// Size in bytes of one element; 0 for an unknown code.
std::size_t size_of(ValueType type) noexcept;
/// True for the codes listed in ValueType.
bool is_known(ValueType type) noexcept;

/// The code of an arithmetic type T (cv-qualifiers ignored). `char` maps by its signedness.
template <class T>
constexpr ValueType value_type_of() noexcept {
  using U = std::remove_cv_t<T>;
  static_assert(std::is_arithmetic_v<U>, "View messages carry arithmetic value types only");
  if constexpr (std::is_same_v<U, bool>) {
    return ValueType::boolean;
  } else if constexpr (std::is_floating_point_v<U>) {
    static_assert(sizeof(U) == 4 || sizeof(U) == 8 || sizeof(U) == 16, "unsupported floating type");
    if constexpr (sizeof(U) == 4)
      return ValueType::float32;
    if constexpr (sizeof(U) == 8)
      return ValueType::float64;
    return ValueType::float128;
  } else if constexpr (std::is_signed_v<U>) {
    if constexpr (sizeof(U) == 1)
      return ValueType::int8;
    if constexpr (sizeof(U) == 2)
      return ValueType::int16;
    if constexpr (sizeof(U) == 4)
      return ValueType::int32;
    return ValueType::int64;
  } else {
    if constexpr (sizeof(U) == 1)
      return ValueType::uint8;
    if constexpr (sizeof(U) == 2)
      return ValueType::uint16;
    if constexpr (sizeof(U) == 4)
      return ValueType::uint32;
    return ValueType::uint64;
  }
}

}  // namespace baton
