#pragma once
/**
 * \class onelearn::ensemble::RandomForestRegressor
 * \brief Random forests and extremely randomized trees for regression, as scikit-learn's.
 * \ingroup estimators
 *
 * \code
 * #include <onelearn/ensemble/forest_regressor.hpp>
 *
 * onelearn::ensemble::RandomForestRegressor<double> forest({.n_estimators = 200});
 * forest.fit(X_train, y_train);                   // y_train: onelearn::Vector<double>
 * onelearn::Vector<double> predicted = forest.predict(X_test);
 * double r2 = forest.score(X_test, y_test);
 * onelearn::ensemble::ExtraTreesRegressor<double> extra({.n_estimators = 100});
 * \endcode
 *
 * ensemble::RandomForestRegressor and ExtraTreesRegressor, as scikit-learn's (1.2.1): the same
 * parameters and defaults (criterion "squared_error", max_features "1.0": every feature), and
 * with the same random_state the same trees, so the same predictions (the mean of the trees'
 * leaf means). Everything said of RandomForestClassifier (forest_classifier.hpp) applies:
 * threads, distributed fits, differences from scikit-learn. With oob_score, `oob_score()` is the
 * R² of the out-of-bag predictions over every rank's rows and `oob_prediction()` those of this
 * rank's rows.
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
#include "onelearn/ensemble/detail/forest_common.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/metrics/r2_score.hpp"
#include "onelearn/tree/detail/fitted_tree.hpp"
#include "onelearn/tree/detail/training_rows.hpp"

namespace onelearn::ensemble {

struct RandomForestRegressorParams {
  std::int64_t n_estimators = 100;      ///< trees
  std::string criterion = "squared_error";  ///< "squared_error"
  std::int64_t max_depth = 0;           ///< 0: no limit
  std::int64_t min_samples_split = 2;   ///< rows a node needs to be split
  std::int64_t min_samples_leaf = 1;    ///< rows every leaf needs
  double min_weight_fraction_leaf = 0;  ///< share of the total weight every leaf needs
  std::string max_features = "1.0";     ///< "" (all), "sqrt", "log2", a count or a fraction
  std::int64_t max_leaf_nodes = 0;      ///< 0: no limit
  double min_impurity_decrease = 0;     ///< least weighted impurity decrease of a split
  bool bootstrap = true;                ///< each tree on a bootstrap sample
  bool oob_score = false;               ///< score the rows out of each tree's sample
  std::uint64_t random_state = 0;       ///< seed, < 2^32

  static constexpr std::string_view estimator_name = "RandomForestRegressor";
  static constexpr bool random_thresholds = false;
  static constexpr std::array<std::string_view, 12> names{
      "n_estimators",     "criterion",      "max_depth",
      "min_samples_split", "min_samples_leaf", "min_weight_fraction_leaf",
      "max_features",     "max_leaf_nodes", "min_impurity_decrease",
      "bootstrap",        "oob_score",      "random_state"};
};

/// ExtraTreesRegressor's parameters: RandomForestRegressor's, without bootstrap by default.
struct ExtraTreesRegressorParams {
  std::int64_t n_estimators = 100;
  std::string criterion = "squared_error";
  std::int64_t max_depth = 0;
  std::int64_t min_samples_split = 2;
  std::int64_t min_samples_leaf = 1;
  double min_weight_fraction_leaf = 0;
  std::string max_features = "1.0";
  std::int64_t max_leaf_nodes = 0;
  double min_impurity_decrease = 0;
  bool bootstrap = false;
  bool oob_score = false;
  std::uint64_t random_state = 0;

  static constexpr std::string_view estimator_name = "ExtraTreesRegressor";
  static constexpr bool random_thresholds = true;
  static constexpr auto names = RandomForestRegressorParams::names;
};

/// A forest of regression trees; RandomForestRegressor and ExtraTreesRegressor below.
template <class T, exec::ExecutionPolicy Exec, class P>
class ForestRegressor : public WithParams<ForestRegressor<T, Exec, P>, P> {
 public:
  using value_type = T;
  using Params = P;

  explicit ForestRegressor(const Params& params = {}, Exec exec = {})
      : WithParams<ForestRegressor, Params>(params), exec_(std::move(exec)) {}

  ForestRegressor& fit(const MatrixRef<T>& X, const VectorRef<T>& y) {
    return fit_impl(X, y, std::nullopt);
  }
  ForestRegressor& fit(const MatrixRef<T>& X, const VectorRef<T>& y,
                       const VectorRef<T>& sample_weight) {
    return fit_impl(X, y, sample_weight);
  }
  ForestRegressor& fit(const Dataset<T>& data) { return onelearn::detail::fit_dataset(*this, data); }

  /// The mean over the trees of their leaves' mean targets.
  [[nodiscard]] Vector<T> predict(const MatrixRef<T>& X) const {
    tree::detail::check_predict_input<T>(qualified("predict"), fitted_, n_features_, X);
    Vector<double> sum = Vector<double>::Zero(X.rows());
    for (const tree::detail::TreeNodes& tree : trees_) {
      const std::vector<index_t> leaves = tree::detail::leaves_of(tree, X);
      for (index_t i = 0; i < X.rows(); ++i) {
        sum(i) += tree.node_value(leaves[static_cast<std::size_t>(i)])[0];
      }
    }
    return (sum / static_cast<double>(trees_.size())).template cast<T>();
  }
  /// R² of predict(X); collective under a distributed policy (each rank passes its own rows).
  [[nodiscard]] T score(const MatrixRef<T>& X, const VectorRef<T>& y) const {
    const std::string where = qualified("score");
    Vector<T> predicted;
    exec_.propagate_errors([&] {
      validation::check_same_length(where, "y", X.rows(), y.size());
      predicted = predict(X);
    });
    return metrics::r2_score<T>(y, predicted, exec_);
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

  [[nodiscard]] index_t n_features_in() const {
    return validation::fitted_attribute(qualified("n_features_in"), fitted_, n_features_);
  }
  [[nodiscard]] const std::vector<tree::detail::TreeNodes>& estimators() const {
    return validation::fitted_attribute(qualified("estimators"), fitted_, trees_);
  }
  [[nodiscard]] const Vector<double>& feature_importances() const {
    return validation::fitted_attribute(qualified("feature_importances"), fitted_, importances_);
  }
  /// R² of the out-of-bag predictions over every rank's rows (fit with oob_score).
  [[nodiscard]] double oob_score() const {
    return validation::fitted_attribute(qualified("oob_score"), fitted_ && oob_, oob_score_);
  }
  /// The out-of-bag predictions of this rank's rows (fit with oob_score).
  [[nodiscard]] const Vector<double>& oob_prediction() const {
    return validation::fitted_attribute(qualified("oob_prediction"), fitted_ && oob_,
                                        oob_prediction_);
  }
  /// A fitted forest from its trees' node arrays (an imported model, onnx/to_estimator.hpp):
  /// predict and apply behave as after fit; each tree's `value` holds its nodes' mean targets.
  /// No out-of-bag attributes (oob_score is not restored).
  [[nodiscard]] static ForestRegressor from_fitted(const Params& params,
                                            std::vector<tree::detail::TreeNodes> trees,
                                            index_t n_features, Exec exec = {}) {
    const std::string where = qualified("from_fitted");
    detail::check_forest_params(where, params, false);
    if (trees.empty()) throw invalid_argument(where + ": expected at least one tree, found none");
    for (const tree::detail::TreeNodes& t : trees) {
      if (t.n_values != 1) {
        throw invalid_argument(where + ": expected one value per node, found " +
                               std::to_string(t.n_values));
      }
      t.check_structure(where, n_features);
    }
    ForestRegressor out(params, std::move(exec));
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

  ForestRegressor& fit_impl(const MatrixRef<T>& X, const VectorRef<T>& y,
                            const std::optional<VectorRef<T>>& weights) {
    const std::string where = qualified("fit");
    onelearn::detail::check_same_params(where, exec_, this->params_);
    fitted_ = false;
    const Params& p = this->params_;
    exec_.propagate_errors([&] { detail::check_forest_params(where, p, false); });
    tree::detail::TrainingData data =
        tree::detail::gather_training_rows<T>(where, exec_, X, nullptr, 0, y, weights);
    data.sort_columns();
    trees_ = detail::grow_forest_from(where, exec_, data, p, Params::random_thresholds);
    n_features_ = data.n_features;
    importances_ = detail::forest_importances(trees_, n_features_);
    oob_ = p.oob_score;
    if (oob_) compute_oob(data, X.rows());
    fitted_ = true;
    return *this;
  }

  void compute_oob(const tree::detail::TrainingData& data, index_t local_rows) {
    const Matrix<double> all = detail::out_of_bag(
        data, trees_, static_cast<std::uint32_t>(this->params_.random_state), 1,
        [](const tree::detail::TreeNodes& tree, index_t leaf, auto row) {
          row(0) += tree.node_value(leaf)[0];
        });
    // R² of all rows, as scikit-learn's r2_score (unweighted).
    const Eigen::Map<const Vector<double>> y(data.y.data(), data.n_rows);
    const double residual = (y - all.col(0)).squaredNorm();
    const double total = (y.array() - y.mean()).matrix().squaredNorm();
    oob_score_ = total > 0 ? 1.0 - residual / total : (residual == 0 ? 1.0 : 0.0);
    oob_prediction_ = all.col(0).segment(detail::first_row_of_rank(exec_, local_rows), local_rows);
  }

  Exec exec_;
  std::vector<tree::detail::TreeNodes> trees_;
  index_t n_features_ = 0;
  Vector<double> importances_;
  bool oob_ = false;
  double oob_score_ = 0;
  Vector<double> oob_prediction_;
  bool fitted_ = false;
};

template <class T, exec::ExecutionPolicy Exec = exec::local>
using RandomForestRegressor = ForestRegressor<T, Exec, RandomForestRegressorParams>;

template <class T, exec::ExecutionPolicy Exec = exec::local>
using ExtraTreesRegressor = ForestRegressor<T, Exec, ExtraTreesRegressorParams>;

}  // namespace onelearn::ensemble
