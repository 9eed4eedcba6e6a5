#pragma once
// The data term of scikit-learn's logistic regression objective, on one rank's rows, in double:
//
//   binary (one row of coefficients, target t_i = 1 for the second class, 0 for the first):
//       sum_i w_i [log(1 + exp(z_i)) - t_i z_i],            z_i = x_iᵀ coef + intercept
//   multinomial (k rows of coefficients):
//       sum_i w_i [log Σ_c exp(z_ic) - z_i,y_i],             z_ic = x_iᵀ coef_c + intercept_c
//
// (scikit-learn's HalfBinomialLoss and HalfMultinomialLoss summed by LinearModelLoss), with its
// gradient. The penalty is not added here: under a distributed policy these sums are
// all-reduced first and the penalty, which every rank knows, is added once afterwards.
// These products are the kernels a Thrust backend would replace.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include "onelearn/core/types.hpp"

namespace onelearn::linear_model::detail {

/// log(1 + exp(z)) without overflow.
inline double log1pexp(double z) {
  return z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z));
}

/// 1 / (1 + exp(-z)) without overflow.
inline double expit(double z) {
  if (z >= 0) return 1.0 / (1.0 + std::exp(-z));
  const double e = std::exp(z);
  return e / (1.0 + e);
}

/// The data term and its gradient on the rows of X.
/// - `class_of[i]`: index of row i's class in classes() (0 or 1 in the binary case);
/// - `weights`: one per row, or empty for unit weights;
/// - `params`: rows x (p + fit_intercept), row c = [coef_c, intercept_c];
/// - `grad`: same shape, overwritten.
/// Returns the weighted sum of the per-row losses.
inline double logistic_loss_gradient(const MatrixRef<double>& X,
                                     const std::vector<index_t>& class_of,
                                     const Vector<double>& weights, bool binary, bool fit_intercept,
                                     const MatrixRef<double>& params,
                                     Eigen::Ref<Matrix<double>> grad) {
  const index_t n = X.rows();
  const index_t p = X.cols();
  Matrix<double> z = X * params.leftCols(p).transpose();  // n x k
  if (fit_intercept) z.rowwise() += params.col(p).transpose();
  double loss = 0;
  // z becomes the per-row derivative of the loss with respect to z, times w_i.
  for (index_t i = 0; i < n; ++i) {
    const double w = weights.size() == 0 ? 1.0 : weights(i);
    const index_t y = class_of[static_cast<std::size_t>(i)];
    if (binary) {
      const double zi = z(i, 0);
      const double t = y == 1 ? 1.0 : 0.0;
      loss += w * (log1pexp(zi) - t * zi);
      z(i, 0) = w * (expit(zi) - t);
    } else {
      const double top = z.row(i).maxCoeff();
      const double lse = top + std::log((z.row(i).array() - top).exp().sum());
      loss += w * (lse - z(i, y));
      z.row(i) = w * (z.row(i).array() - lse).exp();
      z(i, y) -= w;
    }
  }
  grad.leftCols(p).noalias() = z.transpose() * X;
  if (fit_intercept) grad.col(p) = z.colwise().sum().transpose();
  return loss;
}

}  // namespace onelearn::linear_model::detail
