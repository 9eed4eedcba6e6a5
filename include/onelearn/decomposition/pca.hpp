#pragma once
/**
 * \class onelearn::decomposition::PCA
 * \brief Principal component analysis, as scikit-learn's PCA.
 * \ingroup estimators
 *
 * \code
 * #include <onelearn/decomposition/pca.hpp>
 * // X: a onelearn::Matrix<double>, samples x features
 * onelearn::decomposition::PCA<double> pca({.n_components = 2});
 * onelearn::Matrix<double> Z = pca.fit_transform(X);           // samples x 2 scores
 * onelearn::Vector<double> ratio = pca.explained_variance_ratio();
 * onelearn::Matrix<double> back = pca.inverse_transform(Z);    // rank-2 approximation of X
 *
 * // Distributed: each rank passes its own rows; every rank gets the same components.
 * onelearn::decomposition::PCA<double, onelearn::exec::mpi> dpca({.n_components = 2},
 *                                                               onelearn::exec::mpi{comm});
 * dpca.fit(my_rows);
 *
 * // In a compute space (space/space.hpp): Xc^T Xc is formed there.
 * onelearn::decomposition::PCA<double, onelearn::exec::local, onelearn::space::thrust_omp> omp(
 *     {.n_components = 2});
 * \endcode
 *
 * decomposition::PCA: principal component analysis, as scikit-learn 1.2's PCA (exact solver).
 *
 * \par Parameters (PCAParams)
 * - `n_components` (int, required): components to keep, 1 <= n_components <=
 *   min(n_samples, n_features) (scikit-learn's bound for its exact solver). There is no
 *   "all components" default (scikit-learn's None) and no fractional or "mle" choice.
 * - `whiten` (bool, default false): transform divides each component's scores by the square
 *   root of its explained variance, so they have unit variance on the training data.
 *
 * \par Attributes (after fit)
 * - `components()`: n_components x n_features, orthonormal rows, by decreasing variance
 *   (components_).
 * - `explained_variance()`: variance along each component, ddof = 1 (divides by
 *   n_samples - 1) (explained_variance_).
 * - `explained_variance_ratio()`: explained_variance() over the total variance (the sum of the
 *   variances of all features) (explained_variance_ratio_).
 * - `singular_values()`: the singular values of the centred X: sqrt of the eigenvalues of
 *   Xc^T Xc (singular_values_).
 * - `mean()`: per-feature mean of the training data (mean_).
 * - `noise_variance()`: the mean of the min(n_samples, n_features) - n_components discarded
 *   variances, or 0 if none is discarded (noise_variance_, probabilistic PCA).
 * - `n_samples()` (over all ranks), `n_features_in()`.
 *
 * \par A model from given attributes
 * `PCA::from_fitted(params, components, mean[, explained_variance[, exec]])` returns a PCA that
 * transforms and inverse-transforms exactly as a fitted one with these attributes: what an
 * imported model (onnx/to_estimator.hpp) becomes. components is k x p (k >= 1; params'
 * n_components must be k, or 0 for k), mean has p entries; explained_variance (k positive
 * values) is required with whiten and may be empty without. It has seen no data:
 * explained_variance_ratio(), singular_values(), noise_variance() and n_samples() are a
 * not_fitted_error, and so is explained_variance() when it was not given.
 *
 * \par Algorithm
 * For tall data, as used in HPC (many more rows than features): the mean and
 * then Xc^T Xc (Xc = X - mean, p x p) are accumulated in double and all-reduced, and the
 * covariance is diagonalised with Eigen's SelfAdjointEigenSolver (in double, also for float
 * data). The eigenvalues are the squared singular values of Xc, so the result is scikit-learn's
 * SVD-based one; forming Xc^T Xc squares the condition number, which costs relative accuracy
 * only in variances below ~1e-8 of the largest (irrelevant for the leading components). Work is
 * O(n p^2) plus O(p^3) for the eigensolver: for p in the many thousands the randomized or
 * SVD solvers would be better.
 *
 * \par Compute spaces
 * The third template argument says where Xc^T Xc is formed (space/space.hpp): `space::host`
 * (the default) or a Thrust space (`thrust_cpp`, `thrust_omp`, `thrust_tbb`, or `thrust_cuda`,
 * where cuBLAS's syrk forms it; include <onelearn/space/space.hpp> and link
 * onelearn::thrust_<system>). fit copies X to a device once. The input checks, the mean, the
 * eigensolver and the signs' pass over the rows (O(n p k) against the O(n p^2) of the
 * covariance) stay on the host, and so do transform and inverse_transform.
 *
 * \par Signs
 * Signs follow scikit-learn's svd_flip(U, Vt) (u-based): for each component, the entry of
 * largest magnitude of the column of U = Xc V / s is made positive. Here the scores Xc v_j are
 * formed row by row (same signs as U's column) and the largest-magnitude entry is found over
 * all ranks (first row on ties, rows in rank order) with one all-gather. Where two rows of
 * opposite sign tie to rounding in magnitude, the sign may differ from scikit-learn's.
 *
 * \par Distributed (exec::mpi)
 * collectives are the all-reduces of the mean (global_means) and of
 * Xc^T Xc, and the all-gather of the sign candidates; transform and inverse_transform are local.
 *
 * \par Differences from scikit-learn
 * One exact solver only (scikit-learn's "auto" switches to
 * randomized SVD for larger data: on digits its explained variances agree with this exact
 * result to ~5e-11, its components to ~5e-7); at least 2 samples are required (scikit-learn
 * returns NaN variances for 1); no get_covariance, get_precision, score or score_samples.
 */

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "onelearn/base/agreement.hpp"
#include "onelearn/base/fit_input.hpp"
#include "onelearn/base/in_space.hpp"
#include "onelearn/core/dataset.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/decomposition/detail/pca_covariance.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/space/concept.hpp"
#include "onelearn/space/host.hpp"

namespace onelearn::decomposition {

struct PCAParams {
  std::int64_t n_components = 0;  ///< required: 1 <= n_components <= min(n_samples, n_features)
  bool whiten = false;            ///< scale the scores to unit variance

  static constexpr std::array<std::string_view, 2> names{"n_components", "whiten"};
};

template <class T, exec::ExecutionPolicy Exec = exec::local,
          space::ComputeSpace Space = space::host>
class PCA : public WithParams<PCA<T, Exec, Space>, PCAParams> {
 public:
  using value_type = T;
  using Params = PCAParams;

  explicit PCA(const Params& params = {}, Exec exec = {}, Space space = {})
      : WithParams<PCA, Params>(params), exec_(std::move(exec)), space_(std::move(space)) {}

  /// A fitted PCA with these attributes (see "A model from given attributes" above).
  /// shape_error for sizes that disagree; invalid_argument for NaN/Inf, a variance <= 0, an
  /// n_components other than k, or whiten without explained_variance.
  [[nodiscard]] static PCA from_fitted(Params params, const MatrixRef<T>& components,
                                       const VectorRef<T>& mean,
                                       const VectorRef<T>& explained_variance = Vector<T>(),
                                       Exec exec = {}) {
    constexpr std::string_view where = "PCA.from_fitted";
    const index_t k = components.rows();
    const index_t p = components.cols();
    if (k == 0 || p == 0) {
      throw invalid_argument(std::string(where) + ": expected at least one component and one " +
                             "feature, found components of " + std::to_string(k) + " x " +
                             std::to_string(p));
    }
    if (mean.size() != p) {
      throw shape_error(std::string(where) + ": expected a mean of " + std::to_string(p) +
                        " entries (the components' columns), found " + std::to_string(mean.size()));
    }
    if (explained_variance.size() != 0 && explained_variance.size() != k) {
      throw shape_error(std::string(where) + ": expected explained_variance of " +
                        std::to_string(k) + " entries (one per component) or none, found " +
                        std::to_string(explained_variance.size()));
    }
    if (params.n_components == 0) params.n_components = k;
    if (params.n_components != k) {
      throw invalid_argument(std::string(where) + ": expected n_components " + std::to_string(k) +
                             " (the components' rows), found " +
                             std::to_string(params.n_components));
    }
    if (params.whiten && explained_variance.size() == 0) {
      throw invalid_argument(std::string(where) +
                             ": expected explained_variance with whiten = true, found none");
    }
    validation::check_finite(where, "components", components);
    validation::check_finite(where, "mean", mean);
    validation::check_finite(where, "explained_variance", explained_variance);
    if (explained_variance.size() != 0 && !(explained_variance.array() > T(0)).all()) {
      throw invalid_argument(std::string(where) +
                             ": expected explained_variance > 0, found a value <= 0");
    }
    PCA model(params, std::move(exec));
    model.components_ = components;
    model.mean_ = mean;
    model.explained_variance_ = explained_variance;
    model.n_samples_ = -1;  // no data seen: the attributes of a fit on data are not there
    model.n_features_ = p;
    model.fitted_ = true;
    return model;
  }

  PCA& fit(const MatrixRef<T>& X) {
    constexpr std::string_view where = "PCA.fit";
    onelearn::detail::check_same_params(where, this->exec_, this->params_);
    fitted_ = false;
    detail::check_fit_input<T>(where, exec_, X, std::nullopt, std::nullopt);
    const auto means = detail::global_means<T>(where, exec_, X, std::nullopt, std::nullopt);
    const std::int64_t n = means.n_samples;
    const index_t p = X.cols();
    const std::int64_t rank_bound = std::min<std::int64_t>(n, p);
    const std::int64_t k = this->params_.n_components;
    exec_.propagate_errors([&] {
      if (n < 2) {
        throw invalid_argument(std::string(where) + ": expected at least 2 samples (variances " +
                               "divide by n_samples - 1), found " + std::to_string(n));
      }
      if (k < 1 || k > rank_bound) {
        throw invalid_argument(std::string(where) +
                               ": expected 1 <= n_components <= min(n_samples, n_features) = " +
                               std::to_string(rank_bound) + ", found " + std::to_string(k));
      }
    });

    // Xc^T Xc over all ranks, then its eigenpairs, largest first.
    Eigen::MatrixXd gram = local_centered_gram(X, means.x);
    exec_.allreduce(std::span<double>(gram.data(), static_cast<std::size_t>(gram.size())),
                    exec::reduce_op::sum);
    const auto eigen = detail::symmetric_eigen_descending(gram);
    const auto kk = static_cast<index_t>(k);
    Eigen::MatrixXd V = eigen.vectors.leftCols(kk);
    flip_signs(X, means.x, V);

    const auto dof = static_cast<double>(n - 1);
    const Vector<double> eigenvalues = eigen.values.head(kk).cwiseMax(0.0);
    const Vector<double> variance = eigenvalues / dof;
    const double total_variance = gram.trace() / dof;
    const auto discarded = static_cast<double>(rank_bound - k);

    components_ = V.transpose().template cast<T>();
    explained_variance_ = variance.template cast<T>();
    explained_variance_ratio_ = (variance / total_variance).template cast<T>();
    singular_values_ = eigenvalues.cwiseSqrt().template cast<T>();
    mean_ = means.x.template cast<T>();
    noise_variance_ =
        discarded > 0 ? static_cast<T>(std::max(0.0, total_variance - variance.sum()) / discarded)
                      : T(0);
    n_samples_ = n;
    n_features_ = p;
    fitted_ = true;
    return *this;
  }

  /// Fits on a Dataset's features.
  template <class Y>
  PCA& fit(const Dataset<T, Y>& data) {
    return fit(data.features());
  }

  /// Scores: (X - mean) components^T, divided by sqrt(explained_variance) when whiten.
  [[nodiscard]] Matrix<T> transform(const MatrixRef<T>& X) const {
    constexpr std::string_view where = "PCA.transform";
    validation::check_fitted(where, fitted_);
    validation::check_n_features(where, n_features_, X.cols());
    validation::check_finite(where, "X", X);
    Matrix<T> scores = (X.rowwise() - mean_.transpose()) * components_.transpose();
    if (this->params_.whiten) {
      scores.array().rowwise() /= explained_variance_.cwiseSqrt().transpose().array();
    }
    return scores;
  }

  Matrix<T> fit_transform(const MatrixRef<T>& X) { return fit(X).transform(X); }

  /// Back to feature space: Z components + mean (Z scaled back first when whiten).
  [[nodiscard]] Matrix<T> inverse_transform(const MatrixRef<T>& Z) const {
    constexpr std::string_view where = "PCA.inverse_transform";
    validation::check_fitted(where, fitted_);
    if (Z.cols() != components_.rows()) {
      throw shape_error(std::string(where) + ": expected X with " +
                        std::to_string(components_.rows()) + " columns (n_components), found " +
                        std::to_string(Z.cols()));
    }
    validation::check_finite(where, "X", Z);
    Matrix<T> out;
    if (this->params_.whiten) {
      out = Z * (explained_variance_.cwiseSqrt().asDiagonal() * components_);
    } else {
      out = Z * components_;
    }
    out.rowwise() += mean_.transpose();
    return out;
  }

  [[nodiscard]] const Matrix<T>& components() const {
    return validation::fitted_attribute("PCA.components", fitted_, components_);
  }
  [[nodiscard]] const Vector<T>& explained_variance() const {
    validation::check_fitted("PCA.explained_variance", fitted_);
    if (explained_variance_.size() == 0) check_seen_data("PCA.explained_variance");
    return explained_variance_;
  }
  [[nodiscard]] const Vector<T>& explained_variance_ratio() const {
    check_seen_data("PCA.explained_variance_ratio");
    return explained_variance_ratio_;
  }
  [[nodiscard]] const Vector<T>& singular_values() const {
    check_seen_data("PCA.singular_values");
    return singular_values_;
  }
  [[nodiscard]] const Vector<T>& mean() const {
    return validation::fitted_attribute("PCA.mean", fitted_, mean_);
  }
  [[nodiscard]] T noise_variance() const {
    check_seen_data("PCA.noise_variance");
    return noise_variance_;
  }
  /// Samples seen in fit, over all ranks.
  [[nodiscard]] std::int64_t n_samples() const {
    check_seen_data("PCA.n_samples");
    return n_samples_;
  }
  [[nodiscard]] index_t n_features_in() const {
    return validation::fitted_attribute("PCA.n_features_in", fitted_, n_features_);
  }
  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }
  [[nodiscard]] const Space& compute_space() const noexcept { return space_; }

 private:
  /// (X - mean)^T (X - mean) over this rank's rows, both triangles: the host's kernel, or the
  /// space's gram() (found by argument-dependent lookup, as Ridge's) on the rows brought there.
  Eigen::MatrixXd local_centered_gram(const MatrixRef<T>& X, const Vector<double>& mean) const {
    if constexpr (std::is_same_v<Space, space::host>) {
      return detail::centered_gram<T>(X, mean);
    } else {
      // run_in_space: a rank whose device fails raises on every rank.
      const space::gram_sums sums = onelearn::detail::run_in_space(exec_, space_, [&] {
        const auto rows = space::to_space(space_, X);
        return gram(space_, rows.view(), space::vector_view<const T>{},
                    space::vector_view<const T>{}, 1.0, mean, 0.0);
      });
      return sums.gram.selfadjointView<Eigen::Lower>();
    }
  }

  /// The attributes of a fit on data: a PCA made by from_fitted has not seen any.
  void check_seen_data(std::string_view where) const {
    validation::check_fitted(where, fitted_);
    if (n_samples_ < 0) {
      throw not_fitted_error(std::string(where) +
                             ": expected a PCA fitted on data, found one made by from_fitted "
                             "(it holds the components, the mean and at most the explained "
                             "variance)");
    }
  }

  /// svd_flip: make the largest-magnitude score of each component positive. Each rank offers
  /// its own candidate (magnitude, signed value); one all-gather, then every rank takes, per
  /// component, the first largest in rank order, i.e. the first such row of the concatenated
  /// data.
  void flip_signs(const MatrixRef<T>& X, const Vector<double>& mean, Eigen::MatrixXd& V) const {
    const index_t k = V.cols();
    const Matrix<double> mine = detail::max_abs_scores<T>(X, mean, V);  // 2 x k, row-major
    const std::vector<double> all = exec_.allgatherv(
        std::span<const double>(mine.data(), static_cast<std::size_t>(mine.size())));
    const auto ranks = static_cast<index_t>(all.size()) / (2 * k);
    for (index_t j = 0; j < k; ++j) {
      double magnitude = -1;
      double value = 0;
      for (index_t r = 0; r < ranks; ++r) {
        const auto at = static_cast<std::size_t>(r * 2 * k + j);
        if (all[at] > magnitude) {
          magnitude = all[at];
          value = all[at + static_cast<std::size_t>(k)];
        }
      }
      if (value < 0) V.col(j) = -V.col(j);
    }
  }

  Exec exec_;
  Space space_;
  Matrix<T> components_;
  Vector<T> explained_variance_, explained_variance_ratio_, singular_values_, mean_;
  T noise_variance_{};
  std::int64_t n_samples_ = 0;
  index_t n_features_ = 0;
  bool fitted_ = false;
};

}  // namespace onelearn::decomposition
