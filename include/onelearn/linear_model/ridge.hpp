#pragma once
/**
 * \class onelearn::linear_model::Ridge
 * \brief Least squares with an L2 penalty, as scikit-learn's Ridge.
 * \ingroup estimators
 *
 * \code
 * #include <onelearn/linear_model/ridge.hpp>
 *
 * onelearn::linear_model::Ridge<double> ridge({.alpha = 0.5});
 * ridge.fit(X_train, y_train);                    // Matrix<double> rows = samples, Vector<double>
 * onelearn::Vector<double> y_hat = ridge.predict(X_test);
 * double r2 = ridge.score(X_test, y_test);
 *
 * // Data-parallel: each rank passes its own rows; every rank ends with the same model.
 * onelearn::linear_model::Ridge<double, onelearn::exec::mpi> dist({.alpha = 0.5},
 *                                                                 onelearn::exec::mpi{comm});
 * dist.fit(my_X, my_y);
 *
 * // In a compute space (space/space.hpp): the Gram matrix is formed there.
 * onelearn::linear_model::Ridge<double, onelearn::exec::local, onelearn::space::thrust_omp> omp;
 * \endcode
 *
 * linear_model::Ridge: least squares with an L2 penalty, as scikit-learn's Ridge (1.2.1,
 * solver "cholesky", the one its "auto" picks for dense data). It minimises
 *
 *     Σ_i w_i (y_i - x_iᵀ coef - intercept)² + alpha ‖coef‖²
 *
 * (w_i = 1 without sample weights; the weights are not normalised, as in scikit-learn).
 *
 * Method: X and y are centred with their global (weighted) means, the Gram matrix
 * G = X̃ᵀ W X̃ and b = X̃ᵀ W ỹ are accumulated in double on each rank and all-reduced once
 * ((p² + p)/2 + p + 1 values), and every rank solves (G + alpha I) coef = b with a Cholesky
 * factorisation (LLT), falling back to LDLT when G + alpha I is not numerically positive
 * definite (alpha = 0 with collinear features). intercept = y_mean - x_meanᵀ coef.
 * Unlike LinearRegression's QR, the normal equations square the condition number of X; with
 * alpha > 0 that is bounded by (σ_max² + alpha) / alpha, which is why Ridge uses them too.
 *
 * \par Compute spaces
 * The third template argument says where fit's passes over the rows run (space/space.hpp):
 * `space::host` (the default) or a Thrust space (`thrust_cpp`, `thrust_omp`, `thrust_tbb`,
 * `thrust_cuda`, where cuBLAS forms the Gram matrix; include <onelearn/space/space.hpp> and link
 * onelearn::thrust_<system>). fit brings X, y and the weights into the space once (a device
 * copy; borrowed on the CPU systems); only the column sums and the p x p normal equations come
 * back to be all-reduced, and the solve and predict run on the host. The coefficients are
 * the host's to 1e-12 relative in double, 1e-5 in float.
 *
 * \par Parameters (RidgeParams)
 * - `alpha` (double, default 1.0): L2 penalty strength, >= 0. alpha = 0 is ordinary least
 *   squares (prefer LinearRegression, which copes with rank-deficient X).
 * - `fit_intercept` (bool, default true): fit an intercept (centre X and y) or force it to 0.
 *
 * \par Attributes (after fit)
 * - `coef()` (Vector<T>, p): the coefficients, scikit-learn's coef_.
 * - `intercept()` (T): scikit-learn's intercept_ (0 when fit_intercept is false).
 * - `n_features_in()`: number of features seen in fit.
 *
 * \par A model from given attributes
 * `Ridge::from_fitted(params, coef, intercept[, exec])` returns a model that predicts and
 * scores exactly as a fitted one with these attributes: what an imported model
 * (onnx/to_estimator.hpp) becomes. intercept must be 0 when params.fit_intercept is false.
 *
 * \par Differences from scikit-learn
 * - float input: the Gram matrix and the solve are in double (scikit-learn stays in float32),
 *   so float results are closer to the float64 ones.
 * - alpha = 0 with singular XᵀX: LDLT gives a least-squares solution, not scikit-learn's
 *   minimum-norm SVD fallback.
 * - One target (y is a vector); alpha is a scalar.
 *
 * Errors: `not_fitted_error` from predict/score/attributes before fit; `shape_error` for y or
 * sample_weight of the wrong length, X with other features than in fit, or ranks that disagree
 * on the number of features; `invalid_argument` for NaN/Inf, negative weights, no samples and
 * alpha < 0. Under exec::mpi every error in fit is raised on every rank.
 */

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <Eigen/Cholesky>

#include "onelearn/base/agreement.hpp"
#include "onelearn/base/fit_input.hpp"
#include "onelearn/core/dataset.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/linear_model/detail/checks.hpp"
#include "onelearn/linear_model/detail/gram.hpp"
#include "onelearn/linear_model/detail/linear_regressor.hpp"
#include "onelearn/metrics/r2_score.hpp"

namespace onelearn::linear_model {

struct RidgeParams {
  double alpha = 1.0;         ///< L2 penalty strength, >= 0
  bool fit_intercept = true;  ///< fit an intercept (centre X and y) or force it to 0

  static constexpr std::array<std::string_view, 2> names{"alpha", "fit_intercept"};
};

template <class T, exec::ExecutionPolicy Exec = exec::local,
          space::ComputeSpace Space = space::host>
class Ridge : public detail::LinearRegressor<Ridge<T, Exec, Space>, RidgeParams, T, Exec, Space> {
  using Base = detail::LinearRegressor<Ridge<T, Exec, Space>, RidgeParams, T, Exec, Space>;
  friend Base;

 public:
  using Params = RidgeParams;
  static constexpr std::string_view name = "Ridge";

  explicit Ridge(const Params& params = {}, Exec exec = {}, Space space = {})
      : Base(params, std::move(exec), std::move(space)) {}

  /// A fitted model with these attributes (see "A model from given attributes" above).
  /// invalid_argument for alpha < 0, an empty coef, NaN/Inf, or a nonzero intercept without
  /// fit_intercept.
  [[nodiscard]] static Ridge from_fitted(const Params& params, const VectorRef<T>& coef,
                                         T intercept, Exec exec = {}) {
    constexpr std::string_view where = "Ridge.from_fitted";
    detail::check_at_least(where, "alpha", params.alpha, 0.0);
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
    Ridge model(params, std::move(exec));
    model.coef_ = coef;
    model.intercept_ = intercept;
    model.fitted_ = true;
    return model;
  }

 private:
  Ridge& fit_impl(const MatrixRef<T>& X, const VectorRef<T>& y,
                  const std::optional<VectorRef<T>>& weights) {
    constexpr std::string_view where = "Ridge.fit";
    onelearn::detail::check_same_params(where, this->exec_, this->params_);
    this->fitted_ = false;
    const Params& params = this->params_;
    // Inside propagate_errors, so ranks given different parameters fail together, not hang.
    this->exec_.propagate_errors([&] { detail::check_at_least(where, "alpha", params.alpha, 0.0); });
    const auto [means, x_mean, y_mean, data] = this->centring(where, X, y, weights);

    const detail::NormalEquations eq =
        detail::normal_equations<T>(this->exec_, this->space_, data.X.view(), data.y.view(),
                                    data.weights.view(), 1.0, x_mean, y_mean);
    const Eigen::VectorXd coef = solve(eq.gram, eq.xty, params.alpha);
    this->coef_ = coef.cast<T>();
    this->intercept_ = params.fit_intercept ? static_cast<T>(y_mean - x_mean.dot(coef)) : T(0);
    this->fitted_ = true;
    return *this;
  }

  /// (G + alpha I) coef = b: Cholesky, or LDLT when the matrix is not numerically positive
  /// definite. Always double, so one instantiation serves every T.
  static Eigen::VectorXd solve(Eigen::MatrixXd gram, const Eigen::VectorXd& b, double alpha) {
    gram.diagonal().array() += alpha;
    const Eigen::LLT<Eigen::MatrixXd> llt(gram);
    if (llt.info() == Eigen::Success) return llt.solve(b);
    return gram.ldlt().solve(b);
  }

};

}  // namespace onelearn::linear_model
