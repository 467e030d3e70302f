// libFuzzer target: the View envelope decoder on untrusted bytes. It must either return an envelope
// whose data size matches the message or throw baton::Error; nothing else (crash, UB, other
// exception) is acceptable.
//
// Built with -fsanitize=fuzzer when BATON_ENABLE_FUZZING=ON (clang); linked with replay_main.cpp it
// is a plain program that replays files (corpus and found crashes) in ctest.
#include <baton/core/error.hpp>
#include <baton/transport/envelope.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const baton::ViewEnvelope envelope =
        baton::decode_envelope(reinterpret_cast<const std::byte*>(data), size);
    // Accepted input must be self-consistent and re-encode to the same bytes. The split form
    // (sequence >= 0) is exactly 80 bytes and carries no data; the other form carries all of it.
    const auto same = [&](const auto& again) {
      for (std::size_t i = 0; i < again.size(); ++i) {
        if (again[i] != static_cast<std::byte>(data[i]))
          std::abort();
      }
    };
    if (envelope.sequence >= 0) {
      if (size != baton::ViewEnvelope::split_wire_size)
        std::abort();
      same(baton::encode_split_envelope(envelope));
    } else {
      if (envelope.data_bytes() != size - baton::ViewEnvelope::wire_size)
        std::abort();
      same(baton::encode_envelope(envelope));
    }
  } catch (const baton::Error&) {
    // rejected with a reason: fine
  }
  return 0;
}
