#pragma once
/**
 * \class onelearn::tree::DecisionTreeRegressor
 * \brief A regression tree, as scikit-learn's DecisionTreeRegressor.
 * \ingroup estimators
 *
 * \code
 * #include <onelearn/tree/decision_tree_regressor.hpp>
 *
 * onelearn::tree::DecisionTreeRegressor<double> tree({.max_depth = 4});
 * tree.fit(X_train, y_train);                      // y_train: onelearn::Vector<double>
 * onelearn::Vector<double> predicted = tree.predict(X_test);
 * double r2 = tree.score(X_test, y_test);
 * \endcode
 *
 * tree::DecisionTreeRegressor: a regression tree, as scikit-learn's DecisionTreeRegressor
 * (1.2.1) with criterion "squared_error": the same parameters (see DecisionTreeClassifier, whose
 * documentation applies, criterion aside), the same node arrays (`tree()`, value = the weighted
 * mean target of each node) and, on data without tied candidate splits, the same tree. Under a
 * distributed policy every rank passes its own rows and ends with the tree of all rows.
 *
 * \par Differences from scikit-learn
 * Only criterion "squared_error" (no "friedman_mse", "absolute_error", "poisson"); no
 * ccp_alpha, monotonic constraints, sparse input or multi-output y; NaN in X is an error.
 *
 * Errors: as DecisionTreeClassifier's, and `invalid_argument` for NaN or Inf in y.
 */

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/base/agreement.hpp"
#include "onelearn/base/score.hpp"
#include "onelearn/core/dataset.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/metrics/r2_score.hpp"
#include "onelearn/tree/detail/builder.hpp"
#include "onelearn/tree/detail/fitted_tree.hpp"
#include "onelearn/tree/detail/grow_settings.hpp"
#include "onelearn/tree/detail/training_rows.hpp"

namespace onelearn::tree {

struct DecisionTreeRegressorParams {
  std::string criterion = "squared_error";  ///< "squared_error"
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
class DecisionTreeRegressor
    : public WithParams<DecisionTreeRegressor<T, Exec>, DecisionTreeRegressorParams> {
 public:
  using value_type = T;
  using Params = DecisionTreeRegressorParams;

  explicit DecisionTreeRegressor(const Params& params = {}, Exec exec = {})
      : WithParams<DecisionTreeRegressor, Params>(params), exec_(std::move(exec)) {}

  DecisionTreeRegressor& fit(const MatrixRef<T>& X, const VectorRef<T>& y) {
    return fit_impl(X, y, std::nullopt);
  }
  DecisionTreeRegressor& fit(const MatrixRef<T>& X, const VectorRef<T>& y,
                             const VectorRef<T>& sample_weight) {
    return fit_impl(X, y, sample_weight);
  }
  DecisionTreeRegressor& fit(const Dataset<T>& data) {
    return onelearn::detail::fit_dataset(*this, data);
  }

  /// The mean target of each row's leaf.
  [[nodiscard]] Vector<T> predict(const MatrixRef<T>& X) const {
    check("DecisionTreeRegressor.predict", X);
    const std::vector<index_t> leaves = detail::leaves_of(tree_, X);
    Vector<T> out(X.rows());
    for (index_t i = 0; i < X.rows(); ++i) {
      out(i) = static_cast<T>(tree_.node_value(leaves[static_cast<std::size_t>(i)])[0]);
    }
    return out;
  }

  /// R² of predict(X); collective under a distributed policy (each rank passes its own rows).
  [[nodiscard]] T score(const MatrixRef<T>& X, const VectorRef<T>& y) const {
    constexpr std::string_view where = "DecisionTreeRegressor.score";
    Vector<T> predicted;
    exec_.propagate_errors([&] {
      validation::check_same_length(where, "y", X.rows(), y.size());
      predicted = predict(X);
    });
    return metrics::r2_score<T>(y, predicted, exec_);
  }

  /// The leaf (node id) each row ends in.
  [[nodiscard]] Labels apply(const MatrixRef<T>& X) const {
    check("DecisionTreeRegressor.apply", X);
    return detail::apply_tree(tree_, X);
  }
  /// Row i, column j is 1 when row i passes node j.
  [[nodiscard]] DecisionPath decision_path(const MatrixRef<T>& X) const {
    check("DecisionTreeRegressor.decision_path", X);
    return detail::decision_path_of(tree_, X);
  }

  [[nodiscard]] index_t n_features_in() const {
    return validation::fitted_attribute("DecisionTreeRegressor.n_features_in", fitted_,
                                        n_features_);
  }
  [[nodiscard]] const Vector<double>& feature_importances() const {
    return validation::fitted_attribute("DecisionTreeRegressor.feature_importances", fitted_,
                                        importances_);
  }
  [[nodiscard]] const detail::TreeNodes& tree() const {
    return validation::fitted_attribute("DecisionTreeRegressor.tree", fitted_, tree_);
  }
  [[nodiscard]] index_t node_count() const { return tree().node_count(); }
  [[nodiscard]] index_t get_depth() const { return detail::tree_depth(tree()); }
  [[nodiscard]] index_t get_n_leaves() const { return detail::leaf_count(tree()); }
  /// A fitted tree from its node arrays (an imported model, onnx/to_estimator.hpp): predict,
  /// apply and decision_path behave as after fit; `tree.value` holds each node's mean target.
  [[nodiscard]] static DecisionTreeRegressor from_fitted(const Params& params, detail::TreeNodes tree,
                                            index_t n_features, Exec exec = {}) {
    constexpr std::string_view where = "DecisionTreeRegressor.from_fitted";
    detail::check_tree_params(where, params, false);
    if (tree.n_values != 1) {
      throw invalid_argument(std::string(where) + ": expected one value per node, found " +
                             std::to_string(tree.n_values));
    }
    tree.check_structure(where, n_features);
    DecisionTreeRegressor out(params, std::move(exec));
    out.n_features_ = n_features;
    out.importances_ = detail::normalized_importances(tree.raw_feature_importances(n_features));
    out.tree_ = std::move(tree);
    out.fitted_ = true;
    return out;
  }

  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }

 private:
  DecisionTreeRegressor& fit_impl(const MatrixRef<T>& X, const VectorRef<T>& y,
                                  const std::optional<VectorRef<T>>& weights) {
    constexpr std::string_view where = "DecisionTreeRegressor.fit";
    onelearn::detail::check_same_params(where, exec_, this->params_);
    fitted_ = false;
    const Params& p = this->params_;
    bool random = false;
    exec_.propagate_errors([&] {
      detail::check_tree_params(where, p, false);
      random = detail::random_splitter(where, p.splitter);
    });
    detail::TrainingData data =
        detail::gather_training_rows<T>(where, exec_, X, nullptr, 0, y, weights);
    data.sort_columns();
    const detail::GrowSettings settings = detail::grow_settings(
        where, p, false, random, data.n_features, data.total_weight());
    tree_ = detail::grow_tree(
        data, data.weight, settings,
        detail::TreeRandom::for_random_state(static_cast<std::uint32_t>(p.random_state)), true);
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
  index_t n_features_ = 0;
  Vector<double> importances_;
  bool fitted_ = false;
};

}  // namespace onelearn::tree
