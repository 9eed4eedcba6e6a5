#pragma once
/**
 * \class onelearn::linear_model::SGDClassifier
 * \brief A linear classifier fitted by stochastic gradient descent, as scikit-learn's
 * SGDClassifier.
 * \ingroup estimators
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/linear_model/sgd_classifier.hpp>
 *
 * onelearn::linear_model::SGDClassifier<double> sgd({.loss = "log_loss", .random_state = 3});
 * sgd.fit(X_train, y_train);                           // y_train: onelearn::Labels, any values
 * onelearn::Labels predicted = sgd.predict(X_test);    // values taken from sgd.classes()
 * onelearn::Matrix<double> proba = sgd.predict_proba(X_test);  // log_loss, modified_huber only
 * double accuracy = sgd.score(X_test, y_test);
 *
 * // Out of core: one epoch per call; the first call names every class.
 * onelearn::linear_model::SGDClassifier<double> online;
 * online.partial_fit(X_batch, y_batch, all_classes);
 * online.partial_fit(X_next, y_next);
 *
 * // Data-parallel (synchronous model averaging, see below): each rank passes its own rows.
 * onelearn::exec::mpi policy{comm};  // the application's communicator
 * onelearn::linear_model::SGDClassifier<double, onelearn::exec::mpi> dist({}, policy);
 * dist.fit(my_X, my_y);
 * \endcode
 *
 * linear_model::SGDClassifier: a linear classifier fitted by stochastic gradient descent, as
 * scikit-learn's SGDClassifier (1.2.1, dense data, average=False). It minimises
 *
 *     Σ_i w_i L(y_i, x_iᵀ coef + intercept) + alpha R(coef)
 *
 * with one update per sample (sklearn/linear_model/_sgd_fast.pyx, _plain_sgd): each step
 * shrinks the weights by the L2 part of the penalty, moves them by -eta dL/dp x_i, and applies
 * the L1 part with the cumulative truncated gradient. With more than two classes it fits one
 * binary problem per class (one-vs-rest, class c against the others as +1/-1); with two, one
 * problem whose positive class is classes()(1).
 *
 * Learning rates (t counts updates from 1, as scikit-learn's t_):
 * - "optimal" (default): eta = 1 / (alpha (t0 + t - 1)), with scikit-learn's heuristic t0 =
 *   1 / (eta_init alpha), eta_init = typw / max(1, dloss(-typw, 1)), typw = sqrt(1/sqrt(alpha)).
 * - "constant": eta = eta0.  "invscaling": eta = eta0 / t^power_t.
 * - "adaptive": eta = eta0, divided by 5 each time n_iter_no_change epochs in a row fail to
 *   improve the training loss by tol · n_samples; the fit stops when eta <= 1e-6.
 * The other rates stop after n_iter_no_change such epochs, or after max_iter epochs.
 *
 * Method: the weights are kept in double whatever T is (scikit-learn converts X to float64);
 * the L2 shrink is a scale factor folded back into the weights at the end of every epoch.
 * All one-vs-rest problems run epoch by epoch together, sharing each epoch's sample order, and
 * each stops on its own, as scikit-learn's independent fits do; n_iter() is the largest count.
 *
 * Distributed (exec::mpi), synchronous model averaging: exact per-sample SGD cannot be split
 * across ranks, so each rank runs one epoch over its own rows from the same weights, then the
 * weights, intercepts (and L1 accumulators) are averaged, weighted by each rank's row count,
 * and the epoch losses summed, in one all-reduce of k·(p + 3) doubles per epoch (k·(2p + 3)
 * with an L1 part). The stopping test uses the summed loss, so all ranks stop together and end
 * with the same model. Within an epoch a rank's update count runs over its own rows; t()
 * advances by the total row count per epoch. Each rank shuffles its own rows, seeded with
 * random_state ^ (rank · 0x9E3779B97F4A7C15). With one rank this is the exec::local fit bit for
 * bit; with more it is a different (averaged) estimate, not the one-process fit on the
 * concatenated rows. partial_fit's classes must be the same on every rank (checked: a
 * shape_error otherwise).
 *
 * \par Parameters (SGDClassifierParams)
 * - `loss` (string, default "hinge"): "hinge", "log_loss", "modified_huber", "squared_hinge"
 *   or "perceptron".
 * - `penalty` (string, default "l2"): "l2", "l1", "elasticnet" or "none" (scikit-learn's None).
 * - `alpha` (double, default 1e-4): penalty strength, >= 0 (> 0 with "optimal").
 * - `l1_ratio` (double, default 0.15): L1 share of "elasticnet", in [0, 1].
 * - `fit_intercept` (bool, default true).
 * - `max_iter` (int, default 1000): epochs at most, >= 1.
 * - `tol` (double, default 1e-3): an epoch improves when its loss sum is below the best so far
 *   minus tol · n_samples; -infinity stands for scikit-learn's None (never stop early).
 * - `shuffle` (bool, default true): a new random order of the rows every epoch.
 * - `random_state` (uint64, default 0): seed of the shuffling (std::mt19937_64).
 * - `learning_rate` (string, default "optimal"): "optimal", "constant", "invscaling",
 *   "adaptive".
 * - `eta0` (double, default 0): initial rate, > 0 unless learning_rate is "optimal".
 * - `power_t` (double, default 0.5): exponent of "invscaling".
 * - `n_iter_no_change` (int, default 5): epochs without improvement before stopping, >= 1.
 * - `verbose` (int, default 0): >= 1 logs (core/log.hpp's sink; rank 0 only) one line per
 *   epoch, "SGDClassifier: epoch 3/1000: average loss 0.234567, 2 of 3 problems running;
 *   elapsed 0.01s, remaining <= 2.1s" (the time left is a bound: the stopping test usually
 *   ends the fit sooner), and after fit one line saying why it stopped. Not compared across
 *   ranks: `verbose = rank == 0` is fine.
 *
 * \par Attributes (after fit or partial_fit)
 * - `coef()` (Matrix<T>, 1 x p for two classes, k x p otherwise): scikit-learn's coef_.
 * - `intercept()` (Vector<T>, 1 or k): scikit-learn's intercept_.
 * - `classes()` (Labels, k): sorted class labels (of every rank, or as given to partial_fit).
 * - `n_iter()`: epochs of the last fit or partial_fit (the largest over the problems).
 * - `t()`: scikit-learn's t_, 1 + the number of updates, n_iter · n_samples per fit.
 * - `n_features_in()`.
 *
 * \par Differences from scikit-learn
 * - Shuffling draws a fresh Fisher-Yates permutation per epoch from std::mt19937_64 (the same
 *   for every one-vs-rest problem): the sample order cannot match scikit-learn's, so shuffled
 *   fits agree with scikit-learn's in quality, not number for number. With shuffle = false the
 *   order is the same and the coefficients agree to rounding (tested to 1e-10).
 * - n partial_fit calls equal a fit with max_iter = n and tol = -inf (as in scikit-learn, for
 *   "none" and "l2" penalties: each call restarts the L1 accumulators), shuffled or not.
 * - Not supported: average, early_stopping/validation_fraction, class_weight, warm_start,
 *   coef_init/intercept_init, n_jobs, the regression losses and "pa1"/"pa2".
 * - verbose prints other lines than scikit-learn's (see Parameters), one per epoch for all the
 *   one-vs-rest problems together.
 * - No ConvergenceWarning when max_iter is reached: compare n_iter() with max_iter.
 * - Distributed fits average per-epoch models (above).
 *
 * Errors: `not_fitted_error` before fit; `shape_error` for y or sample_weight of the wrong
 * length, X with other features than in fit, or ranks that disagree on the number of features
 * or on partial_fit's classes; `invalid_argument` for NaN/Inf, negative weights, no samples,
 * fewer than two classes, parameters out of range or unknown, partial_fit without classes on
 * the first call, with other classes later or with a label not in classes, predict_proba with
 * a loss other than log_loss/modified_huber (scikit-learn's AttributeError), and weights that
 * overflow. Under exec::mpi every error in fit is raised on every rank.
 */

#include <algorithm>
#include <array>
#include <cmath>
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
#include "onelearn/base/labels.hpp"
#include "onelearn/base/score.hpp"
#include "onelearn/core/dataset.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/linear_model/detail/sgd.hpp"

namespace onelearn::linear_model {

struct SGDClassifierParams {
  std::string loss = "hinge";      ///< hinge, log_loss, modified_huber, squared_hinge, perceptron
  std::string penalty = "l2";      ///< l2, l1, elasticnet or none
  double alpha = 1e-4;             ///< penalty strength, >= 0
  double l1_ratio = 0.15;          ///< L1 share of elasticnet, in [0, 1]
  bool fit_intercept = true;       ///< fit an intercept or force it to 0
  std::int64_t max_iter = 1000;    ///< epochs at most, >= 1
  double tol = 1e-3;               ///< stopping tolerance; -inf never stops early
  bool shuffle = true;             ///< a new random sample order every epoch
  std::uint64_t random_state = 0;  ///< seed of the shuffling
  std::string learning_rate = "optimal";  ///< optimal, constant, invscaling or adaptive
  double eta0 = 0.0;                      ///< initial rate, > 0 unless optimal
  double power_t = 0.5;                   ///< exponent of invscaling
  std::int64_t n_iter_no_change = 5;      ///< epochs without improvement before stopping
  std::int64_t verbose = 0;               ///< >= 1: a progress line per epoch (rank 0)

  static constexpr std::array<std::string_view, 14> names{"loss",
                                                          "penalty",
                                                          "alpha",
                                                          "l1_ratio",
                                                          "fit_intercept",
                                                          "max_iter",
                                                          "tol",
                                                          "shuffle",
                                                          "random_state",
                                                          "learning_rate",
                                                          "eta0",
                                                          "power_t",
                                                          "n_iter_no_change",
                                                          "verbose"};
};

template <class T, exec::ExecutionPolicy Exec = exec::local>
class SGDClassifier : public WithParams<SGDClassifier<T, Exec>, SGDClassifierParams> {
 public:
  using value_type = T;
  using Params = SGDClassifierParams;

  explicit SGDClassifier(const Params& params = {}, Exec exec = {})
      : WithParams<SGDClassifier, Params>(params), exec_(std::move(exec)) {}

  SGDClassifier& fit(const MatrixRef<T>& X, const LabelsRef& y) {
    return fit_impl(X, y, std::nullopt);
  }

  SGDClassifier& fit(const MatrixRef<T>& X, const LabelsRef& y, const VectorRef<T>& sample_weight) {
    return fit_impl(X, y, sample_weight);
  }

  /// Fits on a Dataset's features and labels, with its sample weights when it has them.
  SGDClassifier& fit(const ClassificationDataset<T>& data) {
    return onelearn::detail::fit_dataset(*this, data);
  }

  /// One epoch over X. The first call (on an unfitted model) must name every class; later
  /// calls may repeat the same classes or leave them out.
  SGDClassifier& partial_fit(const MatrixRef<T>& X, const LabelsRef& y) {
    return partial_fit_impl(X, y, std::nullopt, std::nullopt);
  }

  SGDClassifier& partial_fit(const MatrixRef<T>& X, const LabelsRef& y, const LabelsRef& classes) {
    return partial_fit_impl(X, y, Labels(classes), std::nullopt);
  }

  SGDClassifier& partial_fit(const MatrixRef<T>& X, const LabelsRef& y, const LabelsRef& classes,
                             const VectorRef<T>& sample_weight) {
    return partial_fit_impl(X, y, Labels(classes), sample_weight);
  }

  /// x·coef + intercept: n x 1 with two classes (positive: classes()(1)), n x k otherwise.
  [[nodiscard]] Matrix<T> decision_function(const MatrixRef<T>& X) const {
    return scores("SGDClassifier.decision_function", X).template cast<T>();
  }

  /// The class of the largest score (two classes: classes()(1) where the score is > 0).
  [[nodiscard]] Labels predict(const MatrixRef<T>& X) const {
    return onelearn::detail::decision_labels(classes_, scores("SGDClassifier.predict", X));
  }

  /// Class probabilities, n x k in the order of classes(): log_loss gives the logistic of each
  /// score (one-vs-rest ones normalised to sum 1), modified_huber (clip(score, -1, 1) + 1) / 2,
  /// normalised likewise (uniform where all are 0). Other losses have no probabilities.
  [[nodiscard]] Matrix<T> predict_proba(const MatrixRef<T>& X) const {
    return proba("SGDClassifier.predict_proba", X).template cast<T>();
  }

  /// log of predict_proba (-inf where modified_huber gives a hard 0).
  [[nodiscard]] Matrix<T> predict_log_proba(const MatrixRef<T>& X) const {
    return proba("SGDClassifier.predict_log_proba", X).array().log().matrix().template cast<T>();
  }

  /// Accuracy of predict(X) against y. With a distributed policy it is collective: each rank
  /// passes its own rows and every rank gets the accuracy over all of them.
  [[nodiscard]] T score(const MatrixRef<T>& X, const LabelsRef& y) const {
    return onelearn::detail::collective_score("SGDClassifier.score", *this, X, y);
  }

  [[nodiscard]] const Matrix<T>& coef() const {
    return validation::fitted_attribute("SGDClassifier.coef", fitted_, coef_);
  }
  [[nodiscard]] const Vector<T>& intercept() const {
    return validation::fitted_attribute("SGDClassifier.intercept", fitted_, intercept_);
  }
  [[nodiscard]] const Labels& classes() const {
    return validation::fitted_attribute("SGDClassifier.classes", fitted_, classes_);
  }
  [[nodiscard]] std::int64_t n_iter() const {
    return validation::fitted_attribute("SGDClassifier.n_iter", fitted_, n_iter_);
  }
  /// scikit-learn's t_: 1 + the number of updates made, counted over all rows of all ranks.
  [[nodiscard]] double t() const {
    return validation::fitted_attribute("SGDClassifier.t", fitted_, t_);
  }
  [[nodiscard]] index_t n_features_in() const {
    return validation::fitted_attribute("SGDClassifier.n_features_in", fitted_, coef_.cols());
  }
  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }

 private:
  /// The settings of this->params_, or an invalid_argument naming the bad parameter.
  detail::SgdSettings settings(std::string_view where) const {
    static constexpr std::array<std::string_view, 5> loss_names{
        "hinge", "log_loss", "modified_huber", "squared_hinge", "perceptron"};
    static constexpr std::array<detail::sgd_loss, 5> losses{
        detail::sgd_loss::hinge, detail::sgd_loss::log_loss, detail::sgd_loss::modified_huber,
        detail::sgd_loss::squared_hinge, detail::sgd_loss::perceptron};
    const detail::SgdLoss loss{detail::parse_option<detail::sgd_loss>(
                                   where, "loss", this->params_.loss, loss_names, losses),
                               0.0};
    return detail::common_settings(where, this->params_, loss);
  }

  SGDClassifier& fit_impl(const MatrixRef<T>& X, const LabelsRef& y,
                          const std::optional<VectorRef<T>>& weights) {
    constexpr std::string_view where = "SGDClassifier.fit";
    onelearn::detail::check_same_params(where, this->exec_, this->params_);
    fitted_ = false;
    detail::SgdSettings s;
    exec_.propagate_errors([&] {
      s = settings(where);
      validation::check_same_length(where, "y", X.rows(), y.size());
    });
    const std::int64_t n_total = checked_rows(where, X, weights);
    Labels classes = onelearn::detail::gather_classes(exec_, y);
    exec_.propagate_errors([&] { check_class_count(where, classes); });
    const std::vector<index_t> class_of = onelearn::detail::class_indices(where, classes, y);

    std::vector<detail::SgdProblem> problems(
        classes.size() == 2 ? 1 : static_cast<std::size_t>(classes.size()));
    for (auto& problem : problems) problem.w = Vector<double>::Zero(X.cols());
    std::mt19937_64 engine(detail::rank_seed(this->params_.random_state, exec_.rank()));
    const detail::SgdProgress progress("SGDClassifier", this->params_.verbose, exec_, s.max_iter,
                                       problems.size());
    const std::int64_t n_iter =
        run(where, s, X, class_of, weights, problems, s.max_iter, n_total, 1.0, engine, progress);
    progress.finish(n_iter);
    commit(std::move(classes), std::move(problems), std::move(engine), n_iter,
           1.0 + static_cast<double>(n_iter) * static_cast<double>(n_total));
    return *this;
  }

  SGDClassifier& partial_fit_impl(const MatrixRef<T>& X, const LabelsRef& y,
                                  std::optional<Labels> classes,
                                  const std::optional<VectorRef<T>>& weights) {
    constexpr std::string_view where = "SGDClassifier.partial_fit";
    onelearn::detail::check_same_params(where, this->exec_, this->params_);
    const bool first = !fitted_;
    detail::SgdSettings s;
    std::vector<index_t> class_of;
    if (classes) {
      std::sort(classes->begin(), classes->end());
      classes->conservativeResize(std::unique(classes->begin(), classes->end()) - classes->begin());
    }
    exec_.propagate_errors([&] {
      s = settings(where);
      validation::check_same_length(where, "y", X.rows(), y.size());
      if (first && !classes) {
        throw invalid_argument(std::string(where) + ": expected the list of all classes on " +
                               "the first call to partial_fit, found none");
      }
      if (!first) validation::check_n_features(where, coef_.cols(), X.cols());
      if (!first && classes && (classes->size() != classes_.size() || *classes != classes_)) {
        throw invalid_argument(std::string(where) + ": expected the same classes as on the " +
                               "first call (" + onelearn::detail::labels_text(classes_) +
                               "), found " + onelearn::detail::labels_text(*classes));
      }
      const Labels& known = classes ? *classes : classes_;
      if (first) check_class_count(where, known);
      class_of = onelearn::detail::class_indices(where, known, y);
    });
    const std::int64_t n_total = checked_rows(where, X, weights);
    Labels known = classes ? *classes : classes_;
    if (first) {
      exec_.check_same_shape(
          "the classes passed to partial_fit",
          std::span<const std::int64_t>(known.data(), static_cast<std::size_t>(known.size())));
    }

    std::vector<detail::SgdProblem> problems;
    std::mt19937_64 engine;
    double t = 1.0;
    if (first) {
      problems.resize(known.size() == 2 ? 1 : static_cast<std::size_t>(known.size()));
      for (auto& problem : problems) problem.w = Vector<double>::Zero(X.cols());
      engine.seed(detail::rank_seed(this->params_.random_state, exec_.rank()));
    } else {
      problems = problems_;
      engine = engine_;
      t = t_;
    }
    const detail::SgdProgress progress("SGDClassifier.partial_fit", this->params_.verbose, exec_, 1,
                                       problems.size());
    const std::int64_t n_iter =
        run(where, s, X, class_of, weights, problems, 1, n_total, t, engine, progress);
    commit(std::move(known), std::move(problems), std::move(engine), n_iter,
           t + static_cast<double>(n_iter) * static_cast<double>(n_total));
    return *this;
  }

  /// Validates X and the weights (on every rank alike) and returns the row count of all ranks.
  std::int64_t checked_rows(std::string_view where, const MatrixRef<T>& X,
                            const std::optional<VectorRef<T>>& weights) const {
    exec_.propagate_errors([&] {
      if (X.cols() < 1) {
        throw invalid_argument(std::string(where) + ": expected at least one feature, found 0");
      }
    });
    onelearn::detail::check_fit_input<T>(where, exec_, X, std::nullopt, weights);
    std::array<std::int64_t, 1> n_total{static_cast<std::int64_t>(X.rows())};
    exec_.allreduce(std::span(n_total), exec::reduce_op::sum);
    if (n_total[0] == 0) {
      throw invalid_argument(std::string(where) + ": expected at least one sample, found 0");
    }
    return n_total[0];
  }

  static void check_class_count(std::string_view where, const Labels& classes) {
    if (classes.size() >= 2) return;
    throw invalid_argument(std::string(where) + ": expected at least 2 classes, found " +
                           std::to_string(classes.size()));
  }

  /// The binary problems on these rows: one-vs-rest targets ±1 from the rows' class indices.
  std::int64_t run(std::string_view where, const detail::SgdSettings& s, const MatrixRef<T>& X,
                   const std::vector<index_t>& class_of, const std::optional<VectorRef<T>>& weights,
                   std::vector<detail::SgdProblem>& problems, std::int64_t max_epochs,
                   std::int64_t n_total, double t, std::mt19937_64& engine,
                   const detail::SgdProgress& progress) const {
    // Two classes: one problem, whose positive class is the second.
    const bool binary = problems.size() == 1;
    auto target_of = [&](std::size_t c, index_t i) {
      const index_t positive = binary ? 1 : static_cast<index_t>(c);
      return class_of[static_cast<std::size_t>(i)] == positive ? 1.0 : -1.0;
    };
    return detail::sgd_run<T>(where, exec_, s, X, target_of, weights, problems, max_epochs, t,
                              n_total, engine, progress);
  }

  void commit(Labels classes, std::vector<detail::SgdProblem> problems, std::mt19937_64 engine,
              std::int64_t n_iter, double t) {
    const auto k = static_cast<index_t>(problems.size());
    const index_t p = problems.front().w.size();
    coef_d_.resize(k, p);
    intercept_d_.resize(k);
    for (index_t c = 0; c < k; ++c) {
      coef_d_.row(c) = problems[static_cast<std::size_t>(c)].w.transpose();
      intercept_d_(c) = problems[static_cast<std::size_t>(c)].intercept;
    }
    coef_ = coef_d_.cast<T>();
    intercept_ = intercept_d_.cast<T>();
    classes_ = std::move(classes);
    problems_ = std::move(problems);
    engine_ = engine;
    n_iter_ = n_iter;
    t_ = t;
    fitted_ = true;
  }

  /// X coefᵀ + intercept in double: n x (1 or k).
  Matrix<double> scores(std::string_view where, const MatrixRef<T>& X) const {
    validation::check_fitted(where, fitted_);
    validation::check_n_features(where, coef_d_.cols(), X.cols());
    validation::check_finite(where, "X", X);
    Matrix<double> out = X.template cast<double>() * coef_d_.transpose();
    out.rowwise() += intercept_d_.transpose();
    return out;
  }

  Matrix<double> proba(std::string_view where, const MatrixRef<T>& X) const {
    const std::string& loss = this->params_.loss;
    if (loss != "log_loss" && loss != "modified_huber") {
      throw invalid_argument(std::string(where) + ": expected loss 'log_loss' or " +
                             "'modified_huber' (probability estimates need one of them), " +
                             "found '" + loss + "'");
    }
    Matrix<double> s = scores(where, X);
    if (loss == "log_loss") {
      s = (1.0 + (-s.array()).exp()).inverse().matrix();
    } else {
      s = (s.array().max(-1.0).min(1.0) + 1.0) / 2.0;
    }
    if (s.cols() == 1) {
      Matrix<double> out(s.rows(), 2);
      out.col(0) = 1.0 - s.col(0).array();
      out.col(1) = s.col(0);
      return out;
    }
    for (index_t i = 0; i < s.rows(); ++i) {
      const double sum = s.row(i).sum();
      // modified_huber can give every class 0: scikit-learn makes those rows uniform.
      if (sum == 0) {
        s.row(i).setConstant(1.0 / static_cast<double>(s.cols()));
      } else {
        s.row(i) /= sum;
      }
    }
    return s;
  }

  Exec exec_;
  Labels classes_;
  std::vector<detail::SgdProblem> problems_;  // what partial_fit continues from
  std::mt19937_64 engine_;                    // ditto: the shuffling stream
  Matrix<double> coef_d_;                     // what predictions use, in double whatever T is
  Vector<double> intercept_d_;
  Matrix<T> coef_;
  Vector<T> intercept_;
  std::int64_t n_iter_ = 0;
  double t_ = 1.0;
  bool fitted_ = false;
};

}  // namespace onelearn::linear_model
