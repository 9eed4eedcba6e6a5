// ONNX export (onelearn/onnx/export.hpp): every exportable model fitted on tests/data (iris for
// classifiers, transformers and clusterers, diabetes for regressors) is exported, passes ONNX's
// checker with full checks (strict shape inference), is saved, and its outputs, computed by
// onelearn's own executor (onnx::load) and by onnxruntime (the npm package onnxruntime-node,
// through tests/onnx/run_onnxruntime.js), equal onelearn's predict / predict_proba /
// decision_function / transform: labels exactly, floats within 1e-5 relative, the float32
// graph against the double model. The reference input
// is X rounded to float32 and back, so only the model's own float32 rounding is measured.
// Every model is exported a second time in float64 (ExportOptions), read the same input as
// double, and must agree within 1e-12 relative (the trees and boosting as walks in plain
// operators: onnx/export/tree_walk.hpp). Inputs in double that float32 cannot hold, next to
// the trees' thresholds, check that a float64 walk splits as the model does.
// Models fitted in a compute space (Thrust's sequential system, where Thrust is installed)
// export as the host's do: three cases, each against its own predictions.
// "Relative" is to the largest magnitude of the output column (at least 1): the rounding of
// float32 coefficients is relative to the terms of a sum, which can exceed the sum itself.
// Compiled into the ONNX test executable with test_onnx.cpp (no main here).
#include <doctest/doctest.h>

#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "onelearn/onnx/export.hpp"
#include "onelearn/onnx/export/check.hpp"
#include "onelearn/onnx/graph.hpp"
#include "onelearn/onnx/to_estimator.hpp"
#include "onelearn/space/space.hpp"
#include "support.hpp"
#include "onnxruntime_support.hpp"

namespace {

namespace ox = onelearn::onnx;
namespace fs = std::filesystem;
using onelearn::index_t;
using onelearn::Labels;
using onelearn::Matrix;
using onelearn::Vector;
using onelearn::test::node_command;
using onelearn::test::node_path;
using onelearn::test::onnxruntime_unavailable;
using onelearn::test::quoted;
using onelearn::test::require_command_output;
using onelearn::test::run_command;
using onelearn::test::runner_script;

/// One exported model and what onelearn predicts for its input.
struct ExportCase {
  std::string name;
  ox::Precision precision = ox::Precision::float32;
  double tolerance = 1e-5;  // relative to the column's scale
  ::onnx::ModelProto proto;
  fs::path path;
  Matrix<double> X;                                // the graph's input (float32 values in float32)
  std::map<std::string, Matrix<double>> expected;  // output name -> values (labels as double)
  std::string json_input;                          // X for run_onnxruntime.js
};

fs::path work_dir() { return onelearn::test::scratch_dir("onelearn_onnx_export"); }

template <class V>
Matrix<double> column(const V& v) {
  Matrix<double> out(v.size(), 1);
  for (index_t i = 0; i < v.size(); ++i) out(i, 0) = static_cast<double>(v(i));
  return out;
}

template <class M>
Matrix<double> as_double(const M& m) {
  return m.template cast<double>();
}

std::string to_json_input(const Matrix<double>& X, ox::Precision precision) {
  nlohmann::json j;
  j["X"]["dims"] = {X.rows(), X.cols()};
  j["X"]["type"] = precision == ox::Precision::float64 ? "float64" : "float32";
  std::vector<double> data(X.data(), X.data() + X.size());  // row-major, printed to round trip
  j["X"]["data"] = data;
  return j.dump();
}

/// Exports `model` with to_proto and save in `precision`, and records the expected outputs.
template <class M, class D>
ExportCase make_case(const std::string& name, const M& model, const Eigen::MatrixBase<D>& X,
                     std::map<std::string, Matrix<double>> expected,
                     ox::Precision precision = ox::Precision::float32) {
  ExportCase c;
  c.name = name;
  c.precision = precision;
  c.tolerance = precision == ox::Precision::float64 ? 1e-12 : 1e-5;
  c.proto = ox::to_proto(model, {.precision = precision});
  c.path = work_dir() / (name + ".onnx");
  ox::save(model, c.path, {.precision = precision});
  c.X = X.template cast<double>();
  c.expected = std::move(expected);
  c.json_input = to_json_input(c.X, precision);
  return c;
}

/// The float32 case, then the float64 case "<name>_float64" on the same input (float32
/// values, read as double) with the same expected outputs, within `float64_tolerance` (1e-5
/// for a float model: its own predictions carry float rounding).
template <class M, class D>
void add_cases(std::vector<ExportCase>& out, const std::string& name, const M& model,
               const Eigen::MatrixBase<D>& X, const std::map<std::string, Matrix<double>>& expected,
               double float64_tolerance = 1e-12) {
  out.push_back(make_case(name, model, X, expected));
  out.push_back(make_case(name + "_float64", model, X, expected, ox::Precision::float64));
  out.back().tolerance = float64_tolerance;
}

/// The largest error seen, as a share of the column's scale, and where.
struct Largest {
  double error = 0;
  std::string where;
};

/// The largest error of the models compared at float32's tolerance [0] and at float64's [1].
using LargestByPrecision = std::array<Largest, 2>;

/// |a - b| <= tolerance x scale everywhere (labels: exactly), or the first place it is not.
std::string compare(const std::string& output, const std::vector<double>& got,
                    const std::vector<std::int64_t>& dims, const Matrix<double>& want,
                    Largest& largest, const std::string& model, double tolerance) {
  std::size_t count = 1;
  for (const std::int64_t d : dims) count *= static_cast<std::size_t>(d);
  if (count != static_cast<std::size_t>(want.size()) || got.size() != count || dims.empty() ||
      dims[0] != want.rows()) {
    return output + ": " + std::to_string(got.size()) + " values, expected " +
           std::to_string(want.size());
  }
  const bool exact = output == "label";
  for (index_t j = 0; j < want.cols(); ++j) {
    // Relative to the column's largest magnitude (at least 1): a score that is a sum of large
    // terms of both signs carries the float32 rounding of those terms, not of the sum.
    const double scale = std::max(want.col(j).cwiseAbs().maxCoeff(), 1.0);
    for (index_t i = 0; i < want.rows(); ++i) {
      const double a = got[static_cast<std::size_t>(i * want.cols() + j)], b = want(i, j);
      const bool ok = exact ? a == b : std::abs(a - b) <= tolerance * scale;
      if (!exact && std::abs(a - b) / scale > largest.error) {
        largest = {std::abs(a - b) / scale, model + " " + output};
      }
      if (!ok) {
        return output + "[" + std::to_string(i) + "," + std::to_string(j) +
               "]: " + std::to_string(a) + " vs onelearn's " + std::to_string(b);
      }
    }
  }
  return {};
}

/// Every exportable model family, fitted on tests/data; built once.
const std::vector<ExportCase>& all_cases() {
  static const std::vector<ExportCase> cases = [] {
    using namespace onelearn;
    std::vector<ExportCase> out;
    const auto iris = test::load_split<double, std::int64_t>("iris");
    const auto diabetes = test::load_split<double, double>("diabetes");
    // The graph reads float32: onelearn predicts on the same values, widened back to double.
    const Matrix<float> iris_f = iris.X_test.cast<float>();
    const Matrix<double> iris_x = iris_f.cast<double>();
    const Matrix<float> diab_f = diabetes.X_test.cast<float>();
    const Matrix<double> diab_x = diab_f.cast<double>();
    const auto regression = [&](const std::string& name, const auto& model) {
      add_cases(out, name, model, diab_f, {{"variable", column(model.predict(diab_x))}});
    };
    const auto transformer = [&](const std::string& name, const auto& model) {
      add_cases(out, name, model, iris_f, {{"variable", as_double(model.transform(iris_x))}});
    };
    const auto classifier = [&](const std::string& name, const auto& model, const Matrix<float>& xf,
                                const Matrix<double>& x) {
      add_cases(out, name, model, xf,
                              {{"label", column(model.predict(x))},
                               {"probabilities", as_double(model.predict_proba(x))}});
    };

    regression("linear_regression",
               linear_model::LinearRegression<double>().fit(diabetes.X_train, diabetes.y_train));
    {
      // The float instantiation: its own predictions are float.
      const Matrix<float> Xtr = diabetes.X_train.cast<float>();
      const Vector<float> ytr = diabetes.y_train.cast<float>();
      linear_model::LinearRegression<float> lr;
      lr.fit(Xtr, ytr);
      add_cases(out, "linear_regression_float", lr, diab_f,
                              {{"variable", column(lr.predict(diab_f))}}, 1e-5);
    }
    regression("ridge",
               linear_model::Ridge<double>({.alpha = 0.5}).fit(diabetes.X_train, diabetes.y_train));
    regression("lasso",
               linear_model::Lasso<double>({.alpha = 0.1}).fit(diabetes.X_train, diabetes.y_train));
    regression("elastic_net", linear_model::ElasticNet<double>({.alpha = 0.01, .l1_ratio = 0.5})
                                  .fit(diabetes.X_train, diabetes.y_train));
    regression("sgd_regressor", linear_model::SGDRegressor<double>({.random_state = 1})
                                    .fit(diabetes.X_train, diabetes.y_train));

    classifier("logistic_regression",
               linear_model::LogisticRegression<double>({.max_iter = 1000})
                   .fit(iris.X_train, iris.y_train),
               iris_f, iris_x);
    {
      // Binary, with labels that are not 0..k-1: class 2 against the rest as 7 / -3.
      Labels y2 =
          iris.y_train.unaryExpr([](std::int64_t v) -> std::int64_t { return v == 2 ? 7 : -3; });
      linear_model::LogisticRegression<double> lr;
      lr.fit(iris.X_train, y2);
      classifier("logistic_regression_binary", lr, iris_f, iris_x);
      linear_model::SGDClassifier<double> hinge2({.random_state = 2});
      hinge2.fit(iris.X_train, y2);
      Matrix<double> s = as_double(hinge2.decision_function(iris_x));
      Matrix<double> two(s.rows(), 2);
      two.col(0) = -s.col(0);
      two.col(1) = s.col(0);
      add_cases(out, "sgd_classifier_hinge_binary", hinge2, iris_f,
                              {{"label", column(hinge2.predict(iris_x))}, {"scores", two}});
    }
    classifier("sgd_classifier_log_loss",
               linear_model::SGDClassifier<double>({.loss = "log_loss", .random_state = 3})
                   .fit(iris.X_train, iris.y_train),
               iris_f, iris_x);
    {
      linear_model::SGDClassifier<double> hinge({.random_state = 4});
      hinge.fit(iris.X_train, iris.y_train);
      add_cases(out, "sgd_classifier_hinge", hinge, iris_f,
                              {{"label", column(hinge.predict(iris_x))},
                               {"scores", as_double(hinge.decision_function(iris_x))}});
    }
    classifier("gaussian_nb", naive_bayes::GaussianNB<double>().fit(iris.X_train, iris.y_train),
               iris_f, iris_x);
    // Non-negative features (iris' lengths): counts as MultinomialNB expects.
    classifier("multinomial_nb",
               naive_bayes::MultinomialNB<double>({.alpha = 0.5}).fit(iris.X_train, iris.y_train),
               iris_f, iris_x);
    {
      const Labels y2 =
          iris.y_train.unaryExpr([](std::int64_t v) -> std::int64_t { return v == 0 ? 3 : 8; });
      classifier("multinomial_nb_binary", naive_bayes::MultinomialNB<double>().fit(iris.X_train, y2),
                 iris_f, iris_x);
    }
    {
      // k-NN on 300 of digits' training rows. The pixels are small integers, so float32 holds
      // every squared distance exactly and the export must find the same neighbours, ties to
      // the lower row number included. The queries end with 4 training rows: distance 0, the
      // special case of the "distance" weights.
      const auto digits = test::load_split<double, std::int64_t>("digits");
      const Matrix<double> Xtr = digits.X_train.topRows(300);
      const Labels ytr = digits.y_train.head(300);
      Matrix<double> q(44, Xtr.cols());
      q << digits.X_test.topRows(40), Xtr.middleRows(17, 4);
      const Matrix<float> qf = q.cast<float>();
      classifier("k_neighbors_classifier",
                 neighbors::KNeighborsClassifier<double>().fit(Xtr, ytr), qf, q);
      const Labels shifted = ytr.unaryExpr([](std::int64_t v) -> std::int64_t { return 3 * v - 7; });
      classifier("k_neighbors_classifier_distance",
                 neighbors::KNeighborsClassifier<double>({.n_neighbors = 4, .weights = "distance"})
                     .fit(Xtr, shifted),
                 qf, q);
      // Diabetes rows rounded to float32 first, so that a query equal to a training row is at
      // distance 0 in the graph and in onelearn alike.
      const Matrix<double> dtr = diabetes.X_train.cast<float>().cast<double>();
      Matrix<double> dq(diab_x.rows() + 3, dtr.cols());
      dq << diab_x, dtr.topRows(3);
      const Matrix<float> dqf = dq.cast<float>();
      for (const std::string weights : {"uniform", "distance"}) {
        neighbors::KNeighborsRegressor<double> knn({.n_neighbors = 6, .weights = weights});
        knn.fit(dtr, diabetes.y_train);
        add_cases(out, "k_neighbors_regressor_" + weights, knn, dqf,
                                {{"variable", column(knn.predict(dq))}});
      }
    }
    classifier("decision_tree_classifier",
               tree::DecisionTreeClassifier<double>({.max_depth = 4}).fit(iris.X_train, iris.y_train),
               iris_f, iris_x);
    classifier("random_forest_classifier",
               ensemble::RandomForestClassifier<double>({.n_estimators = 7, .random_state = 1})
                   .fit(iris.X_train, iris.y_train),
               iris_f, iris_x);
    {
      // Two classes: onnxruntime's binary layout (weights of the second class only).
      const Labels y2 =
          iris.y_train.unaryExpr([](std::int64_t v) -> std::int64_t { return v == 1 ? 5 : 2; });
      ensemble::ExtraTreesClassifier<double> extra({.n_estimators = 5, .random_state = 2});
      extra.fit(iris.X_train, y2);
      classifier("extra_trees_classifier_binary", extra, iris_f, iris_x);
    }
    classifier("hist_gradient_boosting_classifier",
               ensemble::HistGradientBoostingClassifier<double>({.max_iter = 20, .early_stopping = "false"})
                   .fit(iris.X_train, iris.y_train),
               iris_f, iris_x);
    {
      const Labels y2 =
          iris.y_train.unaryExpr([](std::int64_t v) -> std::int64_t { return v == 2 ? 9 : 4; });
      ensemble::HistGradientBoostingClassifier<double> binary({.max_iter = 15, .early_stopping = "false"});
      binary.fit(iris.X_train, y2);
      classifier("hist_gradient_boosting_binary", binary, iris_f, iris_x);
    }
    {
      // Categorical splits have no TreeEnsemble form (before ai.onnx.ml opset 5): refused.
      Matrix<double> X = iris.X_train;
      X.col(0) = X.col(0).array().floor().matrix();  // sepal length in whole cm: 4 categories
      ensemble::HistGradientBoostingClassifier<double> categorical(
          {.max_iter = 5, .min_samples_leaf = 5, .categorical_features = "1000", .early_stopping = "false"});
      categorical.fit(X, iris.y_train);
      CHECK_THROWS_WITH_AS((void)ox::to_proto(categorical), doctest::Contains("categorical splits"),
                           ox::unsupported_error);
      CHECK_THROWS_WITH_AS((void)ox::to_proto(categorical, {.precision = ox::Precision::float64}),
                           doctest::Contains("categorical splits"), ox::unsupported_error);
    }
    {
      // Missing values: NaN goes where each split learned it goes, in both precisions.
      const auto with_missing = [](Matrix<double> X) {
        for (index_t i = 0; i < X.rows(); ++i) {
          if (i % 4 == 1) X(i, 2) = std::numeric_limits<double>::quiet_NaN();
          if (i % 7 == 3) X(i, 8) = std::numeric_limits<double>::quiet_NaN();
        }
        return X;
      };
      ensemble::HistGradientBoostingRegressor<double> model({.max_iter = 20, .early_stopping = "false"});
      model.fit(with_missing(diabetes.X_train), diabetes.y_train);
      const Matrix<double> x = with_missing(diab_x);
      add_cases(out, "hist_gradient_boosting_regressor_missing", model, x,
                {{"variable", column(model.predict(x))}});
    }
    {
      // Double inputs float32 cannot hold, at and next to every split's threshold: a float64
      // walk must split them as the model does (the decision trees round the feature to float32
      // first, histogram boosting compares the double).
      const auto near_thresholds = [](const Matrix<double>& rows, const auto& splits) {
        std::vector<std::pair<std::int64_t, double>> tests;  // (feature, value)
        splits([&](std::int64_t f, double t) {
          if (!std::isfinite(t)) return;  // boosting's "every value left" split: no neighbours
          const double up = std::nextafter(t, std::numeric_limits<double>::infinity());
          const double down = std::nextafter(t, -std::numeric_limits<double>::infinity());
          for (const double v : {t, up, down, t + 1e-9 * std::max(std::abs(t), 1.0),
                                 static_cast<double>(static_cast<float>(t))})
            tests.emplace_back(f, v);
        });
        Matrix<double> X(static_cast<index_t>(tests.size()), rows.cols());
        for (std::size_t i = 0; i < tests.size(); ++i) {
          const auto r = static_cast<index_t>(i);
          X.row(r) = rows.row(r % rows.rows());
          X(r, static_cast<index_t>(tests[i].first)) = tests[i].second;
        }
        return X;
      };
      tree::DecisionTreeClassifier<double> tree({.max_depth = 5});
      tree.fit(iris.X_train, iris.y_train);
      const Matrix<double> xt = near_thresholds(iris.X_test, [&](auto add) {
        const auto& t = tree.tree();
        for (index_t node = 0; node < t.node_count(); ++node) {
          if (!t.is_leaf(node)) {
            add(t.feature[static_cast<std::size_t>(node)], t.threshold[static_cast<std::size_t>(node)]);
          }
        }
      });
      out.push_back(make_case("decision_tree_near_thresholds_float64", tree, xt,
                              {{"label", column(tree.predict(xt))},
                               {"probabilities", as_double(tree.predict_proba(xt))}},
                              ox::Precision::float64));
      ensemble::HistGradientBoostingRegressor<double> boost({.max_iter = 10, .early_stopping = "false"});
      boost.fit(diabetes.X_train, diabetes.y_train);
      const Matrix<double> xb = near_thresholds(diabetes.X_test, [&](auto add) {
        for (const auto& iteration : boost.trees()) {
          for (const auto& n : iteration[0].nodes) {
            if (!n.is_leaf) add(n.feature, n.threshold);
          }
        }
      });
      out.push_back(make_case("hist_gradient_boosting_near_thresholds_float64", boost, xb,
                              {{"variable", column(boost.predict(xb))}}, ox::Precision::float64));
    }
    regression("hist_gradient_boosting_regressor",
               ensemble::HistGradientBoostingRegressor<double>({.max_iter = 30, .early_stopping = "false"})
                   .fit(diabetes.X_train, diabetes.y_train));
    regression("decision_tree_regressor",
               tree::DecisionTreeRegressor<double>({.max_depth = 5}).fit(diabetes.X_train, diabetes.y_train));
    regression("random_forest_regressor",
               ensemble::RandomForestRegressor<double>({.n_estimators = 6, .max_depth = 6, .random_state = 3})
                   .fit(diabetes.X_train, diabetes.y_train));

    transformer("standard_scaler", preprocessing::StandardScaler<double>().fit(iris.X_train));
    transformer("standard_scaler_no_mean",
                preprocessing::StandardScaler<double>({.with_mean = false}).fit(iris.X_train));
    transformer("min_max_scaler", preprocessing::MinMaxScaler<double>().fit(iris.X_train));
    {
      // clip: a test row outside the training range is clipped to feature_range.
      preprocessing::MinMaxScaler<double> clip({.feature_range = {-1, 2}, .clip = true});
      clip.fit(iris.X_train.topRows(20));
      transformer("min_max_scaler_clip", clip);
    }
    transformer("max_abs_scaler", preprocessing::MaxAbsScaler<double>().fit(iris.X_train));
    transformer("normalizer_l2", preprocessing::Normalizer<double>().fit(iris.X_train));
    transformer("normalizer_l1", preprocessing::Normalizer<double>({.norm = "l1"}).fit(iris.X_train));
    {
      // max |x| needs negative values (centred rows); a row of zeros is divided by 1.
      const Matrix<double> mean = iris.X_train.colwise().mean();
      Matrix<float> xf = (iris.X_test.rowwise() - mean.row(0)).cast<float>();
      xf.row(0).setZero();
      preprocessing::Normalizer<double> max_norm({.norm = "max"});
      max_norm.fit(iris.X_train);
      add_cases(out, "normalizer_max", max_norm, xf,
                              {{"variable", as_double(max_norm.transform(xf.cast<double>()))}});
    }
    transformer("polynomial_features", preprocessing::PolynomialFeatures<double>().fit(iris.X_train));
    transformer("polynomial_features_interactions",
                preprocessing::PolynomialFeatures<double>(
                    {.degree = 3, .interaction_only = true, .include_bias = false})
                    .fit(iris.X_train));
    transformer("polynomial_features_degree_0",
                preprocessing::PolynomialFeatures<double>({.degree = 0}).fit(iris.X_train));
    {
      // NaN in training and test rows, and a fifth column missing in every training row:
      // dropped, or kept and filled with 0 (keep_empty_features).
      const double nan = std::numeric_limits<double>::quiet_NaN();
      Matrix<double> train(iris.X_train.rows(), 5);
      train.leftCols(4) = iris.X_train;
      train.col(4).setConstant(nan);
      for (index_t i = 0; i < train.rows(); i += 7) train(i, i % 4) = nan;
      Matrix<float> xf(iris.X_test.rows(), 5);
      xf.leftCols(4) = iris.X_test.cast<float>();
      xf.col(4) = iris.X_test.col(0).cast<float>();
      for (index_t i = 0; i < xf.rows(); i += 3) xf(i, (i / 3) % 5) = static_cast<float>(nan);
      const Matrix<double> x = xf.cast<double>();
      for (const preprocessing::SimpleImputerParams& params :
           {preprocessing::SimpleImputerParams{.strategy = "mean"},
            preprocessing::SimpleImputerParams{.strategy = "median"},
            preprocessing::SimpleImputerParams{.strategy = "most_frequent"},
            preprocessing::SimpleImputerParams{.strategy = "mean", .keep_empty_features = true},
            preprocessing::SimpleImputerParams{.strategy = "constant", .fill_value = -2.5}}) {
        preprocessing::SimpleImputer<double> imputer(params);
        imputer.fit(train);
        add_cases(out, "simple_imputer_" + params.strategy +
                                    (params.keep_empty_features ? "_keep_empty" : ""),
                                imputer, xf, {{"variable", as_double(imputer.transform(x))}});
      }
    }
    {
      // In a pipeline: imputed, then scaled and regressed.
      Matrix<double> train = diabetes.X_train;
      for (index_t i = 0; i < train.rows(); i += 5) {
        train(i, i % train.cols()) = std::numeric_limits<double>::quiet_NaN();
      }
      auto pipe = pipeline::make_pipeline(preprocessing::SimpleImputer<double>(),
                                          preprocessing::PolynomialFeatures<double>(),
                                          linear_model::Ridge<double>({.alpha = 0.1}));
      pipe.fit(train, diabetes.y_train);
      regression("pipeline_imputer_polynomial_ridge", pipe);
    }
    {
      // Codes: the measurements in whole centimetres. The test rows hold codes fit did not see
      // (a block of zeros, as handle_unknown = "ignore" gives); "error" is checked on the
      // training rows, where transform raises nothing.
      const Matrix<double> codes = iris.X_train.array().floor().matrix();
      const Matrix<float> test_codes = iris.X_test.array().floor().matrix().cast<float>();
      preprocessing::OneHotEncoder<double> ignore({.handle_unknown = "ignore"});
      ignore.fit(codes.topRows(40));
      add_cases(out, "one_hot_encoder_ignore", ignore, test_codes,
                              {{"variable", as_double(ignore.transform(test_codes.cast<double>()))}});
      preprocessing::OneHotEncoder<double> strict;
      strict.fit(codes);
      add_cases(out, "one_hot_encoder", strict, codes.cast<float>(),
                              {{"variable", as_double(strict.transform(codes))}});
      auto pipe = pipeline::make_pipeline(preprocessing::OneHotEncoder<double>({.handle_unknown = "ignore"}),
                                          linear_model::LogisticRegression<double>());
      pipe.fit(codes, iris.y_train);
      classifier("pipeline_one_hot_logistic", pipe, test_codes, test_codes.cast<double>());
    }
    transformer("pca", decomposition::PCA<double>({.n_components = 3}).fit(iris.X_train));
    transformer("pca_whiten",
                decomposition::PCA<double>({.n_components = 2, .whiten = true}).fit(iris.X_train));
    {
      cluster::KMeans<double> km({.n_clusters = 3, .random_state = 0});
      km.fit(iris.X_train);
      add_cases(out, 
          "kmeans", km, iris_f,
          {{"label", column(km.predict(iris_x))}, {"scores", as_double(km.transform(iris_x))}});
    }
    {
      auto pipe = pipeline::make_pipeline(preprocessing::StandardScaler<double>(),
                                          decomposition::PCA<double>({.n_components = 3}),
                                          linear_model::LogisticRegression<double>());
      pipe.fit(iris.X_train, iris.y_train);
      classifier("pipeline_scaler_pca_logistic", pipe, iris_f, iris_x);
    }
    {
      auto pipe = pipeline::make_pipeline(preprocessing::MinMaxScaler<double>(),
                                          linear_model::Ridge<double>({.alpha = 0.1}));
      pipe.fit(diabetes.X_train, diabetes.y_train);
      regression("pipeline_minmax_ridge", pipe);
    }
    {
      auto pipe = pipeline::make_pipeline(preprocessing::StandardScaler<double>(),
                                          cluster::KMeans<double>({.n_clusters = 3}));
      pipe.fit(iris.X_train);
      add_cases(out, "pipeline_scaler_kmeans", pipe, iris_f,
                              {{"label", column(pipe.predict(iris_x))},
                               {"scores", as_double(pipe.transform(iris_x))}});
    }
    {
      // Trees after a scaler: float64 only (a float32 scaler moves rows across thresholds).
      auto pipe = pipeline::make_pipeline(
          preprocessing::StandardScaler<double>(),
          ensemble::HistGradientBoostingClassifier<double>({.max_iter = 10, .early_stopping = "false"}));
      pipe.fit(iris.X_train, iris.y_train);
      out.push_back(make_case("pipeline_scaler_boosting_float64", pipe, iris_x,
                              {{"label", column(pipe.predict(iris_x))},
                               {"probabilities", as_double(pipe.predict_proba(iris_x))}},
                              ox::Precision::float64));
    }
#if defined(ONELEARN_SPACE_HAVE_THRUST)
    {
      using space::thrust_cpp;
      regression("ridge_in_space", linear_model::Ridge<double, exec::local, thrust_cpp>(
                                       {.alpha = 0.5}, {}, thrust_cpp{})
                                       .fit(diabetes.X_train, diabetes.y_train));
      transformer("standard_scaler_in_space",
                  preprocessing::StandardScaler<double, exec::local, thrust_cpp>().fit(
                      iris.X_train));
      classifier("gaussian_nb_in_space",
                 naive_bayes::GaussianNB<double, exec::local, thrust_cpp>().fit(iris.X_train,
                                                                                 iris.y_train),
                 iris_f, iris_x);
    }
#endif
    return out;
  }();
  return cases;
}

/// Output name -> (values, dims) for one model from the JSON the script prints.
using RuntimeOutputs =
    std::map<std::string, std::pair<std::vector<double>, std::vector<std::int64_t>>>;

RuntimeOutputs executor_outputs(const ExportCase& c) {
  const ox::Graph g = ox::load(c.path);
  const ox::Tensor input =
      c.precision == ox::Precision::float64
          ? ox::Tensor({c.X.rows(), c.X.cols()}, std::vector<double>(c.X.data(), c.X.data() + c.X.size()))
          : ox::Tensor({c.X.rows(), c.X.cols()}, std::vector<float>(c.X.data(), c.X.data() + c.X.size()));
  const std::vector<ox::Tensor> y = g.run({input});
  RuntimeOutputs out;
  for (std::size_t i = 0; i < y.size(); ++i) {
    out[g.outputs()[i].name] = {
        y[i].to_vector<double>(),
        std::vector<std::int64_t>(y[i].shape().begin(), y[i].shape().end())};
  }
  return out;
}

void check_outputs(const ExportCase& c, const RuntimeOutputs& got, const std::string& runtime,
                   LargestByPrecision& largest) {
  CHECK_MESSAGE(got.size() == c.expected.size(), c.name, " (", runtime, "): ", got.size(),
                " outputs, expected ", c.expected.size());
  for (const auto& [name, want] : c.expected) {
    const auto it = got.find(name);
    if (it == got.end()) {
      FAIL_CHECK(c.name, " (", runtime, "): no output '", name, "'");
      continue;
    }
    const std::string problem =
        compare(name, it->second.first, it->second.second, want,
                largest[c.tolerance < 1e-6 ? 1 : 0], c.name, c.tolerance);
    CHECK_MESSAGE(problem.empty(), c.name, " (", runtime, "): ", problem);
  }
}

}  // namespace

TEST_CASE("ONNX export: every model passes check_model (full) and round-trips through onnx::load") {
  const auto& cases = all_cases();
  // 53 models in float32 (56 with the three fitted in a space), each again in float64, two
  // float64 models on inputs next to their thresholds and a float64 pipeline ending in trees.
#if defined(ONELEARN_SPACE_HAVE_THRUST)
  constexpr std::size_t in_space = 3;
#else
  constexpr std::size_t in_space = 0;
#endif
  CHECK(cases.size() == 2 * (53 + in_space) + 3);
  LargestByPrecision largest;
  for (const ExportCase& c : cases) {
    INFO(c.name);
    CHECK_NOTHROW(ox::check_model_full(c.proto));
    // The saved file is the serialised to_proto.
    const ::onnx::ModelProto saved = ox::read_model_proto(c.path);
    CHECK(saved.SerializeAsString() == c.proto.SerializeAsString());
    // Every real value of a float64 model is double: input, initializers, outputs (the others
    // are int64 indices and the trees' bool missing-value directions).
    const std::int32_t real = c.precision == ox::Precision::float64 ? ::onnx::TensorProto::DOUBLE
                                                                     : ::onnx::TensorProto::FLOAT;
    CHECK(c.proto.graph().input(0).type().tensor_type().elem_type() == real);
    for (const auto& init : c.proto.graph().initializer()) {
      if (init.data_type() != ::onnx::TensorProto::INT64 && init.data_type() != ::onnx::TensorProto::BOOL) {
        CHECK_MESSAGE(init.data_type() == real, init.name());
      }
    }
    for (const auto& out : c.proto.graph().output()) {
      if (out.name() != "label") CHECK_MESSAGE(out.type().tensor_type().elem_type() == real, out.name());
    }
    check_outputs(c, executor_outputs(c), "onelearn executor", largest);
  }
  MESSAGE("onelearn executor: largest error ", largest[0].error, " of the column scale in float32 (",
          largest[0].where, "), ", largest[1].error, " in float64 (", largest[1].where, ")");
}

TEST_CASE("ONNX export: format, names and metadata") {
  using namespace onelearn;
  const auto iris = test::load_split<double, std::int64_t>("iris");
  linear_model::LogisticRegression<double> lr({.C = 0.5});
  lr.fit(iris.X_train, iris.y_train);
  const ::onnx::ModelProto m = ox::to_proto(lr);
  CHECK(m.ir_version() == 8);
  REQUIRE(m.opset_import_size() == 2);
  CHECK(m.opset_import(0).domain().empty());
  CHECK(m.opset_import(0).version() == 17);
  CHECK(m.opset_import(1).domain() == "ai.onnx.ml");
  CHECK(m.opset_import(1).version() == 3);
  REQUIRE(m.graph().input_size() == 1);
  const auto& in = m.graph().input(0);
  CHECK(in.name() == "X");
  CHECK(in.type().tensor_type().elem_type() == ::onnx::TensorProto::FLOAT);
  REQUIRE(in.type().tensor_type().shape().dim_size() == 2);
  CHECK(in.type().tensor_type().shape().dim(0).dim_param() == "N");
  CHECK(in.type().tensor_type().shape().dim(1).dim_value() == 4);
  REQUIRE(m.graph().output_size() == 2);
  CHECK(m.graph().output(0).name() == "label");
  CHECK(m.graph().output(0).type().tensor_type().elem_type() == ::onnx::TensorProto::INT64);
  CHECK(m.graph().output(1).name() == "probabilities");
  CHECK(m.graph().output(1).type().tensor_type().shape().dim(1).dim_value() == 3);
  REQUIRE(m.graph().node_size() == 1);
  CHECK(m.graph().node(0).op_type() == "LinearClassifier");
  std::map<std::string, std::string> meta;
  for (const auto& p : m.metadata_props()) meta[p.key()] = p.value();
  CHECK(meta["estimator"] == "LogisticRegression");
  CHECK(meta["parameters"] ==
        "penalty=\"l2\", C=0.5, fit_intercept=true, max_iter=100, tol=0.0001");
  CHECK(meta["onelearn_version"] == "0.1.0");
  CHECK(m.producer_name() == "onelearn");

  auto pipe = pipeline::make_pipeline(preprocessing::StandardScaler<double>({.with_std = false}),
                                      linear_model::Ridge<double>({.alpha = 2.0}));
  pipe.fit(iris.X_train, iris.X_train.col(0).eval());
  const ::onnx::ModelProto p = ox::to_proto(pipe);
  meta.clear();
  for (const auto& e : p.metadata_props()) meta[e.key()] = e.value();
  CHECK(meta["estimator"] == "Pipeline");
  CHECK(meta["parameters"] ==
        "standardscaler__with_mean=true, standardscaler__with_std=false, "
        "ridge__alpha=2, ridge__fit_intercept=true");
  REQUIRE(p.graph().node_size() == 2);
  CHECK(p.graph().node(0).op_type() == "Scaler");
  CHECK(p.graph().node(1).op_type() == "LinearRegressor");
  CHECK(p.graph().node(1).input(0) == p.graph().node(0).output(0));  // the steps are chained
  CHECK(p.graph().node(1).output(0) == "variable");
}

TEST_CASE("onnxruntime round trip: availability") {
  // Always runs, so the reason for a skipped comparison is in the output, not only a count.
  if (onnxruntime_unavailable().empty()) {
    const auto [status, version] =
        run_command(node_command() +
                    " -e \"process.stdout.write(process.version + ' onnxruntime-node ' + "
                    "require('onnxruntime-node/package.json').version)\"");
    MESSAGE("onnxruntime available: node ", version);
    CHECK(status == 0);
  } else {
    MESSAGE("SKIPPED onnxruntime round trip: ", onnxruntime_unavailable());
  }
}

TEST_CASE("onnxruntime round trip: every exported model's outputs equal onelearn's" *
          doctest::skip(!onnxruntime_unavailable().empty())) {
  const auto& cases = all_cases();
  std::string command = node_command() + " " + quoted(runner_script().string());
  for (const ExportCase& c : cases) {
    const fs::path input = work_dir() / (c.name + ".json");
    std::ofstream(input) << c.json_input;
    command += " " + quoted(c.path.string()) + " " + quoted(input.string());
  }
  const std::string text = require_command_output(command, "run_onnxruntime.js failed: ");
  const nlohmann::json all = nlohmann::json::parse(text);
  REQUIRE(all.size() == cases.size());
  LargestByPrecision largest;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    RuntimeOutputs got;
    for (const auto& [name, value] : all[i].items()) {
      got[name] = {value["data"].get<std::vector<double>>(),
                   value["dims"].get<std::vector<std::int64_t>>()};
    }
    check_outputs(cases[i], got, "onnxruntime", largest);
  }
  MESSAGE("onnxruntime: ", cases.size(), " models compared, largest error ", largest[0].error,
          " of the column scale in float32 (", largest[0].where, "), ", largest[1].error,
          " in float64 (", largest[1].where, ")");
}

TEST_CASE("ONNX export errors: not fitted, not exportable, unwritable path") {
  using namespace onelearn;
  CHECK_THROWS_AS(ox::to_proto(linear_model::Ridge<double>()), not_fitted_error);
  CHECK_THROWS_AS(ox::to_proto(cluster::KMeans<double>()), not_fitted_error);
  CHECK_THROWS_AS(ox::save(naive_bayes::GaussianNB<double>(), work_dir() / "never.onnx"),
                  not_fitted_error);
  CHECK_FALSE(fs::exists(work_dir() / "never.onnx"));
  // A pipeline whose last step is fitted but an earlier one is not (fitted separately).
  auto pipe = pipeline::make_pipeline(preprocessing::StandardScaler<double>(),
                                      linear_model::Ridge<double>());
  const auto diabetes = test::load_split<double, double>("diabetes");
  pipe.template step<1>().fit(diabetes.X_train, diabetes.y_train);
  CHECK_THROWS_WITH_AS(ox::to_proto(pipe), doctest::Contains("standardscaler"), not_fitted_error);

  const auto iris = test::load_split<double, std::int64_t>("iris");
  linear_model::SGDClassifier<double> huber({.loss = "modified_huber"});
  huber.fit(iris.X_train, iris.y_train);
  CHECK_THROWS_WITH_AS(ox::to_proto(huber), doctest::Contains("modified_huber"), invalid_argument);

  // Two categories that are one float32 value: the graph could not tell them apart.
  Matrix<double> close(3, 1);
  close << 1.0, 1.0 + 1e-12, 2.0;
  preprocessing::OneHotEncoder<double> encoder;
  encoder.fit(close);
  CHECK_THROWS_WITH_AS(ox::to_proto(encoder), doctest::Contains("one float32 value"),
                       invalid_argument);
  // In float64 the same two categories are two values, told apart.
  {
    const ox::Graph g(ox::to_proto(encoder, {.precision = ox::Precision::float64}));
    const auto y = g.run({ox::Tensor({2, 1}, std::vector<double>{1.0, 1.0 + 1e-12})})[0].to_vector<double>();
    CHECK(y == std::vector<double>{1, 0, 0, 0, 1, 0});
  }
  // Text columns have no float32 input to read: not Exportable.
  static_assert(!ox::Exportable<preprocessing::OneHotEncoder<std::string>>);

  linear_model::Ridge<double> ridge;
  ridge.fit(diabetes.X_train, diabetes.y_train);
  const fs::path missing = work_dir() / "no_such_dir" / "model.onnx";
  CHECK_THROWS_AS(ox::save(ridge, missing), io_error);
  CHECK_FALSE(fs::exists(missing));
  CHECK_FALSE(fs::exists(missing.parent_path()));

  // The target is a directory: the rename fails after the temporary file was written, and the
  // temporary file is removed.
  const fs::path dir = work_dir() / "occupied";
  fs::create_directories(dir / "model.onnx");
  CHECK_THROWS_AS(ox::save(ridge, dir / "model.onnx"), io_error);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
  CHECK(entries == 1);  // only the directory that was in the way
  CHECK(fs::is_directory(dir / "model.onnx"));

  // And a save that succeeds replaces an existing file whole.
  const fs::path ok = work_dir() / "replaced.onnx";
  std::ofstream(ok) << "old contents";
  ox::save(ridge, ok);
  CHECK(ox::read_model_proto(ok).SerializeAsString() == ox::to_proto(ridge).SerializeAsString());
}

// LabelEncoder reads a vector of labels, not an N x n_features matrix: one ai.onnx.ml
// LabelEncoder node (skl2onnx's layout), int64 labels in, codes out, -1 for a label fit never
// saw. The executor, onnxruntime and to_estimator must all agree with the encoder.
TEST_CASE("ONNX export of LabelEncoder: codes in the executor and onnxruntime, to_estimator back") {
  using namespace onelearn;
  Vector<std::int64_t> y(6);
  y << 30, 10, 20, 10, 30, 50;
  preprocessing::LabelEncoder<std::int64_t> encoder;
  encoder.fit(y);
  const ::onnx::ModelProto proto = ox::to_proto(encoder);
  CHECK_NOTHROW(ox::check_model_full(proto));
  REQUIRE(proto.graph().input_size() == 1);
  CHECK(proto.graph().input(0).type().tensor_type().elem_type() == ::onnx::TensorProto::INT64);
  CHECK(proto.graph().input(0).type().tensor_type().shape().dim_size() == 1);

  const std::vector<std::int64_t> labels{50, 10, 99, 20, 30};  // 99 was never seen
  std::vector<double> expected;
  for (const std::int64_t v : labels) {
    expected.push_back(v == 99 ? -1.0
                               : static_cast<double>(encoder.transform(Vector<std::int64_t>::Constant(1, v))(0)));
  }
  CHECK(expected == std::vector<double>{3, 0, -1, 1, 2});
  const auto codes = ox::Graph(proto).run({ox::Tensor({5}, labels)})[0];
  CHECK(codes.dtype() == ox::DataType::int64);
  CHECK(codes.to_vector<double>() == expected);

  if (onnxruntime_unavailable().empty()) {
    const fs::path model = work_dir() / "label_encoder.onnx";
    ox::save(encoder, model);
    std::ofstream(work_dir() / "label_encoder.json")
        << R"({"X": {"dims": [5], "type": "int64", "data": [50, 10, 99, 20, 30]}})";
    const std::string text = onelearn::test::require_command_output(
        onelearn::test::node_command() + " " + onelearn::test::quoted(onelearn::test::runner_script().string()) +
        " " + onelearn::test::quoted(model.string()) + " " +
        onelearn::test::quoted((work_dir() / "label_encoder.json").string()), "onnxruntime failed: ");
    CHECK(nlohmann::json::parse(text).at(0).at("variable").at("data").get<std::vector<double>>() ==
          expected);
  } else {
    MESSAGE("onnxruntime part skipped: ", onnxruntime_unavailable());
  }

  // Back: the same classes, the same codes.
  const auto back = ox::to_estimator<preprocessing::LabelEncoder<std::int64_t>>(proto);
  CHECK(back.classes() == encoder.classes());
  CHECK(back.transform(y) == encoder.transform(y));

  // Real labels: float32 keys; labels float32 cannot hold are refused.
  Vector<double> reals(4);
  reals << 0.5, -1.25, 2.0, 0.5;
  preprocessing::LabelEncoder<double> real_encoder;
  real_encoder.fit(reals);
  const ::onnx::ModelProto real_proto = ox::to_proto(real_encoder, {.precision = ox::Precision::float64});
  CHECK_NOTHROW(ox::check_model_full(real_proto));
  CHECK(ox::Graph(real_proto).run({ox::Tensor({3}, std::vector<float>{2.0F, -1.25F, 0.5F})})[0]
            .to_vector<double>() == std::vector<double>{2, 0, 1});
  CHECK(ox::to_estimator<preprocessing::LabelEncoder<double>>(real_proto).classes() ==
        real_encoder.classes());
  Vector<double> tenth(2);
  tenth << 0.1, 1.0;
  preprocessing::LabelEncoder<double> inexact;
  inexact.fit(tenth);
  CHECK_THROWS_WITH_AS(ox::to_proto(inexact), doctest::Contains("not a float32 value"),
                       ox::unsupported_error);
  static_assert(!ox::Exportable<preprocessing::LabelEncoder<std::string>>);

  // Another mapping than classes -> 0..k-1 is no LabelEncoder of onelearn's.
  ::onnx::ModelProto swapped = proto;
  auto* values = swapped.mutable_graph()->mutable_node(0)->mutable_attribute();
  for (auto& a : *values) {
    if (a.name() == "values_int64s") {
      a.set_ints(0, 1);
      a.set_ints(1, 0);
    }
  }
  CHECK_THROWS_WITH_AS(ox::to_estimator<preprocessing::LabelEncoder<std::int64_t>>(swapped),
                       doctest::Contains("another mapping at key 0"), ox::unsupported_error);
}
