#pragma once
// The statistical tests' error bars: a mean and its standard error from independent values (per
// system, in a batch of independent systems).

#include <cmath>
#include <vector>

namespace baton::test {

struct Estimate {
  double mean = 0, error = 0;
};

/// Mean and standard error of `x` (at least two independent values).
inline Estimate estimate(const std::vector<double>& x) {
  double m = 0;
  for (double v : x)
    m += v / static_cast<double>(x.size());
  double s2 = 0;
  for (double v : x)
    s2 += (v - m) * (v - m) / static_cast<double>(x.size() - 1);
  return {m, std::sqrt(s2 / static_cast<double>(x.size()))};
}

}  // namespace baton::test
