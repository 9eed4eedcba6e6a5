#pragma once
/**
 * \class onelearn::preprocessing::StandardScaler
 * \brief Removes each feature's mean and divides by its standard deviation, as scikit-learn's
 * StandardScaler.
 * \ingroup estimators
 *
 * \code
 * #include <onelearn/preprocessing/standard_scaler.hpp>
 *
 * onelearn::preprocessing::StandardScaler<double> scaler;  // or ({.with_mean = false})
 * onelearn::Matrix<double> Z = scaler.fit_transform(X_train);   // zero mean, unit variance
 * onelearn::Matrix<double> Zt = scaler.transform(X_test);       // with the training moments
 * onelearn::Matrix<double> back = scaler.inverse_transform(Zt);
 *
 * // Data-parallel: each rank passes its own rows; every rank gets the global mean and scale.
 * onelearn::preprocessing::StandardScaler<double, onelearn::exec::mpi> dist(
 *     {}, onelearn::exec::mpi{comm});
 * dist.fit(my_X);
 *
 * // In a compute space (space/space.hpp): fit's two passes over the rows run there.
 * onelearn::preprocessing::StandardScaler<double, onelearn::exec::local,
 *                                         onelearn::space::thrust_omp> omp_scaler;
 * \endcode
 *
 * preprocessing::StandardScaler: removes each feature's mean and divides by its standard
 * deviation, as scikit-learn's StandardScaler (1.2.1; population variance, ddof = 0). A feature
 * whose variance is rounding noise gets a scale of 1, as in scikit-learn.
 *
 * Method: the per-feature (weighted) sums and then the sums of squared deviations about the
 * global mean are all-reduced (two passes: the one-pass sum of squares cancels badly for
 * features with a large mean), accumulated in double. transform is one fused pass over the
 * rows, on threads when OpenMP is on.
 *
 * \par Compute spaces
 * The third template argument says where fit's two passes run (space/space.hpp): `space::host`
 * (the default) or a Thrust space (`thrust_cpp`, `thrust_omp`, `thrust_tbb`, `thrust_cuda`;
 * include <onelearn/space/space.hpp> and link onelearn::thrust_<system>). fit brings the rows
 * and weights into the space once (a device copy; borrowed on the CPU systems) and only the p
 * column sums of each pass come back to be all-reduced. The attributes are the host's to 1e-12
 * relative in double, 1e-5 in float. transform and inverse_transform run on the host.
 *
 * \par Parameters (StandardScalerParams)
 * - `with_mean` (bool, default true): subtract the mean.
 * - `with_std` (bool, default true): divide by the standard deviation.
 *
 * \par Attributes (after fit)
 * - `mean()` (Vector<T>, p), `var()` (Vector<T>, p; empty when with_std is false),
 *   `scale()` (Vector<T>, p), `n_samples_seen()`, `n_features_in()`.
 *
 * \par A scaler from given attributes
 * `StandardScaler::from_fitted(params, mean, scale[, var[, exec]])` returns a scaler that
 * transforms and inverse-transforms exactly as a fitted one with these attributes: what an
 * imported model (onnx/to_estimator.hpp) becomes. mean and scale have p entries, scale > 0 (all
 * 1 when with_std is false); var defaults to scale² when with_std is true (the variance, except
 * for constant features, whose scale is 1) and must be empty otherwise. n_samples_seen() is 0:
 * no data was seen.
 *
 * \par Differences from scikit-learn
 * - No partial_fit and no sparse input.
 *
 * Errors: `not_fitted_error` before fit; `shape_error` for sample_weight of the wrong length, X
 * with other features than in fit, or ranks that disagree on the number of features;
 * `invalid_argument` for NaN/Inf, negative weights and no samples. Under exec::mpi every error in
 * fit is raised on every rank.
 */

#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "onelearn/base/agreement.hpp"
#include "onelearn/base/fit_input.hpp"
#include "onelearn/base/in_space.hpp"
#include "onelearn/core/dataset.hpp"
#include "onelearn/core/detail/huge_pages.hpp"
#include "onelearn/core/detail/moments.hpp"
#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/space/data.hpp"
#include "onelearn/space/host.hpp"

namespace onelearn::preprocessing {

struct StandardScalerParams {
  bool with_mean = true;  ///< subtract the mean
  bool with_std = true;   ///< divide by the standard deviation

  static constexpr std::array<std::string_view, 2> names{"with_mean", "with_std"};
};

template <class T, exec::ExecutionPolicy Exec = exec::local,
          space::ComputeSpace Space = space::host>
class StandardScaler : public WithParams<StandardScaler<T, Exec, Space>, StandardScalerParams> {
 public:
  using value_type = T;
  using Params = StandardScalerParams;
  using space_type = Space;

  explicit StandardScaler(const Params& params = {}, Exec exec = {}, Space space = {})
      : WithParams<StandardScaler, Params>(params),
        exec_(std::move(exec)),
        space_(std::move(space)) {}

  /// A fitted scaler with these attributes (see "A scaler from given attributes" above).
  /// shape_error for sizes that disagree; invalid_argument for no features, NaN/Inf, a scale
  /// <= 0, or a scale other than 1 (or a var) with with_std false.
  [[nodiscard]] static StandardScaler from_fitted(const Params& params, const VectorRef<T>& mean,
                                                  const VectorRef<T>& scale,
                                                  const VectorRef<T>& var = Vector<T>(),
                                                  Exec exec = {}) {
    constexpr std::string_view where = "StandardScaler.from_fitted";
    const index_t p = mean.size();
    if (p == 0) {
      throw invalid_argument(std::string(where) + ": expected at least one feature, found 0");
    }
    const bool with_var = params.with_std && var.size() != 0;
    if (scale.size() != p || (with_var && var.size() != p)) {
      throw shape_error(std::string(where) + ": expected mean, scale" +
                        (with_var ? " and var" : "") + " of the same length, found " +
                        std::to_string(p) + ", " + std::to_string(scale.size()) +
                        (with_var ? ", " + std::to_string(var.size()) : std::string()));
    }
    validation::check_finite(where, "mean", mean);
    validation::check_finite(where, "scale", scale);
    validation::check_finite(where, "var", var);
    if (!(scale.array() > T(0)).all()) {
      throw invalid_argument(std::string(where) + ": expected every scale > 0, found " +
                             std::to_string(scale.minCoeff()));
    }
    if (!params.with_std && (!(scale.array() == T(1)).all() || var.size() != 0)) {
      throw invalid_argument(std::string(where) +
                             ": expected scale 1 and no var with with_std = false, found others");
    }
    StandardScaler model(params, std::move(exec));
    model.mean_ = mean;
    model.scale_ = scale;
    if (params.with_std) model.var_ = with_var ? Vector<T>(var) : Vector<T>(scale.array().square());
    model.n_samples_seen_ = 0;
    model.n_features_ = p;
    model.fitted_ = true;
    return model;
  }

  StandardScaler& fit(const MatrixRef<T>& X) { return fit_impl(X, std::nullopt); }

  StandardScaler& fit(const MatrixRef<T>& X, const VectorRef<T>& sample_weight) {
    return fit_impl(X, sample_weight);
  }

  /// Fits on a Dataset's features, with its sample weights when it has them.
  template <class Y>
  StandardScaler& fit(const Dataset<T, Y>& data) {
    if (data.has_sample_weights()) return fit(data.features(), data.sample_weights());
    return fit(data.features());
  }

  [[nodiscard]] Matrix<T> transform(const MatrixRef<T>& X) const {
    Matrix<T> out = onelearn::detail::uninitialized_matrix<T>(X.rows(), X.cols());
    transform(X, out);
    return out;
  }

  /// transform into `out` (X's shape) without allocating: for a caller that scales new data of
  /// the same shape again and again, such as a simulation at each time step.
  void transform(const MatrixRef<T>& X, Eigen::Ref<Matrix<T>> out) const {
    check_transform_input("StandardScaler.transform", X);
    if (out.rows() != X.rows() || out.cols() != X.cols()) {
      throw shape_error("StandardScaler.transform: expected an output of " +
                        std::to_string(X.rows()) + " x " + std::to_string(X.cols()) +
                        " (the shape of X), found " + std::to_string(out.rows()) + " x " +
                        std::to_string(out.cols()));
    }
    // One fused pass per case, in chunks of rows on threads: the output is written once, never
    // copied then updated, and the pages of a fresh output are first touched by the threads
    // that fill them (on large inputs those page faults cost more than the arithmetic).
    const bool centre = this->params_.with_mean;
    const bool divide = this->params_.with_std;
    onelearn::detail::for_each_chunk(X.rows(), 4096, [&](index_t, index_t begin, index_t end) {
      const auto rows = X.middleRows(begin, end - begin);
      auto result = out.middleRows(begin, end - begin);
      if (centre && divide) {
        result = (rows.rowwise() - mean_.transpose()).array().rowwise() /
                 scale_.transpose().array();
      } else if (centre) {
        result = rows.rowwise() - mean_.transpose();
      } else if (divide) {
        result = rows.array().rowwise() / scale_.transpose().array();
      } else {
        result = rows;
      }
    });
  }

  Matrix<T> fit_transform(const MatrixRef<T>& X) { return fit(X).transform(X); }

  [[nodiscard]] Matrix<T> inverse_transform(const MatrixRef<T>& X) const {
    check_transform_input("StandardScaler.inverse_transform", X);
    const bool centre = this->params_.with_mean;
    const bool divide = this->params_.with_std;
    if (centre && divide)
      return (X.array().rowwise() * scale_.transpose().array()).matrix().rowwise() +
             mean_.transpose();
    if (centre) return X.rowwise() + mean_.transpose();
    if (divide) return X.array().rowwise() * scale_.transpose().array();
    return X;
  }

  /// Per-feature mean of the training data (computed even when with_mean is false, like
  /// scikit-learn, as long as with_std needs it).
  [[nodiscard]] const Vector<T>& mean() const {
    return validation::fitted_attribute("StandardScaler.mean", fitted_, mean_);
  }
  /// Per-feature population variance of the training data.
  [[nodiscard]] const Vector<T>& var() const {
    return validation::fitted_attribute("StandardScaler.var", fitted_, var_);
  }
  /// Per-feature divisor: the standard deviation, or 1 for a constant feature (so it maps to 0)
  /// and for every feature when with_std is false.
  [[nodiscard]] const Vector<T>& scale() const {
    return validation::fitted_attribute("StandardScaler.scale", fitted_, scale_);
  }
  /// Samples seen in fit, over all ranks.
  [[nodiscard]] std::int64_t n_samples_seen() const {
    return validation::fitted_attribute("StandardScaler.n_samples_seen", fitted_, n_samples_seen_);
  }
  [[nodiscard]] index_t n_features_in() const {
    return validation::fitted_attribute("StandardScaler.n_features_in", fitted_, n_features_);
  }
  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }
  /// Where fit's passes over the rows run (space::host by default).
  [[nodiscard]] const Space& compute_space() const noexcept { return space_; }

 private:
  StandardScaler& fit_impl(const MatrixRef<T>& X, const std::optional<VectorRef<T>>& weights) {
    constexpr std::string_view where = "StandardScaler.fit";
    onelearn::detail::check_same_params(where, this->exec_, this->params_);
    fitted_ = false;
    onelearn::detail::check_fit_input<T>(where, exec_, X, std::nullopt, weights);

    // The rows and weights in the space: borrowed on the host and the CPU Thrust systems, copied
    // once to a device. run_in_space: on a device, a rank whose allocation fails raises on every
    // rank instead of leaving the others in the next all-reduce.
    using onelearn::detail::run_in_space;
    space::matrix<Space, T> rows;
    space::vector<Space, T> weights_in_space;
    run_in_space(exec_, space_, [&] {
      rows = space::to_space(space_, X);
      if (weights) {
        weights_in_space = space::to_space(
            space_, std::span<const T>(weights->data(), static_cast<std::size_t>(weights->size())));
      }
    });

    // Pass 1: the global mean. Pass 2: squared deviations about it. The kernels are found by
    // argument-dependent lookup on the space (space/host.hpp lists them).
    const index_t p = X.cols();
    const auto means = onelearn::detail::global_means_from_sums<T>(
        where, exec_, X.rows(),
        run_in_space(exec_, space_,
                     [&] { return column_sums(space_, rows.view(), weights_in_space.view()); }),
        std::nullopt, weights);
    const Vector<double>& mean = means.x;
    const double total_weight = means.total_weight;

    Vector<double> square_sums(p);
    if (this->params_.with_std) {
      square_sums = run_in_space(exec_, space_, [&] {
        return centered_square_sums(space_, rows.view(), mean, weights_in_space.view());
      });
      exec_.allreduce(std::span(square_sums.data(), square_sums.size()), exec::reduce_op::sum);
    }
    const Vector<double> var = square_sums / total_weight;

    mean_ = mean.cast<T>();
    var_ = this->params_.with_std ? var.cast<T>() : Vector<T>();
    scale_ = Vector<T>::Ones(p);
    if (this->params_.with_std) {
      for (index_t j = 0; j < p; ++j) {
        if (!is_constant_feature(var(j), mean(j), total_weight)) {
          scale_(j) = static_cast<T>(std::sqrt(var(j)));
        }
      }
    }
    n_samples_seen_ = means.n_samples;
    n_features_ = p;
    fitted_ = true;
    return *this;
  }

  /// scikit-learn's test for a feature whose variance is rounding noise: such a feature gets a
  /// scale of 1 instead of dividing by a tiny number.
  static bool is_constant_feature(double var, double mean, double n) {
    constexpr double eps = std::numeric_limits<double>::epsilon();
    const double bound = n * eps * var + (n * mean * eps) * (n * mean * eps);
    return var <= bound;
  }

  void check_transform_input(std::string_view where, const MatrixRef<T>& X) const {
    fitted(where);
    validation::check_n_features(where, n_features_, X.cols());
    validation::check_finite(where, "X", X);
  }

  void fitted(std::string_view where) const { validation::check_fitted(where, fitted_); }

  Exec exec_;
  Space space_;
  Vector<T> mean_, var_, scale_;
  std::int64_t n_samples_seen_ = 0;
  index_t n_features_ = 0;
  bool fitted_ = false;
};

}  // namespace onelearn::preprocessing
