#include <doctest/doctest.h>

#include <limits>
#include <random>

#include <Eigen/SVD>

#include "onelearn/linear_model/linear_regression.hpp"
#include "onelearn/metrics/r2_score.hpp"
#include "onelearn/preprocessing/standard_scaler.hpp"
#include "support.hpp"

using namespace onelearn;
using linear_model::LinearRegression;

TEST_CASE_TEMPLATE("LinearRegression matches scikit-learn's test R^2 on diabetes", T, float, double) {
  const auto reference = test::sklearn_reference("diabetes");
  const auto data = test::load_split<T>("diabetes");
  LinearRegression<T> model;
  CHECK(&model.fit(data.X_train, data.y_train) == &model);
  const double expected = reference["linreg_test_r2"].get<double>();
  CHECK(model.score(data.X_test, data.y_test) == doctest::Approx(expected).epsilon(test::tolerance<T>()));
  CHECK(model.rank() == 10);
}

TEST_CASE_TEMPLATE("LinearRegression recovers an exact linear relation", T, float, double) {
  std::mt19937_64 engine(7);
  std::normal_distribution<double> normal;
  const index_t n = 200;
  const index_t p = 5;
  Matrix<double> X(n, p);
  for (index_t i = 0; i < X.size(); ++i) X.data()[i] = normal(engine);
  Vector<double> coef(p);
  coef << 1.5, -2, 0.25, 4, -0.5;
  const Vector<double> y = (X * coef).array() + 3.0;

  LinearRegression<T> model;
  model.fit(X.cast<T>(), y.cast<T>());
  CHECK(test::max_relative_error(model.coef(), coef) < 10 * test::tolerance<T>());
  CHECK(model.intercept() == doctest::Approx(3.0).epsilon(10 * test::tolerance<T>()));
  CHECK(model.score(X.cast<T>(), y.cast<T>()) == doctest::Approx(1.0).epsilon(test::tolerance<T>()));

  // Without an intercept the line goes through the origin: compare with the normal equations.
  LinearRegression<double> through_origin({.fit_intercept = false});
  through_origin.fit(X, y);
  const Vector<double> expected = (X.transpose() * X).ldlt().solve(X.transpose() * y);
  CHECK(test::max_relative_error(through_origin.coef(), expected) < 1e-10);
  CHECK(through_origin.intercept() == 0);
}

TEST_CASE("LinearRegression singular values are those of the centred X") {
  const auto data = test::load_split<double>("diabetes");
  LinearRegression<double> model;
  model.fit(data.X_train, data.y_train);
  const Matrix<double> centred = data.X_train.rowwise() - data.X_train.colwise().mean();
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(centred);
  CHECK(test::max_relative_error(model.singular(), svd.singularValues()) < 1e-10);
}

TEST_CASE("LinearRegression on collinear features gives the minimum-norm solution, like lstsq") {
  // Two identical columns: any split of the slope fits; lstsq picks the equal split.
  Matrix<double> X(6, 2);
  Vector<double> y(6);
  for (index_t i = 0; i < 6; ++i) {
    X(i, 0) = X(i, 1) = static_cast<double>(i);
    y(i) = 4.0 * static_cast<double>(i) + 1;
  }
  LinearRegression<double> model;
  model.fit(X, y);
  CHECK(model.rank() == 1);
  CHECK(model.coef()(0) == doctest::Approx(2.0).epsilon(1e-12));
  CHECK(model.coef()(1) == doctest::Approx(2.0).epsilon(1e-12));
  CHECK(model.intercept() == doctest::Approx(1.0).epsilon(1e-12));
}

TEST_CASE("LinearRegression sample weights act as repeated rows") {
  Matrix<double> X(4, 2);
  X << 1, 0, 2, 1, 3, 5, 4, 2;
  Vector<double> y(4);
  y << 1, 3, 2, 7;
  Vector<double> weights(4);
  weights << 1, 2, 1, 3;
  Matrix<double> Xr(7, 2);
  Xr << 1, 0, 2, 1, 2, 1, 3, 5, 4, 2, 4, 2, 4, 2;
  Vector<double> yr(7);
  yr << 1, 3, 3, 2, 7, 7, 7;
  LinearRegression<double> weighted, repeated;
  weighted.fit(X, y, weights);
  repeated.fit(Xr, yr);
  CHECK(test::max_relative_error(weighted.coef(), repeated.coef()) < 1e-12);
  CHECK(weighted.intercept() == doctest::Approx(repeated.intercept()).epsilon(1e-12));
}

TEST_CASE("LinearRegression refits from scratch and fits a Dataset") {
  const auto data = test::load_split<double>("diabetes");
  LinearRegression<double> model;
  model.fit(data.X_train.leftCols(3), data.y_train);
  model.fit(data.X_train, data.y_train);
  LinearRegression<double> fresh;
  fresh.fit(Dataset<double>(data.X_train, data.y_train));
  CHECK(model.coef() == fresh.coef());
  CHECK(model.n_features_in() == 10);
}

TEST_CASE("LinearRegression rejects bad input with typed errors") {
  LinearRegression<double> model;
  const Matrix<double> X = Matrix<double>::Random(6, 2);
  const Vector<double> y = Vector<double>::Random(6);
  CHECK_THROWS_WITH_AS((void)model.predict(X),
                       doctest::Contains("LinearRegression.predict: expected a fitted estimator"),
                       not_fitted_error);
  CHECK_THROWS_AS((void)model.coef(), not_fitted_error);
  CHECK_THROWS_WITH_AS(model.fit(X, Vector<double>::Zero(5)),
                       doctest::Contains("LinearRegression.fit: expected y to have 6 entries (one per row of X), found 5"),
                       shape_error);
  Vector<double> bad_y = y;
  bad_y(3) = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH_AS(model.fit(X, bad_y), doctest::Contains("expected finite values in y, found inf at row 3"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(model.fit(Matrix<double>(0, 2), Vector<double>(0)),
                       doctest::Contains("expected at least one sample"), onelearn::invalid_argument);
  model.fit(X, y);
  CHECK_THROWS_WITH_AS((void)model.predict(Matrix<double>::Ones(1, 3)),
                       doctest::Contains("expected X with 2 features, as in fit, found 3"), shape_error);
  CHECK_THROWS_WITH_AS((void)model.score(X, Vector<double>::Zero(2)),
                       doctest::Contains("LinearRegression.score: expected y to have 6 entries"), shape_error);
}

TEST_CASE("r2_score follows scikit-learn on constant targets") {
  Vector<double> constant = Vector<double>::Constant(3, 2.0);
  Vector<double> other(3);
  other << 1, 2, 3;
  CHECK(metrics::r2_score<double>(constant, constant) == 1.0);
  CHECK(metrics::r2_score<double>(constant, other) == 0.0);
  CHECK(metrics::r2_score<double>(other, Vector<double>::Constant(3, 2.0)) == 0.0);
  CHECK(metrics::r2_score<double>(other, other) == 1.0);
}
