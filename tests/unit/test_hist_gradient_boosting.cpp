// HistGradientBoostingClassifier / HistGradientBoostingRegressor against scikit-learn 1.2.1
// (tests/data/hgb/reference.json, written by tests/data/hgb/make_fixtures.py): the same bin
// thresholds to the bit, the same predictions on a small set, test scores within 0.01, and
// the typed errors of bad input.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "onelearn/core/concepts.hpp"
#include "onelearn/ensemble/hist_gradient_boosting.hpp"
#include "support.hpp"

using namespace onelearn;
using ensemble::HistGradientBoostingClassifier;
using ensemble::HistGradientBoostingRegressor;
using ensemble::HistGradientBoostingClassifierParams;
using ensemble::HistGradientBoostingRegressorParams;

static_assert(check_classifier<HistGradientBoostingClassifier<double>>());
static_assert(check_classifier<HistGradientBoostingClassifier<float>>());
static_assert(check_regressor<HistGradientBoostingRegressor<double>>());
static_assert(check_regressor<HistGradientBoostingRegressor<float>>());

namespace {

const nlohmann::json& reference() {
  static const nlohmann::json json = [] {
    std::ifstream in(test::data_path("hgb/reference.json"));
    REQUIRE(in.good());
    return nlohmann::json::parse(in);
  }();
  return json;
}

template <class M>
M load(const std::string& name) {
  return io::load_npy<M>(test::data_path("hgb/" + name + ".npy"));
}

/// Every row index of X.
std::vector<index_t> all_rows(const Matrix<double>& X) {
  std::vector<index_t> rows(static_cast<std::size_t>(X.rows()));
  for (index_t i = 0; i < X.rows(); ++i) rows[static_cast<std::size_t>(i)] = i;
  return rows;
}

/// The bin mapper of X (all rows, one process) with max_bins non-missing bins.
ensemble::detail::BinMapper mapper_of(const Matrix<double>& X, int max_bins) {
  ensemble::detail::BinMapper mapper;
  const auto layout = ensemble::detail::RowLayout::make(exec::local{}, X.rows());
  mapper.fit<double>(exec::local{}, X, all_rows(X), X.rows(), layout, max_bins, 0);
  return mapper;
}

std::vector<std::vector<double>> thresholds_of(const Matrix<double>& X, int max_bins) {
  return mapper_of(X, max_bins).thresholds;
}

}  // namespace

TEST_CASE("HistGradientBoosting bins exactly as scikit-learn's _BinMapper") {
  const auto& expected = reference()["thresholds"];
  const std::vector<std::pair<std::string, Matrix<double>>> sets{
      {"diabetes", test::load_split<double>("diabetes").X_train},
      {"digits", test::load_split<double>("digits").X_train},
      {"nan_X", load<Matrix<double>>("nan_X")},
      {"small_X", load<Matrix<double>>("small_X")}};
  for (const auto& [name, X] : sets) {
    for (int max_bins : {255, 16, 2}) {
      const std::string key = name + "_" + std::to_string(max_bins);
      CAPTURE(key);
      const auto found = thresholds_of(X, max_bins);
      const auto& want = expected[key];
      REQUIRE(found.size() == want.size());
      for (std::size_t f = 0; f < found.size(); ++f) {
        CAPTURE(f);
        const auto w = want[f].get<std::vector<double>>();
        REQUIRE(found[f].size() == w.size());
        for (std::size_t j = 0; j < w.size(); ++j) CHECK(found[f][j] == w[j]);  // to the bit
      }
    }
  }
  // The estimator exposes the same (as scikit-learn's _bin_mapper.bin_thresholds_).
  const auto diabetes = test::load_split<double>("diabetes");
  HistGradientBoostingRegressor<double> model({.max_iter = 1, .early_stopping = "false"});
  model.fit(diabetes.X_train, diabetes.y_train);
  CHECK(model.bin_thresholds() == thresholds_of(diabetes.X_train, 255));
}

TEST_CASE("HistGradientBoosting's thresholds equal those of a full sort, ties and zeros included") {
  // find_binning_thresholds orders only what it reads (the distinct values, or the elements at
  // the percentiles' positions). Here the reference sorts everything and applies numpy's
  // formulas directly: midpoints of distinct values, or percentile(method="midpoint") at
  // linspace(0, 100, max_bins + 1)[1:-1]. From 32768 values on, the order statistics come
  // from buckets (binning_detail::order_statistics), below from a sort.
  auto reference_thresholds = [](std::vector<double> values, int max_bins) {
    std::sort(values.begin(), values.end());
    std::vector<double> distinct = values;
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    std::vector<double> out;
    if (distinct.size() <= static_cast<std::size_t>(max_bins)) {
      for (std::size_t i = 0; i + 1 < distinct.size(); ++i) {
        out.push_back((distinct[i] + distinct[i + 1]) * 0.5);
      }
      return out;
    }
    const auto n = static_cast<double>(values.size());
    for (int i = 1; i < max_bins; ++i) {
      const double position = (n - 1) * (static_cast<double>(i) * (100.0 / max_bins) / 100.0);
      const double virtual_index = 0.5 * (std::floor(position) + std::ceil(position));
      const auto below = static_cast<std::size_t>(std::floor(virtual_index));
      const std::size_t above = std::min(below + 1, values.size() - 1);
      const double gamma = std::fmod(virtual_index, 1.0) == 0 ? 0.0 : 0.5;
      const double a = values[below], b = values[virtual_index >= n - 1 ? below : above];
      out.push_back(gamma >= 0.5 ? b - (b - a) * (1 - gamma) : a + (b - a) * gamma);
    }
    return out;
  };
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  for (const std::size_t n : {1U, 2U, 3U, 40U, 257U, 5000U, 40000U, 70001U}) {
    for (const int distinct_values : {1, 2, 200, 255, 256, 1000, 0}) {  // 0: continuous
      std::vector<double> values(n);
      for (double& v : values) {
        v = distinct_values == 0
                ? normal(rng)
                : static_cast<double>(static_cast<int>(rng() % static_cast<unsigned>(distinct_values)) -
                                      distinct_values / 2);
        if (v == 0 && rng() % 2 == 0) v = -0.0;  // -0.0 and 0.0 are one value
      }
      for (const int max_bins : {2, 16, 255}) {
        CAPTURE(n);
        CAPTURE(distinct_values);
        CAPTURE(max_bins);
        const auto found = ensemble::detail::find_binning_thresholds(values, max_bins);
        const auto want = reference_thresholds(values, max_bins);
        REQUIRE(found.size() == want.size());
        for (std::size_t j = 0; j < want.size(); ++j) CHECK(found[j] == want[j]);  // to the bit
      }
    }
  }
}

TEST_CASE("HistGradientBoosting's missing-values bin is the first bin no feature uses") {
  // scikit-learn reserves bin max_bins; here the histograms end after the widest feature's
  // bins, so the missing bin must sit right after them and NaN (only NaN) must land in it.
  const auto X = load<Matrix<double>>("nan_X");
  for (int max_bins : {255, 16, 2}) {
    CAPTURE(max_bins);
    const auto mapper = mapper_of(X, max_bins);
    const int widest =
        *std::max_element(mapper.n_bins_non_missing.begin(), mapper.n_bins_non_missing.end());
    CHECK(widest <= max_bins);
    CHECK(mapper.missing_bin() == widest);
    CHECK(mapper.n_bins() == widest + 1);
    const auto binned = mapper.transform<double>(X, all_rows(X));
    index_t nan_count = 0;
    for (index_t i = 0; i < X.rows(); ++i) {
      for (index_t f = 0; f < X.cols(); ++f) {
        const int bin = binned.row(i)[f];
        if (std::isnan(X(i, f))) {
          ++nan_count;
          CHECK(bin == mapper.missing_bin());
        } else {
          CHECK(bin < mapper.n_bins_non_missing[static_cast<std::size_t>(f)]);
        }
      }
    }
    CHECK(nan_count > 0);
  }
}

TEST_CASE("HistGradientBoosting predicts as scikit-learn on a small set with NaN") {
  const auto& small = reference()["small"];
  const auto X = load<Matrix<double>>("small_X");
  const auto X_test = load<Matrix<double>>("small_X_test");
  const HistGradientBoostingRegressorParams reg_settings{
      .max_iter = 30, .max_leaf_nodes = 15, .min_samples_leaf = 5, .early_stopping = "false"};
  SUBCASE("regression") {
    HistGradientBoostingRegressor<double> model(reg_settings);
    model.fit(X, load<Vector<double>>("small_y_reg"));
    const Vector<double> want = test::to_vector<double>(small["reg_predict"]);
    CHECK((model.predict(X_test) - want).cwiseAbs().maxCoeff() < 1e-6);
  }
  SUBCASE("regression with max_depth, l2_regularization and 5 bins") {
    HistGradientBoostingRegressor<double> model({.max_iter = 20,
                                                 .max_leaf_nodes = 0,
                                                 .max_depth = 3,
                                                 .min_samples_leaf = 3,
                                                 .l2_regularization = 2.0,
                                                 .max_bins = 5,
                                                 .early_stopping = "false"});
    model.fit(X, load<Vector<double>>("small_y_reg"));
    const Vector<double> want = test::to_vector<double>(small["reg_predict_depth3_bins5"]);
    CHECK((model.predict(X_test) - want).cwiseAbs().maxCoeff() < 1e-6);
  }
  SUBCASE("binary and multiclass classification") {
    const HistGradientBoostingClassifierParams settings{
        .max_iter = 30, .max_leaf_nodes = 15, .min_samples_leaf = 5, .early_stopping = "false"};
    HistGradientBoostingClassifier<double> binary(settings);
    binary.fit(X, load<Labels>("small_y_bin"));
    CHECK(binary.n_trees_per_iteration() == 1);
    const Vector<double> want = test::to_vector<double>(small["bin_decision"]);
    CHECK((binary.decision_function(X_test).col(0) - want).cwiseAbs().maxCoeff() < 1e-6);

    HistGradientBoostingClassifier<double> multi(settings);
    multi.fit(X, load<Labels>("small_y_multi"));
    CHECK(multi.n_trees_per_iteration() == 3);
    const Matrix<double> decision = multi.decision_function(X_test);
    double worst = 0;
    for (index_t i = 0; i < decision.rows(); ++i) {
      for (index_t c = 0; c < 3; ++c) {
        worst = std::max(worst, std::abs(decision(i, c) - small["multi_decision"][static_cast<std::size_t>(i)]
                                                                               [static_cast<std::size_t>(c)]
                                                                                   .get<double>()));
      }
    }
    CHECK(worst < 1e-6);
    const Matrix<double> proba = multi.predict_proba(X_test);
    CHECK((proba.rowwise().sum().array() - 1).abs().maxCoeff() < 1e-12);
  }
  SUBCASE("unit sample weights change nothing") {
    const Vector<double> y = load<Vector<double>>("small_y_reg");
    HistGradientBoostingRegressor<double> plain(reg_settings), weighted(reg_settings);
    plain.fit(X, y);
    weighted.fit(X, y, Vector<double>::Ones(X.rows()));
    CHECK((plain.predict(X_test) - weighted.predict(X_test)).cwiseAbs().maxCoeff() < 1e-9);
  }
}

TEST_CASE("HistGradientBoosting splits categorical features as scikit-learn") {
  const auto& expected = reference()["categorical"];
  const auto X = load<Matrix<double>>("cat_X");
  const auto X_test = load<Matrix<double>>("cat_X_test");
  const Vector<double> y = load<Vector<double>>("cat_y_reg");
  const HistGradientBoostingRegressorParams settings{.max_iter = 20,
                                                     .max_leaf_nodes = 15,
                                                     .min_samples_leaf = 5,
                                                     .categorical_features = "110",
                                                     .early_stopping = "false"};
  auto distance = [](const Vector<double>& found, const nlohmann::json& want) {
    return (found - test::to_vector<double>(want)).cwiseAbs().maxCoeff();
  };
  SUBCASE("regression: the categories are the bins; unknown categories go as missing values") {
    HistGradientBoostingRegressor<double> model(settings);
    model.fit(X, y);
    CHECK(model.bin_thresholds() == expected["thresholds"].get<std::vector<std::vector<double>>>());
    std::size_t category_splits = 0;
    for (const auto& iteration : model.trees()) category_splits += iteration[0].category_splits.size();
    CHECK(category_splits > 10);
    CHECK(distance(model.predict(X_test), expected["reg_predict"]) < 1e-6);
  }
  SUBCASE("regression with sample weights (hessians not constant)") {
    HistGradientBoostingRegressor<double> model(settings);
    const Vector<double> weights = (1 + (X.col(2).array() > 0).cast<double>()).matrix();
    model.fit(X, y, weights);
    CHECK(distance(model.predict(X_test), expected["reg_predict_weighted"]) < 1e-6);
  }
  SUBCASE("binary and multiclass classification") {
    const HistGradientBoostingClassifierParams clf_settings{.max_iter = 20,
                                                            .max_leaf_nodes = 15,
                                                            .min_samples_leaf = 5,
                                                            .categorical_features = "110",
                                                            .early_stopping = "false"};
    HistGradientBoostingClassifier<double> binary(clf_settings);
    binary.fit(X, load<Labels>("cat_y_bin"));
    CHECK(distance(binary.decision_function(X_test).col(0), expected["bin_decision"]) < 1e-6);
    HistGradientBoostingClassifier<double> multi(clf_settings);
    multi.fit(X, load<Labels>("cat_y_multi"));
    const Matrix<double> decision = multi.decision_function(X_test);
    for (index_t c = 0; c < 3; ++c) {
      Vector<double> want(decision.rows());
      for (index_t i = 0; i < decision.rows(); ++i) {
        want(i) = expected["multi_decision"][static_cast<std::size_t>(i)][static_cast<std::size_t>(c)];
      }
      CHECK((decision.col(c) - want).cwiseAbs().maxCoeff() < 1e-6);
    }
  }
  SUBCASE("a fractional or negative value at predict time is an unknown category") {
    HistGradientBoostingRegressor<double> model(settings);
    model.fit(X, y);
    const Matrix<double> rows = X_test.topRows(3);
    Matrix<double> missing = rows, fractional = rows, negative = rows;
    missing.col(1).setConstant(std::numeric_limits<double>::quiet_NaN());
    fractional.col(1).setConstant(2.5);
    negative.col(1).setConstant(-3);
    CHECK(model.predict(fractional) == model.predict(missing));
    CHECK(model.predict(negative) == model.predict(missing));
  }
}

TEST_CASE_TEMPLATE("HistGradientBoosting test scores within 0.01 of scikit-learn's", T, double,
                   float) {
  const auto& scores = reference()["scores"];
  const auto diabetes = test::load_split<T>("diabetes");
  HistGradientBoostingRegressor<T> reg({.early_stopping = "false"});
  reg.fit(diabetes.X_train, diabetes.y_train);
  const double r2 = static_cast<double>(reg.score(diabetes.X_test, diabetes.y_test));
  MESSAGE("diabetes R^2: onelearn ", r2, ", scikit-learn ", scores["diabetes_r2"].get<double>());
  CHECK(std::abs(r2 - scores["diabetes_r2"].get<double>()) < 0.01);
  CHECK(reg.n_iter() == 100);
  CHECK(reg.train_score().size() == 0);

  HistGradientBoostingRegressor<T> shallow(
      {.learning_rate = 0.2, .max_iter = 50, .max_depth = 3, .l2_regularization = 1.0,
       .early_stopping = "false"});
  shallow.fit(diabetes.X_train, diabetes.y_train);
  const double r2_shallow = static_cast<double>(shallow.score(diabetes.X_test, diabetes.y_test));
  MESSAGE("diabetes R^2 (max_depth 3, l2 1): onelearn ", r2_shallow, ", scikit-learn ",
          scores["diabetes_r2_depth3_l2"].get<double>());
  CHECK(std::abs(r2_shallow - scores["diabetes_r2_depth3_l2"].get<double>()) < 0.01);

  for (const std::string name : {"iris", "digits"}) {
    CAPTURE(name);
    const auto data = test::load_split<T, std::int64_t>(name);
    HistGradientBoostingClassifier<T> clf({.early_stopping = "false"});
    clf.fit(data.X_train, data.y_train);
    const double accuracy = static_cast<double>(clf.score(data.X_test, data.y_test));
    const double want = scores[std::string(name) + "_accuracy"].get<double>();
    MESSAGE(name, " accuracy: onelearn ", accuracy, ", scikit-learn ", want);
    CHECK(std::abs(accuracy - want) < 0.01);
    CHECK(clf.n_iter() == scores[std::string(name) + "_n_iter"].get<index_t>());
    CHECK(clf.n_features_in() == data.X_train.cols());
  }
}

TEST_CASE("HistGradientBoosting early stopping on a validation fraction") {
  const auto& scores = reference()["scores"];
  const auto data = test::load_split<double, std::int64_t>("digits");
  HistGradientBoostingClassifier<double> clf({.early_stopping = "true", .random_state = 0});
  clf.fit(data.X_train, data.y_train);
  const double accuracy = clf.score(data.X_test, data.y_test);
  MESSAGE("digits with early stopping: onelearn ", accuracy, " after ", clf.n_iter(),
          " iterations; scikit-learn ", scores["digits_accuracy_early_stopping"].get<double>(),
          " after ", scores["digits_n_iter_early_stopping"].get<int>());
  CHECK(clf.n_iter() <= 100);
  CHECK(clf.train_score().size() == clf.n_iter() + 1);
  CHECK(clf.validation_score().size() == clf.n_iter() + 1);
  CHECK(std::abs(accuracy - scores["digits_accuracy_early_stopping"].get<double>()) < 0.02);
  // The scores are -log loss: they improve from the baseline.
  CHECK(clf.train_score()(clf.n_iter()) > clf.train_score()(0));

  // No improvement can beat tol = 5 (the log loss starts at log(10) = 2.3): the fit
  // stops once n_iter_no_change + 1 scores are there, as scikit-learn's _should_stop.
  HistGradientBoostingClassifier<double> strict({.early_stopping = "true", .n_iter_no_change = 4, .tol = 5.0});
  strict.fit(data.X_train, data.y_train);
  CHECK(strict.n_iter() == 4);

  // validation_fraction 0 scores the training rows; "auto" is off at this size.
  HistGradientBoostingClassifier<double> on_train(
      {.max_iter = 20, .early_stopping = "true", .validation_fraction = 0});
  on_train.fit(data.X_train, data.y_train);
  CHECK(on_train.train_score().size() == on_train.n_iter() + 1);
  CHECK(on_train.validation_score().size() == 0);
  HistGradientBoostingClassifier<double> automatic({.max_iter = 5});
  automatic.fit(data.X_train, data.y_train);
  CHECK(automatic.train_score().size() == 0);
}

TEST_CASE("HistGradientBoosting treats NaN as missing and rejects bad input with typed errors") {
  const auto X = load<Matrix<double>>("small_X");
  const Vector<double> y = load<Vector<double>>("small_y_reg");
  const Labels labels = load<Labels>("small_y_bin");
  HistGradientBoostingRegressor<double> reg({.max_iter = 5, .early_stopping = "false"});
  CHECK_THROWS_AS((void)reg.predict(X), not_fitted_error);
  reg.fit(X, y);  // X has NaN: missing values
  Matrix<double> all_nan = Matrix<double>::Constant(2, 3, std::numeric_limits<double>::quiet_NaN());
  CHECK(reg.predict(all_nan).allFinite());
  CHECK_THROWS_AS((void)reg.predict(Matrix<double>::Zero(2, 4)), shape_error);

  Matrix<double> with_inf = X;
  with_inf(7, 2) = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH_AS(reg.fit(with_inf, y), doctest::Contains("at row 7, column 2"), invalid_argument);
  Vector<double> y_nan = y;
  y_nan(3) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(reg.fit(X, y_nan), invalid_argument);
  CHECK_THROWS_AS(reg.fit(X, y.head(10)), shape_error);

  for (std::int64_t bins : {1, 256}) {
    HistGradientBoostingRegressor<double> bad({.max_bins = bins});
    CHECK_THROWS_WITH_AS(bad.fit(X, y), doctest::Contains("max_bins in [2, 255]"), invalid_argument);
  }
  HistGradientBoostingRegressor<double> short_mask({.categorical_features = "01"});
  CHECK_THROWS_WITH_AS(short_mask.fit(X, y), doctest::Contains("mask of 3 characters"), shape_error);
  // small_X's feature 1 holds multiples of 0.5: not integer categories.
  HistGradientBoostingRegressor<double> categorical({.categorical_features = "010"});
  CHECK_THROWS_WITH_AS(categorical.fit(X, y),
                       doctest::Contains("categorical feature 1 to hold integer categories in [0, 255)"),
                       invalid_argument);
  Matrix<double> too_large = X;
  too_large.col(0).setConstant(3);
  too_large(9, 0) = 16;
  HistGradientBoostingRegressor<double> few_bins({.max_bins = 16, .categorical_features = "100"});
  CHECK_THROWS_WITH_AS(few_bins.fit(too_large, y), doctest::Contains("found 16.000000 at row 9"),
                       invalid_argument);
  HistGradientBoostingRegressor<double> no_categorical({.max_iter = 2, .categorical_features = "000"});
  CHECK_NOTHROW(no_categorical.fit(X, y));
  HistGradientBoostingRegressor<double> other_loss({.loss = "absolute_error"});
  CHECK_THROWS_AS(other_loss.fit(X, y), invalid_argument);

  Vector<double> negative = Vector<double>::Ones(X.rows());
  negative(4) = -1;
  CHECK_THROWS_WITH_AS(reg.fit(X, y, negative), doctest::Contains("non-negative"), invalid_argument);
  CHECK_THROWS_WITH_AS(reg.fit(X, y, Vector<double>::Zero(X.rows())),
                       doctest::Contains("positive total sample_weight"), invalid_argument);

  HistGradientBoostingClassifier<double> clf({.max_iter = 5});
  CHECK_THROWS_WITH_AS(clf.fit(X, Labels::Constant(X.rows(), 3)),
                       doctest::Contains("expected at least 2 classes in y, found 1: [3]"),
                       invalid_argument);
  clf.fit(X, labels);
  CHECK_THROWS_AS((void)clf.predict_proba(Matrix<double>::Zero(2, 2)), shape_error);
  CHECK(clf.classes().size() == 2);
}
