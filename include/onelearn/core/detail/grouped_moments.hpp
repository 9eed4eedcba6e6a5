#pragma once
// Per-group (per-class) weighted counts, sums and squared deviations: the grouped reductions
// GaussianNB and MultinomialNB fit from, on the host. Also the host half of space::class_sums
// and space::class_square_deviations (space/host.hpp), so the estimators and the host space run
// the same loops.

#include <optional>
#include <span>

#include "onelearn/core/types.hpp"

namespace onelearn::detail {

/// counts(c) += w_i and sums.row(c) += w_i x_i over the rows i with group_of[i] = c, in double
/// (w_i = 1 without weights).
template <class T>
void grouped_sums(const MatrixRef<T>& X, std::span<const index_t> group_of,
                  const std::optional<VectorRef<T>>& weights, Eigen::Ref<Vector<double>> counts,
                  Eigen::Ref<Matrix<double>> sums) {
  for (index_t i = 0; i < X.rows(); ++i) {
    const index_t c = group_of[static_cast<std::size_t>(i)];
    const double w = weights ? static_cast<double>((*weights)(i)) : 1.0;
    counts(c) += w;
    sums.row(c) += w * X.row(i).template cast<double>();
  }
}

/// out.row(c) += w_i (x_i - center_c)^2 over the rows i with group_of[i] = c, in double.
template <class T>
void grouped_square_deviations(const MatrixRef<T>& X, std::span<const index_t> group_of,
                               const std::optional<VectorRef<T>>& weights,
                               const Matrix<double>& centers, Eigen::Ref<Matrix<double>> out) {
  for (index_t i = 0; i < X.rows(); ++i) {
    const index_t c = group_of[static_cast<std::size_t>(i)];
    const double w = weights ? static_cast<double>((*weights)(i)) : 1.0;
    out.row(c).array() += w * (X.row(i).template cast<double>() - centers.row(c)).array().square();
  }
}

}  // namespace onelearn::detail
