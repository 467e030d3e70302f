// libFuzzer target: the object decoders (baton::decode_object) on untrusted bytes, each input
// decoded as several types. Each decode must either succeed, and then re-encode to exactly the
// input, or throw baton::Error; nothing else (crash, UB, huge allocation, other exception) is
// acceptable.
//
// Built with -fsanitize=fuzzer when BATON_ENABLE_FUZZING=ON (clang). The same file, built with
// replay_main.cpp, is a plain program that replays files (corpus and found crashes) in ctest.
#include <baton/core/error.hpp>
#include <baton/transport/serialize.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>
#include "particle.hpp"

namespace {

using baton::test::Particle;

}  // namespace

namespace {

template <class T>
void decode_as(const std::byte* data, std::size_t size) {
  try {
    const T value = baton::decode_object<T>(data, size);
    // Accepted input must re-encode to the same bytes.
    const std::vector<std::byte> again = baton::encode_object(value);
    if (again.size() != size) {
      std::abort();
    }
    if (size && std::memcmp(again.data(), data, size) != 0) {
      std::abort();
    }
  } catch (const baton::Error&) {
    // rejected with a reason: fine
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto* bytes = reinterpret_cast<const std::byte*>(data);
  decode_as<std::string>(bytes, size);
  decode_as<std::vector<double>>(bytes, size);
  decode_as<std::vector<std::string>>(bytes, size);
  decode_as<Particle>(bytes, size);
  decode_as<std::vector<Particle>>(bytes, size);
  decode_as<std::vector<std::vector<std::uint16_t>>>(bytes, size);
  decode_as<std::pair<std::uint32_t, std::vector<bool>>>(bytes, size);
  return 0;
}
