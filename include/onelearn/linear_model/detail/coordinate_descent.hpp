#pragma once
// What Lasso and ElasticNet share: scikit-learn's covariance ("Gram") coordinate descent and
// the estimator built around it.
//
//   enet_coordinate_descent_gram   a line-by-line port of scikit-learn 1.2.1's
//                                  sklearn/linear_model/_cd_fast.pyx enet_coordinate_descent_gram:
//                                  same update order, same stopping rule (largest coefficient
//                                  change, then the duality gap), same returned gap and n_iter;
//   CoordinateDescentRegressor     fit/predict/score and the fitted attributes, parameterised by
//                                  the estimator (CRTP) and its Params.
//
// Distributed: the data enter only through G = X̃ᵀ W X̃, b = X̃ᵀ W ỹ and ‖ỹ‖²_W (X̃, ỹ centred
// with the global means), all-reduced once (detail/gram.hpp); every rank then runs the same
// deterministic descent on the same numbers and so holds the same model. Nothing is
// communicated during the iterations.

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <Eigen/Core>

#include "onelearn/base/agreement.hpp"
#include "onelearn/base/fit_input.hpp"
#include "onelearn/core/dataset.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/linear_model/detail/checks.hpp"
#include "onelearn/linear_model/detail/gram.hpp"
#include "onelearn/linear_model/detail/linear_regressor.hpp"
#include "onelearn/metrics/r2_score.hpp"

namespace onelearn::linear_model::detail {

struct CoordinateDescentResult {
  Eigen::VectorXd coef;
  double gap = 0;  ///< duality gap of the n-scaled objective at the last check (scikit-learn's)
  double tol = 0;  ///< the gap tolerance used: tol * ‖y‖²
  int n_iter = 0;  ///< passes over the coordinates
};

/// scikit-learn's rand_r replacement (sklearn/utils/_random.pxd our_rand_r): a 32-bit xorshift,
/// reduced to [0, 2^31 - 1]. A zero state is replaced by 1, as there.
inline std::uint32_t our_rand_r(std::uint32_t& state) {
  if (state == 0) state = 1;
  state ^= static_cast<std::uint32_t>(state << 13);
  state ^= static_cast<std::uint32_t>(state >> 17);
  state ^= static_cast<std::uint32_t>(state << 5);
  return state % (std::uint32_t{0x7FFFFFFF} + 1);
}

/// Minimises  (1/2) wᵀ Q w - qᵀ w + alpha ‖w‖₁ + (beta/2) ‖w‖²  (the elastic net
/// (1/2)‖y - X w‖² + alpha ‖w‖₁ + (beta/2)‖w‖² when Q = XᵀX, q = Xᵀy, y_norm2 = ‖y‖²)
/// from w = 0 by cyclic (or, with `random`, uniformly drawn) coordinate updates.
///
/// After a pass whose largest coefficient change is below tol relative to the largest
/// coefficient (or that leaves w = 0, or is the last), the duality gap is computed and the
/// descent stops when gap < tol * y_norm2. Q must be symmetric (its columns are read).
inline CoordinateDescentResult enet_coordinate_descent_gram(
    double alpha, double beta, const Eigen::MatrixXd& Q, const Eigen::VectorXd& q, double y_norm2,
    int max_iter, double tol, bool random, std::uint32_t seed) {
  const index_t n_features = Q.rows();
  Eigen::VectorXd w = Eigen::VectorXd::Zero(n_features);
  Eigen::VectorXd H = Eigen::VectorXd::Zero(n_features);  // Q w, kept up to date
  Eigen::VectorXd XtA(n_features);
  const double d_w_tol = tol;
  const double gap_tol = tol * y_norm2;
  double gap = tol + 1.0;
  std::uint32_t rand_state = seed;
  int n_iter = 0;

  for (n_iter = 0; n_iter < max_iter; ++n_iter) {
    double w_max = 0.0;
    double d_w_max = 0.0;
    for (index_t f_iter = 0; f_iter < n_features; ++f_iter) {
      const index_t ii = random ? static_cast<index_t>(our_rand_r(rand_state) %
                                                       static_cast<std::uint32_t>(n_features))
                                : f_iter;
      if (Q(ii, ii) == 0.0) continue;

      const double w_ii = w(ii);
      if (w_ii != 0.0) H.noalias() -= w_ii * Q.col(ii);

      const double tmp = q(ii) - H(ii);
      const double sign = tmp == 0 ? 0.0 : (tmp > 0 ? 1.0 : -1.0);
      const double shrunk = std::abs(tmp) - alpha;
      w(ii) = sign * (shrunk > 0 ? shrunk : 0.0) / (Q(ii, ii) + beta);

      if (w(ii) != 0.0) H.noalias() += w(ii) * Q.col(ii);

      const double d_w_ii = std::abs(w(ii) - w_ii);
      if (d_w_ii > d_w_max) d_w_max = d_w_ii;
      if (std::abs(w(ii)) > w_max) w_max = std::abs(w(ii));
    }

    if (w_max == 0.0 || d_w_max / w_max < d_w_tol || n_iter == max_iter - 1) {
      // The largest update was small: the duality gap decides.
      const double q_dot_w = w.dot(q);
      XtA = q - H - beta * w;
      const double dual_norm_XtA = XtA.cwiseAbs().maxCoeff();
      const double R_norm2 = y_norm2 + w.dot(H) - 2.0 * q_dot_w;
      const double w_norm2 = w.squaredNorm();
      double scale = 1.0;
      if (dual_norm_XtA > alpha) {
        scale = alpha / dual_norm_XtA;
        const double A_norm2 = R_norm2 * scale * scale;
        gap = 0.5 * (R_norm2 + A_norm2);
      } else {
        gap = R_norm2;
      }
      gap += alpha * w.lpNorm<1>() - scale * y_norm2 + scale * q_dot_w +
             0.5 * beta * (1 + scale * scale) * w_norm2;
      if (gap < gap_tol) break;
    }
  }
  // Like scikit-learn: the number of passes made (max_iter when the gap was never small enough).
  const int passes = n_iter < max_iter ? n_iter + 1 : max_iter;
  return {std::move(w), gap, gap_tol, passes};
}

/// Lasso and ElasticNet: everything but the constructor and the Params. Derived provides
/// `static constexpr std::string_view name` ("Lasso") for error messages; a Params without an
/// `l1_ratio` field is the pure L1 penalty (l1_ratio = 1).
template <class Derived, class P, class T, exec::ExecutionPolicy Exec,
          space::ComputeSpace Space = space::host>
class CoordinateDescentRegressor : public LinearRegressor<Derived, P, T, Exec, Space> {
  using Base = LinearRegressor<Derived, P, T, Exec, Space>;
  friend Base;

 public:
  /// Weighted fits rescale the weights to sum to the number of samples, as scikit-learn does,
  /// so the loss is the weighted mean of the squared errors: only their ratios matter.
  using Base::fit;

  /// Passes over the coordinates made by the descent (scikit-learn's n_iter_).
  [[nodiscard]] int n_iter() const { return Base::require_fitted("n_iter", n_iter_); }
  /// Duality gap at the end of the descent, on the scale of the objective
  /// 1/(2n)‖y - Xw‖² + penalty (scikit-learn's dual_gap_). Below tol * ‖y - mean(y)‖² / n
  /// unless the descent stopped at max_iter.
  [[nodiscard]] T dual_gap() const { return Base::require_fitted("dual_gap", dual_gap_); }

 protected:
  CoordinateDescentRegressor(const P& params, Exec exec, Space space = {})
      : Base(params, std::move(exec), std::move(space)) {}

 private:
  static double l1_ratio_of(const P& params) {
    if constexpr (requires { params.l1_ratio; }) {
      return params.l1_ratio;
    } else {
      return 1.0;
    }
  }

  static void check_params(std::string_view where, const P& params) {
    check_at_least(where, "alpha", params.alpha, 0.0);
    if constexpr (requires { params.l1_ratio; }) {
      check_in_closed_interval(where, "l1_ratio", params.l1_ratio, 0.0, 1.0);
    }
    if (params.max_iter < 1) {
      throw invalid_argument(std::string(where) + ": expected max_iter >= 1, found " +
                             std::to_string(params.max_iter));
    }
    check_at_least(where, "tol", params.tol, 0.0);
    if (params.selection != "cyclic" && params.selection != "random") {
      throw invalid_argument(std::string(where) +
                             R"(: expected selection "cyclic" or "random", found ")" +
                             params.selection + "\"");
    }
  }

  Derived& fit_impl(const MatrixRef<T>& X, const VectorRef<T>& y,
                    const std::optional<VectorRef<T>>& weights) {
    const std::string where = Base::qualified("fit");
    onelearn::detail::check_same_params(where, this->exec_, this->params_);
    this->fitted_ = false;
    const P& params = this->params_;
    // Inside propagate_errors, so ranks given different parameters fail together, not hang.
    this->exec_.propagate_errors([&] { check_params(where, params); });
    const auto [means, x_mean, y_mean, data] = this->centring(where, X, y, weights);

    // scikit-learn's scaling: weights sum to n, and the penalties are multiplied by n so that
    // the descent minimises n times the documented objective.
    const auto n = static_cast<double>(means.n_samples);
    const double weight_scale = weights ? n / means.total_weight : 1.0;
    const NormalEquations eq =
        normal_equations<T>(this->exec_, this->space_, data.X.view(), data.y.view(),
                            data.weights.view(), weight_scale, x_mean, y_mean);
    const double l1_ratio = l1_ratio_of(params);
    const double l1_reg = params.alpha * l1_ratio * n;
    const double l2_reg = params.alpha * (1.0 - l1_ratio) * n;
    const CoordinateDescentResult result = enet_coordinate_descent_gram(
        l1_reg, l2_reg, eq.gram, eq.xty, eq.yty, params.max_iter, params.tol,
        params.selection == "random", static_cast<std::uint32_t>(params.random_state));

    this->coef_ = result.coef.cast<T>();
    this->intercept_ = params.fit_intercept ? static_cast<T>(y_mean - x_mean.dot(result.coef)) : T(0);
    n_iter_ = result.n_iter;
    dual_gap_ = static_cast<T>(result.gap / n);
    this->fitted_ = true;
    return static_cast<Derived&>(*this);
  }

  T dual_gap_{};
  int n_iter_ = 0;
};

}  // namespace onelearn::linear_model::detail
