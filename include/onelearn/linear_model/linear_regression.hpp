#pragma once
// linear_model::LinearRegression: ordinary least squares, as scikit-learn's LinearRegression.
//
// The solve is a tall-skinny QR (TSQR), chosen over the normal equations because it keeps the
// accuracy of scikit-learn's SVD-based lstsq (the normal equations square the condition number)
// while distributing just as well:
//   1. each rank QR-factorises its centred block [X_i  y_i] and keeps the small triangle R_i
//      ((p+1) x (p+1) at most), which carries everything least squares needs of the block;
//   2. the triangles are all-gathered and stacked: S = [R_0; R_1; ...] has the same least-squares
//      problem as the concatenated data, since [X y] = blockdiag(Q_i) S;
//   3. every rank solves the small stacked problem with a complete orthogonal decomposition
//      (the minimum-norm solution for rank-deficient X, as lstsq gives) and so holds the same
//      coefficients.
// Compile time matters here: Eigen's BDCSVD costs ~30 s of compile time per scalar type on a
// small machine, the decomposition used here a fraction of that, and the SVD behind singular()
// is only compiled by code that calls it.
// Communication is one all-reduce of the means plus one all-gather of (p+1)^2 values per rank.

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include <Eigen/QR>
#include <Eigen/SVD>  // declarations only are used unless singular() is called

#include "onelearn/core/dataset.hpp"
#include "onelearn/core/detail/fit_input.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/metrics/r2_score.hpp"

namespace onelearn::linear_model {

struct LinearRegressionParams {
  bool fit_intercept = true;  ///< fit an intercept (centre X and y) or force it to 0

  static constexpr std::array<std::string_view, 1> names{"fit_intercept"};
};

template <class T, class Exec = exec::local>
class LinearRegression : public WithParams<LinearRegression<T, Exec>, LinearRegressionParams> {
 public:
  using value_type = T;
  using Params = LinearRegressionParams;

  explicit LinearRegression(const Params& params = {}, Exec exec = {})
      : WithParams<LinearRegression, Params>(params), exec_(std::move(exec)) {}

  LinearRegression& fit(const MatrixRef<T>& X, const VectorRef<T>& y) {
    return fit_impl(X, y, std::nullopt);
  }

  LinearRegression& fit(const MatrixRef<T>& X, const VectorRef<T>& y,
                        const VectorRef<T>& sample_weight) {
    return fit_impl(X, y, sample_weight);
  }

  /// Fits on a Dataset's features and targets, with its sample weights when it has them.
  LinearRegression& fit(const Dataset<T>& data) {
    if (data.has_sample_weights()) return fit(data.features(), data.targets(), data.sample_weights());
    return fit(data.features(), data.targets());
  }

  [[nodiscard]] Vector<T> predict(const MatrixRef<T>& X) const {
    constexpr std::string_view where = "LinearRegression.predict";
    validation::check_fitted(where, fitted_);
    validation::check_n_features(where, coef_.size(), X.cols());
    validation::check_finite(where, "X", X);
    return (X * coef_).array() + intercept_;
  }

  /// R^2 of the predictions for X against y. With a distributed policy it is collective: each
  /// rank passes its own rows and every rank gets the score over all of them.
  [[nodiscard]] T score(const MatrixRef<T>& X, const VectorRef<T>& y) const {
    Vector<T> predicted;
    exec_.propagate_errors([&] {
      validation::check_same_length("LinearRegression.score", "y", X.rows(), y.size());
      predicted = predict(X);
    });
    return metrics::r2_score<T>(y, predicted, exec_);
  }

  [[nodiscard]] const Vector<T>& coef() const { return require_fitted("LinearRegression.coef", coef_); }
  [[nodiscard]] T intercept() const { return require_fitted("LinearRegression.intercept", intercept_); }
  /// Effective rank of the (centred) X, as scikit-learn's rank_.
  [[nodiscard]] index_t rank() const { return require_fitted("LinearRegression.rank", rank_); }
  /// Singular values of the (centred, weighted) X, largest first, as scikit-learn's singular_.
  /// Computed on demand from the p x p triangle kept by fit, which has the same singular values.
  template <class Self = LinearRegression>  // a template, so only code that calls it compiles the SVD
  [[nodiscard]] Vector<T> singular() const {
    validation::check_fitted("LinearRegression.singular", fitted_);
    Vector<T> values = Vector<T>::Zero(coef_.size());
    values.head(rank_) = Eigen::JacobiSVD<ColMatrix>(triangle_).singularValues();
    return values;
  }
  [[nodiscard]] index_t n_features_in() const {
    return require_fitted("LinearRegression.n_features_in", coef_.size());
  }
  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }

 private:
  using ColMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;

  LinearRegression& fit_impl(const MatrixRef<T>& X, const VectorRef<T>& y,
                             const std::optional<VectorRef<T>>& weights) {
    constexpr std::string_view where = "LinearRegression.fit";
    fitted_ = false;
    detail::check_fit_input<T>(where, exec_, X, y, weights);
    const auto means = detail::global_means<T>(where, exec_, X, y, weights);
    Vector<double> x_mean = Vector<double>::Zero(X.cols());
    double y_mean = 0;
    if (this->params_.fit_intercept) {
      x_mean = means.x;
      y_mean = means.y;
    }

    const ColMatrix stacked = gather_triangles(local_triangle(X, y, weights, x_mean, y_mean));
    solve(stacked, means.n_samples);
    intercept_ = this->params_.fit_intercept
                     ? static_cast<T>(y_mean - x_mean.dot(coef_.template cast<double>()))
                     : T(0);
    fitted_ = true;
    return *this;
  }

  /// R of the QR factorisation of this rank's centred, weighted block [X y]:
  /// min(rows, p+1) x (p+1), upper trapezoidal.
  static ColMatrix local_triangle(const MatrixRef<T>& X, const VectorRef<T>& y,
                                  const std::optional<VectorRef<T>>& weights,
                                  const Vector<double>& x_mean, double y_mean) {
    const index_t n = X.rows();
    const index_t p = X.cols();
    ColMatrix block(n, p + 1);
    block.leftCols(p) = X.rowwise() - x_mean.cast<T>().transpose();
    block.col(p) = y.array() - static_cast<T>(y_mean);
    if (weights) block = weights->array().sqrt().matrix().asDiagonal() * block;
    const index_t k = std::min(n, p + 1);
    if (k == 0) return ColMatrix(0, p + 1);
    Eigen::HouseholderQR<ColMatrix> qr(std::move(block));
    return qr.matrixQR().topRows(k).template triangularView<Eigen::Upper>();
  }

  /// Stacks every rank's triangle, in rank order, into one small matrix on every rank.
  ColMatrix gather_triangles(const ColMatrix& mine) const {
    const index_t cols = mine.cols();
    // Row-major packing, so each rank's rows arrive contiguous after the all-gather.
    const Matrix<T> packed = mine;
    const std::vector<T> all =
        exec_.allgatherv(std::span<const T>(packed.data(), static_cast<std::size_t>(packed.size())));
    return Eigen::Map<const Matrix<T>>(all.data(), static_cast<index_t>(all.size()) / cols, cols);
  }

  /// Minimum-norm least squares on the stacked triangles [A b]. Pivots below
  /// eps * max(n, p) of the largest count as zero, the cut-off numpy's lstsq uses.
  void solve(const ColMatrix& stacked, index_t n_samples) {
    const index_t p = stacked.cols() - 1;
    Eigen::CompleteOrthogonalDecomposition<ColMatrix> cod;
    cod.setThreshold(std::numeric_limits<T>::epsilon() * static_cast<T>(std::max(n_samples, p)));
    cod.compute(stacked.leftCols(p));
    coef_ = cod.solve(stacked.col(p));
    rank_ = cod.rank();
    // A P = Q [T11 0; 0 0] Z with Q and Z orthogonal, so T11 carries A's nonzero singular
    // values: keep it for singular().
    triangle_ = cod.matrixT().topLeftCorner(rank_, rank_).template triangularView<Eigen::Upper>();
  }

  template <class V>
  const V& require_fitted(std::string_view where, const V& attribute) const {
    validation::check_fitted(where, fitted_);
    return attribute;
  }

  Exec exec_;
  Vector<T> coef_;
  ColMatrix triangle_;  // T11 of the decomposition of the centred, weighted X: rank x rank
  T intercept_{};
  index_t rank_ = 0;
  bool fitted_ = false;
};

}  // namespace onelearn::linear_model
