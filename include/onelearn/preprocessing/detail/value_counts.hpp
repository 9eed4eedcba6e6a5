#pragma once
// Per-column distinct values and their counts, over the rows of every rank (private header).
// OneHotEncoder uses the values (its categories), SimpleImputer's "most_frequent" the counts.
//
// Each rank sorts its columns' values and counts runs, then one all-gather moves every rank's
// (value, count) lists, packed self-describing as [m, v_1..v_m, c_1..c_m] per column, so the
// receiver needs no per-rank sizes. The traffic is the number of distinct values per rank, not
// the number of rows. Values travel as double: float and double values, and counts below 2^53,
// are exact in it.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "onelearn/core/types.hpp"
#include "onelearn/exec/policy.hpp"

namespace onelearn::preprocessing::detail {

/// The distinct values of one column, ascending, and how often each occurs.
struct ValueCounts {
  std::vector<double> values;
  std::vector<std::int64_t> counts;
};

/// Sorted (value, count) runs of `sorted` (ascending, no NaN).
inline ValueCounts count_runs(const std::vector<double>& sorted) {
  ValueCounts out;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i + 1;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    out.values.push_back(sorted[i]);
    out.counts.push_back(static_cast<std::int64_t>(j - i));
    i = j;
  }
  return out;
}

/// Distinct values and counts of each column of X on this rank; NaN entries are skipped.
template <class T>
std::vector<ValueCounts> local_value_counts(const MatrixRef<T>& X) {
  std::vector<ValueCounts> out(static_cast<std::size_t>(X.cols()));
  std::vector<double> column;
  column.reserve(static_cast<std::size_t>(X.rows()));
  for (index_t j = 0; j < X.cols(); ++j) {
    column.clear();
    for (index_t i = 0; i < X.rows(); ++i) {
      if (!std::isnan(X(i, j))) column.push_back(static_cast<double>(X(i, j)));
    }
    std::sort(column.begin(), column.end());
    out[static_cast<std::size_t>(j)] = count_runs(column);
  }
  return out;
}

/// The per-column value counts of every rank merged: what local_value_counts would give on the
/// concatenated rows. One all-gather; every rank must pass the same number of columns.
template <exec::ExecutionPolicy Exec>
std::vector<ValueCounts> allgather_value_counts(const Exec& exec,
                                                const std::vector<ValueCounts>& local) {
  std::vector<double> packed;
  for (const ValueCounts& column : local) {
    packed.push_back(static_cast<double>(column.values.size()));
    packed.insert(packed.end(), column.values.begin(), column.values.end());
    for (std::int64_t c : column.counts) packed.push_back(static_cast<double>(c));
  }
  const std::vector<double> all = exec.allgatherv(std::span<const double>(packed));

  // Collect every rank's (value, count) pairs per column, then merge equal values.
  std::vector<std::vector<std::pair<double, std::int64_t>>> pairs(local.size());
  std::size_t at = 0;
  while (at < all.size()) {  // one rank's block per pass of the for loop
    for (auto& column : pairs) {
      const auto m = static_cast<std::size_t>(all[at++]);
      for (std::size_t k = 0; k < m; ++k) {
        column.emplace_back(all[at + k], static_cast<std::int64_t>(all[at + m + k]));
      }
      at += 2 * m;
    }
  }
  std::vector<ValueCounts> merged(local.size());
  for (std::size_t j = 0; j < pairs.size(); ++j) {
    auto& column = pairs[j];
    std::sort(column.begin(), column.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [value, count] : column) {
      if (!merged[j].values.empty() && merged[j].values.back() == value) {
        merged[j].counts.back() += count;
      } else {
        merged[j].values.push_back(value);
        merged[j].counts.push_back(count);
      }
    }
  }
  return merged;
}

}  // namespace onelearn::preprocessing::detail
