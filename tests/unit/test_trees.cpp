// Decision trees against scikit-learn 1.2.1's (tests/data/trees/make_fixtures.py): with the same
// random_state the tree must be scikit-learn's, node for node, and on the real data sets (where
// features tie) the held-out scores must be scikit-learn's.

#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "onelearn/core/errors.hpp"
#include "onelearn/ensemble/forest_classifier.hpp"
#include "onelearn/ensemble/forest_regressor.hpp"
#include "onelearn/io/io.hpp"
#include "onelearn/tree/decision_tree_classifier.hpp"
#include "onelearn/tree/decision_tree_regressor.hpp"
#include "support.hpp"

namespace {

using onelearn::Labels;
using onelearn::Matrix;
using onelearn::Vector;
using onelearn::index_t;
using onelearn::tree::DecisionTreeClassifier;
using onelearn::tree::DecisionTreeRegressor;
namespace test = onelearn::test;

struct TreeData {
  Matrix<double> X = onelearn::io::load_npy<Matrix<double>>(test::data_path("trees/X.npy"));
  Labels y_class = onelearn::io::load_npy<Labels>(test::data_path("trees/y_class.npy"));
  Vector<double> y_reg = onelearn::io::load_npy<Vector<double>>(test::data_path("trees/y_reg.npy"));
  Vector<double> weights =
      onelearn::io::load_npy<Vector<double>>(test::data_path("trees/weights.npy"));
};

const nlohmann::json& references() {
  static const nlohmann::json all = [] {
    std::ifstream in(test::data_path("trees/sklearn_trees.json"));
    REQUIRE(in.good());
    return nlohmann::json::parse(in);
  }();
  return all;
}

template <class P>
P params_from(const nlohmann::json& settings, P p) {
  for (const auto& [name, value] : settings.items()) {
    if (value.is_boolean()) {
      onelearn::params::set(p, name, onelearn::ParamValue(value.template get<bool>()));
    } else if (value.is_string()) {
      onelearn::params::set(p, name, onelearn::ParamValue(value.template get<std::string>()));
    } else if (value.is_number_integer()) {
      onelearn::params::set(p, name, onelearn::ParamValue(value.template get<std::int64_t>()));
    } else {
      onelearn::params::set(p, name, onelearn::ParamValue(value.template get<double>()));
    }
  }
  return p;
}

/// Node for node: structure and split features exactly, thresholds, impurities and values to
/// rounding.
void check_same_tree(const onelearn::tree::detail::TreeNodes& tree, const nlohmann::json& ref) {
  const auto n = static_cast<index_t>(ref["feature"].size());
  REQUIRE(tree.node_count() == n);
  for (index_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    INFO("node ", i);
    CHECK(tree.children_left[k] == ref["children_left"][k].get<std::int64_t>());
    CHECK(tree.children_right[k] == ref["children_right"][k].get<std::int64_t>());
    CHECK(tree.feature[k] == ref["feature"][k].get<std::int64_t>());
    CHECK(tree.threshold[k] == doctest::Approx(ref["threshold"][k].get<double>()).epsilon(1e-12));
    CHECK(tree.impurity[k] == doctest::Approx(ref["impurity"][k].get<double>()).epsilon(1e-9));
    CHECK(tree.n_node_samples[k] == ref["n_node_samples"][k].get<std::int64_t>());
    CHECK(tree.weighted_n_node_samples[k] ==
          doctest::Approx(ref["weighted_n_node_samples"][k].get<double>()));
    const auto value = tree.node_value(i);
    REQUIRE(value.size() == ref["value"][k].size());
    for (std::size_t c = 0; c < value.size(); ++c) {
      CHECK(value[c] == doctest::Approx(ref["value"][k][c].get<double>()).epsilon(1e-9));
    }
  }
}

void check_importances(const Vector<double>& importances, const nlohmann::json& ref) {
  REQUIRE(importances.size() == static_cast<index_t>(ref.size()));
  for (index_t j = 0; j < importances.size(); ++j) {
    CHECK(importances(j) == doctest::Approx(ref[static_cast<std::size_t>(j)].get<double>())
                                .epsilon(1e-9));
  }
}

}  // namespace

TEST_CASE("DecisionTreeClassifier grows scikit-learn's tree, node for node") {
  const TreeData d;
  for (const char* name : {"classifier_gini_depth5", "classifier_entropy_leaf5",
                           "classifier_gini_full", "classifier_gini_best_first",
                           "classifier_gini_min_split_decrease", "classifier_gini_weighted"}) {
    const std::string case_name = name;
    CAPTURE(case_name);
    const auto& ref = references()[name];
    DecisionTreeClassifier<double> tree(params_from(ref["params"], DecisionTreeClassifier<double>::Params{}));
    if (ref.contains("weighted")) {
      tree.fit(d.X, d.y_class, d.weights);
    } else {
      tree.fit(d.X, d.y_class);
    }
    check_same_tree(tree.tree(), ref);
    check_importances(tree.feature_importances(), ref["feature_importances"]);
    const Matrix<double> first = d.X.topRows(10);
    const Labels predicted = tree.predict(first);
    const Matrix<double> proba = tree.predict_proba(first);
    for (index_t i = 0; i < 10; ++i) {
      const auto k = static_cast<std::size_t>(i);
      CHECK(predicted(i) == ref["predict_first10"][k].get<std::int64_t>());
      for (index_t c = 0; c < proba.cols(); ++c) {
        CHECK(proba(i, c) ==
              doctest::Approx(ref["proba_first10"][k][static_cast<std::size_t>(c)].get<double>()));
      }
    }
  }
}

TEST_CASE("DecisionTreeRegressor grows scikit-learn's tree, node for node") {
  const TreeData d;
  for (const char* name : {"regressor_mse_depth4", "regressor_mse_leaf3_depth7",
                           "regressor_mse_best_first", "regressor_mse_weighted"}) {
    const std::string case_name = name;
    CAPTURE(case_name);
    const auto& ref = references()[name];
    DecisionTreeRegressor<double> tree(params_from(ref["params"], DecisionTreeRegressor<double>::Params{}));
    if (ref.contains("weighted")) {
      tree.fit(d.X, d.y_reg, d.weights);
    } else {
      tree.fit(d.X, d.y_reg);
    }
    check_same_tree(tree.tree(), ref);
    check_importances(tree.feature_importances(), ref["feature_importances"]);
    const Vector<double> predicted = tree.predict(d.X.topRows(10));
    for (index_t i = 0; i < 10; ++i) {
      CHECK(predicted(i) ==
            doctest::Approx(ref["predict_first10"][static_cast<std::size_t>(i)].get<double>()));
    }
  }
}

TEST_CASE("DecisionTree held-out scores on iris, digits and diabetes match scikit-learn's") {
  const auto& real = references()["real"];
  for (const char* name : {"iris", "digits"}) {
    const std::string case_name = name;
    CAPTURE(case_name);
    const auto split = test::load_split<double, std::int64_t>(name);
    DecisionTreeClassifier<double> tree({.max_depth = 6});
    tree.fit(split.X_train, split.y_train);
    CHECK(tree.score(split.X_test, split.y_test) ==
          doctest::Approx(real[std::string(name) + "_tree_depth6_test_accuracy"].get<double>())
              .epsilon(1e-12));
  }
  const auto split = test::load_split<double>("diabetes");
  DecisionTreeRegressor<double> tree({.max_depth = 4});
  tree.fit(split.X_train, split.y_train);
  CHECK(tree.score(split.X_test, split.y_test) ==
        doctest::Approx(real["diabetes_tree_depth4_test_r2"].get<double>()).epsilon(1e-9));
}

TEST_CASE("DecisionTree apply, decision_path, depth and leaves agree with each other") {
  const TreeData d;
  DecisionTreeClassifier<float> tree({.max_depth = 4});
  const Matrix<float> X = d.X.cast<float>();
  tree.fit(X, d.y_class);
  const Labels leaves = tree.apply(X);
  const auto path = tree.decision_path(X);
  CHECK(tree.get_depth() == 4);
  CHECK(path.rows() == X.rows());
  CHECK(path.cols() == tree.node_count());
  for (index_t i = 0; i < X.rows(); ++i) {
    CHECK(tree.tree().is_leaf(leaves(i)));
    CHECK(path.coeff(i, 0) == 1);               // every row passes the root
    CHECK(path.coeff(i, leaves(i)) == 1);       // and ends in its leaf
    CHECK(path.row(i).nonZeros() <= tree.get_depth() + 1);
  }
  CHECK(tree.get_n_leaves() == (tree.node_count() + 1) / 2);
  CHECK(tree.predict_proba(X).rowwise().sum().isApprox(Vector<float>::Ones(X.rows())));
}

TEST_CASE("DecisionTree splitter=random and max_features draw from random_state") {
  const TreeData d;
  DecisionTreeClassifier<double> a({.splitter = "random", .max_features = "sqrt", .random_state = 3});
  DecisionTreeClassifier<double> b({.splitter = "random", .max_features = "sqrt", .random_state = 3});
  DecisionTreeClassifier<double> c({.splitter = "random", .max_features = "sqrt", .random_state = 4});
  a.fit(d.X, d.y_class);
  b.fit(d.X, d.y_class);
  c.fit(d.X, d.y_class);
  CHECK(a.tree().threshold == b.tree().threshold);
  CHECK(a.tree().threshold != c.tree().threshold);
  // Grown without a depth limit, a tree fits its training rows (no two rows are equal).
  CHECK(a.score(d.X, d.y_class) == 1.0);
}

TEST_CASE("DecisionTree bad input is a typed error that says what was expected") {
  const TreeData d;
  using onelearn::invalid_argument;
  using onelearn::shape_error;
  Matrix<double> X = d.X;
  X(3, 2) = std::nan("");
  CHECK_THROWS_WITH_AS(DecisionTreeClassifier<double>().fit(X, d.y_class),
                       doctest::Contains("row 3, column 2"), invalid_argument);
  X(3, 2) = 1e39;  // finite in double, not in float32
  CHECK_THROWS_AS(DecisionTreeClassifier<double>().fit(X, d.y_class), invalid_argument);
  const Labels one_class = Labels::Constant(d.X.rows(), 5);
  CHECK_THROWS_WITH_AS(DecisionTreeClassifier<double>().fit(d.X, one_class),
                       doctest::Contains("at least 2 classes"), invalid_argument);
  Vector<double> w = d.weights;
  w(7) = -1;
  CHECK_THROWS_AS(DecisionTreeClassifier<double>().fit(d.X, d.y_class, w), invalid_argument);
  CHECK_THROWS_WITH_AS(
      DecisionTreeRegressor<double>().fit(d.X, d.y_reg, Vector<double>::Zero(d.X.rows())),
      doctest::Contains("positive total sample_weight"), invalid_argument);
  CHECK_THROWS_AS(DecisionTreeRegressor<double>().fit(d.X, d.y_reg.head(10)), shape_error);
  CHECK_THROWS_WITH_AS(DecisionTreeClassifier<double>({.criterion = "mse"}).fit(d.X, d.y_class),
                       doctest::Contains("expected criterion"), invalid_argument);
  CHECK_THROWS_WITH_AS(DecisionTreeClassifier<double>({.max_features = "half"}).fit(d.X, d.y_class),
                       doctest::Contains("max_features"), invalid_argument);
  CHECK_THROWS_AS(DecisionTreeClassifier<double>({.max_features = "7"}).fit(d.X, d.y_class),
                  invalid_argument);
  CHECK_THROWS_AS(DecisionTreeClassifier<double>({.min_samples_split = 1}).fit(d.X, d.y_class),
                  invalid_argument);
  CHECK_THROWS_AS(DecisionTreeClassifier<double>({.max_leaf_nodes = 1}).fit(d.X, d.y_class),
                  invalid_argument);
  DecisionTreeClassifier<double> fitted;
  CHECK_THROWS_AS((void)fitted.predict(d.X), onelearn::not_fitted_error);
  fitted.fit(d.X, d.y_class);
  CHECK_THROWS_AS((void)fitted.predict(d.X.leftCols(3)), shape_error);
}

TEST_CASE("RandomForest and ExtraTrees grow scikit-learn's trees from the same random_state") {
  const TreeData d;
  using namespace onelearn::ensemble;
  auto check_forest = [&](const auto& forest, const nlohmann::json& ref) {
    for (std::size_t t = 0; t < ref["trees"].size(); ++t) {
      INFO("tree ", t);
      check_same_tree(forest.estimators()[t], ref["trees"][t]);
    }
    check_importances(forest.feature_importances(), ref["feature_importances"]);
    if (ref.contains("oob_score")) {
      CHECK(forest.oob_score() == doctest::Approx(ref["oob_score"].get<double>()).epsilon(1e-12));
    }
  };
  {
    const auto& ref = references()["random_forest_classifier"];
    RandomForestClassifier<double> forest(params_from(ref["params"], RandomForestClassifierParams{}));
    forest.fit(d.X, d.y_class);
    check_forest(forest, ref);
    const Matrix<double> proba = forest.predict_proba(d.X.topRows(10));
    for (index_t i = 0; i < 10; ++i) {
      for (index_t c = 0; c < proba.cols(); ++c) {
        CHECK(proba(i, c) == doctest::Approx(ref["proba_first10"][static_cast<std::size_t>(i)]
                                                [static_cast<std::size_t>(c)].get<double>()));
      }
    }
    CHECK(forest.oob_decision_function().rows() == d.X.rows());
  }
  {
    const auto& ref = references()["extra_trees_classifier"];
    ExtraTreesClassifier<double> forest(params_from(ref["params"], ExtraTreesClassifierParams{}));
    forest.fit(d.X, d.y_class);
    check_forest(forest, ref);
    const Labels predicted = forest.predict(d.X.topRows(10));
    for (index_t i = 0; i < 10; ++i) {
      CHECK(predicted(i) == ref["predict_first10"][static_cast<std::size_t>(i)].get<std::int64_t>());
    }
  }
  for (const char* name : {"random_forest_regressor", "extra_trees_regressor"}) {
    const std::string case_name = name;
    CAPTURE(case_name);
    const auto& ref = references()[name];
    auto check_regressor = [&](auto forest) {
      forest.fit(d.X, d.y_reg);
      check_forest(forest, ref);
      const Vector<double> predicted = forest.predict(d.X.topRows(10));
      for (index_t i = 0; i < 10; ++i) {
        CHECK(predicted(i) ==
              doctest::Approx(ref["predict_first10"][static_cast<std::size_t>(i)].get<double>()));
      }
    };
    if (case_name == "random_forest_regressor") {
      check_regressor(RandomForestRegressor<double>(params_from(ref["params"], RandomForestRegressorParams{})));
    } else {
      check_regressor(ExtraTreesRegressor<double>(params_from(ref["params"], ExtraTreesRegressorParams{})));
    }
  }
}

TEST_CASE("RandomForest held-out scores on iris, digits and diabetes are scikit-learn's") {
  using namespace onelearn::ensemble;
  const auto& real = references()["real"];
  for (const char* name : {"iris", "digits"}) {
    CAPTURE(std::string(name));
    const auto split = test::load_split<double, std::int64_t>(name);
    RandomForestClassifier<double> forest({.n_estimators = 50, .random_state = 0});
    forest.fit(split.X_train, split.y_train);
    CHECK(forest.score(split.X_test, split.y_test) ==
          doctest::Approx(real[std::string(name) + "_forest_test_accuracy"].get<double>())
              .epsilon(1e-12));
  }
  const auto split = test::load_split<double>("diabetes");
  RandomForestRegressor<double> forest({.n_estimators = 50, .max_depth = 8, .random_state = 0});
  forest.fit(split.X_train, split.y_train);
  CHECK(forest.score(split.X_test, split.y_test) ==
        doctest::Approx(real["diabetes_forest_test_r2"].get<double>()).epsilon(1e-9));
}

TEST_CASE("RandomForest bad parameters are typed errors") {
  const TreeData d;
  using namespace onelearn::ensemble;
  CHECK_THROWS_WITH_AS(RandomForestClassifier<double>({.n_estimators = 0}).fit(d.X, d.y_class),
                       doctest::Contains("n_estimators >= 1"), onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      ExtraTreesClassifier<double>({.oob_score = true}).fit(d.X, d.y_class),
      doctest::Contains("bootstrap = true"), onelearn::invalid_argument);
  RandomForestRegressor<double> not_oob({.n_estimators = 2});
  not_oob.fit(d.X, d.y_reg);
  CHECK_THROWS_AS((void)not_oob.oob_score(), onelearn::not_fitted_error);
}
