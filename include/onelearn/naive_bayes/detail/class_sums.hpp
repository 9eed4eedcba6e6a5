#pragma once
// The grouped reduction both naive Bayes models fit from (private).

#include <optional>
#include <vector>

#include "onelearn/core/types.hpp"

namespace onelearn::detail {

/// Per-class weighted counts and feature sums, in double: counts(c) += w_i and
/// sums.row(c) += w_i x_i over the rows i with class_of[i] = c (w_i = 1 without weights). The
/// grouped reduction a Thrust backend would replace.
template <class T>
void class_sums(const MatrixRef<T>& X, const std::vector<index_t>& class_of,
                const std::optional<VectorRef<T>>& weights, Eigen::Ref<Vector<double>> counts,
                Eigen::Ref<Matrix<double>> sums) {
  for (index_t i = 0; i < X.rows(); ++i) {
    const index_t c = class_of[static_cast<std::size_t>(i)];
    const double w = weights ? static_cast<double>((*weights)(i)) : 1.0;
    counts(c) += w;
    sums.row(c) += w * X.row(i).template cast<double>();
  }
}

}  // namespace onelearn::detail
