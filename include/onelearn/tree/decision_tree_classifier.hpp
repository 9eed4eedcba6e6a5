#pragma once
/**
 * \class onelearn::tree::DecisionTreeClassifier
 * \brief A classification tree, as scikit-learn's DecisionTreeClassifier.
 * \ingroup estimators
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/tree/decision_tree_classifier.hpp>
 *
 * onelearn::tree::DecisionTreeClassifier<double> tree({.max_depth = 5, .random_state = 0});
 * tree.fit(X_train, y_train);                        // y_train: onelearn::Labels, any values
 * onelearn::Labels predicted = tree.predict(X_test);
 * onelearn::Matrix<double> proba = tree.predict_proba(X_test);  // n x n_classes
 * onelearn::Vector<double> importance = tree.feature_importances();
 * onelearn::Labels leaf = tree.apply(X_test);        // the leaf (node id) of each row
 *
 * // Rows spread over ranks: every rank passes its own rows and ends with the same tree, the
 * // tree one process grows on all rows in rank order.
 * onelearn::tree::DecisionTreeClassifier<double, onelearn::exec::mpi> dist(
 *     {}, onelearn::exec::mpi{comm});
 * dist.fit(my_X, my_y);
 * \endcode
 *
 * tree::DecisionTreeClassifier: a classification tree, as scikit-learn's DecisionTreeClassifier
 * (1.2.1): the same parameters, the same node arrays (`tree()`), and on data without tied
 * candidate splits the same tree, node for node (tested against scikit-learn's trees). The
 * features are rounded to float32 for fit and predict, as there. See tree/detail/splitter.hpp
 * and builder.hpp for the algorithm and for how it differs in cost (columns sorted once).
 *
 * \par Parameters (DecisionTreeClassifierParams)
 * - `criterion` ("gini"): "gini", "entropy" or "log_loss" (the same as entropy).
 * - `splitter` ("best"): "best", or "random" (one random threshold per drawn feature, as
 *   ExtraTreeClassifier).
 * - `max_depth` (0): the deepest a leaf may be; 0 for no limit (scikit-learn's None).
 * - `min_samples_split` (2), `min_samples_leaf` (1): rows a node needs to be split, and that a
 *   leaf needs (counts; scikit-learn's fractions are not taken).
 * - `min_weight_fraction_leaf` (0): the share of the total sample weight a leaf needs.
 * - `max_features` (""): the features each node draws: "" (all), "sqrt", "log2", "5", "0.3".
 * - `random_state` (0, below 2^32): seed of the feature draws, scikit-learn's random numbers:
 *   the same random_state gives the same tree as there (with all features it only breaks ties
 *   between equally good splits).
 * - `max_leaf_nodes` (0): grow best first up to this many leaves; 0 for no limit (depth first).
 * - `min_impurity_decrease` (0): split only when the weighted impurity decrease reaches this.
 *
 * \par Attributes (after fit)
 * - `classes()`, `n_classes()`, `n_features_in()`, `feature_importances()` (sum 1, or all 0
 *   for a single leaf), `get_depth()`, `get_n_leaves()`, `node_count()`, `tree()` (the node
 *   arrays: children_left/right, feature, threshold, impurity, n_node_samples,
 *   weighted_n_node_samples, value = weighted class counts per node).
 *
 * \par Differences from scikit-learn
 * No class_weight, ccp_alpha, monotonic constraints, sparse input or multi-output y; NaN in X is
 * an error (scikit-learn 1.2 also refuses it).
 *
 * Errors (every rank gets them under a distributed policy): `invalid_argument` for bad
 * parameters, NaN or Inf in X (with row and column), y with one class, negative sample
 * weights or all zero; `shape_error` for lengths that differ from X's rows, another number of
 * features at predict; `not_fitted_error` before fit.
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
#include "onelearn/exec/local.hpp"
#include "onelearn/tree/detail/builder.hpp"
#include "onelearn/tree/detail/fitted_tree.hpp"
#include "onelearn/tree/detail/grow_settings.hpp"
#include "onelearn/tree/detail/training_rows.hpp"

namespace onelearn::tree {

struct DecisionTreeClassifierParams {
  std::string criterion = "gini";      ///< "gini", "entropy" or "log_loss"
  std::string splitter = "best";       ///< "best" or "random"
  std::int64_t max_depth = 0;          ///< 0: no limit
  std::int64_t min_samples_split = 2;  ///< rows a node needs to be split
  std::int64_t min_samples_leaf = 1;   ///< rows every leaf needs
  double min_weight_fraction_leaf = 0;  ///< share of the total weight every leaf needs
  std::string max_features = "";       ///< "" (all), "sqrt", "log2", a count or a fraction
  std::uint64_t random_state = 0;      ///< seed of the feature draws, < 2^32
  std::int64_t max_leaf_nodes = 0;     ///< 0: no limit (depth first)
  double min_impurity_decrease = 0;    ///< least weighted impurity decrease of a split

  static constexpr std::array<std::string_view, 10> names{
      "criterion",        "splitter",     "max_depth",      "min_samples_split",
      "min_samples_leaf", "min_weight_fraction_leaf",       "max_features",
      "random_state",     "max_leaf_nodes", "min_impurity_decrease"};
};

template <class T, exec::ExecutionPolicy Exec = exec::local>
class DecisionTreeClassifier
    : public WithParams<DecisionTreeClassifier<T, Exec>, DecisionTreeClassifierParams> {
 public:
  using value_type = T;
  using Params = DecisionTreeClassifierParams;

  explicit DecisionTreeClassifier(const Params& params = {}, Exec exec = {})
      : WithParams<DecisionTreeClassifier, Params>(params), exec_(std::move(exec)) {}

  DecisionTreeClassifier& fit(const MatrixRef<T>& X, const LabelsRef& y) {
    return fit_impl(X, y, std::nullopt);
  }
  DecisionTreeClassifier& fit(const MatrixRef<T>& X, const LabelsRef& y,
                              const VectorRef<T>& sample_weight) {
    return fit_impl(X, y, sample_weight);
  }
  DecisionTreeClassifier& fit(const ClassificationDataset<T>& data) {
    return onelearn::detail::fit_dataset(*this, data);
  }

  /// The class of the largest weight in each row's leaf (the smaller label on ties).
  [[nodiscard]] Labels predict(const MatrixRef<T>& X) const {
    check("DecisionTreeClassifier.predict", X);
    const std::vector<index_t> leaves = detail::leaves_of(tree_, X);
    Matrix<double> counts(X.rows(), classes_.size());
    for (index_t i = 0; i < X.rows(); ++i) {
      const auto value = tree_.node_value(leaves[static_cast<std::size_t>(i)]);
      for (index_t c = 0; c < classes_.size(); ++c) counts(i, c) = value[static_cast<std::size_t>(c)];
    }
    return onelearn::detail::argmax_labels(classes_, counts);
  }

  /// The class shares of each row's leaf: n x n_classes, columns in the order of classes().
  [[nodiscard]] Matrix<T> predict_proba(const MatrixRef<T>& X) const {
    check("DecisionTreeClassifier.predict_proba", X);
    const std::vector<index_t> leaves = detail::leaves_of(tree_, X);
    Matrix<T> out(X.rows(), classes_.size());
    for (index_t i = 0; i < X.rows(); ++i) {
      tree_.for_each_class_share(leaves[static_cast<std::size_t>(i)],
                                 [&](index_t c, double p) { out(i, c) = static_cast<T>(p); });
    }
    return out;
  }

  [[nodiscard]] Matrix<T> predict_log_proba(const MatrixRef<T>& X) const {
    return predict_proba(X).array().log().matrix();
  }

  /// Accuracy of predict(X); collective under a distributed policy.
  [[nodiscard]] T score(const MatrixRef<T>& X, const LabelsRef& y) const {
    return onelearn::detail::collective_score("DecisionTreeClassifier.score", *this, X, y);
  }

  /// The leaf (node id) each row ends in.
  [[nodiscard]] Labels apply(const MatrixRef<T>& X) const {
    check("DecisionTreeClassifier.apply", X);
    return detail::apply_tree(tree_, X);
  }
  /// Row i, column j is 1 when row i passes node j.
  [[nodiscard]] DecisionPath decision_path(const MatrixRef<T>& X) const {
    check("DecisionTreeClassifier.decision_path", X);
    return detail::decision_path_of(tree_, X);
  }

  [[nodiscard]] const Labels& classes() const {
    return validation::fitted_attribute("DecisionTreeClassifier.classes", fitted_, classes_);
  }
  [[nodiscard]] index_t n_classes() const { return classes().size(); }
  [[nodiscard]] index_t n_features_in() const {
    return validation::fitted_attribute("DecisionTreeClassifier.n_features_in", fitted_,
                                        n_features_);
  }
  [[nodiscard]] const Vector<double>& feature_importances() const {
    return validation::fitted_attribute("DecisionTreeClassifier.feature_importances", fitted_,
                                        importances_);
  }
  [[nodiscard]] const detail::TreeNodes& tree() const {
    return validation::fitted_attribute("DecisionTreeClassifier.tree", fitted_, tree_);
  }
  [[nodiscard]] index_t node_count() const { return tree().node_count(); }
  [[nodiscard]] index_t get_depth() const { return detail::tree_depth(tree()); }
  [[nodiscard]] index_t get_n_leaves() const { return detail::leaf_count(tree()); }
  /// A fitted tree from its node arrays (an imported model, onnx/to_estimator.hpp): predict,
  /// predict_proba, apply and decision_path behave as after fit. `tree.value` holds each node's
  /// class weights (any scale: predict_proba normalises them); classes strictly increasing.
  /// feature_importances() are computed from the impurities given (all 0 when they are 0).
  [[nodiscard]] static DecisionTreeClassifier from_fitted(const Params& params, detail::TreeNodes tree,
                                            const LabelsRef& classes, index_t n_features,
                                            Exec exec = {}) {
    constexpr std::string_view where = "DecisionTreeClassifier.from_fitted";
    detail::check_tree_params(where, params, true);
    onelearn::detail::check_given_classes(where, classes, tree.n_values, 2);  // one per node value
    tree.check_structure(where, n_features);
    DecisionTreeClassifier out(params, std::move(exec));
    out.classes_ = classes;
    out.n_features_ = n_features;
    out.importances_ = detail::normalized_importances(tree.raw_feature_importances(n_features));
    out.tree_ = std::move(tree);
    out.fitted_ = true;
    return out;
  }

  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }

 private:
  DecisionTreeClassifier& fit_impl(const MatrixRef<T>& X, const LabelsRef& y,
                                   const std::optional<VectorRef<T>>& weights) {
    constexpr std::string_view where = "DecisionTreeClassifier.fit";
    onelearn::detail::check_same_params(where, exec_, this->params_);
    fitted_ = false;
    const Params& p = this->params_;
    bool random = false;
    exec_.propagate_errors([&] {
      detail::check_tree_params(where, p, true);
      random = detail::random_splitter(where, p.splitter);
      validation::check_same_length(where, "y", X.rows(), y.size());
    });
    const Labels classes = onelearn::detail::gather_classes(exec_, y);
    if (classes.size() < 2) {
      throw invalid_argument(std::string(where) + ": expected at least 2 classes in y, found " +
                             std::to_string(classes.size()));
    }
    const std::vector<index_t> class_of = onelearn::detail::class_indices(where, classes, y);
    detail::TrainingData data = detail::gather_training_rows<T>(
        where, exec_, X, &class_of, classes.size(), std::nullopt, weights);
    data.sort_columns();
    const detail::GrowSettings settings = detail::grow_settings(
        where, p, true, random, data.n_features, data.total_weight());
    tree_ = detail::grow_tree(
        data, data.weight, settings,
        detail::TreeRandom::for_random_state(static_cast<std::uint32_t>(p.random_state)), true);
    classes_ = classes;
    n_features_ = data.n_features;
    importances_ = detail::normalized_importances(tree_.raw_feature_importances(n_features_));
    fitted_ = true;
    return *this;
  }

  void check(std::string_view where, const MatrixRef<T>& X) const {
    detail::check_predict_input<T>(where, fitted_, n_features_, X);
  }

  Exec exec_;
  detail::TreeNodes tree_;
  Labels classes_;
  index_t n_features_ = 0;
  Vector<double> importances_;
  bool fitted_ = false;
};

}  // namespace onelearn::tree
