#pragma once
/// \file
/// Failure agreement: every rank learns whether any rank failed, and why, and throws alike.

#include <exception>
#include <string>

#include "baton/comm/communicator.hpp"
#include "baton/core/error.hpp"

namespace baton {

/// An error thrown alike, with the same text and code, on every rank of a communicator. A program
/// can print it once (on rank 0) and leave with code(): no rank is left waiting.
class CollectiveError : public Error {
 public:
  explicit CollectiveError(const std::string& message, int code = 1)
      : Error(message), code_(code) {}
  /// The largest code any failing rank gave (see agree_on_failure).
  int code() const noexcept { return code_; }

 private:
  int code_;
};

/// Collective over `comm`: each rank passes what went wrong on it (`problem`) and a code for it: 0
/// when nothing did, > 0 for the kind of failure (the apps use 1 for a run failure, 2 for bad
/// input). Returns when no rank failed; otherwise every rank throws the same CollectiveError:
/// its text is the one problem when every failing rank reported the same text, or one line per
/// distinct text naming its ranks ("ranks 0,2: ...") when they differ; its code is the largest
/// code given. One all_gather when no rank failed.
void agree_on_failure(const Communicator& comm, const std::string& problem, int code);

/// Runs `work` on every rank of `comm` and agrees on its outcome: an exception on any rank
/// becomes the same CollectiveError, with code `code`, on every rank. `work` must not itself leave
/// a rank waiting for one that threw (collective work inside it must fail on every rank alike).
template <class Work>
void on_every_rank(const Communicator& comm, Work&& work, int code = 1) {
  std::string problem;
  int mine = 0;
  try {
    work();
  } catch (const std::exception& e) {
    problem = e.what();
    mine = code;
  }
  agree_on_failure(comm, problem, mine);
}

}  // namespace baton
