#pragma once
/**
 * \class onelearn::linear_model::Lasso
 * \brief Least squares with an L1 penalty, as scikit-learn's Lasso.
 * \ingroup estimators
 *
 * \code
 * #include <onelearn/linear_model/lasso.hpp>
 *
 * onelearn::linear_model::Lasso<double> lasso({.alpha = 0.1});
 * lasso.fit(X_train, y_train);
 * onelearn::Vector<double> y_hat = lasso.predict(X_test);
 * double r2 = lasso.score(X_test, y_test);
 * int passes = lasso.n_iter();        // coordinate-descent passes
 * double gap = lasso.dual_gap();      // duality gap at the solution
 *
 * // Data-parallel: each rank passes its own rows; every rank ends with the same model.
 * onelearn::linear_model::Lasso<double, onelearn::exec::mpi> dist({.alpha = 0.1},
 *                                                                 onelearn::exec::mpi{comm});
 * dist.fit(my_X, my_y);
 * \endcode
 *
 * linear_model::Lasso: least squares with an L1 penalty, as scikit-learn's Lasso (1.2.1):
 *
 *     1/(2n) Σ_i w_i (y_i - x_iᵀ coef - intercept)² + alpha ‖coef‖₁
 *
 * with the sample weights w_i rescaled to sum to n (w_i = 1 without weights). It is
 * ElasticNet with l1_ratio = 1.
 *
 * Method: the centred Gram matrix X̃ᵀWX̃, X̃ᵀWỹ and ‖ỹ‖²_W are accumulated in double and
 * all-reduced once; every rank then runs scikit-learn's covariance coordinate descent
 * (enet_coordinate_descent_gram, its precompute=True path) from coef = 0, identically. Its
 * iterates are those of scikit-learn's default (precompute=False) descent in exact
 * arithmetic, so the results agree to rounding. The descent stops, as scikit-learn's, when after
 * a pass with max |Δcoef| < tol · max |coef| the duality gap is below tol · ‖ỹ‖²_W (in the
 * n-scaled objective), or after max_iter passes. A pass costs O(p²), independent of n.
 * See detail/coordinate_descent.hpp.
 *
 * \par Compute spaces
 * The third template argument says where fit's passes over the rows run (space/space.hpp):
 * `space::host` (the default) or a Thrust space (`thrust_cpp`, `thrust_omp`, `thrust_tbb`,
 * `thrust_cuda`, where cuBLAS forms the Gram matrix; include <onelearn/space/space.hpp> and link
 * onelearn::thrust_<system>). fit brings X, y and the weights into the space once (a device
 * copy; borrowed on the CPU systems); only the column sums and the p x p normal equations come
 * back to be all-reduced, and the solve and predict run on the host. The coefficients are the
 * host's to 1e-9 relative in double (the descent carries the Gram matrix's rounding through
 * its passes), 1e-5 in float.
 *
 * \par Parameters (LassoParams)
 * - `alpha` (double, default 1.0): L1 penalty strength, >= 0 (0 is least squares; prefer
 *   LinearRegression).
 * - `fit_intercept` (bool, default true): fit an intercept (centre X and y) or force it to 0.
 * - `max_iter` (int, default 1000): maximum number of passes over the coordinates, >= 1.
 * - `tol` (double, default 1e-4): tolerance of the stopping rule above, >= 0.
 * - `selection` (string, default "cyclic"): "cyclic" updates the coordinates in order;
 *   "random" draws each update uniformly from random_state's stream.
 * - `random_state` (uint32, default 0): seed of the "random" selection. It seeds scikit-learn's
 *   xorshift (our_rand_r) directly, so a run is reproducible and the same on every rank;
 *   scikit-learn draws that seed from its numpy RandomState instead.
 *
 * \par Attributes (after fit)
 * - `coef()` (Vector<T>, p), `intercept()` (T): scikit-learn's coef_ and intercept_.
 * - `n_iter()` (int): passes made (scikit-learn's n_iter_); max_iter means no convergence,
 *   where scikit-learn would warn.
 * - `dual_gap()` (T): duality gap of the objective above (scikit-learn's dual_gap_).
 * - `n_features_in()`: number of features seen in fit.
 *
 * \par Differences from scikit-learn
 * - float input: the Gram matrix and the descent run in double (scikit-learn runs float32),
 *   so float results are closer to the float64 ones.
 * - No positive, warm_start, precompute or copy_X parameters; one target; no sparse input;
 *   no ConvergenceWarning (check n_iter() == max_iter).
 *
 * Errors: as Ridge (not_fitted_error, shape_error, invalid_argument), plus invalid_argument
 * for alpha < 0, max_iter < 1, tol < 0 and an unknown selection.
 */

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "onelearn/exec/local.hpp"
#include "onelearn/linear_model/detail/coordinate_descent.hpp"

namespace onelearn::linear_model {

struct LassoParams {
  double alpha = 1.0;                ///< L1 penalty strength, >= 0
  bool fit_intercept = true;         ///< fit an intercept (centre X and y) or force it to 0
  int max_iter = 1000;               ///< maximum passes over the coordinates, >= 1
  double tol = 1e-4;                 ///< stopping tolerance, >= 0
  std::string selection = "cyclic";  ///< "cyclic" or "random"
  std::uint32_t random_state = 0;    ///< seed of the "random" selection

  static constexpr std::array<std::string_view, 6> names{"alpha", "fit_intercept", "max_iter",
                                                         "tol",   "selection",     "random_state"};
};

template <class T, exec::ExecutionPolicy Exec = exec::local,
          space::ComputeSpace Space = space::host>
class Lasso : public detail::CoordinateDescentRegressor<Lasso<T, Exec, Space>, LassoParams, T,
                                                         Exec, Space> {
  using Base =
      detail::CoordinateDescentRegressor<Lasso<T, Exec, Space>, LassoParams, T, Exec, Space>;

 public:
  using value_type = T;
  using Params = LassoParams;
  static constexpr std::string_view name = "Lasso";

  explicit Lasso(const Params& params = {}, Exec exec = {}, Space space = {})
      : Base(params, std::move(exec), std::move(space)) {}
};

}  // namespace onelearn::linear_model
