// libFuzzer target: the View bundle decoder on untrusted bytes. Only baton::Error may escape;
// accepted input must re-encode to the same bytes.
#include <baton/collectives/bundle.hpp>
#include <baton/core/error.hpp>
#include <cstdint>
#include <cstdlib>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const baton::ViewBundle bundle =
        baton::decode_bundle(reinterpret_cast<const std::byte*>(data), size);
    const baton::ByteBuffer again = baton::encode_bundle(bundle);
    if (again.size() != size || (size && std::memcmp(again.data(), data, size) != 0))
      std::abort();
  } catch (const baton::Error&) {
  }
  return 0;
}
