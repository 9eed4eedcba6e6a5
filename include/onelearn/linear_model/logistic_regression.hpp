#pragma once
/**
 * \class onelearn::linear_model::LogisticRegression
 * \brief L2-regularised logistic regression (L-BFGS), as scikit-learn's LogisticRegression.
 * \ingroup estimators
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/linear_model/logistic_regression.hpp>
 *
 * onelearn::linear_model::LogisticRegression<double> clf({.C = 0.5, .max_iter = 1000});
 * clf.fit(X_train, y_train);                          // y_train: onelearn::Labels, any values
 * onelearn::Labels predicted = clf.predict(X_test);   // values taken from clf.classes()
 * onelearn::Matrix<double> proba = clf.predict_proba(X_test);  // n x n_classes
 * double accuracy = clf.score(X_test, y_test);
 * if (!clf.converged()) clf.set_params({{"max_iter", 5000}});  // ConvergenceWarning: fit again
 *
 * // Data-parallel: each rank passes its own rows (a rank may lack some classes, or all rows);
 * // every rank takes the same optimizer steps and ends with the same model.
 * onelearn::linear_model::LogisticRegression<double, onelearn::exec::mpi> dist(
 *     {}, onelearn::exec::mpi{comm});
 * dist.fit(my_X, my_y);
 * \endcode
 *
 * linear_model::LogisticRegression: L2-regularised logistic regression, as scikit-learn's
 * LogisticRegression (1.2.1) with solver="lbfgs" and its default multi_class="auto":
 * - two classes: the binary model, one row of coefficients, P(classes()[1] | x) =
 *   1 / (1 + exp(-(x·coef + intercept)));
 * - k > 2 classes: the multinomial (softmax) model, k rows of coefficients (all k, made
 *   unique by the penalty, as scikit-learn does).
 * It minimises scikit-learn 1.2.1's objective
 *
 *     Σ_i w_i loss_i + ‖coef‖² / (2 C)         (the intercept is not penalised)
 *
 * where loss_i is the log loss -log P(y_i | x_i) and w_i the sample weight (1 without weights).
 * This is C times smaller than "C Σ_i w_i loss_i + ½‖coef‖²": the same minimiser; the scale
 * matters for `tol`, which applies to this objective's gradient as in scikit-learn 1.2.1.
 * penalty = "none" drops the penalty (scikit-learn's penalty=None / "none").
 *
 * Method: L-BFGS from zero coefficients (detail/lbfgs.hpp: the steps of scipy's L-BFGS-B,
 * 10 pairs of memory, Moré-Thuente line search with at most 20 evaluations), stopping when the
 * largest entry of the gradient is <= tol, when the relative reduction of the objective in an
 * iteration is <= 2.22e-9 (scipy's default ftol, which scikit-learn keeps), or after max_iter
 * iterations. In double it takes scikit-learn's iterations (20 on standardised iris, 88 on
 * digits, both stopped by the reduction test) and reproduces its train log loss to 2e-14 and
 * 2e-8 relative. The loss and its gradient are computed in double whatever T is. Under a
 * distributed policy each rank computes the loss and gradient of its own rows and one
 * all-reduce of 1 + k·(p + 1) doubles per evaluation sums them; the penalty is added after, so
 * every rank holds the same numbers and makes the same deterministic L-BFGS steps. (This relies
 * on MPI_Allreduce returning the same bits on every rank, as Open MPI and MPICH do and the MPI
 * standard recommends.) The sorted classes are first gathered from every rank.
 *
 * \par Compute spaces
 * The third template argument says where the loss and gradient evaluations run (space/space.hpp):
 * `space::host` (the default) or a Thrust space (`space::thrust_cpp`, `thrust_omp`,
 * `thrust_tbb`, or `thrust_cuda` from a .cu file compiled by nvcc; include
 * <onelearn/space/space.hpp> and link onelearn::thrust_<system>). fit copies the rows (in double),
 * the class indices and the weights into the space once (a device copy; borrowed on the CPU
 * systems), and each of L-BFGS's evaluations runs there (space::logistic_loss_gradient); only the
 * 1 + k·(p + 1) sums come back, for the same one all-reduce, so every policy works with every
 * space. The L-BFGS steps and predictions stay on the host. The evaluations equal the host's to
 * 1e-12 relative (their sums are added in another order on a device), so the fitted model is the
 * host's to the optimiser's sensitivity to that rounding (1e-9 relative in the tests, the same
 * iterations).
 *
 * \par Parameters (LogisticRegressionParams)
 * - `penalty` (string, default "l2"): "l2" or "none".
 * - `C` (double, default 1.0): inverse of the regularisation strength, > 0 (infinity allowed,
 *   the same as penalty "none").
 * - `fit_intercept` (bool, default true): fit an intercept per coefficient row.
 * - `max_iter` (int, default 100): L-BFGS iterations, >= 0 (0 makes one iteration and
 *   reports n_iter() = 0, as scikit-learn on scipy does).
 * - `tol` (double, default 1e-4): stop when max |gradient| <= tol, >= 0.
 * - `verbose` (int, default 0): >= 1 logs (core/log.hpp's sink; rank 0 only) one line per
 *   L-BFGS iteration, "LogisticRegression: iteration 3/100: loss 0.412345, max |gradient|
 *   0.0123; elapsed 0.01s, remaining <= 0.4s" (a bound: convergence usually stops it before
 *   max_iter), then one line saying why it stopped, "LogisticRegression: converged: relative
 *   reduction of f <= ftol after 20 iterations; elapsed 0.05s". The loss is the objective
 *   above, summed over all ranks. Not compared across ranks: `verbose = rank == 0` is fine.
 *
 * \par Attributes (after fit)
 * - `classes()` (Labels, k): the distinct labels seen in fit on any rank, sorted ascending.
 * - `coef()` (Matrix<T>): 1 x p for two classes (the coefficients of classes()[1]), k x p
 *   otherwise, scikit-learn's coef_.
 * - `intercept()` (Vector<T>): 1 or k entries, 0 when fit_intercept is false.
 * - `n_iter()`: L-BFGS iterations made (scikit-learn's n_iter_[0]).
 * - `converged()`: whether the gradient or reduction test stopped the optimizer; false where
 *   scikit-learn would issue a ConvergenceWarning (max_iter reached, as scipy tests it before
 *   convergence; or a failed line search).
 * - `n_features_in()`: number of features seen in fit.
 *
 * \par A model from given attributes
 * `LogisticRegression::from_fitted(params, coef, intercept, classes[, exec])` returns a model
 * that behaves exactly as one fit had left with these attributes (predict, predict_proba,
 * decision_function, score, classes(), coef()): what an imported model (onnx/to_estimator.hpp)
 * or one trained elsewhere becomes. classes must be strictly increasing (>= 2 of them), coef
 * 1 x p for two classes and k x p otherwise, intercept 1 or k entries (all 0 when
 * params.fit_intercept is false). n_iter() is 0 and converged() true: no optimizer ran.
 *
 * \par Differences from scikit-learn
 * - Only solver "lbfgs", penalties "l2" and "none"; no class_weight, warm_start, dual,
 *   intercept_scaling, l1_ratio, multi_class="ovr" or n_jobs.
 * - No warnings: an unconverged fit returns normally with converged() == false.
 * - decision_function returns a matrix: n x 1 for two classes (scikit-learn's 1-D array),
 *   n x k otherwise.
 * - predict_log_proba is computed as log-sigmoid / log-softmax in double, so it stays finite
 *   where scikit-learn's log(predict_proba) would give -inf.
 * - float input: like scikit-learn, which converts X to float64 for lbfgs, the fit runs in
 *   double; the attributes are returned in T.
 *
 * Errors: `not_fitted_error` before fit; `shape_error` for y or sample_weight of the wrong
 * length, X with other features than in fit, or ranks that disagree on the number of
 * features; `invalid_argument` for NaN/Inf, negative weights, no samples, a total weight of
 * 0, fewer than two classes, an unknown penalty, C <= 0 (or NaN), max_iter < 0, verbose < 0 and
 * tol < 0 (or
 * NaN). Under exec::mpi every error in fit is raised on every rank.
 */

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "onelearn/base/agreement.hpp"
#include "onelearn/base/fit_input.hpp"
#include "onelearn/base/labels.hpp"
#include "onelearn/base/score.hpp"
#include "onelearn/core/dataset.hpp"
#include "onelearn/core/detail/logistic_terms.hpp"
#include "onelearn/space/data.hpp"
#include "onelearn/space/host.hpp"
#include "onelearn/core/detail/progress.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/linear_model/detail/checks.hpp"
#include "onelearn/linear_model/detail/lbfgs.hpp"

namespace onelearn::linear_model {

struct LogisticRegressionParams {
  std::string penalty = "l2";   ///< "l2" or "none"
  double C = 1.0;               ///< inverse regularisation strength, > 0
  bool fit_intercept = true;    ///< fit an (unpenalised) intercept
  std::int64_t max_iter = 100;  ///< L-BFGS iterations
  double tol = 1e-4;            ///< stop when max |gradient| <= tol
  std::int64_t verbose = 0;     ///< >= 1: a progress line per L-BFGS iteration (rank 0)

  static constexpr std::array<std::string_view, 6> names{"penalty",  "C",   "fit_intercept",
                                                         "max_iter", "tol", "verbose"};
};

template <class T, exec::ExecutionPolicy Exec = exec::local,
          space::ComputeSpace Space = space::host>
class LogisticRegression
    : public WithParams<LogisticRegression<T, Exec, Space>, LogisticRegressionParams> {
 public:
  using value_type = T;
  using Params = LogisticRegressionParams;
  using space_type = Space;

  explicit LogisticRegression(const Params& params = {}, Exec exec = {}, Space space = {})
      : WithParams<LogisticRegression, Params>(params),
        exec_(std::move(exec)),
        space_(std::move(space)) {}

  LogisticRegression& fit(const MatrixRef<T>& X, const LabelsRef& y) {
    return fit_impl(X, y, std::nullopt);
  }

  LogisticRegression& fit(const MatrixRef<T>& X, const LabelsRef& y,
                          const VectorRef<T>& sample_weight) {
    return fit_impl(X, y, sample_weight);
  }

  /// Fits on a Dataset's features and labels, with its sample weights when it has them.
  LogisticRegression& fit(const ClassificationDataset<T>& data) {
    return onelearn::detail::fit_dataset(*this, data);
  }

  /// A fitted model with these attributes (see "A model from given attributes" above).
  /// shape_error for coef or intercept of the wrong shape; invalid_argument for bad params,
  /// fewer than two or unsorted classes, NaN/Inf, or a nonzero intercept without fit_intercept.
  [[nodiscard]] static LogisticRegression from_fitted(const Params& params,
                                                      const MatrixRef<T>& coef,
                                                      const VectorRef<T>& intercept,
                                                      const LabelsRef& classes, Exec exec = {}) {
    constexpr std::string_view where = "LogisticRegression.from_fitted";
    check_params(where, params);
    const index_t k = classes.size();
    if (k < 2) {
      throw invalid_argument(std::string(where) + ": expected at least 2 classes, found " +
                             std::to_string(k));
    }
    for (index_t c = 1; c < k; ++c) {
      if (!(classes(c - 1) < classes(c))) {
        throw invalid_argument(std::string(where) +
                               ": expected strictly increasing classes (as fit sorts them), "
                               "found " + std::to_string(classes(c - 1)) + " before " +
                               std::to_string(classes(c)));
      }
    }
    const index_t rows = k == 2 ? 1 : k;
    if (coef.rows() != rows || coef.cols() < 1 || intercept.size() != rows) {
      throw shape_error(std::string(where) + ": expected coef of " + std::to_string(rows) +
                        " x p (p >= 1) and intercept of " + std::to_string(rows) +
                        " entries for " + std::to_string(k) + " classes, found coef " +
                        std::to_string(coef.rows()) + " x " + std::to_string(coef.cols()) +
                        " and " + std::to_string(intercept.size()) + " intercepts");
    }
    validation::check_finite(where, "coef", coef);
    validation::check_finite(where, "intercept", intercept);
    if (!params.fit_intercept && !intercept.isZero(0)) {
      throw invalid_argument(std::string(where) +
                             ": expected a zero intercept with fit_intercept = false, found a "
                             "nonzero one");
    }
    LogisticRegression model(params, std::move(exec));
    model.classes_ = classes;
    model.coef_ = coef;
    model.intercept_ = intercept;
    model.coef_d_ = coef.template cast<double>();
    model.intercept_d_ = intercept.template cast<double>();
    model.n_iter_ = 0;
    model.converged_ = true;
    model.fitted_ = true;
    return model;
  }

  /// x·coefᵀ + intercept: n x 1 for two classes (positive favours classes()[1]), n x k
  /// otherwise.
  [[nodiscard]] Matrix<T> decision_function(const MatrixRef<T>& X) const {
    return decision("LogisticRegression.decision_function", X).template cast<T>();
  }

  /// The most probable class of each row, as a value of classes() (ties: the first class).
  [[nodiscard]] Labels predict(const MatrixRef<T>& X) const {
    return onelearn::detail::decision_labels(classes_, decision("LogisticRegression.predict", X));
  }

  /// log P(class | x): n x n_classes, columns in the order of classes().
  [[nodiscard]] Matrix<T> predict_log_proba(const MatrixRef<T>& X) const {
    return log_proba("LogisticRegression.predict_log_proba", X).template cast<T>();
  }

  /// P(class | x): n x n_classes, columns in the order of classes(); each row sums to 1.
  [[nodiscard]] Matrix<T> predict_proba(const MatrixRef<T>& X) const {
    return log_proba("LogisticRegression.predict_proba", X)
        .array()
        .exp()
        .matrix()
        .template cast<T>();
  }

  /// Accuracy of predict(X) against y. With a distributed policy it is collective: each rank
  /// passes its own rows and every rank gets the accuracy over all of them.
  [[nodiscard]] T score(const MatrixRef<T>& X, const LabelsRef& y) const {
    return onelearn::detail::collective_score("LogisticRegression.score", *this, X, y);
  }

  [[nodiscard]] const Labels& classes() const {
    return validation::fitted_attribute("LogisticRegression.classes", fitted_, classes_);
  }
  /// 1 x p with two classes, k x p otherwise (scikit-learn's coef_).
  [[nodiscard]] const Matrix<T>& coef() const {
    return validation::fitted_attribute("LogisticRegression.coef", fitted_, coef_);
  }
  /// 1 entry with two classes, k otherwise (scikit-learn's intercept_).
  [[nodiscard]] const Vector<T>& intercept() const {
    return validation::fitted_attribute("LogisticRegression.intercept", fitted_, intercept_);
  }
  [[nodiscard]] index_t n_iter() const {
    return validation::fitted_attribute("LogisticRegression.n_iter", fitted_, n_iter_);
  }
  /// False where scikit-learn would warn that lbfgs failed to converge.
  [[nodiscard]] bool converged() const {
    return validation::fitted_attribute("LogisticRegression.converged", fitted_, converged_);
  }
  [[nodiscard]] index_t n_features_in() const {
    return validation::fitted_attribute("LogisticRegression.n_features_in", fitted_,
                                        coef_d_.cols());
  }
  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }
  /// Where fit's loss and gradient evaluations run (space::host by default).
  [[nodiscard]] const Space& compute_space() const noexcept { return space_; }

 private:
  static constexpr bool on_host = std::is_same_v<Space, space::host>;

  static void check_params(std::string_view where, const Params& params) {
    if (params.penalty != "l2" && params.penalty != "none") {
      throw invalid_argument(std::string(where) + R"(: expected penalty "l2" or "none", found ")" +
                             params.penalty + "\"");
    }
    if (!(params.C > 0)) {
      throw invalid_argument(std::string(where) + ": expected C > 0, found " +
                             detail::format_number(params.C));
    }
    if (params.max_iter < 0) {
      throw invalid_argument(std::string(where) + ": expected max_iter >= 0, found " +
                             std::to_string(params.max_iter));
    }
    detail::check_at_least(where, "tol", params.tol, 0.0);
    if (params.verbose < 0) {
      throw invalid_argument(std::string(where) + ": expected verbose >= 0, found " +
                             std::to_string(params.verbose));
    }
  }

  LogisticRegression& fit_impl(const MatrixRef<T>& X, const LabelsRef& y,
                               const std::optional<VectorRef<T>>& weights) {
    constexpr std::string_view where = "LogisticRegression.fit";
    onelearn::detail::check_same_params(where, this->exec_, this->params_);
    fitted_ = false;
    const Params params = this->params_;
    // Inside propagate_errors, so ranks given different parameters fail together, not hang.
    exec_.propagate_errors([&] {
      check_params(where, params);
      validation::check_same_length(where, "y", X.rows(), y.size());
    });
    onelearn::detail::check_fit_input<T>(where, exec_, X, std::nullopt, weights);
    // Fails alike on every rank when there are no samples, or no weight, at all.
    (void)onelearn::detail::global_means<T>(where, exec_, X, std::nullopt, weights);

    const Labels classes = onelearn::detail::gather_classes(exec_, y);
    if (classes.size() < 2) {
      throw invalid_argument(std::string(where) + ": expected samples of at least 2 classes, " +
                             "found only class " + std::to_string(classes(0)));
    }
    const std::vector<index_t> class_of = onelearn::detail::class_indices(where, classes, y);
    const Vector<double> w =
        weights ? Vector<double>(weights->template cast<double>()) : Vector<double>();

    detail::LbfgsResult result;
    if constexpr (std::is_same_v<T, double>) {
      result = optimise(X, class_of, w, classes.size(), params);
    } else {
      // Once, not per evaluation: the objective is evaluated in double, as scikit-learn does.
      result = optimise(X.template cast<double>(), class_of, w, classes.size(), params);
    }

    const index_t rows = classes.size() == 2 ? 1 : classes.size();
    const index_t p = X.cols();
    const Eigen::Map<const Matrix<double>> solution(result.x.data(), rows,
                                                    p + (params.fit_intercept ? 1 : 0));
    classes_ = classes;
    coef_d_ = solution.leftCols(p);
    intercept_d_ = params.fit_intercept ? Vector<double>(solution.col(p))
                                        : Vector<double>(Vector<double>::Zero(rows));
    coef_ = coef_d_.cast<T>();
    intercept_ = intercept_d_.cast<T>();
    n_iter_ = static_cast<index_t>(std::min(result.n_iter, params.max_iter));
    converged_ = result.converged();
    fitted_ = true;
    return *this;
  }

  /// L-BFGS on the parameters [coef | intercept] (rows x (p + fit_intercept), row-major),
  /// from zero. One all-reduce per evaluation: [data loss, data gradient].
  detail::LbfgsResult optimise(const MatrixRef<double>& X, const std::vector<index_t>& class_of,
                               const Vector<double>& weights, index_t n_classes,
                               const Params& params) const {
    const bool binary = n_classes == 2;
    const index_t p = X.cols();
    const index_t rows = binary ? 1 : n_classes;
    const index_t cols = p + (params.fit_intercept ? 1 : 0);
    const double l2 = params.penalty == "none" ? 0.0 : 1.0 / params.C;
    Vector<double> buffer(1 + rows * cols);
    // Outside the host the rows, classes and weights go to the space once (a device copy;
    // borrowed on the CPU Thrust systems), and every evaluation runs there.
    // Inside propagate_errors: a rank whose device is missing or full raises on every rank.
    decltype(data_in_space(X, class_of, weights)) in_space{};
    exec_.propagate_errors([&] { in_space = data_in_space(X, class_of, weights); });
    auto objective = [&](const Eigen::VectorXd& x, Eigen::VectorXd& grad) {
      const Eigen::Map<const Matrix<double>> theta(x.data(), rows, cols);
      Eigen::Map<Matrix<double>> data_gradient(buffer.data() + 1, rows, cols);
      if constexpr (on_host) {
        buffer(0) = onelearn::detail::logistic_terms(X, class_of, weights, binary,
                                                     params.fit_intercept, theta, data_gradient);
      } else {
        buffer(0) = logistic_loss_gradient(space_, in_space.X.view(), in_space.class_of.view(),
                                           in_space.weights.view(), binary, params.fit_intercept,
                                           theta, data_gradient);
      }
      exec_.allreduce(std::span(buffer.data(), static_cast<std::size_t>(buffer.size())),
                      exec::reduce_op::sum);
      grad = buffer.tail(rows * cols);
      Eigen::Map<Matrix<double>> g(grad.data(), rows, cols);
      g.leftCols(p) += l2 * theta.leftCols(p);
      return buffer(0) + 0.5 * l2 * theta.leftCols(p).squaredNorm();
    };
    detail::LbfgsOptions options;
    // scipy tests maxiter only after an iteration, so max_iter = 0 makes one (scikit-learn
    // then reports n_iter_ = 0); n_iter() is clipped to max_iter alike.
    options.max_iter = std::max<std::int64_t>(params.max_iter, 1);
    options.gtol = params.tol;
    const onelearn::detail::ProgressLog progress("LogisticRegression", params.verbose, exec_);
    const auto report = [&](const detail::LbfgsResult& state) {
      if (!progress.enabled()) return;
      // A bound: the gradient and reduction tests usually stop it before max_iter.
      progress.step(
          "iteration " + std::to_string(state.n_iter) + "/" + std::to_string(options.max_iter) +
              ": loss " + onelearn::detail::format_quantity(state.f) + ", max |gradient| " +
              onelearn::detail::format_quantity(state.grad.template lpNorm<Eigen::Infinity>()),
          static_cast<double>(state.n_iter), static_cast<double>(options.max_iter),
          onelearn::detail::Remaining::at_most);
    };
    detail::LbfgsResult result =
        detail::lbfgs_minimize(objective, Eigen::VectorXd::Zero(rows * cols), options, report);
    if (progress.enabled()) {
      progress.note(std::string(detail::to_string(result.status)) + " after " +
                    std::to_string(result.n_iter) + " iterations; elapsed " +
                    onelearn::detail::format_duration(progress.elapsed()));
    }
    return result;
  }

  /// The data of optimise() in the space (not used on the host, whose kernel reads it there).
  struct SpaceData {
    space::matrix<Space, double> X;
    space::vector<Space, index_t> class_of;
    space::vector<Space, double> weights;
  };
  auto data_in_space(const MatrixRef<double>& X, const std::vector<index_t>& class_of,
                     const Vector<double>& weights) const {
    if constexpr (on_host) {
      return 0;
    } else {
      return SpaceData{
          space::to_space(space_, X), space::to_space(space_, std::span<const index_t>(class_of)),
          space::to_space(space_, std::span<const double>(
                                      weights.data(), static_cast<std::size_t>(weights.size())))};
    }
  }

  /// x·coefᵀ + intercept in double, after the checks every prediction makes.
  Matrix<double> decision(std::string_view where, const MatrixRef<T>& X) const {
    validation::check_fitted(where, fitted_);
    validation::check_n_features(where, coef_d_.cols(), X.cols());
    validation::check_finite(where, "X", X);
    Matrix<double> z = X.template cast<double>() * coef_d_.transpose();
    z.rowwise() += intercept_d_.transpose();
    return z;
  }

  /// log P(c | x) in double: log-sigmoid for two classes, log-softmax otherwise.
  Matrix<double> log_proba(std::string_view where, const MatrixRef<T>& X) const {
    Matrix<double> z = decision(where, X);
    if (z.cols() == 1) {
      Matrix<double> out(z.rows(), 2);
      for (index_t i = 0; i < z.rows(); ++i) {
        out(i, 0) = -onelearn::detail::softplus(z(i, 0));
        out(i, 1) = -onelearn::detail::softplus(-z(i, 0));
      }
      return out;
    }
    return onelearn::detail::log_softmax(std::move(z));
  }

  Exec exec_;
  Space space_;
  Labels classes_;
  Matrix<double> coef_d_;  // what predictions use, in double whatever T is
  Vector<double> intercept_d_;
  Matrix<T> coef_;
  Vector<T> intercept_;
  index_t n_iter_ = 0;
  bool converged_ = false;
  bool fitted_ = false;
};

}  // namespace onelearn::linear_model
