#pragma once
/// \file
/// baton::ByteBuffer: an owning byte array that is not zero-filled on allocation.

#include <cstddef>
#include <cstring>
#include <memory>
#include <vector>

namespace baton {

/// What a receive returns: `size()` bytes, allocated without zero-filling (a received message
/// overwrites them at once). Move-only; convert with to_vector() when a std::vector is wanted.
class ByteBuffer {
 public:
  ByteBuffer() noexcept = default;
  explicit ByteBuffer(std::size_t size)
      : data_(size ? std::unique_ptr<std::byte[]>(new std::byte[size]) : nullptr), size_(size) {}
  ByteBuffer(const void* data, std::size_t size) : ByteBuffer(size) {
    if (size)
      std::memcpy(data_.get(), data, size);
  }

  std::byte* data() noexcept { return data_.get(); }
  const std::byte* data() const noexcept { return data_.get(); }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  std::byte* begin() noexcept { return data_.get(); }
  std::byte* end() noexcept { return data_.get() + size_; }
  const std::byte* begin() const noexcept { return data_.get(); }
  const std::byte* end() const noexcept { return data_.get() + size_; }
  std::byte& operator[](std::size_t i) noexcept { return data_[i]; }
  const std::byte& operator[](std::size_t i) const noexcept { return data_[i]; }

  std::vector<std::byte> to_vector() const { return std::vector<std::byte>(begin(), end()); }

 private:
  std::unique_ptr<std::byte[]> data_;
  std::size_t size_ = 0;
};

}  // namespace baton
