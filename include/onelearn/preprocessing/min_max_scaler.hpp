#pragma once
/**
 * \class onelearn::preprocessing::MinMaxScaler
 * \brief Maps each feature linearly onto a range, as scikit-learn's MinMaxScaler.
 * \ingroup estimators
 *
 * \code
 * #include <onelearn/preprocessing/min_max_scaler.hpp>
 *
 * onelearn::preprocessing::MinMaxScaler<double> scaler({.feature_range = {-1, 1}});
 * onelearn::Matrix<double> Z = scaler.fit_transform(X_train);  // each column now in [-1, 1]
 * onelearn::Matrix<double> Z_test = scaler.transform(X_test);  // may leave [-1, 1] (clip=false)
 * onelearn::Matrix<double> back = scaler.inverse_transform(Z);  // X_train again
 *
 * // Data-parallel: each rank passes its own rows (possibly none); every rank ends with the
 * // scaler fitted on all of them.
 * onelearn::exec::mpi policy{comm};  // the application's communicator
 * onelearn::preprocessing::MinMaxScaler<double, onelearn::exec::mpi> dist({}, policy);
 * dist.fit(my_X);
 * \endcode
 *
 * preprocessing::MinMaxScaler: maps each feature linearly onto feature_range, as scikit-learn's
 * MinMaxScaler (1.2.1):
 *
 *     scale = (max_range - min_range) / (data_max - data_min),  min = min_range - data_min · scale
 *     transform(x) = x · scale + min
 *
 * A constant feature (data_max - data_min < 10 · machine epsilon of T, scikit-learn's test) gets
 * the range width as scale, so it maps to min_range instead of dividing by zero.
 *
 * Method: one all-reduce (min) of [column minima | negated column maxima] gives the global
 * extremes (a rank without rows contributes +inf), and one all-reduce of the row count. The
 * attributes are computed in T, as scikit-learn computes them in X's dtype.
 *
 * \par Parameters (MinMaxScalerParams)
 * - `feature_range` (FeatureRange{min, max}, default {0, 1}): the target interval, min < max.
 * - `clip` (bool, default false): clip transformed values to feature_range (data outside the
 *   fitted extremes would otherwise map outside it).
 *
 * \par Attributes (after fit)
 * - `data_min()`, `data_max()` (Vector<T>, p): per-feature extremes over all ranks' rows.
 * - `data_range()` (Vector<T>, p): data_max - data_min.
 * - `scale()`, `min()` (Vector<T>, p): transform(x) = x · scale + min.
 * - `n_samples_seen()`: rows seen in fit over all ranks. `n_features_in()`.
 *
 * \par Differences from scikit-learn
 * - No partial_fit. NaN is rejected (scikit-learn ignores NaN in fit and keeps it in transform).
 * - feature_range is a FeatureRange struct rather than a tuple; it cannot be set by name
 *   through set_params({{"feature_range", ...}}) (set it through Params).
 *
 * Errors: `not_fitted_error` before fit; `shape_error` for X with other features than in fit or
 * ranks that disagree on the number of features; `invalid_argument` for NaN/Inf, no samples and
 * feature_range.min >= feature_range.max (or not finite). Under exec::mpi every error in fit is
 * raised on every rank.
 */

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "onelearn/base/agreement.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/preprocessing/detail/checks.hpp"

namespace onelearn::preprocessing {

/// The interval MinMaxScaler maps onto: scikit-learn's feature_range tuple.
struct FeatureRange {
  double min = 0;
  double max = 1;

  friend bool operator==(const FeatureRange&, const FeatureRange&) = default;
  friend std::ostream& operator<<(std::ostream& os, const FeatureRange& r) {
    return os << '(' << r.min << ", " << r.max << ')';
  }
};

struct MinMaxScalerParams {
  FeatureRange feature_range{};  ///< the interval each feature is mapped onto
  bool clip = false;             ///< clip transformed values to feature_range

  static constexpr std::array<std::string_view, 2> names{"feature_range", "clip"};
};

}  // namespace onelearn::preprocessing

/// So that params::hash (Boost.PFR's hash_fields) can hash a MinMaxScalerParams.
template <>
struct std::hash<onelearn::preprocessing::FeatureRange> {
  std::size_t operator()(const onelearn::preprocessing::FeatureRange& r) const noexcept {
    const std::size_t a = std::hash<double>{}(r.min);
    return a ^ (std::hash<double>{}(r.max) + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
  }
};

namespace onelearn::preprocessing {

template <class T, exec::ExecutionPolicy Exec = exec::local>
class MinMaxScaler : public WithParams<MinMaxScaler<T, Exec>, MinMaxScalerParams> {
 public:
  using value_type = T;
  using Params = MinMaxScalerParams;

  explicit MinMaxScaler(const Params& params = {}, Exec exec = {})
      : WithParams<MinMaxScaler, Params>(params), exec_(std::move(exec)) {}

  MinMaxScaler& fit(const MatrixRef<T>& X) {
    constexpr std::string_view where = "MinMaxScaler.fit";
    onelearn::detail::check_same_params(where, this->exec_, this->params_);
    fitted_ = false;
    const FeatureRange range = this->params_.feature_range;
    detail::check_fit_input<T>(where, exec_, X, [&] {
      if (!(std::isfinite(range.min) && std::isfinite(range.max) && range.min < range.max)) {
        std::ostringstream found;
        found << range;
        throw invalid_argument(std::string(where) +
                               ": expected feature_range with finite min < max, found " +
                               found.str());
      }
    });

    // [minima (p) | -maxima (p)], reduced with min; a rank without rows contributes +inf.
    const index_t p = X.cols();
    constexpr double inf = std::numeric_limits<double>::infinity();
    Vector<double> extremes = Vector<double>::Constant(2 * p, inf);
    for (index_t i = 0; i < X.rows(); ++i) {
      for (index_t j = 0; j < p; ++j) {
        const auto x = static_cast<double>(X(i, j));
        extremes(j) = std::min(extremes(j), x);
        extremes(p + j) = std::min(extremes(p + j), -x);
      }
    }
    exec_.allreduce(std::span(extremes.data(), static_cast<std::size_t>(extremes.size())),
                    exec::reduce_op::min);
    const std::int64_t n = detail::total_rows(exec_, X.rows());
    detail::check_has_samples(where, n, p);

    data_min_ = extremes.head(p).template cast<T>();
    data_max_ = (-extremes.segment(p, p)).template cast<T>();
    data_range_ = data_max_ - data_min_;
    const auto width = static_cast<T>(range.max - range.min);
    scale_.resize(p);
    for (index_t j = 0; j < p; ++j) {
      const bool constant = data_range_(j) < 10 * std::numeric_limits<T>::epsilon();
      scale_(j) = width / (constant ? T(1) : data_range_(j));
    }
    min_ = static_cast<T>(range.min) - (data_min_.array() * scale_.array());
    n_samples_seen_ = n;
    fitted_ = true;
    return *this;
  }

  [[nodiscard]] Matrix<T> transform(const MatrixRef<T>& X) const {
    detail::check_transform_input<T>("MinMaxScaler.transform", fitted_, scale_.size(), X);
    Matrix<T> out =
        (X.array().rowwise() * scale_.transpose().array()).rowwise() + min_.transpose().array();
    if (this->params_.clip) {
      const FeatureRange range = this->params_.feature_range;
      out = out.array().max(static_cast<T>(range.min)).min(static_cast<T>(range.max));
    }
    return out;
  }

  Matrix<T> fit_transform(const MatrixRef<T>& X) { return fit(X).transform(X); }

  /// (Z - min) / scale: the inverse of transform (of an unclipped value).
  [[nodiscard]] Matrix<T> inverse_transform(const MatrixRef<T>& Z) const {
    detail::check_transform_input<T>("MinMaxScaler.inverse_transform", fitted_, scale_.size(), Z);
    return (Z.array().rowwise() - min_.transpose().array()).rowwise() / scale_.transpose().array();
  }

  [[nodiscard]] const Vector<T>& data_min() const {
    return validation::fitted_attribute("MinMaxScaler.data_min", fitted_, data_min_);
  }
  [[nodiscard]] const Vector<T>& data_max() const {
    return validation::fitted_attribute("MinMaxScaler.data_max", fitted_, data_max_);
  }
  [[nodiscard]] const Vector<T>& data_range() const {
    return validation::fitted_attribute("MinMaxScaler.data_range", fitted_, data_range_);
  }
  [[nodiscard]] const Vector<T>& scale() const {
    return validation::fitted_attribute("MinMaxScaler.scale", fitted_, scale_);
  }
  [[nodiscard]] const Vector<T>& min() const {
    return validation::fitted_attribute("MinMaxScaler.min", fitted_, min_);
  }
  [[nodiscard]] std::int64_t n_samples_seen() const {
    return validation::fitted_attribute("MinMaxScaler.n_samples_seen", fitted_, n_samples_seen_);
  }
  [[nodiscard]] index_t n_features_in() const {
    validation::check_fitted("MinMaxScaler.n_features_in", fitted_);
    return scale_.size();
  }
  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }

 private:
  Exec exec_;
  Vector<T> data_min_, data_max_, data_range_, scale_, min_;
  std::int64_t n_samples_seen_ = 0;
  bool fitted_ = false;
};

}  // namespace onelearn::preprocessing
