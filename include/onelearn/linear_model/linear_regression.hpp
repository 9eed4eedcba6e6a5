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
//   3. every rank solves the small stacked problem with an SVD (minimum-norm solution for
//      rank-deficient X, like lstsq) and so holds the same coefficients.
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
#include <Eigen/SVD>

#include "onelearn/core/dataset.hpp"
#include "onelearn/core/detail/moments.hpp"
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
  [[nodiscard]] const Vector<T>& singular() const {
    return require_fitted("LinearRegression.singular", singular_);
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
    exec_.propagate_errors([&] {
      validation::check_same_length(where, "y", X.rows(), y.size());
      validation::check_finite(where, "X", X);
      validation::check_finite(where, "y", y);
      if (weights) {
        validation::check_same_length(where, "sample_weight", X.rows(), weights->size());
        validation::check_sample_weights<T>(where, *weights);
      }
    });
    const std::array<std::int64_t, 1> n_features{X.cols()};
    exec_.check_same_shape("the number of features of X", n_features);
    const index_t p = X.cols();

    // Weighted means of X and y over all ranks: [total weight, n, sum w x (p), sum w y].
    Vector<double> totals(p + 3);
    totals(0) = weights ? weights->template cast<double>().sum() : static_cast<double>(X.rows());
    totals(1) = static_cast<double>(X.rows());
    totals.segment(2, p) = detail::column_sums<T>(X, weights);
    totals(p + 2) = weights ? weights->template cast<double>().dot(y.template cast<double>())
                            : y.template cast<double>().sum();
    exec_.allreduce(std::span(totals.data(), totals.size()), exec::reduce_op::sum);
    if (totals(1) == 0 || p == 0) {
      throw invalid_argument(std::string(where) + ": expected at least one sample and one " +
                             "feature, found " + std::to_string(static_cast<long long>(totals(1))) +
                             " x " + std::to_string(p));
    }
    if (totals(0) <= 0) {
      throw invalid_argument(std::string(where) + ": expected a positive total sample_weight, " +
                             "found " + std::to_string(totals(0)));
    }
    Vector<double> x_mean = Vector<double>::Zero(p);
    double y_mean = 0;
    if (this->params_.fit_intercept) {
      x_mean = totals.segment(2, p) / totals(0);
      y_mean = totals(p + 2) / totals(0);
    }

    const ColMatrix stacked = gather_triangles(local_triangle(X, y, weights, x_mean, y_mean));
    solve(stacked, static_cast<index_t>(totals(1)));
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
    Eigen::HouseholderQR<Eigen::Ref<ColMatrix>> qr(block);  // in place: no copy of the block
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

  /// Minimum-norm least squares on the stacked triangles [A b], like LAPACK's gelsd: singular
  /// values below eps * max(n, p) * largest are treated as zero.
  void solve(const ColMatrix& stacked, index_t n_samples) {
    const index_t p = stacked.cols() - 1;
    Eigen::BDCSVD<ColMatrix> svd(stacked.leftCols(p), Eigen::ComputeThinU | Eigen::ComputeThinV);
    svd.setThreshold(std::numeric_limits<T>::epsilon() * static_cast<T>(std::max(n_samples, p)));
    coef_ = svd.solve(stacked.col(p));
    rank_ = svd.rank();
    singular_ = Vector<T>::Zero(p);
    singular_.head(svd.singularValues().size()) = svd.singularValues();
  }

  template <class V>
  const V& require_fitted(std::string_view where, const V& attribute) const {
    validation::check_fitted(where, fitted_);
    return attribute;
  }

  Exec exec_;
  Vector<T> coef_;
  Vector<T> singular_;
  T intercept_{};
  index_t rank_ = 0;
  bool fitted_ = false;
};

}  // namespace onelearn::linear_model
