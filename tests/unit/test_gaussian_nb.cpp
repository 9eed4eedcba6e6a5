#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>

#include "onelearn/core/concepts.hpp"
#include "onelearn/metrics/accuracy_score.hpp"
#include "onelearn/naive_bayes/gaussian_nb.hpp"
#include "support.hpp"

using namespace onelearn;
using naive_bayes::GaussianNB;

static_assert(check_classifier<GaussianNB<float>>());
static_assert(check_classifier<GaussianNB<double>>());

TEST_CASE_TEMPLATE("GaussianNB matches scikit-learn's test accuracy on iris and digits", T, float,
                   double) {
  for (const char* name : {"iris", "digits"}) {
    CAPTURE(name);
    const auto reference = test::sklearn_reference(name);
    const auto data = test::load_split<T, std::int64_t>(name);
    GaussianNB<T> model;
    CHECK(&model.fit(data.X_train, data.y_train) == &model);
    const double expected = reference["gaussian_nb_test_accuracy"].get<double>();
    const Labels predicted = model.predict(data.X_test);
    // Accuracy is a count over n_test: equal means the same number of correct predictions.
    CHECK(metrics::accuracy_score(data.y_test, predicted) ==
          doctest::Approx(expected).epsilon(1e-12));
    CHECK(static_cast<double>(model.score(data.X_test, data.y_test)) ==
          doctest::Approx(expected).epsilon(std::is_same_v<T, float> ? 1e-7 : 1e-12));
    CHECK(model.n_features_in() == reference["n_features"].get<index_t>());
    CHECK(model.class_count().sum() == doctest::Approx(reference["n_train"].get<double>()));
  }
}

TEST_CASE_TEMPLATE("GaussianNB fitted attributes and probabilities on a tiny data set, by hand", T,
                   float, double) {
  // Label 3: rows (0, 1), (2, 1), (1, 4): means (1, 2), variances (2/3, 2).
  // Label 9: rows (4, 0), (6, 2): means (5, 1), variances (1, 1).
  // All of X: feature 0 = {4, 0, 2, 6, 1} has variance 23.2 / 5 = 4.64, feature 1 = {0, 1, 1, 2, 4}
  // 9.2 / 5 = 1.84; so epsilon = var_smoothing * 4.64.
  Matrix<T> X(5, 2);
  X << 4, 0, 0, 1, 2, 1, 6, 2, 1, 4;
  Labels y(5);
  y << 9, 3, 3, 9, 3;
  const double var_smoothing = 0.1;
  const double epsilon = 0.464;
  GaussianNB<T> model({.var_smoothing = var_smoothing});
  model.fit(X, y);
  const double tolerance = std::is_same_v<T, float> ? 1e-6 : 1e-13;

  CHECK(model.classes() == (Labels(2) << 3, 9).finished());
  CHECK(model.class_count() == (Vector<T>(2) << 3, 2).finished());
  CHECK(test::max_relative_error(model.class_prior(), (Vector<double>(2) << 0.6, 0.4).finished()) <
        tolerance);
  CHECK(static_cast<double>(model.epsilon()) == doctest::Approx(epsilon).epsilon(tolerance));
  Matrix<double> theta(2, 2), var(2, 2);
  theta << 1, 2, 5, 1;
  var << 2.0 / 3 + epsilon, 2 + epsilon, 1 + epsilon, 1 + epsilon;
  CHECK(test::max_relative_error(model.theta(), theta) < tolerance);
  CHECK(test::max_relative_error(model.var(), var) < tolerance);

  // P(c | x) ∝ P(c) Π_j N(x_j; theta_cj, var_cj), written out with the normal density.
  const std::array<double, 2> x{3, 2};
  const std::array<double, 2> prior{0.6, 0.4};
  std::array<double, 2> joint{};
  for (int c = 0; c < 2; ++c) {
    joint[c] = prior[c];
    for (int j = 0; j < 2; ++j) {
      const double d = x[j] - theta(c, j);
      joint[c] *= std::exp(-d * d / (2 * var(c, j))) / std::sqrt(2 * std::numbers::pi * var(c, j));
    }
  }
  Matrix<T> query(1, 2);
  query << 3, 2;
  const Matrix<T> proba = model.predict_proba(query);
  const Matrix<T> log_proba = model.predict_log_proba(query);
  for (int c = 0; c < 2; ++c) {
    const double expected = joint[c] / (joint[0] + joint[1]);
    CHECK(static_cast<double>(proba(0, c)) == doctest::Approx(expected).epsilon(tolerance));
    CHECK(static_cast<double>(log_proba(0, c)) ==
          doctest::Approx(std::log(expected)).epsilon(tolerance));
  }
  CHECK(model.predict(query)(0) == (joint[0] > joint[1] ? 3 : 9));
}

TEST_CASE_TEMPLATE("GaussianNB probabilities are normalised and agree with predict", T, float,
                   double) {
  for (const char* name : {"iris", "digits"}) {
    CAPTURE(name);
    const auto data = test::load_split<T, std::int64_t>(name);
    GaussianNB<T> model;
    model.fit(data.X_train, data.y_train);
    const Matrix<T> proba = model.predict_proba(data.X_test);
    const Matrix<T> log_proba = model.predict_log_proba(data.X_test);
    CHECK(proba.rows() == data.X_test.rows());
    CHECK(proba.cols() == model.classes().size());
    const Vector<double> row_sums = proba.template cast<double>().rowwise().sum();
    CHECK((row_sums.array() - 1).abs().maxCoeff() < (std::is_same_v<T, float> ? 1e-5 : 1e-12));
    CHECK(proba.minCoeff() >= 0);
    CHECK(log_proba.maxCoeff() <= 0);
    // The most probable class is the prediction.
    const Labels predicted = model.predict(data.X_test);
    for (index_t i = 0; i < proba.rows(); ++i) {
      index_t best = 0;
      log_proba.row(i).maxCoeff(&best);
      CHECK(predicted(i) == model.classes()(best));
    }
  }
}

TEST_CASE_TEMPLATE("GaussianNB keeps arbitrary label values", T, float, double) {
  // Three well-separated clusters labelled 100, -5 and 7, in shuffled order.
  const std::uint64_t seed = 99;
  CAPTURE(seed);
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> noise(0, 0.5);
  const std::array<std::int64_t, 3> labels{100, -5, 7};
  const std::array<std::array<double, 2>, 3> centres{{{-10, 0}, {0, 10}, {10, 0}}};
  const index_t n = 60;
  Matrix<T> X(n, 2);
  Labels y(n);
  for (index_t i = 0; i < n; ++i) {
    const auto c = static_cast<std::size_t>(engine() % 3);
    y(i) = labels[c];
    X(i, 0) = static_cast<T>(centres[c][0] + noise(engine));
    X(i, 1) = static_cast<T>(centres[c][1] + noise(engine));
  }
  GaussianNB<T> model;
  model.fit(X, y);
  CHECK(model.classes() == (Labels(3) << -5, 7, 100).finished());
  CHECK(model.predict(X) == y);
  CHECK(model.score(X, y) == 1);
  Matrix<T> near(3, 2);
  near << 0, 9, 9, 1, -9, -1;
  CHECK(model.predict(near) == (Labels(3) << -5, 7, 100).finished());
  // Fitting again with other labels forgets the old ones.
  model.fit(X, Labels(y.array() * 2));
  CHECK(model.classes() == (Labels(3) << -10, 14, 200).finished());
  // A Dataset fits the same.
  GaussianNB<T> from_dataset;
  from_dataset.fit(ClassificationDataset<T>(X, y));
  CHECK(from_dataset.predict(near) == (Labels(3) << -5, 7, 100).finished());
}

TEST_CASE_TEMPLATE("GaussianNB sample weights act as repeated rows", T, float, double) {
  Matrix<T> X(5, 2);
  X << 1, 0, 2, 1, 3, 5, 4, 2, 0, 3;
  Labels y(5);
  y << 1, 2, 1, 2, 1;
  Vector<T> weights(5);
  weights << 1, 2, 1, 3, 1;
  Matrix<T> Xr(8, 2);
  Xr << 1, 0, 2, 1, 2, 1, 3, 5, 4, 2, 4, 2, 4, 2, 0, 3;
  Labels yr(8);
  yr << 1, 2, 2, 1, 2, 2, 2, 1;
  GaussianNB<T> weighted, repeated;
  weighted.fit(X, y, weights);
  repeated.fit(Xr, yr);
  const double tolerance = std::is_same_v<T, float> ? 1e-6 : 1e-13;
  CHECK(weighted.class_count() == repeated.class_count());
  CHECK(test::max_relative_error(weighted.class_prior(), repeated.class_prior()) < tolerance);
  CHECK(test::max_relative_error(weighted.theta(), repeated.theta()) < tolerance);
  // epsilon comes from the unweighted variance of X (as in scikit-learn), so it differs: compare
  // the variances without it, and epsilon with its definition.
  const Matrix<T> weighted_var = weighted.var().array() - weighted.epsilon();
  const Matrix<T> repeated_var = repeated.var().array() - repeated.epsilon();
  CHECK(test::max_relative_error(weighted_var, repeated_var) < 10 * tolerance);
  const Matrix<double> Xd = X.template cast<double>();
  const double max_var =
      ((Xd.rowwise() - Xd.colwise().mean()).array().square().colwise().sum() / 5.0).maxCoeff();
  CHECK(static_cast<double>(weighted.epsilon()) ==
        doctest::Approx(1e-9 * max_var).epsilon(tolerance));
}

TEST_CASE_TEMPLATE("GaussianNB rejects bad input with typed errors", T, float, double) {
  const Matrix<T> X = Matrix<T>::Random(6, 3);
  Labels y(6);
  y << 0, 1, 0, 1, 0, 1;
  GaussianNB<T> model;
  CHECK_THROWS_WITH_AS((void)model.predict(X),
                       doctest::Contains("GaussianNB.predict: expected a fitted estimator"),
                       not_fitted_error);
  CHECK_THROWS_WITH_AS((void)model.predict_proba(X),
                       doctest::Contains("GaussianNB.predict_proba: expected a fitted estimator"),
                       not_fitted_error);
  CHECK_THROWS_WITH_AS((void)model.classes(),
                       doctest::Contains("GaussianNB.classes: expected a fitted"),
                       not_fitted_error);
  CHECK_THROWS_WITH_AS((void)model.theta(),
                       doctest::Contains("GaussianNB.theta: expected a fitted"), not_fitted_error);

  CHECK_THROWS_WITH_AS(
      GaussianNB<T>({.var_smoothing = -1e-9}).fit(X, y),
      doctest::Contains("GaussianNB.fit: expected var_smoothing >= 0, found -1e-09"),
      onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      model.fit(X, Labels::Zero(5)),
      doctest::Contains("GaussianNB.fit: expected y to have 6 entries (one per row of X), found 5"),
      shape_error);
  Matrix<T> bad_X = X;
  bad_X(3, 2) = std::numeric_limits<T>::quiet_NaN();
  CHECK_THROWS_WITH_AS(
      model.fit(bad_X, y),
      doctest::Contains(
          "GaussianNB.fit: expected finite values in X, found nan at row 3, column 2"),
      onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      model.fit(X, y, Vector<T>::Ones(4)),
      doctest::Contains("GaussianNB.fit: expected sample_weight to have 6 entries"), shape_error);
  Vector<T> weights = Vector<T>::Ones(6);
  weights(1) = weights(3) = weights(5) = 0;
  CHECK_THROWS_WITH_AS(model.fit(X, y, weights),
                       doctest::Contains("GaussianNB.fit: expected a positive total sample_weight "
                                         "in every class, found 0 for class 1"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(model.fit(Matrix<T>(0, 3), Labels(0)),
                       doctest::Contains("GaussianNB.fit: expected at least one sample"),
                       onelearn::invalid_argument);
  CHECK_FALSE(model.is_fitted());

  model.fit(X, y);
  CHECK_THROWS_WITH_AS(
      (void)model.predict(Matrix<T>::Ones(2, 2)),
      doctest::Contains("GaussianNB.predict: expected X with 3 features, as in fit, found 2"),
      shape_error);
  CHECK_THROWS_WITH_AS(
      (void)model.predict_log_proba(Matrix<T>::Ones(2, 4)),
      doctest::Contains("GaussianNB.predict_log_proba: expected X with 3 features"), shape_error);
  CHECK_THROWS_WITH_AS((void)model.predict(bad_X),
                       doctest::Contains("GaussianNB.predict: expected finite values in X"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)model.score(X, Labels::Zero(4)),
                       doctest::Contains("GaussianNB.score: expected y to have 6 entries"),
                       shape_error);
}

TEST_CASE("accuracy_score counts exact matches") {
  Labels truth(4), predicted(4);
  truth << 0, 1, 2, 2;
  predicted << 0, 2, 2, 2;
  CHECK(metrics::accuracy_score(truth, predicted) == 0.75);
  CHECK(metrics::accuracy_score(truth, truth) == 1.0);
  CHECK(metrics::accuracy_score(truth, Labels(truth.array() + 1)) == 0.0);
  CHECK_THROWS_WITH_AS((void)metrics::accuracy_score(truth, Labels::Zero(3)),
                       doctest::Contains("accuracy_score: expected y_pred to have 4 entries"),
                       shape_error);
  CHECK_THROWS_WITH_AS((void)metrics::accuracy_score(Labels(0), Labels(0)),
                       doctest::Contains("accuracy_score: expected at least 1 sample, found 0"),
                       onelearn::invalid_argument);
}
