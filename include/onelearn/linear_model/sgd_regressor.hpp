#pragma once
/**
 * \class onelearn::linear_model::SGDRegressor
 * \brief A linear regressor fitted by stochastic gradient descent, as scikit-learn's SGDRegressor.
 * \ingroup estimators
 *
 * \code
 * #include <onelearn/linear_model/sgd_regressor.hpp>
 *
 * onelearn::linear_model::SGDRegressor<double> sgd({.penalty = "elasticnet", .random_state = 1});
 * sgd.fit(X_train, y_train);               // scale X first (StandardScaler): SGD needs it
 * onelearn::Vector<double> y_hat = sgd.predict(X_test);
 * double r2 = sgd.score(X_test, y_test);
 *
 * sgd.partial_fit(X_more, y_more);         // one more epoch, on new rows
 *
 * // Data-parallel (synchronous model averaging, see below): each rank passes its own rows.
 * onelearn::exec::mpi policy{comm};  // the application's communicator
 * onelearn::linear_model::SGDRegressor<double, onelearn::exec::mpi> dist({}, policy);
 * dist.fit(my_X, my_y);
 * \endcode
 *
 * linear_model::SGDRegressor: a linear model fitted by stochastic gradient descent, as
 * scikit-learn's SGDRegressor (1.2.1, dense data, average=False). It minimises
 *
 *     Σ_i w_i L(y_i, x_iᵀ coef + intercept) + alpha R(coef)
 *
 * with one update per sample (sklearn/linear_model/_sgd_fast.pyx, _plain_sgd): each step
 * shrinks the weights by the L2 part of the penalty, moves them by -eta dL/dp x_i, and applies
 * the L1 part with the cumulative truncated gradient.
 *
 * Learning rates (t counts updates from 1, as scikit-learn's t_):
 * - "invscaling" (default): eta = eta0 / t^power_t.   "constant": eta = eta0.
 * - "optimal": eta = 1 / (alpha (t0 + t - 1)), with scikit-learn's heuristic t0 =
 *   1 / (eta_init alpha), eta_init = typw / max(1, dloss(-typw, 1)), typw = sqrt(1/sqrt(alpha)).
 * - "adaptive": eta = eta0, divided by 5 each time n_iter_no_change epochs in a row fail to
 *   improve the training loss by tol · n_samples; the fit stops when eta <= 1e-6.
 * The other rates stop after n_iter_no_change such epochs, or after max_iter epochs.
 *
 * Method: the weights are kept in double whatever T is (scikit-learn converts X to float64);
 * the L2 shrink is a scale factor folded back into the weights at the end of every epoch.
 *
 * Distributed (exec::mpi), synchronous model averaging: exact per-sample SGD cannot be split
 * across ranks, so each rank runs one epoch over its own rows from the same weights, then the
 * weights, intercept (and L1 accumulators) are averaged, weighted by each rank's row count, and
 * the epoch losses summed, in one all-reduce of p + 3 doubles (2p + 3 with L1) per epoch. The
 * stopping test uses the summed loss, so all ranks stop together and end with the same model.
 * Within an epoch a rank's update count runs over its own rows; t() advances by the total row
 * count per epoch. Each rank shuffles its own rows, seeded with random_state ^ (rank ·
 * 0x9E3779B97F4A7C15). With one rank this is the exec::local fit bit for bit; with more it is a
 * different (averaged) estimate, not the one-process fit on the concatenated rows.
 *
 * \par Parameters (SGDRegressorParams)
 * - `loss` (string, default "squared_error"): "squared_error", "huber" or
 *   "epsilon_insensitive".
 * - `penalty` (string, default "l2"): "l2", "l1", "elasticnet" or "none" (scikit-learn's None).
 * - `alpha` (double, default 1e-4): penalty strength, >= 0 (> 0 with "optimal").
 * - `l1_ratio` (double, default 0.15): L1 share of "elasticnet", in [0, 1].
 * - `fit_intercept` (bool, default true).
 * - `max_iter` (int, default 1000): epochs at most, >= 1.
 * - `tol` (double, default 1e-3): an epoch improves when its loss sum is below the best so far
 *   minus tol · n_samples; -infinity stands for scikit-learn's None (never stop early).
 * - `shuffle` (bool, default true): a new random order of the rows every epoch.
 * - `epsilon` (double, default 0.1): huber's threshold, epsilon_insensitive's margin, >= 0.
 * - `random_state` (uint64, default 0): seed of the shuffling (std::mt19937_64).
 * - `learning_rate` (string, default "invscaling"): "invscaling", "constant", "optimal",
 *   "adaptive".
 * - `eta0` (double, default 0.01): initial rate, > 0 unless learning_rate is "optimal".
 * - `power_t` (double, default 0.25): exponent of "invscaling".
 * - `n_iter_no_change` (int, default 5): epochs without improvement before stopping, >= 1.
 * - `verbose` (int, default 0): >= 1 logs (core/log.hpp's sink; rank 0 only) one line per
 *   epoch, "SGDRegressor: epoch 3/1000: average loss 0.234567; elapsed 0.01s, remaining <=
 *   2.1s" (the time left is a bound: the stopping test usually ends the fit sooner), and after
 *   fit one line saying why it stopped. Not compared across ranks: `verbose = rank == 0` is
 *   fine.
 *
 * \par Attributes (after fit or partial_fit)
 * - `coef()` (Vector<T>, p): scikit-learn's coef_.
 * - `intercept()` (T): scikit-learn's intercept_[0].
 * - `n_iter()`: epochs of the last fit (1 after partial_fit).
 * - `t()`: scikit-learn's t_, 1 + the number of updates, n_iter · n_samples per fit.
 * - `n_features_in()`.
 *
 * \par Differences from scikit-learn
 * - Shuffling draws a fresh Fisher-Yates permutation per epoch from std::mt19937_64: the sample
 *   order cannot match scikit-learn's, so shuffled fits agree with scikit-learn's in quality,
 *   not number for number. With shuffle = false the order is the same and the coefficients
 *   agree to rounding (tested to 1e-10).
 * - n partial_fit calls equal a fit with max_iter = n and tol = -inf (as in scikit-learn, for
 *   "none" and "l2" penalties: each call restarts the L1 accumulators), shuffled or not.
 * - Not supported: average, early_stopping/validation_fraction, warm_start,
 *   coef_init/intercept_init, "squared_epsilon_insensitive".
 * - verbose prints other lines than scikit-learn's (see Parameters).
 * - No ConvergenceWarning when max_iter is reached: compare n_iter() with max_iter.
 * - Distributed fits average per-epoch models (above).
 *
 * Errors: `not_fitted_error` before fit; `shape_error` for y or sample_weight of the wrong
 * length, X with other features than in fit, or ranks that disagree on the number of features;
 * `invalid_argument` for NaN/Inf, negative weights, no samples, parameters out of range or
 * unknown, and weights that overflow. Under exec::mpi every error in fit is raised on every
 * rank.
 */

#include <array>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/base/agreement.hpp"
#include "onelearn/base/fit_input.hpp"
#include "onelearn/core/dataset.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/linear_model/detail/checks.hpp"
#include "onelearn/linear_model/detail/sgd.hpp"
#include "onelearn/metrics/r2_score.hpp"

namespace onelearn::linear_model {

struct SGDRegressorParams {
  std::string loss = "squared_error";        ///< squared_error, huber or epsilon_insensitive
  std::string penalty = "l2";                ///< l2, l1, elasticnet or none
  double alpha = 1e-4;                       ///< penalty strength, >= 0
  double l1_ratio = 0.15;                    ///< L1 share of elasticnet, in [0, 1]
  bool fit_intercept = true;                 ///< fit an intercept or force it to 0
  std::int64_t max_iter = 1000;              ///< epochs at most, >= 1
  double tol = 1e-3;                         ///< stopping tolerance; -inf never stops early
  bool shuffle = true;                       ///< a new random sample order every epoch
  double epsilon = 0.1;                      ///< huber / epsilon_insensitive threshold, >= 0
  std::uint64_t random_state = 0;            ///< seed of the shuffling
  std::string learning_rate = "invscaling";  ///< invscaling, constant, optimal or adaptive
  double eta0 = 0.01;                        ///< initial rate, > 0 unless optimal
  double power_t = 0.25;                     ///< exponent of invscaling
  std::int64_t n_iter_no_change = 5;         ///< epochs without improvement before stopping
  std::int64_t verbose = 0;                  ///< >= 1: a progress line per epoch (rank 0)

  static constexpr std::array<std::string_view, 15> names{
      "loss",          "penalty", "alpha",   "l1_ratio",         "fit_intercept",
      "max_iter",      "tol",     "shuffle", "epsilon",          "random_state",
      "learning_rate", "eta0",    "power_t", "n_iter_no_change", "verbose"};
};

template <class T, exec::ExecutionPolicy Exec = exec::local>
class SGDRegressor : public WithParams<SGDRegressor<T, Exec>, SGDRegressorParams> {
 public:
  using value_type = T;
  using Params = SGDRegressorParams;

  explicit SGDRegressor(const Params& params = {}, Exec exec = {})
      : WithParams<SGDRegressor, Params>(params), exec_(std::move(exec)) {}

  SGDRegressor& fit(const MatrixRef<T>& X, const VectorRef<T>& y) {
    return fit_impl("SGDRegressor.fit", X, y, std::nullopt, false);
  }

  SGDRegressor& fit(const MatrixRef<T>& X, const VectorRef<T>& y,
                    const VectorRef<T>& sample_weight) {
    return fit_impl("SGDRegressor.fit", X, y, sample_weight, false);
  }

  /// Fits on a Dataset's features and targets, with its sample weights when it has them.
  SGDRegressor& fit(const Dataset<T>& data) {
    if (data.has_sample_weights()) {
      return fit(data.features(), data.targets(), data.sample_weights());
    }
    return fit(data.features(), data.targets());
  }

  /// One epoch over X, continuing from the current model (from zeros on an unfitted one).
  SGDRegressor& partial_fit(const MatrixRef<T>& X, const VectorRef<T>& y) {
    return fit_impl("SGDRegressor.partial_fit", X, y, std::nullopt, true);
  }

  SGDRegressor& partial_fit(const MatrixRef<T>& X, const VectorRef<T>& y,
                            const VectorRef<T>& sample_weight) {
    return fit_impl("SGDRegressor.partial_fit", X, y, sample_weight, true);
  }

  [[nodiscard]] Vector<T> predict(const MatrixRef<T>& X) const {
    constexpr std::string_view where = "SGDRegressor.predict";
    validation::check_fitted(where, fitted_);
    validation::check_n_features(where, problem_.w.size(), X.cols());
    validation::check_finite(where, "X", X);
    const Vector<double> out =
        (X.template cast<double>() * problem_.w).array() + problem_.intercept;
    return out.cast<T>();
  }

  /// R² of predict(X) against y. With a distributed policy it is collective: each rank passes
  /// its own rows and every rank gets the score over all of them.
  [[nodiscard]] T score(const MatrixRef<T>& X, const VectorRef<T>& y) const {
    Vector<T> predicted;
    exec_.propagate_errors([&] {
      validation::check_same_length("SGDRegressor.score", "y", X.rows(), y.size());
      predicted = predict(X);
    });
    return metrics::r2_score<T>(y, predicted, exec_);
  }

  [[nodiscard]] const Vector<T>& coef() const {
    return validation::fitted_attribute("SGDRegressor.coef", fitted_, coef_);
  }
  [[nodiscard]] T intercept() const {
    return validation::fitted_attribute("SGDRegressor.intercept", fitted_, intercept_);
  }
  [[nodiscard]] std::int64_t n_iter() const {
    return validation::fitted_attribute("SGDRegressor.n_iter", fitted_, n_iter_);
  }
  /// scikit-learn's t_: 1 + the number of updates made, counted over all rows of all ranks.
  [[nodiscard]] double t() const {
    return validation::fitted_attribute("SGDRegressor.t", fitted_, t_);
  }
  [[nodiscard]] index_t n_features_in() const {
    return validation::fitted_attribute("SGDRegressor.n_features_in", fitted_, coef_.size());
  }
  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }

 private:
  detail::SgdSettings settings(std::string_view where) const {
    static constexpr std::array<std::string_view, 3> loss_names{"squared_error", "huber",
                                                                "epsilon_insensitive"};
    static constexpr std::array<detail::sgd_loss, 3> losses{detail::sgd_loss::squared_error,
                                                            detail::sgd_loss::huber,
                                                            detail::sgd_loss::epsilon_insensitive};
    const detail::sgd_loss kind = detail::parse_option<detail::sgd_loss>(
        where, "loss", this->params_.loss, loss_names, losses);
    detail::check_at_least(where, "epsilon", this->params_.epsilon, 0.0);
    return detail::common_settings(where, this->params_,
                                   detail::SgdLoss{kind, this->params_.epsilon});
  }

  /// fit (from zeros, max_iter epochs) or partial_fit (from the current model, one epoch).
  SGDRegressor& fit_impl(std::string_view where, const MatrixRef<T>& X, const VectorRef<T>& y,
                         const std::optional<VectorRef<T>>& weights, bool partial) {
    onelearn::detail::check_same_params(where, this->exec_, this->params_);
    const bool first = !partial || !fitted_;
    if (!partial) fitted_ = false;
    detail::SgdSettings s;
    exec_.propagate_errors([&] {
      s = settings(where);
      if (X.cols() < 1) {
        throw invalid_argument(std::string(where) + ": expected at least one feature, found 0");
      }
      if (!first) validation::check_n_features(where, problem_.w.size(), X.cols());
    });
    onelearn::detail::check_fit_input<T>(where, exec_, X, y, weights);
    std::array<std::int64_t, 1> n_total{static_cast<std::int64_t>(X.rows())};
    exec_.allreduce(std::span(n_total), exec::reduce_op::sum);
    if (n_total[0] == 0) {
      throw invalid_argument(std::string(where) + ": expected at least one sample, found 0");
    }

    std::vector<detail::SgdProblem> problems(1);
    std::mt19937_64 engine;
    double t = 1.0;
    if (first) {
      problems[0].w = Vector<double>::Zero(X.cols());
      engine.seed(detail::rank_seed(this->params_.random_state, exec_.rank()));
    } else {
      problems[0] = problem_;
      engine = engine_;
      t = t_;
    }
    auto target_of = [&](std::size_t, index_t i) { return static_cast<double>(y(i)); };
    const std::int64_t max_epochs = partial ? 1 : s.max_iter;
    // Named as the classifier's lines: "SGDRegressor" for fit, the method for partial_fit.
    const detail::SgdProgress progress(partial ? where : std::string_view("SGDRegressor"),
                                       this->params_.verbose, exec_, max_epochs, 1);
    const std::int64_t n_iter = detail::sgd_run<T>(where, exec_, s, X, target_of, weights, problems,
                                                   max_epochs, t, n_total[0], engine, progress);
    if (!partial) progress.finish(n_iter);

    problem_ = std::move(problems[0]);
    engine_ = engine;
    coef_ = problem_.w.cast<T>();
    intercept_ = static_cast<T>(problem_.intercept);
    n_iter_ = n_iter;
    t_ = t + static_cast<double>(n_iter) * static_cast<double>(n_total[0]);
    fitted_ = true;
    return *this;
  }

  Exec exec_;
  detail::SgdProblem problem_;  // the weights in double, and what partial_fit continues from
  std::mt19937_64 engine_;      // the shuffling stream partial_fit continues
  Vector<T> coef_;
  T intercept_{};
  std::int64_t n_iter_ = 0;
  double t_ = 1.0;
  bool fitted_ = false;
};

}  // namespace onelearn::linear_model
