#pragma once
/**
 * \class onelearn::linear_model::LinearRegression
 * \brief Ordinary least squares, as scikit-learn's LinearRegression.
 * \ingroup estimators
 *
 * \code
 * #include <onelearn/linear_model/linear_regression.hpp>
 *
 * onelearn::linear_model::LinearRegression<double> ols;     // or ({.fit_intercept = false})
 * ols.fit(X_train, y_train);              // Matrix<double> (rows = samples), Vector<double>
 * onelearn::Vector<double> y_hat = ols.predict(X_test);
 * double r2 = ols.score(X_test, y_test);
 *
 * // Data-parallel: each rank passes its own rows; every rank ends with the same model.
 * onelearn::linear_model::LinearRegression<double, onelearn::exec::mpi> dist(
 *     {}, onelearn::exec::mpi{comm});
 * dist.fit(my_X, my_y);
 * \endcode
 *
 * linear_model::LinearRegression: ordinary least squares, as scikit-learn's LinearRegression
 * (1.2.1): minimises Σ_i w_i (y_i - x_iᵀ coef - intercept)², giving the minimum-norm coef when
 * X is rank-deficient (as scipy's lstsq does).
 *
 * \par Parameters (LinearRegressionParams)
 * - `fit_intercept` (bool, default true): fit an intercept (centre X and y) or force it to 0.
 *
 * \par Attributes (after fit)
 * - `coef()` (Vector<T>, p): the coefficients, scikit-learn's coef_.
 * - `intercept()` (T): scikit-learn's intercept_ (0 when fit_intercept is false).
 * - `rank()`: the numerical rank of the centred X; `singular()`: its singular values.
 * - `n_features_in()`: number of features seen in fit.
 *
 * \par A model from given attributes
 * `LinearRegression::from_fitted(params, coef, intercept[, exec])` returns a model that predicts
 * and scores exactly as a fitted one with these attributes: what an imported model
 * (onnx/to_estimator.hpp) becomes. It has seen no data, so rank() and singular() are a
 * not_fitted_error; intercept must be 0 when params.fit_intercept is false.
 *
 * \par Differences from scikit-learn
 * - No `positive` (non-negative least squares), `n_jobs` or `copy_X`.
 *
 * Errors: `not_fitted_error` before fit; `shape_error` for y or sample_weight of the wrong
 * length, X with other features than in fit, or ranks that disagree on the number of features;
 * `invalid_argument` for NaN/Inf, negative weights and no samples. Under exec::mpi every error in
 * fit is raised on every rank.
 */

// Method. The solve is a tall-skinny QR (TSQR), chosen over the normal equations because it
// keeps the accuracy of scikit-learn's SVD-based lstsq (the normal equations square the condition number)
// while distributing just as well:
//   1. each rank QR-factorises its centred block [X_i  y_i] and keeps the small triangle R_i
//      ((p+1) x (p+1) at most), which carries everything least squares needs of the block
//      (by chunks of rows, below);
//   2. the triangles are all-gathered and stacked: S = [R_0; R_1; ...] has the same least-squares
//      problem as the concatenated data, since [X y] = blockdiag(Q_i) S;
//   3. every rank solves the small stacked problem with a complete orthogonal decomposition
//      (the minimum-norm solution for rank-deficient X, as lstsq gives) and so holds the same
//      coefficients.
// Compile time matters here: Eigen's BDCSVD costs ~30 s of compile time per scalar type on a
// small machine, the decomposition used here a fraction of that, and the SVD behind singular()
// is only compiled by code that calls it.
// Communication is one all-reduce of the means plus one all-gather of (p+1)^2 values per rank.
// Step 1 runs on chunks of the rank's rows (OpenMP's threads), each chunk's triangle computed on
// its own, and the stack of the chunks' triangles, which has the block's least-squares problem,
// is factorised once more into R_i: one QR of a whole 500k x 64 block was 4x slower than the
// chunks on 2 threads. In a compute space (third template argument) the chunks run there:
// Givens rotations per chunk in the device's form, the host's code on the threaded CPU systems.

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/QR>
#include <Eigen/SVD>  // declarations only are used unless singular() is called

#include "onelearn/base/agreement.hpp"
#include "onelearn/base/fit_input.hpp"
#include "onelearn/base/in_space.hpp"
#include "onelearn/core/dataset.hpp"
#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/linear_model/detail/linear_regressor.hpp"
#include "onelearn/metrics/r2_score.hpp"
#include "onelearn/space/concept.hpp"
#include "onelearn/space/host.hpp"

namespace onelearn::linear_model {

struct LinearRegressionParams {
  bool fit_intercept = true;  ///< fit an intercept (centre X and y) or force it to 0

  static constexpr std::array<std::string_view, 1> names{"fit_intercept"};
};

template <class T, exec::ExecutionPolicy Exec = exec::local,
          space::ComputeSpace Space = space::host>
class LinearRegression : public detail::LinearRegressor<LinearRegression<T, Exec, Space>,
                                                        LinearRegressionParams, T, Exec, Space> {
  using Base = detail::LinearRegressor<LinearRegression<T, Exec, Space>, LinearRegressionParams,
                                       T, Exec, Space>;
  friend Base;

 public:
  using Params = LinearRegressionParams;
  static constexpr std::string_view name = "LinearRegression";

  explicit LinearRegression(const Params& params = {}, Exec exec = {}, Space space = {})
      : Base(params, std::move(exec), std::move(space)) {}

  /// A fitted model with these attributes (see "A model from given attributes" above).
  /// invalid_argument for an empty coef, NaN/Inf, or a nonzero intercept without fit_intercept.
  [[nodiscard]] static LinearRegression from_fitted(const Params& params,
                                                    const VectorRef<T>& coef, T intercept,
                                                    Exec exec = {}) {
    constexpr std::string_view where = "LinearRegression.from_fitted";
    if (coef.size() == 0) {
      throw invalid_argument(std::string(where) + ": expected at least one coefficient, found 0");
    }
    validation::check_finite(where, "coef", coef);
    validation::check_finite(where, "intercept", Vector<T>::Constant(1, intercept));
    if (!params.fit_intercept && intercept != T(0)) {
      throw invalid_argument(std::string(where) +
                             ": expected intercept 0 with fit_intercept = false, found " +
                             std::to_string(intercept));
    }
    LinearRegression model(params, std::move(exec));
    model.coef_ = coef;
    model.intercept_ = intercept;
    model.rank_ = -1;  // unknown: no data seen
    model.fitted_ = true;
    return model;
  }

  /// Effective rank of the (centred) X, as scikit-learn's rank_.
  [[nodiscard]] index_t rank() const {
    check_seen_data("LinearRegression.rank");
    return rank_;
  }
  /// Singular values of the (centred, weighted) X, largest first, as scikit-learn's singular_.
  /// Computed on demand from the p x p triangle kept by fit, which has the same singular values.
  template <class Self = LinearRegression>  // a template, so only code that calls it compiles the SVD
  [[nodiscard]] Vector<T> singular() const {
    check_seen_data("LinearRegression.singular");
    Vector<T> values = Vector<T>::Zero(this->coef_.size());
    values.head(rank_) = Eigen::JacobiSVD<ColMatrix>(triangle_).singularValues();
    return values;
  }

 private:
  using ColMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;

  /// rank() and singular() need a fit on data: from_fitted leaves rank_ at -1.
  void check_seen_data(std::string_view where) const {
    validation::check_fitted(where, this->fitted_);
    if (rank_ < 0) {
      throw not_fitted_error(std::string(where) +
                             ": expected a model fitted on data, found one made by from_fitted "
                             "(it has no rank or singular values)");
    }
  }

  LinearRegression& fit_impl(const MatrixRef<T>& X, const VectorRef<T>& y,
                             const std::optional<VectorRef<T>>& weights) {
    constexpr std::string_view where = "LinearRegression.fit";
    onelearn::detail::check_same_params(where, this->exec_, this->params_);
    this->fitted_ = false;
    const auto [means, x_mean, y_mean, data] = this->centring(where, X, y, weights);
    const ColMatrix stacked =
        gather_triangles(triangle_in_space(X, y, weights, x_mean, y_mean, data));
    solve(stacked, means.n_samples);
    this->intercept_ = this->params_.fit_intercept
                     ? static_cast<T>(y_mean - x_mean.dot(this->coef_.template cast<double>()))
                     : T(0);
    this->fitted_ = true;
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
    return triangle_of(std::move(block));
  }

  /// This rank's triangle: the QR's passes over the rows on chunks of rows, each chunk's
  /// triangle on its own, then the stack of the chunks' triangles, which has the block's
  /// least-squares problem, factorised once more. On the host and the threaded CPU systems
  /// (thrust_omp, thrust_tbb: space::chunk_loop) Eigen's Householder QR per chunk, the chunks
  /// on their threads; elsewhere the space's
  /// qr_triangles (Givens rotations per chunk, space/detail/thrust_qr.hpp).
  template <class Data>
  ColMatrix triangle_in_space(const MatrixRef<T>& X, const VectorRef<T>& y,
                              const std::optional<VectorRef<T>>& weights,
                              const Vector<double>& x_mean, double y_mean,
                              const Data& data) const {
    if constexpr (std::is_same_v<Space, space::host>) {
      (void)data;  // the caller's rows, read here
      return chunked_triangle(X, y, weights, x_mean, y_mean, onelearn::detail::host_chunks{});
    } else if constexpr (requires { chunk_loop(this->space_); }) {
      (void)data;  // the caller's rows: host memory
      return chunked_triangle(X, y, weights, x_mean, y_mean, chunk_loop(this->space_));
    } else {
      const Matrix<double> stacked = onelearn::detail::run_in_space(this->exec_, this->space_, [&] {
        return qr_triangles(this->space_, data.X.view(), data.y.view(), data.weights.view(),
                            x_mean, y_mean);
      });
      return triangle_of(stacked.template cast<T>());
    }
  }

  /// local_triangle of each chunk of rows (at most max_partials chunks of at least 256 rows,
  /// which depend on the number of rows only: the same bits on any number of threads), run by
  /// `chunks`, then the triangle of their stack. One QR of the whole block took 0.89 s on
  /// 500k x 64 here (its columns are far larger than any cache); chunks of ~8k rows on 2
  /// threads 0.21 s (onelearn-space-bench linreg_fit).
  template <class Chunks>
  static ColMatrix chunked_triangle(const MatrixRef<T>& X, const VectorRef<T>& y,
                                    const std::optional<VectorRef<T>>& weights,
                                    const Vector<double>& x_mean, double y_mean,
                                    const Chunks& chunks) {
    const index_t grain = onelearn::detail::fixed_chunks(
        X.rows(), std::max<index_t>(256, 2 * (X.cols() + 1)), onelearn::detail::max_partials);
    std::vector<ColMatrix> triangles(
        static_cast<std::size_t>(onelearn::detail::chunk_count(X.rows(), grain)));
    chunks(X.rows(), grain, [&](index_t chunk, index_t begin, index_t end) {
      const index_t rows = end - begin;
      const std::optional<VectorRef<T>> w =
          weights ? std::optional<VectorRef<T>>(weights->segment(begin, rows)) : std::nullopt;
      triangles[static_cast<std::size_t>(chunk)] =
          local_triangle(X.middleRows(begin, rows), y.segment(begin, rows), w, x_mean, y_mean);
    });
    if (triangles.size() == 1) return std::move(triangles.front());
    index_t total = 0;
    for (const ColMatrix& t : triangles) total += t.rows();
    ColMatrix stacked(total, X.cols() + 1);
    index_t at = 0;
    for (const ColMatrix& t : triangles) {
      stacked.middleRows(at, t.rows()) = t;
      at += t.rows();
    }
    return triangle_of(std::move(stacked));
  }

  /// R of the QR factorisation of `rows` (a block of rows, or a stack of triangles):
  /// min(rows, cols) x cols, upper trapezoidal.
  static ColMatrix triangle_of(ColMatrix rows) {
    const index_t k = std::min(rows.rows(), rows.cols());
    if (k == 0) return ColMatrix(0, rows.cols());
    Eigen::HouseholderQR<ColMatrix> qr(std::move(rows));
    return qr.matrixQR().topRows(k).template triangularView<Eigen::Upper>();
  }

  /// Stacks every rank's triangle, in rank order, into one small matrix on every rank.
  ColMatrix gather_triangles(const ColMatrix& mine) const {
    const index_t cols = mine.cols();
    // Row-major packing, so each rank's rows arrive contiguous after the all-gather.
    const Matrix<T> packed = mine;
    const std::vector<T> all =
        this->exec_.allgatherv(std::span<const T>(packed.data(), static_cast<std::size_t>(packed.size())));
    return Eigen::Map<const Matrix<T>>(all.data(), static_cast<index_t>(all.size()) / cols, cols);
  }

  /// Minimum-norm least squares on the stacked triangles [A b]. Pivots below
  /// eps * max(n, p) of the largest count as zero, the cut-off numpy's lstsq uses.
  void solve(const ColMatrix& stacked, index_t n_samples) {
    const index_t p = stacked.cols() - 1;
    Eigen::CompleteOrthogonalDecomposition<ColMatrix> cod;
    cod.setThreshold(std::numeric_limits<T>::epsilon() * static_cast<T>(std::max(n_samples, p)));
    cod.compute(stacked.leftCols(p));
    this->coef_ = cod.solve(stacked.col(p));
    rank_ = cod.rank();
    // A P = Q [T11 0; 0 0] Z with Q and Z orthogonal, so T11 carries A's nonzero singular
    // values: keep it for singular().
    triangle_ = cod.matrixT().topLeftCorner(rank_, rank_).template triangularView<Eigen::Upper>();
  }

  ColMatrix triangle_;  // T11 of the decomposition of the centred, weighted X: rank x rank
  index_t rank_ = 0;
};

}  // namespace onelearn::linear_model
