#include <doctest/doctest.h>

#include <limits>

#include "onelearn/preprocessing/standard_scaler.hpp"
#include "support.hpp"

using namespace onelearn;
using preprocessing::StandardScaler;

TEST_CASE_TEMPLATE("StandardScaler matches scikit-learn on iris, digits and diabetes", T, float,
                   double) {
  for (const char* name : {"iris", "digits", "diabetes"}) {
    CAPTURE(name);
    const auto reference = test::sklearn_reference(name);
    const auto data = test::load_split<T, double>(name);
    StandardScaler<T> scaler;
    CHECK(&scaler.fit(data.X_train) == &scaler);
    CHECK(scaler.n_samples_seen() == reference["n_train"].get<std::int64_t>());
    CHECK(scaler.n_features_in() == reference["n_features"].get<index_t>());
    // digits has constant pixels: scikit-learn gives them scale 1, and so must we.
    CHECK(test::max_relative_error(scaler.mean(), test::to_vector<double>(reference["scaler_mean"]),
                                   1e-3) < test::tolerance<T>());
    CHECK(test::max_relative_error(scaler.scale(), test::to_vector<double>(reference["scaler_scale"])) <
          test::tolerance<T>());
  }
}

TEST_CASE_TEMPLATE("StandardScaler output has zero mean and unit variance, and inverts", T, float,
                   double) {
  const auto data = test::load_split<T, double>("diabetes");
  StandardScaler<T> scaler;
  const Matrix<T> Z = scaler.fit_transform(data.X_train);
  const Matrix<double> Zd = Z.template cast<double>();
  const auto n = static_cast<double>(Z.rows());
  CHECK(Zd.colwise().mean().cwiseAbs().maxCoeff() < 10 * test::tolerance<T>());
  const Vector<double> variance =
      (Zd.rowwise() - Zd.colwise().mean()).array().square().colwise().sum().transpose() / n;
  CHECK((variance.array() - 1).abs().maxCoeff() < 10 * test::tolerance<T>());
  CHECK(test::max_relative_error(scaler.inverse_transform(Z), data.X_train, 1e-3) <
        10 * test::tolerance<T>());
}

TEST_CASE("StandardScaler transforms into a caller's buffer as it transforms into a new one") {
  const auto data = test::load_split<double, double>("diabetes");
  StandardScaler<double> scaler;
  scaler.fit(data.X_train);
  Matrix<double> out = Matrix<double>::Constant(data.X_test.rows(), data.X_test.cols(), -7.0);
  scaler.transform(data.X_test, out);
  CHECK(out == scaler.transform(data.X_test));
  // Standardised by hand from the fitted moments.
  const Matrix<double> expected =
      (data.X_test.rowwise() - scaler.mean().transpose()).array().rowwise() /
      scaler.scale().transpose().array();
  CHECK(test::max_relative_error(out, expected, 1e-12) < 1e-14);

  Matrix<double> wrong(data.X_test.rows() + 1, data.X_test.cols());
  CHECK_THROWS_AS(scaler.transform(data.X_test, wrong), shape_error);
  CHECK_THROWS_WITH_AS(scaler.transform(data.X_test, wrong.leftCols(3)),
                       doctest::Contains("expected an output of"), shape_error);
}

TEST_CASE("StandardScaler with_mean and with_std") {
  Matrix<double> X(4, 2);
  X << 1, 10, 2, 10, 3, 10, 4, 10;  // column 1 is constant
  StandardScaler<double> centre_only({.with_std = false});
  const Matrix<double> centred = centre_only.fit_transform(X);
  CHECK(centred(0, 0) == -1.5);
  CHECK(centred(0, 1) == 0);
  CHECK(centre_only.scale() == Vector<double>::Ones(2));

  StandardScaler<double> scale_only({.with_mean = false});
  const Matrix<double> scaled = scale_only.fit_transform(X);
  CHECK(scaled(3, 0) == doctest::Approx(4 / std::sqrt(1.25)));
  CHECK(scaled(3, 1) == 10);  // constant feature: scale 1, and the mean is not removed
  CHECK(scale_only.var()(0) == doctest::Approx(1.25));
}

TEST_CASE("StandardScaler sample weights act as repeated rows") {
  Matrix<double> X(3, 2);
  X << 1, -1, 2, 5, 4, 0.5;
  Vector<double> weights(3);
  weights << 1, 3, 2;
  Matrix<double> repeated(6, 2);
  repeated << 1, -1, 2, 5, 2, 5, 2, 5, 4, 0.5, 4, 0.5;
  StandardScaler<double> weighted, plain;
  weighted.fit(X, weights);
  plain.fit(repeated);
  CHECK(test::max_relative_error(weighted.mean(), plain.mean()) < 1e-14);
  CHECK(test::max_relative_error(weighted.scale(), plain.scale()) < 1e-14);
  CHECK(weighted.n_samples_seen() == 3);  // rows seen, as scikit-learn counts them

  StandardScaler<double> from_dataset;
  from_dataset.fit(Dataset<double>(X, Vector<double>::Zero(3), weights));
  CHECK(from_dataset.mean() == weighted.mean());
}

TEST_CASE("StandardScaler rejects bad input with typed errors") {
  StandardScaler<double> scaler;
  Matrix<double> X = Matrix<double>::Random(5, 3);
  CHECK_THROWS_WITH_AS((void)scaler.transform(X),
                       doctest::Contains("StandardScaler.transform: expected a fitted estimator"),
                       not_fitted_error);
  CHECK_THROWS_AS((void)scaler.mean(), not_fitted_error);

  Matrix<double> bad = X;
  bad(2, 1) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS(scaler.fit(bad),
                       doctest::Contains("StandardScaler.fit: expected finite values in X, found nan at row 2, column 1"),
                       onelearn::invalid_argument);
  bad(2, 1) = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(scaler.fit(bad), onelearn::invalid_argument);

  CHECK_THROWS_WITH_AS(scaler.fit(Matrix<double>(0, 3)),
                       doctest::Contains("expected at least one sample and one feature, found 0 x 3"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(scaler.fit(X, Vector<double>::Ones(4)),
                       doctest::Contains("expected sample_weight to have 5 entries"), shape_error);
  CHECK_THROWS_WITH_AS(scaler.fit(X, -Vector<double>::Ones(5)),
                       doctest::Contains("expected non-negative sample_weight, found -1"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(scaler.fit(X, Vector<double>::Zero(5)),
                       doctest::Contains("expected a positive total sample_weight"),
                       onelearn::invalid_argument);

  scaler.fit(X);
  CHECK_THROWS_WITH_AS((void)scaler.transform(Matrix<double>::Ones(2, 4)),
                       doctest::Contains("expected X with 3 features, as in fit, found 4"),
                       shape_error);
  CHECK_THROWS_AS((void)scaler.inverse_transform(Matrix<double>::Ones(2, 2)), shape_error);

  // A failed refit leaves the scaler unfitted rather than half-updated.
  CHECK_THROWS_AS(scaler.fit(bad), onelearn::invalid_argument);
  CHECK_FALSE(scaler.is_fitted());
}
