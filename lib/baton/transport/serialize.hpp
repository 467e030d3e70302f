#pragma once
/// \file
/// Object encoding for object messages: baton::ByteWriter, baton::ByteReader and the serialization
/// hook baton::Serializer<T>. Pure (no MPI calls): objects.hpp sends what this encodes.
///
/// Wire format of the built-in serializers (lengths are u64 little-endian; values of trivially
/// copyable types are their object representation on the host, so all ranks must share one data
/// representation, as with any MPI_BYTE message):
///
/// | type                                   | bytes                                               |
/// |----------------------------------------|-----------------------------------------------------|
/// | trivially copyable T (not a pointer)   | sizeof(T) bytes, the object as it is in memory      |
/// | bool                                   | 1 byte, 0 or 1 (anything else is rejected)          |
/// | std::string                            | u64 length, then the characters                     |
/// | std::vector<T>, T trivially copyable   | u64 count, then count * sizeof(T) bytes             |
/// | std::vector<T>, other T (and bool)     | u64 count, then each element's encoding             |
/// | std::pair<A, B>                        | the encoding of first, then that of second          |
///
/// ## The hook
///
/// A user type becomes sendable by specializing baton::Serializer (in namespace baton, before the
/// type is first sent or received):
///
/// ```cpp
/// struct Particle {
///   std::string name;
///   std::vector<double> position;
/// };
///
/// template <>
/// struct baton::Serializer<Particle> {
///   static void write(baton::ByteWriter& out, const Particle& p) {
///     out.write_object(p.name);
///     out.write_object(p.position);
///   }
///   static Particle read(baton::ByteReader& in) {
///     Particle p;
///     p.name = in.read_object<std::string>();
///     p.position = in.read_object<std::vector<double>>();
///     return p;
///   }
///   static constexpr std::size_t min_size = 16;  // optional: fewest bytes a value encodes to
/// };
/// ```
///
/// `write` appends the value; `read` must consume exactly what `write` produced and may throw
/// baton::Error (every ByteReader read checks bounds). `min_size` (default 1 when absent) bounds
/// how many elements a std::vector of the type may declare: a count is accepted only when
/// count * min_size bytes are left, so a hostile count cannot make the decoder allocate or loop
/// beyond the message's size. A std::vector of the type refuses (baton::Error, at write) an
/// element that encodes to fewer than min_size bytes.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "baton/core/error.hpp"

namespace baton {

/// The serialization hook. A specialization has
///   static void write(ByteWriter&, const T&);
///   static T read(ByteReader&);
///   static constexpr std::size_t min_size = ...;  // optional
/// Built in: trivially copyable types (not pointers, not C arrays), std::string, std::vector,
/// std::pair. Specialize it for your own types (see the top of this file).
template <class T, class Enable = void>
struct Serializer;

class ByteWriter;
class ByteReader;

/// True when Serializer<T> exists (built in or specialized).
template <class T, class = void>
struct is_serializable : std::false_type {};
template <class T>
struct is_serializable<T, std::void_t<decltype(Serializer<T>::write(std::declval<ByteWriter&>(),
                                                                    std::declval<const T&>()))>>
    : std::true_type {};
template <class T>
inline constexpr bool is_serializable_v = is_serializable<T>::value;

/// Appends an encoding to a growing byte vector.
class ByteWriter {
 public:
  ByteWriter() = default;
  /// Appends to `initial` (e.g. a header already written).
  explicit ByteWriter(std::vector<std::byte> initial) : bytes_(std::move(initial)) {}

  /// Appends the object representation of a trivially copyable value.
  template <class T>
  void write(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>,
                  "ByteWriter::write needs a trivially copyable type");
    write_bytes(&value, sizeof(T));
  }
  /// Appends `size` bytes from `data`.
  void write_bytes(const void* data, std::size_t size) {
    if (size == 0) {
      return;
    }
    const auto* p = static_cast<const std::byte*>(data);
    bytes_.insert(bytes_.end(), p, p + size);
  }
  /// Appends a length or count: 8 bytes, little-endian.
  void write_size(std::uint64_t value) {
    std::byte b[8];
    for (int i = 0; i < 8; ++i) {
      b[i] = static_cast<std::byte>((value >> (8 * i)) & 0xffu);
    }
    write_bytes(b, 8);
  }
  /// Appends `value` through Serializer<T>.
  template <class T>
  void write_object(const T& value) {
    static_assert(is_serializable_v<T>, "no baton::Serializer for this type: specialize it");
    Serializer<T>::write(*this, value);
  }

  void reserve(std::size_t size) { bytes_.reserve(size); }
  std::size_t size() const noexcept { return bytes_.size(); }
  const std::byte* data() const noexcept { return bytes_.data(); }
  const std::vector<std::byte>& bytes() const noexcept { return bytes_; }
  /// Moves the bytes out; the writer is empty afterwards.
  std::vector<std::byte> take() noexcept { return std::exchange(bytes_, {}); }

 private:
  std::vector<std::byte> bytes_;
};

/// Reads an encoding from untrusted bytes. Every read checks bounds and throws baton::Error
/// ("baton::ByteReader: object message truncated: ...") instead of reading past the end.
class ByteReader {
 public:
  ByteReader(const std::byte* data, std::size_t size) noexcept : data_(data), size_(size) {}

  /// Reads a trivially copyable value (its object representation).
  template <class T>
  T read() {
    static_assert(std::is_trivially_copyable_v<T>,
                  "ByteReader::read needs a trivially copyable type");
    return from_bytes<T>(read_bytes(sizeof(T)));
  }
  /// Returns a pointer to the next `size` bytes and skips them.
  const std::byte* read_bytes(std::size_t size) {
    require(size);
    const std::byte* p = data_ + offset_;
    offset_ += size;
    return p;
  }
  /// Reads a length or count written by ByteWriter::write_size.
  std::uint64_t read_size() {
    const std::byte* b = read_bytes(8);
    std::uint64_t value = 0;
    for (int i = 0; i < 8; ++i) {
      value |= std::uint64_t(std::to_integer<unsigned>(b[i])) << (8 * i);
    }
    return value;
  }
  /// Reads a count of elements that take at least `min_bytes_each` bytes each (0 counts as 1) and
  /// checks that many could still follow, before anything is allocated for them.
  std::size_t read_count(std::size_t min_bytes_each) {
    const std::size_t at = offset_;
    const std::uint64_t count = read_size();
    const std::size_t each = std::max<std::size_t>(min_bytes_each, 1);
    if (count > remaining() / each) {
      throw Error("baton::ByteReader: object message truncated: " + std::to_string(count) +
                  " elements of at least " + std::to_string(each) + " bytes declared at offset " +
                  std::to_string(at) + ", " + std::to_string(remaining()) + " bytes left");
    }
    return static_cast<std::size_t>(count);
  }
  /// Reads a value through Serializer<T>.
  template <class T>
  T read_object() {
    static_assert(is_serializable_v<T>, "no baton::Serializer for this type: specialize it");
    return Serializer<T>::read(*this);
  }
  /// Throws baton::Error ("baton::ByteReader: N trailing bytes after the object") unless everything
  /// was read.
  void expect_end() const {
    if (remaining() != 0) {
      throw Error("baton::ByteReader: " + std::to_string(remaining()) +
                  " trailing bytes after the object (at offset " + std::to_string(offset_) +
                  " of " + std::to_string(size_) + ")");
    }
  }

  std::size_t offset() const noexcept { return offset_; }
  std::size_t remaining() const noexcept { return size_ - offset_; }
  std::size_t size() const noexcept { return size_; }

  /// A T made from sizeof(T) bytes at `p` (T trivially copyable; need not be
  /// default-constructible).
  template <class T>
  static T from_bytes(const std::byte* p) {
    if constexpr (std::is_default_constructible_v<T>) {
      T value;
      std::memcpy(static_cast<void*>(&value), p, sizeof(T));
      return value;
    } else {
      union Storage {
        unsigned char none;
        T value;
        Storage() : none() {}
      } storage;
      std::memcpy(static_cast<void*>(&storage.value), p, sizeof(T));
      return storage.value;
    }
  }

 private:
  void require(std::size_t size) const {
    if (size > remaining()) {
      throw Error("baton::ByteReader: object message truncated: need " + std::to_string(size) +
                  " bytes at offset " + std::to_string(offset_) + ", " +
                  std::to_string(remaining()) + " left");
    }
  }

  const std::byte* data_;
  std::size_t size_;
  std::size_t offset_ = 0;
};

namespace detail {

template <class T>
struct is_pair : std::false_type {};
template <class A, class B>
struct is_pair<std::pair<A, B>> : std::true_type {};

/// Types the built-in serializer sends as raw bytes.
template <class T>
inline constexpr bool is_raw_v =
    std::is_trivially_copyable_v<T> && !std::is_pointer_v<T> && !std::is_member_pointer_v<T> &&
    !std::is_array_v<T> && !std::is_null_pointer_v<T> && !is_pair<T>::value;

template <class T, class = void>
struct min_size_of : std::integral_constant<std::size_t, 1> {};
template <class T>
struct min_size_of<T, std::void_t<decltype(Serializer<T>::min_size)>>
    : std::integral_constant<std::size_t,
                             (Serializer<T>::min_size > 0 ? Serializer<T>::min_size : 1)> {};

/// The fewest bytes any value of T encodes to (Serializer<T>::min_size, at least 1; 1 if absent).
template <class T>
inline constexpr std::size_t min_size_v = min_size_of<T>::value;

template <class T, class = void>
struct is_raw_serializer : std::false_type {};
template <class T>
struct is_raw_serializer<T, std::void_t<decltype(Serializer<T>::raw)>>
    : std::bool_constant<Serializer<T>::raw> {};

/// True when T travels through the built-in raw serializer: sizeof(T) bytes, no header.
template <class T>
inline constexpr bool travels_raw_v = is_raw_serializer<T>::value;

/// Element types whose std::vector is one block of raw bytes: those whose Serializer in effect is
/// the built-in raw one (not a user's specialization), except bool (checked element by element).
template <class T>
inline constexpr bool is_raw_element_v = travels_raw_v<T> && !std::is_same_v<T, bool>;

/// Capacity reserved up front for a decoded std::vector of non-trivial elements; beyond it the
/// vector grows only as elements are actually decoded.
template <class T>
inline constexpr std::size_t reserve_cap_v = std::max<std::size_t>(1, (std::size_t(1) << 20) /
                                                                          sizeof(T));

}  // namespace detail

/// Trivially copyable values: their sizeof(T) bytes. bool is checked to be 0 or 1 on read; other
/// types (enums included) are taken as they come.
template <class T>
struct Serializer<T, std::enable_if_t<detail::is_raw_v<T>>> {
  static constexpr bool raw = true;
  static constexpr std::size_t min_size = sizeof(T);
  static void write(ByteWriter& out, const T& value) { out.write(value); }
  static T read(ByteReader& in) {
    if constexpr (std::is_same_v<T, bool>) {
      static_assert(sizeof(bool) == 1, "bool must be one byte");
      const std::size_t at = in.offset();
      const auto byte = in.read<std::uint8_t>();
      if (byte > 1) {
        throw Error(
            "baton::Serializer: object message holds a bool that is neither 0 nor 1 (byte " +
            std::to_string(byte) + " at offset " + std::to_string(at) + ")");
      }
      return byte == 1;
    } else {
      return in.read<T>();
    }
  }
};

/// std::string: u64 length, then the characters.
template <>
struct Serializer<std::string> {
  static constexpr std::size_t min_size = 8;
  static void write(ByteWriter& out, const std::string& value) {
    out.write_size(value.size());
    out.write_bytes(value.data(), value.size());
  }
  static std::string read(ByteReader& in) {
    const std::size_t size = in.read_count(1);
    const std::byte* chars = in.read_bytes(size);
    return std::string(reinterpret_cast<const char*>(chars), size);
  }
};

/// std::vector of trivially copyable T: u64 count, then the elements' bytes in one block.
template <class T>
struct Serializer<std::vector<T>, std::enable_if_t<detail::is_raw_element_v<T>>> {
  static constexpr std::size_t min_size = 8;
  static void write(ByteWriter& out, const std::vector<T>& value) {
    out.write_size(value.size());
    out.write_bytes(value.data(), value.size() * sizeof(T));
  }
  static std::vector<T> read(ByteReader& in) {
    const std::size_t count = in.read_count(sizeof(T));  // checked before allocating
    const std::byte* data = in.read_bytes(count * sizeof(T));
    if constexpr (std::is_default_constructible_v<T>) {
      std::vector<T> value(count);
      if (count) {
        std::memcpy(static_cast<void*>(value.data()), data, count * sizeof(T));
      }
      return value;
    } else {
      std::vector<T> value;
      value.reserve(count);
      for (std::size_t i = 0; i < count; ++i) {
        value.push_back(ByteReader::from_bytes<T>(data + i * sizeof(T)));
      }
      return value;
    }
  }
};

/// std::vector of any other serializable T (and of bool): u64 count, then each element. The count
/// is accepted only when count * min_size_v<T> bytes are left.
template <class T>
struct Serializer<std::vector<T>,
                  std::enable_if_t<!detail::is_raw_element_v<T> && is_serializable_v<T>>> {
  static constexpr std::size_t min_size = 8;
  static void write(ByteWriter& out, const std::vector<T>& value) {
    out.write_size(value.size());
    for (const auto& element : value) {
      const std::size_t before = out.size();
      Serializer<T>::write(out, element);
      if (out.size() - before < detail::min_size_v<T>) {
        throw Error("baton::Serializer: an element of a std::vector encoded to " +
                    std::to_string(out.size() - before) +
                    " bytes, fewer than its Serializer's min_size (" +
                    std::to_string(detail::min_size_v<T>) + "); it could not be decoded");
      }
    }
  }
  static std::vector<T> read(ByteReader& in) {
    const std::size_t count = in.read_count(detail::min_size_v<T>);
    std::vector<T> value;
    value.reserve(std::min(count, detail::reserve_cap_v<T>));
    for (std::size_t i = 0; i < count; ++i) {
      value.push_back(Serializer<T>::read(in));
    }
    return value;
  }
};

/// std::pair: first, then second.
template <class A, class B>
struct Serializer<std::pair<A, B>, std::enable_if_t<is_serializable_v<A> && is_serializable_v<B>>> {
  static constexpr std::size_t min_size = detail::min_size_v<A> + detail::min_size_v<B>;
  static void write(ByteWriter& out, const std::pair<A, B>& value) {
    Serializer<A>::write(out, value.first);
    Serializer<B>::write(out, value.second);
  }
  static std::pair<A, B> read(ByteReader& in) {
    A first = Serializer<A>::read(in);  // two statements: first is read before second
    B second = Serializer<B>::read(in);
    return std::pair<A, B>(std::move(first), std::move(second));
  }
};

/// The whole encoding of `value`.
template <class T>
std::vector<std::byte> encode_object(const T& value) {
  static_assert(is_serializable_v<T>,
                "no baton::Serializer for this type: specialize baton::Serializer<T>");
  ByteWriter out;
  if constexpr (detail::travels_raw_v<T>)
    out.reserve(sizeof(T));
  Serializer<T>::write(out, value);
  return out.take();
}

/// Decodes a whole message as a T: throws baton::Error if it is truncated, malformed, or has bytes
/// left over.
template <class T>
T decode_object(const std::byte* data, std::size_t size) {
  static_assert(is_serializable_v<T>,
                "no baton::Serializer for this type: specialize baton::Serializer<T>");
  ByteReader in(data, size);
  T value = Serializer<T>::read(in);
  in.expect_end();
  return value;
}

}  // namespace baton
