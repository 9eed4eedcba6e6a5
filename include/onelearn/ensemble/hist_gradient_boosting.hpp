#pragma once
/**
 * \class onelearn::ensemble::HistGradientBoostingClassifier
 * \brief Histogram-based gradient-boosted trees, as scikit-learn's HistGradientBoostingClassifier
 * and Regressor.
 * \ingroup estimators
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/ensemble/hist_gradient_boosting.hpp>
 * #include <onelearn/space/space.hpp>                // only for another compute space
 *
 * onelearn::ensemble::HistGradientBoostingClassifier<double> clf({.max_iter = 200});
 * clf.fit(X_train, y_train);                         // y_train: onelearn::Labels; NaN in X: missing
 * onelearn::Labels predicted = clf.predict(X_test);
 * onelearn::Matrix<double> proba = clf.predict_proba(X_test);  // n x n_classes
 * double accuracy = clf.score(X_test, y_test);
 *
 * onelearn::ensemble::HistGradientBoostingRegressor<double> reg({.learning_rate = 0.05});
 * reg.fit(X, targets);                               // targets: onelearn::Vector<double>
 * double r2 = reg.score(X_test, targets_test);
 *
 * // Data-parallel: each rank passes its own rows (any number, none included); every rank ends
 * // with the same trees as one process fitted on the concatenated rows.
 * onelearn::exec::mpi policy{comm};
 * onelearn::ensemble::HistGradientBoostingClassifier<double, onelearn::exec::mpi> dist({}, policy);
 * dist.fit(my_X, my_y);
 *
 * // In a compute space (space/space.hpp): the histograms and the rows' partitions there.
 * #if defined(ONELEARN_SPACE_HAVE_OMP)
 * onelearn::ensemble::HistGradientBoostingClassifier<double, onelearn::exec::local,
 *                                                    onelearn::space::thrust_omp> threaded;
 * threaded.fit(X_train, y_train);                    // the host's trees, on Thrust's threads
 * #endif
 * \endcode
 *
 * ensemble::HistGradientBoostingClassifier / HistGradientBoostingRegressor: histogram-based
 * gradient-boosted trees, as scikit-learn 1.2.1's estimators of the same names (LightGBM's
 * design). Features are binned into at most max_bins quantile bins (plus one bin for missing
 * values); each iteration fits one tree (regression, binary classification) or one per class
 * (multiclass) to the gradients and hessians of the loss, growing it leaf-wise on gradient
 * histograms; leaf values are -G / (H + l2_regularization) times the learning rate.
 *
 * Method: scikit-learn's algorithm step by step, so that the same data give the same model:
 * the same bin thresholds (detail/binning.hpp, equal to the bit below 200000 rows), the same
 * split search and gain (detail/hist_split.hpp), the same growth order (detail/hist_grower.hpp),
 * the same losses and baselines (detail/hist_losses.hpp), gradients stored in float as there.
 * Missing values (NaN) go to the missing-values bin; each split learns whether they go left or
 * right, and when no training row of the feature was missing they go to the child that got
 * more rows. Distributed: bin thresholds are computed from every rank's rows (one alltoallv
 * brings each feature's values, of every row or of a hashed subsample of about 200000 of them,
 * to the rank that bins it; the thresholds are all-gathered), the baseline and loss sums are
 * all-reduced. Each rank owns a block of the features: a histogram built (the root's and, per
 * split, the smaller child's; the other child's is the parent's minus it) is reduce-scattered,
 * each rank getting the sums of its own features, and each rank's best splits of its features
 * (of both children at once) are all-gathered, every rank taking the best (LightGBM's
 * data-parallel histograms). So every rank grows the same trees with one reduce-scatter of
 * p x bins x 4 doubles and one all-gather of up to two splits per rank per split (bins: the
 * most non-missing bins of any feature, + 1 for missing values; at most max_bins + 1; 4:
 * gradients, hessians, count and a padding slot that makes a bin one SIMD add,
 * core/detail/histogram_layout.hpp). Histograms are built feature by feature on OpenMP threads
 * (core/detail/parallel.hpp), bins stored as uint8.
 *
 * Compute space (third template argument, `space::host` by default): where the two passes over
 * a node's rows run, the gradient histogram and the split's partition of the rows
 * (detail/hist_node_rows.hpp); the binning, the losses' gradients, the split search and
 * predictions stay on the host. `thrust_omp` and `thrust_tbb` run the host's code on their own
 * threads (the host's trees bit for bit); `thrust_cuda` keeps the binned rows (copied once per
 * fit) and the row order on the device, takes each tree's gradients there and brings back each
 * histogram (p x bins x 4 doubles) and, per tree, the row order; its histograms add
 * a bin's gradients in chunks of rows, so the leaf values round apart from the host's (1e-15
 * relative per tree). `thrust_cpp` runs the device's kernels on one CPU thread.
 *
 * \par Parameters (HistGradientBoosting{Classifier,Regressor}Params)
 * - `loss` (string): "log_loss" (classifier) or "squared_error" (regressor), the only ones.
 * - `learning_rate` (double, 0.1): shrinkage of the leaf values, > 0.
 * - `max_iter` (int, 100): boosting iterations, >= 1.
 * - `max_leaf_nodes` (int, 31): leaves per tree at most, >= 2; 0 = no limit (scikit-learn's None).
 * - `max_depth` (int, 0): depth of a tree at most (the root has depth 0); 0 = no limit (None).
 * - `min_samples_leaf` (int, 20): rows of a leaf at least.
 * - `l2_regularization` (double, 0): added to the hessian sums of the leaf values, >= 0.
 * - `max_bins` (int, 255): bins of non-missing values per feature, in [2, 255].
 * - `categorical_features` (string, ""): "" (None) or a mask of one '0'/'1' per feature. A
 *   categorical feature holds integer categories in [0, max_bins) or NaN; each category is a
 *   bin, and a split sends a set of categories left (scikit-learn's: categories of hessian sum
 *   >= 10 sorted by G / (H + 10), a prefix or suffix of that order to the left, the rest and the
 *   rare ones to the right; NaN is one more category when training had missing values). At
 *   predict time a value that is not a category seen in fit goes where missing values go.
 * - `early_stopping` (string, "auto"): "true", "false", or "auto" (on above 10000 rows).
 * - `scoring` (string, "loss"): the early-stopping score, the loss only.
 * - `validation_fraction` (double, 0.1): share of rows held out for early stopping, in [0, 1);
 *   0 scores the training rows (scikit-learn's None).
 * - `n_iter_no_change` (int, 10), `tol` (double, 1e-7): stop when none of the last
 *   n_iter_no_change scores beats the score before them by more than tol.
 * - `random_state` (uint64, 0): seeds the early-stopping split and the binning subsample.
 *
 * \par Attributes (after fit)
 * - `n_iter()`: iterations run (max_iter unless early stopping stopped it).
 * - `n_trees_per_iteration()`: 1, or the number of classes for a multiclass classifier.
 * - `train_score()`, `validation_score()` (Vector<T>): -loss after the baseline and after each
 *   iteration, when early stopping is on (empty otherwise; validation_score also empty when
 *   validation_fraction is 0).
 * - `classes()` (classifier): the sorted labels of every rank. `n_features_in()`.
 * - `bin_thresholds()`: per feature, the increasing bin thresholds (scikit-learn's
 *   _bin_mapper.bin_thresholds_).
 *
 * \par Differences from scikit-learn
 * - Categorical values must be integers in [0, max_bins) in fit (scikit-learn takes negative
 *   or fractional ones and truncates them inconsistently); at predict time a fractional, negative
 *   or too large value is an unknown category (scikit-learn truncates a fractional one). The
 *   mask is the only way to name categorical features (no indices, no names).
 * - No monotonic_cst, interaction_cst, warm_start, verbose,
 *   class_weight, staged predictions, scoring other than "loss"; max_depth, max_leaf_nodes and
 *   validation_fraction use 0 for None, early_stopping and categorical_features are strings.
 * - The early-stopping split draws its rows from a hash of each row's global index and
 *   random_state (stratified by class for the classifier, ceil(fraction · n) rows as there), not
 *   with numpy's RNG: it is another random split, but the same on any number of ranks.
 * - Above 200000 rows the binning subsample is another random sample (see binning.hpp).
 *
 * Errors: `not_fitted_error` before fit; `shape_error` for y or sample_weight of the wrong
 * length, a categorical mask of the wrong length, X with other features than in fit, or ranks
 * that disagree on the number of features; `invalid_argument` for infinity in X, a categorical
 * value that is not an integer in [0, max_bins), non-finite y
 * (regressor), negative or non-finite sample weights, a zero total weight, fewer than 2
 * classes (classifier), no samples, and parameters out of range. Under exec::mpi every error in
 * fit is raised on every rank.
 */

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/base/agreement.hpp"
#include "onelearn/base/labels.hpp"
#include "onelearn/base/score.hpp"
#include "onelearn/core/dataset.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/ensemble/detail/hist_booster.hpp"
#include "onelearn/ensemble/detail/hist_input.hpp"
#include "onelearn/ensemble/detail/hist_params.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/metrics/r2_score.hpp"
#include "onelearn/space/concept.hpp"
#include "onelearn/space/host_space.hpp"

namespace onelearn::ensemble {

struct HistGradientBoostingClassifierParams {
  std::string loss = "log_loss";           ///< the only loss: binary or multinomial log loss
  double learning_rate = 0.1;              ///< shrinkage of the leaf values
  std::int64_t max_iter = 100;             ///< boosting iterations
  std::int64_t max_leaf_nodes = 31;        ///< leaves per tree at most; 0: no limit
  std::int64_t max_depth = 0;              ///< depth at most; 0: no limit
  std::int64_t min_samples_leaf = 20;      ///< rows per leaf at least
  double l2_regularization = 0;            ///< added to the leaves' hessian sums
  std::int64_t max_bins = 255;             ///< non-missing bins per feature, 2..255
  std::string categorical_features = "";   ///< "" or one '0'/'1' per feature
  std::string early_stopping = "auto";     ///< "auto" (on above 10000 rows), "true", "false"
  std::string scoring = "loss";            ///< early-stopping score: "loss"
  double validation_fraction = 0.1;        ///< held-out share for early stopping; 0: none
  std::int64_t n_iter_no_change = 10;      ///< scores without improvement before stopping
  double tol = 1e-7;                       ///< the improvement that counts
  std::uint64_t random_state = 0;          ///< seed of the split and the binning subsample

  static constexpr std::array<std::string_view, 15> names{
      "loss",           "learning_rate",        "max_iter",       "max_leaf_nodes",
      "max_depth",      "min_samples_leaf",     "l2_regularization", "max_bins",
      "categorical_features", "early_stopping", "scoring",        "validation_fraction",
      "n_iter_no_change",     "tol",            "random_state"};
};

struct HistGradientBoostingRegressorParams {
  std::string loss = "squared_error";      ///< the only loss
  double learning_rate = 0.1;              ///< shrinkage of the leaf values
  std::int64_t max_iter = 100;             ///< boosting iterations
  std::int64_t max_leaf_nodes = 31;        ///< leaves per tree at most; 0: no limit
  std::int64_t max_depth = 0;              ///< depth at most; 0: no limit
  std::int64_t min_samples_leaf = 20;      ///< rows per leaf at least
  double l2_regularization = 0;            ///< added to the leaves' hessian sums
  std::int64_t max_bins = 255;             ///< non-missing bins per feature, 2..255
  std::string categorical_features = "";   ///< "" or one '0'/'1' per feature
  std::string early_stopping = "auto";     ///< "auto" (on above 10000 rows), "true", "false"
  std::string scoring = "loss";            ///< early-stopping score: "loss"
  double validation_fraction = 0.1;        ///< held-out share for early stopping; 0: none
  std::int64_t n_iter_no_change = 10;      ///< scores without improvement before stopping
  double tol = 1e-7;                       ///< the improvement that counts
  std::uint64_t random_state = 0;          ///< seed of the split and the binning subsample

  static constexpr std::array<std::string_view, 15> names{
      "loss",           "learning_rate",        "max_iter",       "max_leaf_nodes",
      "max_depth",      "min_samples_leaf",     "l2_regularization", "max_bins",
      "categorical_features", "early_stopping", "scoring",        "validation_fraction",
      "n_iter_no_change",     "tol",            "random_state"};
};

namespace detail {

/// What both estimators check before fitting (collective): parameters, shapes, infinity,
/// sample weights, then the number of rows and the total weight over all ranks.
template <class T, class P, exec::ExecutionPolicy Exec>
std::int64_t check_hist_fit(std::string_view where, const Exec& exec, const P& params,
                            std::string_view loss, const MatrixRef<T>& X, index_t y_size,
                            const std::optional<VectorRef<T>>& weights) {
  onelearn::detail::check_same_params(where, exec, params);
  exec.propagate_errors([&] {
    if (params.loss != loss) {
      throw invalid_argument(std::string(where) + ": expected loss \"" + std::string(loss) +
                             "\" (the only one supported), found \"" + params.loss + "\"");
    }
    check_hist_params(where, params, X.cols());
    validation::check_same_length(where, "y", X.rows(), y_size);
    check_no_infinity<T>(where, X);
    check_category_values<T>(where, X, categorical_mask(params.categorical_features, X.cols()),
                             static_cast<int>(params.max_bins));
    if (weights) {
      validation::check_same_length(where, "sample_weight", X.rows(), weights->size());
      validation::check_sample_weights<T>(where, *weights);
    }
  });
  const std::array<std::int64_t, 1> n_features{X.cols()};
  exec.check_same_shape("the number of features of X", n_features);
  std::array<double, 2> totals{static_cast<double>(X.rows()),
                               weights ? weights->template cast<double>().sum()
                                       : static_cast<double>(X.rows())};
  exec.allreduce(std::span<double>(totals), exec::reduce_op::sum);
  if (totals[0] == 0 || X.cols() == 0) {
    throw invalid_argument(std::string(where) + ": expected at least one sample and one " +
                           "feature, found " + std::to_string(static_cast<long long>(totals[0])) +
                           " x " + std::to_string(X.cols()));
  }
  if (!(totals[1] > 0)) {
    throw invalid_argument(std::string(where) + ": expected a positive total sample_weight, " +
                           "found " + std::to_string(totals[1]));
  }
  return static_cast<std::int64_t>(totals[0]);
}

template <class T>
std::vector<double> weights_of(const std::optional<VectorRef<T>>& weights) {
  std::vector<double> out;
  if (weights) {
    for (index_t i = 0; i < weights->size(); ++i) out.push_back(static_cast<double>((*weights)(i)));
  }
  return out;
}

template <class T>
Vector<T> scores_of(const std::vector<double>& scores) {
  Vector<T> out(static_cast<index_t>(scores.size()));
  for (index_t i = 0; i < out.size(); ++i) out(i) = static_cast<T>(scores[static_cast<std::size_t>(i)]);
  return out;
}

}  // namespace detail

template <class T, exec::ExecutionPolicy Exec = exec::local,
          space::ComputeSpace Space = space::host>
class HistGradientBoostingClassifier
    : public WithParams<HistGradientBoostingClassifier<T, Exec, Space>,
                        HistGradientBoostingClassifierParams> {
 public:
  using value_type = T;
  using Params = HistGradientBoostingClassifierParams;

  using space_type = Space;

  explicit HistGradientBoostingClassifier(const Params& params = {}, Exec exec = {}, Space space = {})
      : WithParams<HistGradientBoostingClassifier, Params>(params), exec_(std::move(exec)), space_(std::move(space)) {}

  HistGradientBoostingClassifier& fit(const MatrixRef<T>& X, const LabelsRef& y) {
    return fit_impl(X, y, std::nullopt);
  }
  HistGradientBoostingClassifier& fit(const MatrixRef<T>& X, const LabelsRef& y,
                                      const VectorRef<T>& sample_weight) {
    return fit_impl(X, y, sample_weight);
  }
  HistGradientBoostingClassifier& fit(const ClassificationDataset<T>& data) {
    return onelearn::detail::fit_dataset(*this, data);
  }

  /// The most probable class of each row (the first of equally probable ones).
  [[nodiscard]] Labels predict(const MatrixRef<T>& X) const {
    return onelearn::detail::argmax_labels(classes_, proba("HistGradientBoostingClassifier.predict", X));
  }

  /// P(class | x): n x n_classes, columns in the order of classes().
  [[nodiscard]] Matrix<T> predict_proba(const MatrixRef<T>& X) const {
    return proba("HistGradientBoostingClassifier.predict_proba", X).template cast<T>();
  }

  /// Raw predictions: n x 1 (log-odds of classes()(1)) for two classes, n x k otherwise.
  [[nodiscard]] Matrix<T> decision_function(const MatrixRef<T>& X) const {
    return raw("HistGradientBoostingClassifier.decision_function", X).template cast<T>();
  }

  /// Accuracy of predict(X) against y, over every rank's rows under a distributed policy.
  [[nodiscard]] T score(const MatrixRef<T>& X, const LabelsRef& y) const {
    return onelearn::detail::collective_score("HistGradientBoostingClassifier.score", *this, X, y);
  }

  [[nodiscard]] const Labels& classes() const {
    return validation::fitted_attribute("HistGradientBoostingClassifier.classes", fitted_, classes_);
  }
  [[nodiscard]] index_t n_iter() const {
    return validation::fitted_attribute("HistGradientBoostingClassifier.n_iter", fitted_,
                                        static_cast<index_t>(booster_.trees.size()));
  }
  [[nodiscard]] index_t n_trees_per_iteration() const {
    return validation::fitted_attribute("HistGradientBoostingClassifier.n_trees_per_iteration",
                                        fitted_, static_cast<index_t>(booster_.baseline.size()));
  }
  [[nodiscard]] const Vector<T>& train_score() const {
    return validation::fitted_attribute("HistGradientBoostingClassifier.train_score", fitted_, train_score_);
  }
  [[nodiscard]] const Vector<T>& validation_score() const {
    return validation::fitted_attribute("HistGradientBoostingClassifier.validation_score", fitted_,
                                        validation_score_);
  }
  [[nodiscard]] const std::vector<std::vector<double>>& bin_thresholds() const {
    return validation::fitted_attribute("HistGradientBoostingClassifier.bin_thresholds", fitted_,
                                        booster_.mapper.thresholds);
  }
  [[nodiscard]] index_t n_features_in() const {
    return validation::fitted_attribute("HistGradientBoostingClassifier.n_features_in", fitted_,
                                        booster_.n_features);
  }
  /// The fitted trees, [iteration][tree of the iteration] (one tree per class for more than
  /// two classes); their leaf values include the learning rate.
  [[nodiscard]] const std::vector<std::vector<detail::HistTree>>& trees() const {
    return validation::fitted_attribute("HistGradientBoostingClassifier.trees", fitted_, booster_.trees);
  }
  /// The raw prediction before any tree, one value per tree of an iteration.
  [[nodiscard]] const std::vector<double>& baseline() const {
    return validation::fitted_attribute("HistGradientBoostingClassifier.baseline", fitted_, booster_.baseline);
  }
  /// A fitted classifier from its trees ([iteration][class tree]: one per iteration for two
  /// classes, one per class otherwise), baseline (one value per tree of an iteration), sorted
  /// classes and number of features, as onnx::to_estimator reads them back. bin_thresholds()
  /// is then empty and train_score()/validation_score() too.
  [[nodiscard]] static HistGradientBoostingClassifier from_fitted(
      const Params& params, std::vector<std::vector<detail::HistTree>> trees,
      std::vector<double> baseline, const Labels& classes, index_t n_features, Exec exec = {}) {
    const std::string where = "HistGradientBoostingClassifier.from_fitted";
    detail::check_hist_params(where, params, n_features);
    if (classes.size() < 2 || baseline.size() != static_cast<std::size_t>(classes.size() == 2 ? 1 : classes.size())) {
      throw invalid_argument(where + ": expected at least 2 classes and one baseline value (two " +
                             "classes) or one per class, found " + std::to_string(classes.size()) +
                             " classes and " + std::to_string(baseline.size()) + " values");
    }
    HistGradientBoostingClassifier out(params, std::move(exec));
    out.booster_ = detail::Booster::from_trees(where, std::move(trees), std::move(baseline), n_features);
    out.classes_ = classes;
    out.fitted_ = true;
    return out;
  }

  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }
  [[nodiscard]] const Space& compute_space() const noexcept { return space_; }

 private:
  HistGradientBoostingClassifier& fit_impl(const MatrixRef<T>& X, const LabelsRef& y,
                                           const std::optional<VectorRef<T>>& weights) {
    constexpr std::string_view where = "HistGradientBoostingClassifier.fit";
    fitted_ = false;
    const std::int64_t n_total =
        detail::check_hist_fit<T>(where, exec_, this->params_, "log_loss", X, y.size(), weights);
    const Labels classes = onelearn::detail::gather_classes(exec_, y);
    if (classes.size() < 2) {
      throw invalid_argument(std::string(where) + ": expected at least 2 classes in y, found " +
                             std::to_string(classes.size()) + ": " +
                             onelearn::detail::labels_text(classes));
    }
    const std::vector<index_t> class_of = onelearn::detail::class_indices(where, classes, y);
    ensemble::detail::HistLoss loss;
    loss.kind = classes.size() == 2 ? ensemble::detail::LossKind::binomial
                                    : ensemble::detail::LossKind::multinomial;
    loss.n_trees = classes.size() == 2 ? 1 : classes.size();
    const std::vector<double> y_index(class_of.begin(), class_of.end());
    booster_.fit<T>(exec_, space_, X, y_index, detail::weights_of<T>(weights), class_of, classes.size(),
                    detail::hist_settings(this->params_, loss, n_total));
    classes_ = classes;
    train_score_ = detail::scores_of<T>(booster_.train_score);
    validation_score_ = detail::scores_of<T>(booster_.validation_score);
    fitted_ = true;
    return *this;
  }

  Matrix<double> raw(std::string_view where, const MatrixRef<T>& X) const {
    validation::check_fitted(where, fitted_);
    validation::check_n_features(where, booster_.n_features, X.cols());
    detail::check_no_infinity<T>(where, X);
    return booster_.raw_predict<T>(X);
  }

  Matrix<double> proba(std::string_view where, const MatrixRef<T>& X) const {
    const Matrix<double> r = raw(where, X);
    if (r.cols() == 1) {
      Matrix<double> out(r.rows(), 2);
      for (index_t i = 0; i < r.rows(); ++i) {
        out(i, 1) = 1.0 / (1.0 + std::exp(-r(i, 0)));
        out(i, 0) = 1.0 - out(i, 1);
      }
      return out;
    }
    return onelearn::detail::log_softmax(r).array().exp().matrix();
  }

  Exec exec_;
  Space space_;
  ensemble::detail::Booster booster_;
  Labels classes_;
  Vector<T> train_score_, validation_score_;
  bool fitted_ = false;
};

template <class T, exec::ExecutionPolicy Exec = exec::local,
          space::ComputeSpace Space = space::host>
class HistGradientBoostingRegressor
    : public WithParams<HistGradientBoostingRegressor<T, Exec, Space>,
                        HistGradientBoostingRegressorParams> {
 public:
  using value_type = T;
  using Params = HistGradientBoostingRegressorParams;

  using space_type = Space;

  explicit HistGradientBoostingRegressor(const Params& params = {}, Exec exec = {}, Space space = {})
      : WithParams<HistGradientBoostingRegressor, Params>(params), exec_(std::move(exec)), space_(std::move(space)) {}

  HistGradientBoostingRegressor& fit(const MatrixRef<T>& X, const VectorRef<T>& y) {
    return fit_impl(X, y, std::nullopt);
  }
  HistGradientBoostingRegressor& fit(const MatrixRef<T>& X, const VectorRef<T>& y,
                                     const VectorRef<T>& sample_weight) {
    return fit_impl(X, y, sample_weight);
  }
  HistGradientBoostingRegressor& fit(const Dataset<T>& data) {
    return onelearn::detail::fit_dataset(*this, data);
  }

  [[nodiscard]] Vector<T> predict(const MatrixRef<T>& X) const {
    constexpr std::string_view where = "HistGradientBoostingRegressor.predict";
    validation::check_fitted(where, fitted_);
    validation::check_n_features(where, booster_.n_features, X.cols());
    detail::check_no_infinity<T>(where, X);
    return booster_.raw_predict<T>(X).col(0).template cast<T>();
  }

  /// R² of predict(X) against y, over every rank's rows under a distributed policy.
  [[nodiscard]] T score(const MatrixRef<T>& X, const VectorRef<T>& y) const {
    constexpr std::string_view where = "HistGradientBoostingRegressor.score";
    Vector<T> predicted;
    exec_.propagate_errors([&] {
      validation::check_same_length(where, "y", X.rows(), y.size());
      predicted = predict(X);
    });
    return metrics::r2_score<T>(y, predicted, exec_);
  }

  [[nodiscard]] index_t n_iter() const {
    return validation::fitted_attribute("HistGradientBoostingRegressor.n_iter", fitted_,
                                        static_cast<index_t>(booster_.trees.size()));
  }
  [[nodiscard]] index_t n_trees_per_iteration() const {
    return validation::fitted_attribute("HistGradientBoostingRegressor.n_trees_per_iteration",
                                        fitted_, index_t{1});
  }
  [[nodiscard]] const Vector<T>& train_score() const {
    return validation::fitted_attribute("HistGradientBoostingRegressor.train_score", fitted_, train_score_);
  }
  [[nodiscard]] const Vector<T>& validation_score() const {
    return validation::fitted_attribute("HistGradientBoostingRegressor.validation_score", fitted_,
                                        validation_score_);
  }
  [[nodiscard]] const std::vector<std::vector<double>>& bin_thresholds() const {
    return validation::fitted_attribute("HistGradientBoostingRegressor.bin_thresholds", fitted_,
                                        booster_.mapper.thresholds);
  }
  [[nodiscard]] index_t n_features_in() const {
    return validation::fitted_attribute("HistGradientBoostingRegressor.n_features_in", fitted_,
                                        booster_.n_features);
  }
  /// The fitted trees, [iteration][tree of the iteration] (one tree per class for more than
  /// two classes); their leaf values include the learning rate.
  [[nodiscard]] const std::vector<std::vector<detail::HistTree>>& trees() const {
    return validation::fitted_attribute("HistGradientBoostingRegressor.trees", fitted_, booster_.trees);
  }
  /// The raw prediction before any tree, one value per tree of an iteration.
  [[nodiscard]] const std::vector<double>& baseline() const {
    return validation::fitted_attribute("HistGradientBoostingRegressor.baseline", fitted_, booster_.baseline);
  }
  /// A fitted regressor from its trees ([iteration][0]), baseline (one value) and number of
  /// features, as onnx::to_estimator reads them back. bin_thresholds() is then empty and
  /// train_score()/validation_score() too.
  [[nodiscard]] static HistGradientBoostingRegressor from_fitted(
      const Params& params, std::vector<std::vector<detail::HistTree>> trees,
      std::vector<double> baseline, index_t n_features, Exec exec = {}) {
    const std::string where = "HistGradientBoostingRegressor.from_fitted";
    detail::check_hist_params(where, params, n_features);
    if (baseline.size() != 1) {
      throw invalid_argument(where + ": expected one baseline value, found " +
                             std::to_string(baseline.size()));
    }
    HistGradientBoostingRegressor out(params, std::move(exec));
    out.booster_ = detail::Booster::from_trees(where, std::move(trees), std::move(baseline), n_features);
    out.fitted_ = true;
    return out;
  }

  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }
  [[nodiscard]] const Space& compute_space() const noexcept { return space_; }

 private:
  HistGradientBoostingRegressor& fit_impl(const MatrixRef<T>& X, const VectorRef<T>& y,
                                          const std::optional<VectorRef<T>>& weights) {
    constexpr std::string_view where = "HistGradientBoostingRegressor.fit";
    fitted_ = false;
    const std::int64_t n_total = detail::check_hist_fit<T>(where, exec_, this->params_,
                                                           "squared_error", X, y.size(), weights);
    exec_.propagate_errors([&] { validation::check_finite(where, "y", y); });
    std::vector<double> target(static_cast<std::size_t>(y.size()));
    for (index_t i = 0; i < y.size(); ++i) target[static_cast<std::size_t>(i)] = static_cast<double>(y(i));
    const std::vector<index_t> group(target.size(), 0);
    booster_.fit<T>(exec_, space_, X, target, detail::weights_of<T>(weights), group, 1,
                    detail::hist_settings(this->params_, ensemble::detail::HistLoss{}, n_total));
    train_score_ = detail::scores_of<T>(booster_.train_score);
    validation_score_ = detail::scores_of<T>(booster_.validation_score);
    fitted_ = true;
    return *this;
  }

  Exec exec_;
  Space space_;
  ensemble::detail::Booster booster_;
  Vector<T> train_score_, validation_score_;
  bool fitted_ = false;
};

}  // namespace onelearn::ensemble
