#pragma once
/**
 * \class onelearn::preprocessing::PolynomialFeatures
 * \brief All products of the features up to a degree, as scikit-learn's PolynomialFeatures.
 * \ingroup estimators
 *
 * \code
 * #include <onelearn/preprocessing/polynomial_features.hpp>
 *
 * onelearn::preprocessing::PolynomialFeatures<double> poly({.degree = 2});
 * onelearn::Matrix<double> Z = poly.fit_transform(X);  // [a, b] -> [1, a, b, a², ab, b²]
 * const auto& powers = poly.powers();  // row k: the exponents of column k of Z
 *
 * // Data-parallel: fit only checks that all ranks agree on the number of features.
 * onelearn::exec::mpi policy{comm};  // the application's communicator
 * onelearn::preprocessing::PolynomialFeatures<double, onelearn::exec::mpi> dist({}, policy);
 * dist.fit(my_X);
 * \endcode
 *
 * preprocessing::PolynomialFeatures: all products of the features of total degree up to
 * `degree`, as scikit-learn's PolynomialFeatures (1.2.1), in its column order: the bias column
 * (degree 0) if include_bias, then degree 1, 2, ...; within a degree the index tuples in the
 * lexicographic order of itertools.combinations_with_replacement (itertools.combinations with
 * interaction_only, which leaves out every product with a repeated feature).
 *
 * Method: fit learns only the number of features (under exec::mpi one all-gather of the shape
 * and one all-reduce of the row count, to check the ranks agree and some rank has rows) and
 * enumerates the index tuples. transform multiplies, for each output column, the columns its
 * tuple names: n x n_output_features() x degree multiplications.
 *
 * \par Parameters (PolynomialFeaturesParams)
 * - `degree` (int, default 2): the largest total degree, >= 0.
 * - `interaction_only` (bool, default false): only products of distinct features.
 * - `include_bias` (bool, default true): the all-ones column (degree 0) first.
 *
 * \par Attributes (after fit)
 * - `powers()` (Eigen int64 matrix, n_output_features x n_features_in): powers(k, j) is the
 *   exponent of feature j in output column k (scikit-learn's powers_).
 * - `n_output_features()`, `n_features_in()`.
 *
 * \par Differences from scikit-learn
 * - degree is an int only: no (min_degree, max_degree) pair. No `order` (output is row-major),
 *   no sparse input.
 *
 * Errors: `not_fitted_error` before fit; `shape_error` for X with other features than in fit or
 * ranks that disagree on the number of features; `invalid_argument` for NaN/Inf, no samples,
 * degree < 0 and degree = 0 without include_bias (an empty output, which scikit-learn also
 * refuses). Under exec::mpi every error in fit is raised on every rank.
 */

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/base/agreement.hpp"
#include "onelearn/core/detail/huge_pages.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/preprocessing/detail/checks.hpp"

namespace onelearn::preprocessing {

struct PolynomialFeaturesParams {
  int degree = 2;                 ///< largest total degree
  bool interaction_only = false;  ///< only products of distinct features
  bool include_bias = true;       ///< start with the all-ones column

  static constexpr std::array<std::string_view, 3> names{"degree", "interaction_only",
                                                         "include_bias"};
};

template <class T, exec::ExecutionPolicy Exec = exec::local>
class PolynomialFeatures
    : public WithParams<PolynomialFeatures<T, Exec>, PolynomialFeaturesParams> {
 public:
  using value_type = T;
  using Params = PolynomialFeaturesParams;
  using Powers = Eigen::Matrix<std::int64_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

  explicit PolynomialFeatures(const Params& params = {}, Exec exec = {})
      : WithParams<PolynomialFeatures, Params>(params), exec_(std::move(exec)) {}

  PolynomialFeatures& fit(const MatrixRef<T>& X) {
    constexpr std::string_view where = "PolynomialFeatures.fit";
    onelearn::detail::check_same_params(where, this->exec_, this->params_);
    fitted_ = false;
    const Params params = this->params_;
    detail::check_fit_input<T>(where, exec_, X, [&] {
      if (params.degree < 0) {
        throw invalid_argument(std::string(where) + ": expected degree >= 0, found " +
                               std::to_string(params.degree));
      }
      if (params.degree == 0 && !params.include_bias) {
        throw invalid_argument(std::string(where) +
                               ": expected degree >= 1 or include_bias = true, found degree 0 "
                               "without the bias: the output would have no columns");
      }
    });
    detail::check_has_samples(where, detail::total_rows(exec_, X.rows()), X.cols());

    const index_t p = X.cols();
    combinations_.clear();
    if (params.include_bias) combinations_.emplace_back();
    std::vector<index_t> current;
    for (int d = 1; d <= params.degree; ++d) {
      enumerate(d, 0, p, params.interaction_only, current);
    }
    powers_ = Powers::Zero(static_cast<index_t>(combinations_.size()), p);
    for (std::size_t k = 0; k < combinations_.size(); ++k) {
      for (index_t j : combinations_[k]) ++powers_(static_cast<index_t>(k), j);
    }
    n_features_ = p;
    fitted_ = true;
    return *this;
  }

  [[nodiscard]] Matrix<T> transform(const MatrixRef<T>& X) const {
    detail::check_transform_input<T>("PolynomialFeatures.transform", fitted_, n_features_, X);
    Matrix<T> out = onelearn::detail::uninitialized_matrix<T>(
        X.rows(), static_cast<index_t>(combinations_.size()));
    for (index_t i = 0; i < X.rows(); ++i) {
      for (std::size_t k = 0; k < combinations_.size(); ++k) {
        T product(1);
        for (index_t j : combinations_[k]) product *= X(i, j);
        out(i, static_cast<index_t>(k)) = product;
      }
    }
    return out;
  }

  Matrix<T> fit_transform(const MatrixRef<T>& X) { return fit(X).transform(X); }

  /// powers()(k, j): the exponent of feature j in output column k (scikit-learn's powers_).
  [[nodiscard]] const Powers& powers() const {
    return validation::fitted_attribute("PolynomialFeatures.powers", fitted_, powers_);
  }
  [[nodiscard]] index_t n_output_features() const {
    validation::check_fitted("PolynomialFeatures.n_output_features", fitted_);
    return static_cast<index_t>(combinations_.size());
  }
  [[nodiscard]] index_t n_features_in() const {
    return validation::fitted_attribute("PolynomialFeatures.n_features_in", fitted_, n_features_);
  }
  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }

 private:
  /// Appends, in lexicographic order, every tuple of `remaining` more indices, each >= `first`
  /// (> the previous one with interaction_only), after `current`.
  void enumerate(int remaining, index_t first, index_t p, bool interaction_only,
                 std::vector<index_t>& current) {
    if (remaining == 0) {
      combinations_.push_back(current);
      return;
    }
    for (index_t j = first; j < p; ++j) {
      current.push_back(j);
      enumerate(remaining - 1, interaction_only ? j + 1 : j, p, interaction_only, current);
      current.pop_back();
    }
  }

  Exec exec_;
  std::vector<std::vector<index_t>> combinations_;  // the feature indices of each output column
  Powers powers_;
  index_t n_features_ = 0;
  bool fitted_ = false;
};

}  // namespace onelearn::preprocessing
