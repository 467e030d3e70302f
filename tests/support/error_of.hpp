#pragma once
// The text of the baton::Error a piece of work throws, for tests that check error messages.
#include <baton/core/error.hpp>
#include <string>

namespace baton::test {

/// The message of the baton::Error `work` throws on this rank ("" when it throws none). Any other
/// exception propagates.
template <class Work>
std::string error_of(Work&& work) {
  try {
    work();
  } catch (const baton::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace baton::test
