// libFuzzer target: the record decoder (config + View bundle) on untrusted bytes. Only baton::Error
// may escape; accepted input must re-encode to the same bytes.
#include <baton/collectives/record.hpp>
#include <baton/core/error.hpp>
#include <cstdint>
#include <cstdlib>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const baton::Record record =
        baton::decode_record(reinterpret_cast<const std::byte*>(data), size);
    const baton::ByteBuffer again = baton::encode_record(record);
    if (again.size() != size || (size && std::memcmp(again.data(), data, size) != 0))
      std::abort();
  } catch (const baton::Error&) {
  }
  return 0;
}
