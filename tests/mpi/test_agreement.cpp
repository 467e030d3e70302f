#include <doctest/doctest.h>

#include <baton/collectives/agreement.hpp>
#include <stdexcept>
#include <string>

#include "mpi_doctest.hpp"

namespace {

// What agree_on_failure throws on this rank: {code, text}, or {0, ""} when it returns.
std::pair<int, std::string> outcome(const baton::Communicator& comm, const std::string& problem,
                                    int code) {
  try {
    baton::agree_on_failure(comm, problem, code);
  } catch (const baton::CollectiveError& e) {
    return {e.code(), e.what()};
  }
  return {0, ""};
}

}  // namespace

TEST_CASE("agree_on_failure returns on every rank when no rank failed") {
  const baton::Communicator& world = baton::test::world();
  CHECK(outcome(world, "", 0) == std::pair<int, std::string>{0, ""});
}

TEST_CASE("one rank's failure is thrown, with its text and code, on every rank") {
  const baton::Communicator& world = baton::test::world();
  const int last = world.size() - 1;
  const auto [code, text] = outcome(world, world.rank() == last ? "input.xyz:3: bad atom" : "",
                                    world.rank() == last ? 2 : 0);
  CHECK(code == 2);
  CHECK(text == "input.xyz:3: bad atom");
}

TEST_CASE("the same text from every rank is said once; different texts name their ranks") {
  const baton::Communicator& world = baton::test::world();
  CHECK(outcome(world, "out of memory", 1) == std::pair<int, std::string>{1, "out of memory"});

  // Even ranks fail one way (code 1), odd ranks another (code 2): the largest code wins.
  const bool even = world.rank() % 2 == 0;
  const auto [code, text] = outcome(world, even ? "even" : "odd", even ? 1 : 2);
  if (world.size() == 1) {
    CHECK(code == 1);
    CHECK(text == "even");
  } else {
    CHECK(code == 2);
    std::string evens, odds;
    for (int r = 0; r < world.size(); ++r) {
      std::string& list = r % 2 == 0 ? evens : odds;
      if (!list.empty())
        list += ',';
      list += std::to_string(r);
    }
    const std::string expected = std::string(world.size() > 2 ? "ranks " : "rank ") + evens +
                                 ": even\n" + (world.size() > 3 ? "ranks " : "rank ") + odds +
                                 ": odd";
    CHECK(text == expected);
  }
}

TEST_CASE("on_every_rank turns an exception on one rank into the same error everywhere") {
  const baton::Communicator& world = baton::test::world();
  int ran = 0;
  try {
    baton::on_every_rank(
        world,
        [&] {
          ++ran;
          if (world.rank() == 0)
            throw std::runtime_error("rank 0 cannot read the input");
        },
        2);
    FAIL("on_every_rank returned");
  } catch (const baton::CollectiveError& e) {
    CHECK(e.code() == 2);
    CHECK(std::string(e.what()) == "rank 0 cannot read the input");
  }
  CHECK(ran == 1);
  CHECK_NOTHROW(baton::on_every_rank(world, [] {}));
}
