#pragma once
/**
 * \class onelearn::preprocessing::Normalizer
 * \brief Scales each sample to unit norm, as scikit-learn's Normalizer.
 * \ingroup estimators
 *
 * \code
 * #include <onelearn/preprocessing/normalizer.hpp>
 *
 * onelearn::preprocessing::Normalizer<double> normalizer({.norm = "l1"});
 * onelearn::Matrix<double> Z = normalizer.fit_transform(X);  // each row's |x| sums to 1
 *
 * // Data-parallel: fit only checks that all ranks agree on the number of features.
 * onelearn::exec::mpi policy{comm};  // the application's communicator
 * onelearn::preprocessing::Normalizer<double, onelearn::exec::mpi> dist({}, policy);
 * dist.fit(my_X);
 * \endcode
 *
 * preprocessing::Normalizer: scales each sample (row) to unit norm, as scikit-learn's Normalizer
 * (1.2.1): "l2" divides by sqrt(Σ x²), "l1" by Σ |x|, "max" by max |x|. A row whose norm is
 * below 10 · machine epsilon of T (a zero row) is left as it is, as scikit-learn's
 * _handle_zeros_in_scale does, so zero rows stay zero.
 *
 * Method: rows are independent, so fit learns nothing but the number of features; under
 * exec::mpi it checks that every rank has the same number and that some rank has rows (one
 * all-gather of the shape, one all-reduce of the row count). Norms are accumulated in double.
 *
 * \par Parameters (NormalizerParams)
 * - `norm` (string, default "l2"): "l2", "l1" or "max".
 *
 * \par Attributes (after fit)
 * - `n_features_in()`.
 *
 * \par Differences from scikit-learn
 * - transform before fit is a not_fitted_error (scikit-learn's stateless Normalizer allows it),
 *   so that every transformer here behaves alike. No sparse input.
 *
 * Errors: `not_fitted_error` before fit; `shape_error` for X with other features than in fit or
 * ranks that disagree on the number of features; `invalid_argument` for NaN/Inf, no samples and
 * an unknown norm. Under exec::mpi every error in fit is raised on every rank.
 */

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "onelearn/base/agreement.hpp"
#include "onelearn/core/detail/huge_pages.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/preprocessing/detail/checks.hpp"

namespace onelearn::preprocessing {

struct NormalizerParams {
  std::string norm = "l2";  ///< "l2", "l1" or "max"

  static constexpr std::array<std::string_view, 1> names{"norm"};
};

template <class T, exec::ExecutionPolicy Exec = exec::local>
class Normalizer : public WithParams<Normalizer<T, Exec>, NormalizerParams> {
 public:
  using value_type = T;
  using Params = NormalizerParams;

  explicit Normalizer(const Params& params = {}, Exec exec = {})
      : WithParams<Normalizer, Params>(params), exec_(std::move(exec)) {}

  Normalizer& fit(const MatrixRef<T>& X) {
    constexpr std::string_view where = "Normalizer.fit";
    onelearn::detail::check_same_params(where, this->exec_, this->params_);
    fitted_ = false;
    detail::check_fit_input<T>(where, exec_, X, [&] { check_norm(where); });
    detail::check_has_samples(where, detail::total_rows(exec_, X.rows()), X.cols());
    n_features_ = X.cols();
    fitted_ = true;
    return *this;
  }

  /// Each row divided by its norm (rows of norm ~0 unchanged). Uses the norm set now, as
  /// scikit-learn's transform does.
  [[nodiscard]] Matrix<T> transform(const MatrixRef<T>& X) const {
    constexpr std::string_view where = "Normalizer.transform";
    detail::check_transform_input<T>(where, fitted_, n_features_, X);
    check_norm(where);
    const std::string& norm = this->params_.norm;
    Matrix<T> out = onelearn::detail::uninitialized_matrix<T>(X.rows(), X.cols());
    for (index_t i = 0; i < X.rows(); ++i) {
      const auto row = X.row(i).template cast<double>();
      const double value = norm == "l2"   ? row.norm()
                           : norm == "l1" ? row.cwiseAbs().sum()
                                          : row.cwiseAbs().maxCoeff();
      const double divisor =
          value < 10 * static_cast<double>(std::numeric_limits<T>::epsilon()) ? 1.0 : value;
      out.row(i) = (row / divisor).template cast<T>();
    }
    return out;
  }

  Matrix<T> fit_transform(const MatrixRef<T>& X) { return fit(X).transform(X); }

  [[nodiscard]] index_t n_features_in() const {
    return validation::fitted_attribute("Normalizer.n_features_in", fitted_, n_features_);
  }
  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }

 private:
  void check_norm(std::string_view where) const {
    detail::check_choice(where, "norm", this->params_.norm, {"l2", "l1", "max"});
  }

  Exec exec_;
  index_t n_features_ = 0;
  bool fitted_ = false;
};

}  // namespace onelearn::preprocessing
