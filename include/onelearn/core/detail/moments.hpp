#pragma once
// Column moments, the kernels the scaler and linear models share. They are the seam a
// Thrust backend will replace: algorithms call these, not raw loops over Eigen internals.
// Sums are accumulated in double whatever T is, as scikit-learn does for float32 input, so a
// float fit loses no more than the final rounding to float.

#include <optional>

#include "onelearn/core/types.hpp"

namespace onelearn::detail {

/// Sum over rows of w_i * x_i (w_i = 1 without weights), one entry per column.
template <class T>
Vector<double> column_sums(const MatrixRef<T>& X, const std::optional<VectorRef<T>>& weights) {
  if (weights) return (weights->template cast<double>().transpose() * X.template cast<double>()).transpose();
  return X.template cast<double>().colwise().sum().transpose();
}

/// Sum over rows of w_i * (x_i - center)^2, one entry per column.
template <class T>
Vector<double> centered_square_sums(const MatrixRef<T>& X, const Vector<double>& center,
                                    const std::optional<VectorRef<T>>& weights) {
  const auto deviations =
      (X.template cast<double>().rowwise() - center.transpose()).array().square();
  if (weights) {
    return (weights->template cast<double>().transpose() * deviations.matrix()).transpose();
  }
  return deviations.colwise().sum().transpose();
}

}  // namespace onelearn::detail
