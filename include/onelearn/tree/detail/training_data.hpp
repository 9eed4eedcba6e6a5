#pragma once
// What a tree is grown from: the features rounded to float32 (scikit-learn grows its trees on
// float32 data, so the same rounding gives the same thresholds), stored column by column, each
// column's rows sorted once by value, and the targets. A forest sorts once and every tree reuses
// the order, keeping only its rows of positive weight (sort_columns_for).

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/types.hpp"

namespace onelearn::tree::detail {

struct TrainingData {
  index_t n_rows = 0;
  index_t n_features = 0;
  std::vector<float> x;                 ///< column-major: feature f of row i at x[f * n_rows + i]
  std::vector<std::int32_t> class_of;   ///< classification: each row's class index
  std::vector<double> y;                ///< regression: each row's target
  std::vector<double> weight;           ///< each row's sample weight (1 without weights)
  index_t n_classes = 0;                ///< 0 for regression
  std::vector<std::int32_t> sorted_rows;  ///< per feature, the rows by increasing value

  [[nodiscard]] bool classification() const noexcept { return n_classes > 0; }
  [[nodiscard]] double total_weight() const noexcept {
    double total = 0;
    for (double w : weight) total += w;
    return total;
  }
  [[nodiscard]] float value(index_t feature, index_t row) const noexcept {
    return x[static_cast<std::size_t>(feature * n_rows + row)];
  }

  /// Sorts each column's rows by value (ties by row, so the order is reproducible).
  void sort_columns() {
    sorted_rows.resize(static_cast<std::size_t>(n_rows * n_features));
    onelearn::detail::for_each_chunk(n_features, 1, [&](index_t f, index_t, index_t) {
      auto* begin = sorted_rows.data() + f * n_rows;
      std::iota(begin, begin + n_rows, 0);
      const float* column = x.data() + f * n_rows;
      std::sort(begin, begin + n_rows, [column](std::int32_t a, std::int32_t b) {
        return column[a] < column[b] || (column[a] == column[b] && a < b);
      });
    });
  }
};

/// The columns one tree works on: each feature's rows of positive weight in increasing order
/// of value, and the values beside them, partitioned node by node as the tree grows (a node is
/// one range [begin, end) of every column).
struct SortedColumns {
  index_t n_rows = 0;  ///< rows of positive weight
  index_t n_features = 0;
  std::vector<float> values;
  std::vector<std::int32_t> rows;

  [[nodiscard]] const float* values_of(index_t f) const { return values.data() + f * n_rows; }
  [[nodiscard]] float* values_of(index_t f) { return values.data() + f * n_rows; }
  [[nodiscard]] const std::int32_t* rows_of(index_t f) const { return rows.data() + f * n_rows; }
  [[nodiscard]] std::int32_t* rows_of(index_t f) { return rows.data() + f * n_rows; }
};

/// The sorted columns of the rows whose `weights` are positive (scikit-learn's splitter also
/// leaves zero-weight rows out: they count in no node).
inline SortedColumns sort_columns_for(const TrainingData& data, const std::vector<double>& weights,
                                      bool threads) {
  SortedColumns out;
  out.n_features = data.n_features;
  out.n_rows = static_cast<index_t>(
      std::count_if(weights.begin(), weights.end(), [](double w) { return w > 0; }));
  out.values.resize(static_cast<std::size_t>(out.n_rows * out.n_features));
  out.rows.resize(out.values.size());
  auto fill = [&](index_t f) {
    const std::int32_t* sorted = data.sorted_rows.data() + f * data.n_rows;
    std::int32_t* rows = out.rows_of(f);
    float* values = out.values_of(f);
    index_t j = 0;
    for (index_t k = 0; k < data.n_rows; ++k) {
      const std::int32_t row = sorted[k];
      if (weights[static_cast<std::size_t>(row)] > 0) {
        rows[j] = row;
        values[j] = data.value(f, row);
        ++j;
      }
    }
  };
  if (threads) {
    onelearn::detail::for_each_chunk(out.n_features, 1, [&](index_t f, index_t, index_t) { fill(f); });
  } else {
    for (index_t f = 0; f < out.n_features; ++f) fill(f);
  }
  return out;
}

}  // namespace onelearn::tree::detail
