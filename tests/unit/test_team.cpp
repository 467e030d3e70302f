// The team reductions every dynamics kernel shares (dynamics/team.hpp): team_sum, team_sums<N>
// (N sums in one reduction; on Kokkos 3 through its volatile join) and team_max, on the teams the
// dynamics kernels use (system_teams: one thread on the host algorithms, several on the GPU
// algorithms on a host space, Kokkos' choice on a GPU).
#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <baton/dynamics/team.hpp>

namespace baton_test {

using baton::dynamics::detail::TeamMember;
using Result =
    Kokkos::View<double* [5], Kokkos::LayoutRight, baton::dynamics::detail::ExecutionSpace>;

// Team t reduces over [0, n + t): sum of i, of i^2 and of 1 in one team_sums<3>; sum of i by
// team_sum; the largest (i - 7)^2 by team_max. Each team's thread 0 writes them.
Result::HostMirror team_reductions(int teams, int n) {
  Result out("baton_test::team_reductions", teams);
  Kokkos::parallel_for(
      "baton_test::team_reductions", baton::dynamics::detail::system_teams(teams),
      KOKKOS_LAMBDA(const TeamMember& team) {
        const int t = team.league_rank(), end = n + t;
        const auto three =
            baton::dynamics::detail::team_sums<3>(team, 0, end, [&](int i, double* acc) {
              acc[0] += i;
              acc[1] += static_cast<double>(i) * i;
              acc[2] += 1;
            });
        const double one =
            baton::dynamics::detail::team_sum(team, 0, end, [&](int i) { return double(i); });
        const double most = baton::dynamics::detail::team_max(
            team, 0, end, [&](int i) { return double(i - 7) * (i - 7); });
        if (team.team_rank() == 0) {
          for (int c = 0; c < 3; ++c)
            out(t, c) = three.v[c];
          out(t, 3) = one;
          out(t, 4) = most;
        }
      });
  auto h = Kokkos::create_mirror_view(out);
  Kokkos::deep_copy(h, out);
  return h;
}

}  // namespace baton_test

TEST_CASE("team: team_sums gives N sums in one reduction, as team_sum and team_max do one") {
  for (const int n : {0, 1, 5, 64, 1000}) {
    const int teams = 3;
    const auto h = baton_test::team_reductions(teams, n);
    for (int t = 0; t < teams; ++t) {
      CAPTURE(n);
      CAPTURE(t);
      const double m = n + t;  // [0, m)
      CHECK(h(t, 0) == m * (m - 1) / 2);
      CHECK(h(t, 1) == (m - 1) * m * (2 * m - 1) / 6);
      CHECK(h(t, 2) == m);
      CHECK(h(t, 3) == m * (m - 1) / 2);
      // max over i of (i - 7)^2 on [0, m): 49 at i = 0, or (m - 8)^2 beyond; 0 when empty.
      const double far = m > 0 ? (m - 8) * (m - 8) : 0;
      CHECK(h(t, 4) == (m > 0 ? (far > 49 ? far : 49) : 0));
    }
  }
}
