#pragma once
/**
 * \class onelearn::linear_model::ElasticNet
 * \brief Least squares with a combined L1 and L2 penalty, as scikit-learn's ElasticNet.
 * \ingroup estimators
 *
 * \code
 * #include <onelearn/linear_model/elastic_net.hpp>
 *
 * onelearn::linear_model::ElasticNet<double> enet({.alpha = 0.1, .l1_ratio = 0.7});
 * enet.fit(X_train, y_train);
 * onelearn::Vector<double> y_hat = enet.predict(X_test);
 * double r2 = enet.score(X_test, y_test);
 *
 * // Data-parallel: each rank passes its own rows; every rank ends with the same model.
 * onelearn::linear_model::ElasticNet<double, onelearn::exec::mpi> dist(
 *     {.alpha = 0.1, .l1_ratio = 0.7}, onelearn::exec::mpi{comm});
 * dist.fit(my_X, my_y);
 * \endcode
 *
 * linear_model::ElasticNet: least squares with a combined L1 and L2 penalty, as
 * scikit-learn's ElasticNet (1.2.1):
 *
 *     1/(2n) Σ_i w_i (y_i - x_iᵀ coef - intercept)²
 *         + alpha · l1_ratio · ‖coef‖₁ + ½ · alpha · (1 - l1_ratio) · ‖coef‖²
 *
 * with the sample weights w_i rescaled to sum to n (w_i = 1 without weights). l1_ratio = 1 is
 * the Lasso, l1_ratio = 0 a ridge penalty (scaled as above, not as Ridge's).
 *
 * Method: as Lasso — one all-reduce of the centred Gram matrix X̃ᵀWX̃, X̃ᵀWỹ and ‖ỹ‖²_W (in
 * double), then scikit-learn's covariance coordinate descent (enet_coordinate_descent_gram)
 * run identically on every rank, with its duality-gap stopping rule. See
 * detail/coordinate_descent.hpp.
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
 * \par Parameters (ElasticNetParams)
 * - `alpha` (double, default 1.0): overall penalty strength, >= 0.
 * - `l1_ratio` (double, default 0.5): share of the L1 penalty, in [0, 1].
 * - `fit_intercept` (bool, default true): fit an intercept (centre X and y) or force it to 0.
 * - `max_iter` (int, default 1000): maximum number of passes over the coordinates, >= 1.
 * - `tol` (double, default 1e-4): stopping tolerance (see Lasso), >= 0.
 * - `selection` (string, default "cyclic"): "cyclic" or "random" coordinate order.
 * - `random_state` (uint32, default 0): seed of the "random" selection (seeds scikit-learn's
 *   xorshift directly; the same on every rank).
 *
 * \par Attributes (after fit)
 * - `coef()` (Vector<T>, p), `intercept()` (T): scikit-learn's coef_ and intercept_.
 * - `n_iter()` (int): passes made; max_iter means no convergence.
 * - `dual_gap()` (T): duality gap of the objective above (scikit-learn's dual_gap_).
 * - `n_features_in()`: number of features seen in fit.
 *
 * \par Differences from scikit-learn
 * - float input is solved in double; no positive, warm_start, precompute or copy_X
 *   parameters; one target; no sparse input; no ConvergenceWarning.
 *
 * Errors: as Lasso, plus invalid_argument for l1_ratio outside [0, 1].
 */

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "onelearn/exec/local.hpp"
#include "onelearn/linear_model/detail/coordinate_descent.hpp"

namespace onelearn::linear_model {

struct ElasticNetParams {
  double alpha = 1.0;                ///< overall penalty strength, >= 0
  double l1_ratio = 0.5;             ///< share of the L1 penalty, in [0, 1]
  bool fit_intercept = true;         ///< fit an intercept (centre X and y) or force it to 0
  int max_iter = 1000;               ///< maximum passes over the coordinates, >= 1
  double tol = 1e-4;                 ///< stopping tolerance, >= 0
  std::string selection = "cyclic";  ///< "cyclic" or "random"
  std::uint32_t random_state = 0;    ///< seed of the "random" selection

  static constexpr std::array<std::string_view, 7> names{
      "alpha", "l1_ratio", "fit_intercept", "max_iter", "tol", "selection", "random_state"};
};

template <class T, exec::ExecutionPolicy Exec = exec::local,
          space::ComputeSpace Space = space::host>
class ElasticNet : public detail::CoordinateDescentRegressor<ElasticNet<T, Exec, Space>,
                                                             ElasticNetParams, T, Exec, Space> {
  using Base = detail::CoordinateDescentRegressor<ElasticNet<T, Exec, Space>, ElasticNetParams, T,
                                                  Exec, Space>;

 public:
  using value_type = T;
  using Params = ElasticNetParams;
  static constexpr std::string_view name = "ElasticNet";

  explicit ElasticNet(const Params& params = {}, Exec exec = {}, Space space = {})
      : Base(params, std::move(exec), std::move(space)) {}
};

}  // namespace onelearn::linear_model
