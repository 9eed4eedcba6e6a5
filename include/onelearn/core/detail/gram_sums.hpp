#pragma once
// Centred, weighted Gram sums on the host: G = sum_i w_i x~_i x~_i^T, b = sum_i w_i x~_i y~_i,
// c = sum_i w_i y~_i^2 with x~ = x - x_mean, y~ = y - y_mean: one rank's share of the normal
// equations of Ridge, Lasso and ElasticNet (linear_model/detail/gram.hpp), and the host half of
// space::gram (space/host.hpp).
//
// Precision: the rows are converted to double before centring and the sums are kept in double
// whatever T is, as the column moments are (core/detail/moments.hpp). The Gram matrix squares
// the condition number of X, so a float Gram would lose digits that a float X still holds;
// the cost is a double-precision rank update instead of a float one. Like scikit-learn
// (_rescale_data), weights enter as sqrt(w * weight_scale) scaling of the centred rows
// (ElasticNet rescales the weights to sum to the number of samples); without weights,
// weight_scale is not used.

#include <algorithm>
#include <optional>

#include <Eigen/Core>

#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/types.hpp"

namespace onelearn::detail {

struct GramSums {
  Eigen::MatrixXd gram;  ///< p x p; local_gram_sums fills the lower triangle only
  Eigen::VectorXd xty;   ///< p (zeros without y)
  double yty = 0;        ///< squared norm of the centred, weighted targets (0 without y)

  GramSums& operator+=(const GramSums& other) {
    gram += other.gram;
    xty += other.xty;
    yty += other.yty;
    return *this;
  }
};

/// This process's sums; `y` may be absent (a covariance). Only the lower triangle of `gram` is
/// filled.
template <class T>
GramSums local_gram_sums(const MatrixRef<T>& X, const std::optional<VectorRef<T>>& y,
                         const std::optional<VectorRef<T>>& weights, double weight_scale,
                         const Vector<double>& x_mean, double y_mean) {
  const index_t n = X.rows();
  const index_t p = X.cols();
  // Blocks of rows of about 2 MB in double: large enough for a fast rank-k update, small
  // enough that the double copy of X is never made whole. Chunks of blocks run on threads.
  constexpr index_t budget = index_t{1} << 18;
  const index_t block =
      std::min(std::max<index_t>(budget / std::max<index_t>(p, 1), 64), std::max<index_t>(n, 1));
  const GramSums zero{Eigen::MatrixXd::Zero(p, p), Eigen::VectorXd::Zero(p), 0.0};
  return sum_over_chunks(
      n, block, zero, [&](index_t chunk_begin, index_t chunk_end, GramSums& out) {
        Matrix<double> A;
        Vector<double> r;
        for (index_t begin = chunk_begin; begin < chunk_end; begin += block) {
          const index_t rows = std::min(block, chunk_end - begin);
          A = X.middleRows(begin, rows).template cast<double>().rowwise() - x_mean.transpose();
          if (y) r = y->segment(begin, rows).template cast<double>().array() - y_mean;
          if (weights) {
            const Vector<double> root =
                (weights->segment(begin, rows).template cast<double>() * weight_scale).cwiseSqrt();
            A.array().colwise() *= root.array();
            if (y) r.array() *= root.array();
          }
          out.gram.selfadjointView<Eigen::Lower>().rankUpdate(A.transpose());
          if (y) {
            out.xty.noalias() += A.transpose() * r;
            out.yty += r.squaredNorm();
          }
        }
      });
}

}  // namespace onelearn::detail
