#pragma once
// Comparing two networks' weights (nn::Sequential::get_weights(), layer states), shared by the
// data-parallel tests: the same fit on other ranks, policies or options must give the same
// weights up to rounding.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace onelearn::test {

/// max |a - b| / max |b| over each buffer (relative to the buffer's scale: single weights near
/// zero would make an entry-wise ratio meaningless), the largest over the buffers; infinite when
/// the shapes differ.
template <class T>
double weights_error(const std::vector<std::vector<T>>& a, const std::vector<std::vector<T>>& b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size()) return std::numeric_limits<double>::infinity();
    double diff = 0;
    double scale = 0;
    for (std::size_t j = 0; j < a[i].size(); ++j) {
      diff = std::max(diff, std::abs(static_cast<double>(a[i][j]) - static_cast<double>(b[i][j])));
      scale = std::max(scale, std::abs(static_cast<double>(b[i][j])));
    }
    worst = std::max(worst, scale > 0 ? diff / scale : diff);
  }
  return worst;
}

}  // namespace onelearn::test
