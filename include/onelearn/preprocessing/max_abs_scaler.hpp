#pragma once
/**
 * \class onelearn::preprocessing::MaxAbsScaler
 * \brief Divides each feature by its largest absolute value, as scikit-learn's MaxAbsScaler.
 * \ingroup estimators
 *
 * \code
 * #include <onelearn/preprocessing/max_abs_scaler.hpp>
 *
 * onelearn::preprocessing::MaxAbsScaler<double> scaler;
 * onelearn::Matrix<double> Z = scaler.fit_transform(X_train);  // each column now in [-1, 1]
 * onelearn::Matrix<double> back = scaler.inverse_transform(Z);  // X_train again
 *
 * // Data-parallel: each rank passes its own rows (possibly none).
 * onelearn::exec::mpi policy{comm};  // the application's communicator
 * onelearn::preprocessing::MaxAbsScaler<double, onelearn::exec::mpi> dist({}, policy);
 * dist.fit(my_X);
 * \endcode
 *
 * preprocessing::MaxAbsScaler: divides each feature by its largest absolute value, as
 * scikit-learn's MaxAbsScaler (1.2.1). It neither shifts nor centres the data, so zeros stay
 * zeros. A feature whose largest absolute value is below 10 · machine epsilon of T (all zeros)
 * gets scale 1, as scikit-learn's _handle_zeros_in_scale does.
 *
 * Method: one all-reduce (max) of the per-feature largest absolute values, and one of the row
 * count.
 *
 * \par Parameters (MaxAbsScalerParams)
 * None (scikit-learn's only parameter is `copy`).
 *
 * \par Attributes (after fit)
 * - `max_abs()` (Vector<T>, p): per-feature largest |x| over all ranks' rows.
 * - `scale()` (Vector<T>, p): the divisor: max_abs, or 1 where max_abs is (near) zero.
 * - `n_samples_seen()`, `n_features_in()`.
 *
 * \par Differences from scikit-learn
 * - No partial_fit, no sparse input. NaN is rejected (scikit-learn ignores it in fit).
 *
 * Errors: `not_fitted_error` before fit; `shape_error` for X with other features than in fit or
 * ranks that disagree on the number of features; `invalid_argument` for NaN/Inf and no
 * samples. Under exec::mpi every error in fit is raised on every rank.
 */

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <utility>

#include "onelearn/base/agreement.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/preprocessing/detail/checks.hpp"

namespace onelearn::preprocessing {

/// No parameters: scikit-learn's only one, `copy`, has no meaning here (transform always
/// returns a new matrix).
struct MaxAbsScalerParams {
  static constexpr std::array<std::string_view, 0> names{};
};

template <class T, exec::ExecutionPolicy Exec = exec::local>
class MaxAbsScaler : public WithParams<MaxAbsScaler<T, Exec>, MaxAbsScalerParams> {
 public:
  using value_type = T;
  using Params = MaxAbsScalerParams;

  explicit MaxAbsScaler(const Params& params = {}, Exec exec = {})
      : WithParams<MaxAbsScaler, Params>(params), exec_(std::move(exec)) {}

  MaxAbsScaler& fit(const MatrixRef<T>& X) {
    constexpr std::string_view where = "MaxAbsScaler.fit";
    onelearn::detail::check_same_params(where, this->exec_, this->params_);
    fitted_ = false;
    detail::check_fit_input<T>(where, exec_, X, [] {});
    const index_t p = X.cols();
    Vector<double> max_abs = Vector<double>::Zero(p);
    for (index_t i = 0; i < X.rows(); ++i) {
      max_abs = max_abs.cwiseMax(X.row(i).transpose().template cast<double>().cwiseAbs());
    }
    exec_.allreduce(std::span(max_abs.data(), static_cast<std::size_t>(p)), exec::reduce_op::max);
    const std::int64_t n = detail::total_rows(exec_, X.rows());
    detail::check_has_samples(where, n, p);

    max_abs_ = max_abs.template cast<T>();
    scale_ = max_abs_;
    for (index_t j = 0; j < p; ++j) {
      if (scale_(j) < 10 * std::numeric_limits<T>::epsilon()) scale_(j) = T(1);
    }
    n_samples_seen_ = n;
    fitted_ = true;
    return *this;
  }

  [[nodiscard]] Matrix<T> transform(const MatrixRef<T>& X) const {
    detail::check_transform_input<T>("MaxAbsScaler.transform", fitted_, scale_.size(), X);
    return X.array().rowwise() / scale_.transpose().array();
  }

  Matrix<T> fit_transform(const MatrixRef<T>& X) { return fit(X).transform(X); }

  [[nodiscard]] Matrix<T> inverse_transform(const MatrixRef<T>& Z) const {
    detail::check_transform_input<T>("MaxAbsScaler.inverse_transform", fitted_, scale_.size(), Z);
    return Z.array().rowwise() * scale_.transpose().array();
  }

  [[nodiscard]] const Vector<T>& max_abs() const {
    return validation::fitted_attribute("MaxAbsScaler.max_abs", fitted_, max_abs_);
  }
  [[nodiscard]] const Vector<T>& scale() const {
    return validation::fitted_attribute("MaxAbsScaler.scale", fitted_, scale_);
  }
  [[nodiscard]] std::int64_t n_samples_seen() const {
    return validation::fitted_attribute("MaxAbsScaler.n_samples_seen", fitted_, n_samples_seen_);
  }
  [[nodiscard]] index_t n_features_in() const {
    validation::check_fitted("MaxAbsScaler.n_features_in", fitted_);
    return scale_.size();
  }
  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }

 private:
  Exec exec_;
  Vector<T> max_abs_, scale_;
  std::int64_t n_samples_seen_ = 0;
  bool fitted_ = false;
};

}  // namespace onelearn::preprocessing
