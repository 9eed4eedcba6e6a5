#pragma once
// Exact per-column medians of rows spread over ranks, ignoring NaN (private header).
//
// Gathering the rows to compute a median would move the whole data set to every rank. Instead
// each rank sorts its columns once, and all ranks bisect together on the value: a double maps
// to a 64-bit key whose unsigned order is the order of the values, so the k-th smallest value
// of a column is the smallest key v with #(values <= v) >= k + 1. Each bisection step all-reduces
// those counts (answered by a binary search in each rank's sorted column) for the two middle
// ranks of every column at once: at most 64 all-reduces of 2p integers, and the result is the
// exact value numpy's median gives, (lower middle + upper middle) / 2.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "onelearn/core/types.hpp"
#include "onelearn/exec/policy.hpp"

namespace onelearn::preprocessing::detail {

/// A key whose unsigned order is the order of the (non-NaN) doubles: negative values have all
/// bits flipped, non-negative ones only the sign bit. (-0.0 sorts just below +0.0.)
inline std::uint64_t order_key(double x) {
  constexpr std::uint64_t sign = std::uint64_t{1} << 63;
  const auto bits = std::bit_cast<std::uint64_t>(x);
  return (bits & sign) != 0 ? ~bits : bits | sign;
}

inline double from_order_key(std::uint64_t key) {
  constexpr std::uint64_t sign = std::uint64_t{1} << 63;
  return std::bit_cast<double>((key & sign) != 0 ? key & ~sign : ~key);
}

/// The median of the non-NaN values of each column over the rows of every rank; NaN for a
/// column without any. `counts(j)` is the number of non-NaN values of column j over all ranks
/// (the same on every rank). Collective: every rank calls it with the same counts.
template <class T, exec::ExecutionPolicy Exec>
Vector<double> exact_medians(const Exec& exec, const MatrixRef<T>& X,
                             const Vector<double>& counts) {
  const auto p = static_cast<std::size_t>(X.cols());
  std::vector<std::vector<std::uint64_t>> keys(p);
  for (std::size_t j = 0; j < p; ++j) {
    keys[j].reserve(static_cast<std::size_t>(X.rows()));
    for (index_t i = 0; i < X.rows(); ++i) {
      const auto x = static_cast<double>(X(i, static_cast<index_t>(j)));
      if (!std::isnan(x)) keys[j].push_back(order_key(x));
    }
    std::sort(keys[j].begin(), keys[j].end());
  }

  // Targets 2j and 2j+1: the lower and upper middle (0-based ranks) of column j.
  std::vector<std::int64_t> target(2 * p);
  std::vector<std::uint64_t> lo(2 * p, 0);
  std::vector<std::uint64_t> hi(2 * p, std::numeric_limits<std::uint64_t>::max());
  for (std::size_t j = 0; j < p; ++j) {
    const auto m = static_cast<std::int64_t>(counts(static_cast<index_t>(j)));
    target[2 * j] = (m - 1) / 2;
    target[2 * j + 1] = m / 2;
    if (m == 0) hi[2 * j] = hi[2 * j + 1] = 0;  // nothing to find
  }
  std::vector<std::int64_t> at_most(2 * p);
  // lo and hi evolve identically on every rank (they depend only on all-reduced counts), so
  // every rank leaves the loop after the same number of all-reduces.
  while (true) {
    bool active = false;
    for (std::size_t t = 0; t < 2 * p; ++t) {
      at_most[t] = 0;
      if (lo[t] >= hi[t]) continue;
      active = true;
      const std::uint64_t mid = lo[t] + (hi[t] - lo[t]) / 2;
      const auto& column = keys[t / 2];
      at_most[t] = std::upper_bound(column.begin(), column.end(), mid) - column.begin();
    }
    if (!active) break;
    exec.allreduce(std::span(at_most), exec::reduce_op::sum);
    for (std::size_t t = 0; t < 2 * p; ++t) {
      if (lo[t] >= hi[t]) continue;
      const std::uint64_t mid = lo[t] + (hi[t] - lo[t]) / 2;
      if (at_most[t] >= target[t] + 1) {
        hi[t] = mid;
      } else {
        lo[t] = mid + 1;
      }
    }
  }

  Vector<double> medians(static_cast<index_t>(p));
  for (std::size_t j = 0; j < p; ++j) {
    medians(static_cast<index_t>(j)) =
        counts(static_cast<index_t>(j)) == 0
            ? std::numeric_limits<double>::quiet_NaN()
            : (from_order_key(lo[2 * j]) + from_order_key(lo[2 * j + 1])) / 2;
  }
  return medians;
}

}  // namespace onelearn::preprocessing::detail
