#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>

#include "onelearn/core/concepts.hpp"
#include "onelearn/linear_model/linear_regression.hpp"
#include "onelearn/linear_model/ridge.hpp"
#include "support.hpp"

using namespace onelearn;
using linear_model::Ridge;

static_assert(check_regressor<Ridge<float>>());
static_assert(check_regressor<Ridge<double>>());

TEST_CASE_TEMPLATE("Ridge matches scikit-learn on diabetes (alpha = 1)", T, float, double) {
  const auto reference = test::sklearn_reference("diabetes");
  const auto data = test::load_split<T>("diabetes");
  Ridge<T> model({.alpha = 1.0});
  CHECK(&model.fit(data.X_train, data.y_train) == &model);
  // float: X and y are rounded to float before the fit; the fit itself runs in double.
  const double tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-10;
  const double coef_error =
      test::max_relative_error(model.coef(), test::to_vector<double>(reference["ridge_a1_coef"]));
  MESSAGE("Ridge coef max relative error vs scikit-learn: ", coef_error);
  CHECK(coef_error < tolerance);
  CHECK(model.intercept() ==
        doctest::Approx(reference["ridge_a1_intercept"].get<double>()).epsilon(tolerance));
  const auto r2 = static_cast<double>(model.score(data.X_test, data.y_test));
  const double r2_expected = reference["ridge_a1_test_r2"].get<double>();
  MESSAGE("Ridge test R^2 relative error vs scikit-learn: ",
          std::abs(r2 - r2_expected) / r2_expected);
  CHECK(r2 == doctest::Approx(r2_expected).epsilon(tolerance));
  CHECK(model.n_features_in() == 10);
}

TEST_CASE_TEMPLATE("Ridge with alpha = 0 equals LinearRegression on full-rank data", T, float,
                   double) {
  const std::uint64_t seed = 20240611;
  CAPTURE(seed);
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal;
  const index_t n = 120;
  const index_t p = 6;
  Matrix<double> X(n, p);
  for (index_t i = 0; i < X.size(); ++i) X.data()[i] = normal(engine);
  Vector<double> y(n);
  for (index_t i = 0; i < n; ++i) y(i) = X.row(i).sum() * 0.7 - 2 * X(i, 2) + normal(engine) + 5;
  const Matrix<T> Xt = X.cast<T>();
  const Vector<T> yt = y.cast<T>();

  for (const bool intercept : {true, false}) {
    CAPTURE(intercept);
    Ridge<T> ridge({.alpha = 0.0, .fit_intercept = intercept});
    linear_model::LinearRegression<T> ols({.fit_intercept = intercept});
    ridge.fit(Xt, yt);
    ols.fit(Xt, yt);
    const double tolerance = std::is_same_v<T, float> ? 1e-4 : 1e-10;
    CHECK(test::max_relative_error(ridge.coef(), ols.coef()) < tolerance);
    CHECK(static_cast<double>(ridge.intercept()) ==
          doctest::Approx(static_cast<double>(ols.intercept())).epsilon(tolerance));
  }
}

TEST_CASE("Ridge closed form on tiny examples worked by hand") {
  SUBCASE("one feature, with intercept") {
    // x = 0, 1, 2 (mean 1), y = 1, 3, 2 (mean 2): centred x = -1, 0, 1 and y = -1, 1, 0, so
    // x̃ᵀx̃ = 2, x̃ᵀỹ = 1 and coef = 1 / (2 + alpha) = 1/3 for alpha = 1;
    // intercept = 2 - 1 * 1/3 = 5/3.
    Matrix<double> X(3, 1);
    X << 0, 1, 2;
    Vector<double> y(3);
    y << 1, 3, 2;
    Ridge<double> model({.alpha = 1.0});
    model.fit(X, y);
    CHECK(model.coef()(0) == doctest::Approx(1.0 / 3).epsilon(1e-14));
    CHECK(model.intercept() == doctest::Approx(5.0 / 3).epsilon(1e-14));
    Matrix<double> x_new(1, 1);
    x_new << 3;
    CHECK(model.predict(x_new)(0) == doctest::Approx(5.0 / 3 + 1.0).epsilon(1e-14));
  }
  SUBCASE("two features, through the origin") {
    // XᵀX = [[2, 1], [1, 2]], Xᵀy = [4, 5]; with alpha = 1: [[3, 1], [1, 3]] w = [4, 5]
    // gives w = [(12 - 5) / 8, (15 - 4) / 8] = [7/8, 11/8].
    Matrix<double> X(3, 2);
    X << 1, 0, 0, 1, 1, 1;
    Vector<double> y(3);
    y << 1, 2, 3;
    Ridge<double> model({.alpha = 1.0, .fit_intercept = false});
    model.fit(X, y);
    CHECK(model.coef()(0) == doctest::Approx(7.0 / 8).epsilon(1e-14));
    CHECK(model.coef()(1) == doctest::Approx(11.0 / 8).epsilon(1e-14));
    CHECK(model.intercept() == 0);
  }
  SUBCASE("more features than samples") {
    // One sample x = [1, 2], y = 3, no intercept: (xxᵀ + I) w = 3x has the solution
    // w = 3x / (1 + |x|²) = [0.5, 1] (x is an eigenvector of xxᵀ).
    Matrix<double> X(1, 2);
    X << 1, 2;
    Vector<double> y(1);
    y << 3;
    Ridge<double> model({.alpha = 1.0, .fit_intercept = false});
    model.fit(X, y);
    CHECK(model.coef()(0) == doctest::Approx(0.5).epsilon(1e-14));
    CHECK(model.coef()(1) == doctest::Approx(1.0).epsilon(1e-14));
  }
}

TEST_CASE_TEMPLATE("Ridge sample weights act as repeated rows", T, float, double) {
  Matrix<T> X(4, 2);
  X << 1, 0, 2, 1, 3, 5, 4, 2;
  Vector<T> y(4);
  y << 1, 3, 2, 7;
  Vector<T> weights(4);
  weights << 1, 2, 1, 3;
  Matrix<T> Xr(7, 2);
  Xr << 1, 0, 2, 1, 2, 1, 3, 5, 4, 2, 4, 2, 4, 2;
  Vector<T> yr(7);
  yr << 1, 3, 3, 2, 7, 7, 7;
  Ridge<T> weighted({.alpha = 0.5}), repeated({.alpha = 0.5});
  weighted.fit(X, y, weights);
  repeated.fit(Xr, yr);
  const double tolerance = std::is_same_v<T, float> ? 1e-6 : 1e-12;
  CHECK(test::max_relative_error(weighted.coef(), repeated.coef()) < tolerance);
  CHECK(static_cast<double>(weighted.intercept()) ==
        doctest::Approx(static_cast<double>(repeated.intercept())).epsilon(tolerance));
  // A Dataset with weights fits the same.
  Ridge<T> from_dataset({.alpha = 0.5});
  from_dataset.fit(Dataset<T>(X, y, weights));
  CHECK(from_dataset.coef() == weighted.coef());
}

TEST_CASE("Ridge shrinks towards the mean as alpha grows") {
  const auto data = test::load_split<double>("diabetes");
  double previous = std::numeric_limits<double>::infinity();
  for (const double alpha : {0.01, 0.1, 1.0, 10.0, 100.0}) {
    Ridge<double> model({.alpha = alpha});
    model.fit(data.X_train, data.y_train);
    CHECK(model.coef().norm() < previous);
    previous = model.coef().norm();
  }
  // With an enormous penalty every coefficient vanishes and the intercept is the mean of y.
  Ridge<double> flat({.alpha = 1e14});
  flat.fit(data.X_train, data.y_train);
  CHECK(flat.coef().cwiseAbs().maxCoeff() < 1e-9);
  CHECK(flat.intercept() == doctest::Approx(data.y_train.mean()).epsilon(1e-9));
}

TEST_CASE("Ridge parameters by name, refit and Dataset fit") {
  const auto data = test::load_split<double>("diabetes");
  Ridge<double> model;
  CHECK(model.get_params().alpha == 1.0);
  CHECK(model.get_params().fit_intercept);
  CHECK(std::get<double>(model.get_param("alpha")) == 1.0);
  model.set_params({{"alpha", 2.5}, {"fit_intercept", false}});
  CHECK(model.get_params().alpha == 2.5);
  CHECK_FALSE(model.get_params().fit_intercept);
  CHECK_THROWS_WITH_AS(model.set_params({{"lambda", 1.0}}),
                       doctest::Contains("unknown parameter 'lambda'"), onelearn::invalid_argument);

  model.set_params({.alpha = 1.0}).fit(data.X_train.leftCols(3), data.y_train);
  CHECK(model.n_features_in() == 3);
  model.fit(data.X_train, data.y_train);
  Ridge<double> fresh;
  fresh.fit(Dataset<double>(data.X_train, data.y_train));
  CHECK(model.coef() == fresh.coef());
  CHECK(model.intercept() == fresh.intercept());
}

TEST_CASE_TEMPLATE("Ridge rejects bad input with typed errors", T, float, double) {
  Ridge<T> model;
  const Matrix<T> X = Matrix<T>::Random(6, 2);
  const Vector<T> y = Vector<T>::Random(6);
  CHECK_THROWS_WITH_AS((void)model.predict(X),
                       doctest::Contains("Ridge.predict: expected a fitted estimator"),
                       not_fitted_error);
  CHECK_THROWS_WITH_AS((void)model.coef(),
                       doctest::Contains("Ridge.coef: expected a fitted estimator"),
                       not_fitted_error);
  CHECK_THROWS_WITH_AS((void)model.intercept(),
                       doctest::Contains("Ridge.intercept: expected a fitted"), not_fitted_error);

  Ridge<T> negative({.alpha = -1.0});
  CHECK_THROWS_WITH_AS(negative.fit(X, y),
                       doctest::Contains("Ridge.fit: expected alpha >= 0, found -1"),
                       onelearn::invalid_argument);
  Ridge<T> not_a_number({.alpha = std::numeric_limits<double>::quiet_NaN()});
  CHECK_THROWS_WITH_AS(not_a_number.fit(X, y), doctest::Contains("expected alpha >= 0, found nan"),
                       onelearn::invalid_argument);

  CHECK_THROWS_WITH_AS(
      model.fit(X, Vector<T>::Zero(5)),
      doctest::Contains("Ridge.fit: expected y to have 6 entries (one per row of X), found 5"),
      shape_error);
  Matrix<T> bad_X = X;
  bad_X(2, 1) = std::numeric_limits<T>::quiet_NaN();
  CHECK_THROWS_WITH_AS(
      model.fit(bad_X, y),
      doctest::Contains("Ridge.fit: expected finite values in X, found nan at row 2, column 1"),
      onelearn::invalid_argument);
  Vector<T> weights = Vector<T>::Ones(6);
  weights(4) = -1;
  CHECK_THROWS_WITH_AS(model.fit(X, y, weights),
                       doctest::Contains("expected non-negative sample_weight, found -1"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(model.fit(X, y, Vector<T>::Ones(3)),
                       doctest::Contains("expected sample_weight to have 6 entries"), shape_error);
  CHECK_THROWS_WITH_AS(model.fit(Matrix<T>(0, 2), Vector<T>(0)),
                       doctest::Contains("Ridge.fit: expected at least one sample"),
                       onelearn::invalid_argument);
  CHECK_FALSE(model.is_fitted());

  model.fit(X, y);
  CHECK(model.is_fitted());
  CHECK_THROWS_WITH_AS(
      (void)model.predict(Matrix<T>::Ones(1, 3)),
      doctest::Contains("Ridge.predict: expected X with 2 features, as in fit, found 3"),
      shape_error);
  CHECK_THROWS_WITH_AS((void)model.predict(bad_X),
                       doctest::Contains("Ridge.predict: expected finite values in X"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)model.score(X, Vector<T>::Zero(2)),
                       doctest::Contains("Ridge.score: expected y to have 6 entries"), shape_error);
  // A failed fit leaves the estimator unfitted rather than half-updated.
  CHECK_THROWS_AS(model.fit(bad_X, y), onelearn::invalid_argument);
  CHECK_FALSE(model.is_fitted());
}
