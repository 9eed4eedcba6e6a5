#pragma once
/**
 * \class onelearn::ensemble::RandomForestClassifier
 * \brief Random forests and extremely randomized trees for classification, as scikit-learn's.
 * \ingroup estimators
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/ensemble/forest_classifier.hpp>
 *
 * onelearn::ensemble::RandomForestClassifier<double> forest(
 *     {.n_estimators = 200, .max_depth = 10, .oob_score = true, .random_state = 0});
 * forest.fit(X_train, y_train);
 * onelearn::Labels predicted = forest.predict(X_test);
 * onelearn::Matrix<double> proba = forest.predict_proba(X_test);
 * double oob = forest.oob_score();
 *
 * onelearn::ensemble::ExtraTreesClassifier<double> extra({.n_estimators = 100});
 *
 * // Rows spread over ranks: every rank passes its own rows; the trees are spread over the
 * // ranks, and every rank ends with the whole forest (the one one process grows).
 * onelearn::ensemble::RandomForestClassifier<double, onelearn::exec::mpi> dist(
 *     {}, onelearn::exec::mpi{comm});
 * \endcode
 *
 * ensemble::RandomForestClassifier and ExtraTreesClassifier, as scikit-learn's (1.2.1): the
 * same parameters and defaults, and with the same random_state the same trees (the same
 * bootstrap samples and feature draws, scikit-learn's random numbers: see
 * ensemble/detail/grow_forest.hpp), so the same predictions. Random forests grow best-split
 * trees on bootstrap samples; extra trees draw one random threshold per candidate feature and,
 * by default, use every row. The trees grow on OpenMP threads from columns sorted once.
 *
 * \par Parameters (RandomForestClassifierParams, ExtraTreesClassifierParams)
 * - `n_estimators` (100): the trees.
 * - the tree parameters of tree::DecisionTreeClassifier: `criterion` ("gini"), `max_depth` (0:
 *   no limit), `min_samples_split` (2), `min_samples_leaf` (1), `min_weight_fraction_leaf` (0),
 *   `max_features` ("sqrt"), `max_leaf_nodes` (0: no limit), `min_impurity_decrease` (0);
 * - `bootstrap` (true for random forests, false for extra trees): each tree on a bootstrap
 *   sample of the rows;
 * - `oob_score` (false): score each row with the trees that did not draw it;
 * - `random_state` (0, below 2^32).
 *
 * \par Attributes (after fit)
 * `classes()`, `n_features_in()`, `estimators()` (each tree's node arrays),
 * `feature_importances()`, and with oob_score `oob_score()` (accuracy over all rows) and
 * `oob_decision_function()` (this rank's rows x classes).
 *
 * \par Differences from scikit-learn
 * No n_jobs (OpenMP threads: OMP_NUM_THREADS), warm_start, class_weight, ccp_alpha, max_samples
 * or verbose. Under a distributed policy each rank holds all rows (all-gathered, n x p float32)
 * while it grows its share of the trees.
 *
 * Errors: as DecisionTreeClassifier's, and `invalid_argument` for n_estimators < 1 or oob_score
 * without bootstrap; every rank gets them under a distributed policy.
 */

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/base/agreement.hpp"
#include "onelearn/base/labels.hpp"
#include "onelearn/base/score.hpp"
#include "onelearn/core/dataset.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/ensemble/detail/forest_common.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/tree/detail/fitted_tree.hpp"
#include "onelearn/tree/detail/training_rows.hpp"

namespace onelearn::ensemble {

struct RandomForestClassifierParams {
  std::int64_t n_estimators = 100;      ///< trees
  std::string criterion = "gini";       ///< "gini", "entropy" or "log_loss"
  std::int64_t max_depth = 0;           ///< 0: no limit
  std::int64_t min_samples_split = 2;   ///< rows a node needs to be split
  std::int64_t min_samples_leaf = 1;    ///< rows every leaf needs
  double min_weight_fraction_leaf = 0;  ///< share of the total weight every leaf needs
  std::string max_features = "sqrt";    ///< "" (all), "sqrt", "log2", a count or a fraction
  std::int64_t max_leaf_nodes = 0;      ///< 0: no limit
  double min_impurity_decrease = 0;     ///< least weighted impurity decrease of a split
  bool bootstrap = true;                ///< each tree on a bootstrap sample
  bool oob_score = false;               ///< score the rows out of each tree's sample
  std::uint64_t random_state = 0;       ///< seed, < 2^32

  static constexpr std::string_view estimator_name = "RandomForestClassifier";
  static constexpr bool random_thresholds = false;
  static constexpr std::array<std::string_view, 12> names{
      "n_estimators",     "criterion",      "max_depth",
      "min_samples_split", "min_samples_leaf", "min_weight_fraction_leaf",
      "max_features",     "max_leaf_nodes", "min_impurity_decrease",
      "bootstrap",        "oob_score",      "random_state"};
};

/// ExtraTreesClassifier's parameters: RandomForestClassifier's, without bootstrap by default.
struct ExtraTreesClassifierParams {
  std::int64_t n_estimators = 100;
  std::string criterion = "gini";
  std::int64_t max_depth = 0;
  std::int64_t min_samples_split = 2;
  std::int64_t min_samples_leaf = 1;
  double min_weight_fraction_leaf = 0;
  std::string max_features = "sqrt";
  std::int64_t max_leaf_nodes = 0;
  double min_impurity_decrease = 0;
  bool bootstrap = false;
  bool oob_score = false;
  std::uint64_t random_state = 0;

  static constexpr std::string_view estimator_name = "ExtraTreesClassifier";
  static constexpr bool random_thresholds = true;
  static constexpr auto names = RandomForestClassifierParams::names;
};

/// A forest of classification trees; RandomForestClassifier and ExtraTreesClassifier below.
template <class T, exec::ExecutionPolicy Exec, class P>
class ForestClassifier : public WithParams<ForestClassifier<T, Exec, P>, P> {
 public:
  using value_type = T;
  using Params = P;

  explicit ForestClassifier(const Params& params = {}, Exec exec = {})
      : WithParams<ForestClassifier, Params>(params), exec_(std::move(exec)) {}

  ForestClassifier& fit(const MatrixRef<T>& X, const LabelsRef& y) {
    return fit_impl(X, y, std::nullopt);
  }
  ForestClassifier& fit(const MatrixRef<T>& X, const LabelsRef& y,
                        const VectorRef<T>& sample_weight) {
    return fit_impl(X, y, sample_weight);
  }
  ForestClassifier& fit(const ClassificationDataset<T>& data) {
    return onelearn::detail::fit_dataset(*this, data);
  }

  /// The mean over the trees of their leaves' class shares: n x n_classes.
  [[nodiscard]] Matrix<T> predict_proba(const MatrixRef<T>& X) const {
    return mean_proba(qualified("predict_proba"), X).template cast<T>();
  }
  [[nodiscard]] Matrix<T> predict_log_proba(const MatrixRef<T>& X) const {
    return mean_proba(qualified("predict_log_proba"), X).array().log().matrix().template cast<T>();
  }
  /// The class of the largest mean probability (the smaller label on ties).
  [[nodiscard]] Labels predict(const MatrixRef<T>& X) const {
    return onelearn::detail::argmax_labels(classes_, mean_proba(qualified("predict"), X));
  }
  /// Accuracy of predict(X); collective under a distributed policy.
  [[nodiscard]] T score(const MatrixRef<T>& X, const LabelsRef& y) const {
    return onelearn::detail::collective_score(qualified("score"), *this, X, y);
  }
  /// Each row's leaf in each tree: n x n_estimators.
  [[nodiscard]] Matrix<std::int64_t> apply(const MatrixRef<T>& X) const {
    tree::detail::check_predict_input<T>(qualified("apply"), fitted_, n_features_, X);
    Matrix<std::int64_t> out(X.rows(), static_cast<index_t>(trees_.size()));
    for (std::size_t t = 0; t < trees_.size(); ++t) {
      out.col(static_cast<index_t>(t)) = tree::detail::apply_tree(trees_[t], X);
    }
    return out;
  }

  [[nodiscard]] const Labels& classes() const {
    return validation::fitted_attribute(qualified("classes"), fitted_, classes_);
  }
  [[nodiscard]] index_t n_features_in() const {
    return validation::fitted_attribute(qualified("n_features_in"), fitted_, n_features_);
  }
  [[nodiscard]] const std::vector<tree::detail::TreeNodes>& estimators() const {
    return validation::fitted_attribute(qualified("estimators"), fitted_, trees_);
  }
  [[nodiscard]] const Vector<double>& feature_importances() const {
    return validation::fitted_attribute(qualified("feature_importances"), fitted_, importances_);
  }
  /// Accuracy of the out-of-bag predictions over every rank's rows (fit with oob_score).
  [[nodiscard]] double oob_score() const {
    return validation::fitted_attribute(qualified("oob_score"), fitted_ && oob_, oob_score_);
  }
  /// The out-of-bag class probabilities of this rank's rows (fit with oob_score).
  [[nodiscard]] const Matrix<double>& oob_decision_function() const {
    return validation::fitted_attribute(qualified("oob_decision_function"), fitted_ && oob_,
                                        oob_decision_);
  }
  /// A fitted forest from its trees' node arrays (an imported model, onnx/to_estimator.hpp):
  /// predict, predict_proba and apply behave as after fit; each tree's `value` holds class
  /// weights of any scale. No out-of-bag attributes (oob_score is not restored).
  [[nodiscard]] static ForestClassifier from_fitted(const Params& params,
                                            std::vector<tree::detail::TreeNodes> trees,
                                            const LabelsRef& classes, index_t n_features,
                                            Exec exec = {}) {
    const std::string where = qualified("from_fitted");
    detail::check_forest_params(where, params, true);
    if (trees.empty()) throw invalid_argument(where + ": expected at least one tree, found none");
    for (const tree::detail::TreeNodes& t : trees) {
      onelearn::detail::check_given_classes(where, classes, t.n_values, 2);  // one per node value
      t.check_structure(where, n_features);
    }
    ForestClassifier out(params, std::move(exec));
    out.classes_ = classes;
    out.n_features_ = n_features;
    out.importances_ = detail::forest_importances(trees, n_features);
    out.trees_ = std::move(trees);
    out.fitted_ = true;
    return out;
  }

  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }

 private:
  static std::string qualified(std::string_view method) {
    return std::string(Params::estimator_name) + "." + std::string(method);
  }

  ForestClassifier& fit_impl(const MatrixRef<T>& X, const LabelsRef& y,
                             const std::optional<VectorRef<T>>& weights) {
    const std::string where = qualified("fit");
    onelearn::detail::check_same_params(where, exec_, this->params_);
    fitted_ = false;
    const Params& p = this->params_;
    exec_.propagate_errors([&] {
      detail::check_forest_params(where, p, true);
      validation::check_same_length(where, "y", X.rows(), y.size());
    });
    const Labels classes = onelearn::detail::gather_classes(exec_, y);
    if (classes.size() < 2) {
      throw invalid_argument(where + ": expected at least 2 classes in y, found " +
                             std::to_string(classes.size()));
    }
    const std::vector<index_t> class_of = onelearn::detail::class_indices(where, classes, y);
    tree::detail::TrainingData data = tree::detail::gather_training_rows<T>(
        where, exec_, X, &class_of, classes.size(), std::nullopt, weights);
    data.sort_columns();
    trees_ = detail::grow_forest_from(where, exec_, data, p, Params::random_thresholds);
    classes_ = classes;
    n_features_ = data.n_features;
    importances_ = detail::forest_importances(trees_, n_features_);
    oob_ = p.oob_score;
    if (oob_) compute_oob(data, X.rows());
    fitted_ = true;
    return *this;
  }

  void compute_oob(const tree::detail::TrainingData& data, index_t local_rows) {
    const Matrix<double> all = detail::out_of_bag(
        data, trees_, static_cast<std::uint32_t>(this->params_.random_state), classes_.size(),
        [](const tree::detail::TreeNodes& tree, index_t leaf, auto row) {
          tree.for_each_class_share(leaf, [&](index_t c, double p) { row(c) += p; });
        });
    index_t correct = 0;
    for (index_t i = 0; i < data.n_rows; ++i) {
      index_t best = 0;
      for (index_t c = 1; c < all.cols(); ++c) best = all(i, c) > all(i, best) ? c : best;
      correct += best == data.class_of[static_cast<std::size_t>(i)] ? 1 : 0;
    }
    oob_score_ = static_cast<double>(correct) / static_cast<double>(data.n_rows);
    oob_decision_ = all.middleRows(detail::first_row_of_rank(exec_, local_rows), local_rows);
  }

  Matrix<double> mean_proba(std::string_view where, const MatrixRef<T>& X) const {
    tree::detail::check_predict_input<T>(where, fitted_, n_features_, X);
    Matrix<double> proba = Matrix<double>::Zero(X.rows(), classes_.size());
    for (const tree::detail::TreeNodes& tree : trees_) {
      const std::vector<index_t> leaves = tree::detail::leaves_of(tree, X);
      for (index_t i = 0; i < X.rows(); ++i) {
        tree.for_each_class_share(leaves[static_cast<std::size_t>(i)],
                                  [&](index_t c, double p) { proba(i, c) += p; });
      }
    }
    return proba / static_cast<double>(trees_.size());
  }

  Exec exec_;
  std::vector<tree::detail::TreeNodes> trees_;
  Labels classes_;
  index_t n_features_ = 0;
  Vector<double> importances_;
  bool oob_ = false;
  double oob_score_ = 0;
  Matrix<double> oob_decision_;
  bool fitted_ = false;
};

template <class T, exec::ExecutionPolicy Exec = exec::local>
using RandomForestClassifier = ForestClassifier<T, Exec, RandomForestClassifierParams>;

template <class T, exec::ExecutionPolicy Exec = exec::local>
using ExtraTreesClassifier = ForestClassifier<T, Exec, ExtraTreesClassifierParams>;

}  // namespace onelearn::ensemble
