#pragma once
// The data term of scikit-learn's logistic regression objective, on one rank's rows, in double:
//
//   binary (one row of coefficients, target t_i = 1 for the second class, 0 for the first):
//       sum_i w_i [log(1 + exp(z_i)) - t_i z_i],            z_i = x_i^T coef + intercept
//   multinomial (k rows of coefficients):
//       sum_i w_i [log sum_c exp(z_ic) - z_i,y_i],           z_ic = x_i^T coef_c + intercept_c
//
// (scikit-learn's HalfBinomialLoss and HalfMultinomialLoss summed by LinearModelLoss), with its
// gradient. The penalty is not added here: under a distributed policy these sums are
// all-reduced first and the penalty, which every rank knows, is added once afterwards. Used by
// LogisticRegression (linear_model/logistic_regression.hpp) and by space::logistic_loss_gradient
// (space/host.hpp).

#include <algorithm>
#include <cmath>
#include <span>

#include <Eigen/Core>

#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/types.hpp"

namespace onelearn::detail {

/// log(1 + exp(z)) without overflow.
inline double softplus(double z) {
  return z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z));
}

/// 1 / (1 + exp(-z)) without overflow.
inline double sigmoid(double z) {
  if (z >= 0) return 1.0 / (1.0 + std::exp(-z));
  const double e = std::exp(z);
  return e / (1.0 + e);
}

/// Rows per product in logistic_terms: a block's scores (256 x k) stay in cache.
inline constexpr index_t logistic_block = 256;

// add_logistic_terms and logistic_terms are templates only so that they are compiled where they
// are called. As inline functions, their Eigen products were compiled in every file that
// includes space/host.hpp, whether it fits a logistic model or not: 1.5 s of such a file's
// front end (clang -ftime-trace of space/host.hpp's header check, 2026-12-08). `Deferred` is
// never given.

/// The data term and its gradient on rows [begin, end) of X, added to `loss` and `grad`.
template <class Deferred = void>
void add_logistic_terms(const MatrixRef<double>& X, index_t begin, index_t end,
                        std::span<const index_t> class_of, const VectorRef<double>& weights,
                        bool binary, bool fit_intercept, const MatrixRef<double>& params,
                        double& loss, Matrix<double>& grad) {
  const index_t p = X.cols();
  const auto rows = X.middleRows(begin, end - begin);
  Matrix<double> z = rows * params.leftCols(p).transpose();  // rows x k
  if (fit_intercept) z.rowwise() += params.col(p).transpose();
  // z becomes the per-row derivative of the loss with respect to z, times w_i.
  for (index_t r = 0; r < z.rows(); ++r) {
    const index_t i = begin + r;
    const double w = weights.size() == 0 ? 1.0 : weights(i);
    const index_t y = class_of[static_cast<std::size_t>(i)];
    if (binary) {
      const double zi = z(r, 0);
      const double t = y == 1 ? 1.0 : 0.0;
      loss += w * (softplus(zi) - t * zi);
      z(r, 0) = w * (sigmoid(zi) - t);
    } else {
      const double top = z.row(r).maxCoeff();
      const double lse = top + std::log((z.row(r).array() - top).exp().sum());
      loss += w * (lse - z(r, y));
      z.row(r) = w * (z.row(r).array() - lse).exp();
      z(r, y) -= w;
    }
  }
  grad.leftCols(p).noalias() += z.transpose() * rows;
  if (fit_intercept) grad.col(p) += z.colwise().sum().transpose();
}

/// The data term and its gradient over the rows of X: `class_of[i]` is row i's class index (0/1
/// when binary), `weights` one per row or empty, `params` k x (p + fit_intercept) with row c =
/// [coef_c, intercept_c], `grad` the same shape (overwritten). Returns the weighted loss. Chunks
/// of rows run on threads (core/detail/parallel.hpp); the result does not depend on the number
/// of threads.
template <class Deferred = void>
double logistic_terms(const MatrixRef<double>& X, std::span<const index_t> class_of,
                      const VectorRef<double>& weights, bool binary, bool fit_intercept,
                      const MatrixRef<double>& params, Eigen::Ref<Matrix<double>> grad) {
  struct Partial {
    double loss = 0;
    Matrix<double> grad;
    Partial& operator+=(const Partial& other) {
      loss += other.loss;
      grad += other.grad;
      return *this;
    }
  };
  constexpr index_t block = logistic_block;
  const Partial zero{0.0, Matrix<double>::Zero(params.rows(), params.cols())};
  const Partial total = sum_over_chunks(
      X.rows(), block, zero, [&](index_t chunk_begin, index_t chunk_end, Partial& out) {
        for (index_t begin = chunk_begin; begin < chunk_end; begin += block) {
          add_logistic_terms(X, begin, std::min(chunk_end, begin + block), class_of, weights,
                             binary, fit_intercept, params, out.loss, out.grad);
        }
      });
  grad = total.grad;
  return total.loss;
}

}  // namespace onelearn::detail
