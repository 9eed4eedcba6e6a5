#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <sstream>
#include <string>

#include "onelearn/core/concepts.hpp"
#include "onelearn/decomposition/pca.hpp"
#include "support.hpp"

using namespace onelearn;
using decomposition::PCA;
using decomposition::PCAParams;

static_assert(check_transformer<PCA<double>>());
static_assert(concepts::Transformer<PCA<float>>);

namespace {

/// Sample covariance (ddof = 1) of the columns of X, in double, written out independently.
template <class T>
Matrix<double> covariance(const Matrix<T>& X) {
  const Matrix<double> centred =
      X.template cast<double>().rowwise() - X.template cast<double>().colwise().mean();
  return centred.transpose() * centred / static_cast<double>(X.rows() - 1);
}

}  // namespace

TEST_CASE_TEMPLATE(
    "PCA matches scikit-learn's explained variance ratio on iris, digits and diabetes", T, float,
    double) {
  for (const char* name : {"iris", "digits", "diabetes"}) {
    CAPTURE(name);
    const auto reference = test::sklearn_reference(name);
    const auto data = test::load_split<T, double>(name);
    PCA<T> pca({.n_components = 4});
    CHECK(&pca.fit(data.X_train) == &pca);
    const Vector<double> expected =
        test::to_vector<double>(reference["pca_explained_variance_ratio"]);
    // digits' reference comes from scikit-learn's randomized solver ("auto" picks it for
    // 1347 x 64), which is within ~5e-11 of the exact one.
    const double error = test::max_relative_error(pca.explained_variance_ratio(), expected);
    std::ostringstream report;
    report << name << ": explained_variance_ratio max relative error " << std::setprecision(3)
           << error;
    MESSAGE(report.str());
    CHECK(error < (std::is_same_v<T, float> ? 1e-5 : 1e-9));
    // The mean is the one scikit-learn's StandardScaler computed on the same rows.
    CHECK(test::max_relative_error(pca.mean(), test::to_vector<double>(reference["scaler_mean"]),
                                   1e-3) < test::tolerance<T>());
    CHECK(pca.n_samples() == reference["n_train"].get<std::int64_t>());
    CHECK(pca.n_features_in() == reference["n_features"].get<index_t>());
  }
}

TEST_CASE_TEMPLATE("PCA components are the covariance's leading eigenvectors, signed as svd_flip",
                   T, float, double) {
  const auto data = test::load_split<T, double>("diabetes");
  const Matrix<T>& X = data.X_train;
  const index_t k = 5;
  PCA<T> pca({.n_components = k});
  pca.fit(X);
  const double tolerance = std::is_same_v<T, float> ? 1e-4 : 1e-10;

  const Matrix<double> V = pca.components().template cast<double>();  // k x p
  CHECK(V.rows() == k);
  CHECK(V.cols() == X.cols());
  // Orthonormal rows.
  CHECK((V * V.transpose() - Matrix<double>::Identity(k, k)).cwiseAbs().maxCoeff() < tolerance);
  // C v = lambda v, with lambda = explained_variance, decreasing; ratio = lambda / trace(C).
  const Matrix<double> C = covariance(X);
  const Vector<double> variance = pca.explained_variance().template cast<double>();
  for (index_t j = 0; j < k; ++j) {
    CAPTURE(j);
    const Vector<double> v = V.row(j).transpose();
    CHECK((C * v - variance(j) * v).norm() < tolerance * variance(0));
    if (j > 0) CHECK(variance(j) <= variance(j - 1));
  }
  CHECK(test::max_relative_error(pca.explained_variance_ratio(), variance / C.trace()) < tolerance);
  // singular values of Xc: s^2 / (n - 1) = explained variance.
  const Vector<double> s = pca.singular_values().template cast<double>();
  CHECK(test::max_relative_error(s.array().square().matrix() / static_cast<double>(X.rows() - 1),
                                 variance) < tolerance);
  // noise variance: the mean of the discarded variances (p - k of them; n > p here).
  CHECK(static_cast<double>(pca.noise_variance()) ==
        doctest::Approx((C.trace() - variance.sum()) / static_cast<double>(X.cols() - k))
            .epsilon(std::is_same_v<T, float> ? 1e-4 : 1e-9));

  // transform = (X - mean) V^T; the scores are uncorrelated with the explained variances, and
  // (svd_flip) the largest-magnitude score of each component is positive.
  const Matrix<double> Xc =
      X.template cast<double>().rowwise() - X.template cast<double>().colwise().mean();
  const Matrix<double> scores = pca.transform(X).template cast<double>();
  CHECK(test::max_relative_error(scores, Xc * V.transpose(), 1.0) < tolerance);
  const Matrix<double> score_cov = scores.transpose() * scores / static_cast<double>(X.rows() - 1);
  CHECK((score_cov - Matrix<double>(variance.asDiagonal())).cwiseAbs().maxCoeff() <
        tolerance * variance(0));
  for (index_t j = 0; j < k; ++j) {
    index_t at = 0;
    scores.col(j).cwiseAbs().maxCoeff(&at);
    CHECK(scores(at, j) > 0);
  }
  CHECK(pca.fit_transform(X) == pca.transform(X));
}

TEST_CASE("PCA of a known 2-d cloud: variances, components and signs") {
  // Rows m + a_i u + b_i w with u = (0.6, 0.8), w = (-0.8, 0.6), sum a = sum b = sum a b = 0:
  // Xc^T Xc = 22 u u^T + 0.365 w w^T. The largest |a| is a_0 = -4 and the largest |b| is
  // b_3 = -0.35, so svd_flip makes the components -u and -w.
  const std::array<double, 5> a{-4, 1, 0, 1, 2};
  const std::array<double, 5> b{0, -0.25, 0.3, -0.35, 0.3};
  Matrix<double> X(5, 2);
  for (std::size_t i = 0; i < 5; ++i) {
    X(static_cast<index_t>(i), 0) = 1 + 0.6 * a[i] - 0.8 * b[i];
    X(static_cast<index_t>(i), 1) = 2 + 0.8 * a[i] + 0.6 * b[i];
  }
  PCA<double> pca({.n_components = 2});
  pca.fit(X);
  CHECK(pca.mean()(0) == doctest::Approx(1).epsilon(1e-14));
  CHECK(pca.mean()(1) == doctest::Approx(2).epsilon(1e-14));
  CHECK(pca.explained_variance()(0) == doctest::Approx(22.0 / 4).epsilon(1e-12));
  CHECK(pca.explained_variance()(1) == doctest::Approx(0.365 / 4).epsilon(1e-12));
  CHECK(pca.explained_variance_ratio()(0) == doctest::Approx(22 / 22.365).epsilon(1e-12));
  CHECK(pca.explained_variance_ratio()(1) == doctest::Approx(0.365 / 22.365).epsilon(1e-12));
  CHECK(pca.singular_values()(0) == doctest::Approx(std::sqrt(22.0)).epsilon(1e-12));
  CHECK(pca.singular_values()(1) == doctest::Approx(std::sqrt(0.365)).epsilon(1e-12));
  Matrix<double> expected(2, 2);
  expected << -0.6, -0.8, 0.8, -0.6;
  CHECK((pca.components() - expected).cwiseAbs().maxCoeff() < 1e-12);
  CHECK(pca.noise_variance() == 0);  // nothing discarded
  const Matrix<double> scores = pca.transform(X);
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(scores(static_cast<index_t>(i), 0) == doctest::Approx(-a[i]).epsilon(1e-12));
    CHECK(scores(static_cast<index_t>(i), 1) == doctest::Approx(-b[i]).epsilon(1e-12));
  }

  // One component: the discarded variance is the noise variance.
  PCA<double> one({.n_components = 1});
  one.fit(X);
  CHECK(one.noise_variance() == doctest::Approx(0.365 / 4).epsilon(1e-10));
  CHECK((one.components() - expected.topRows(1)).cwiseAbs().maxCoeff() < 1e-12);
}

TEST_CASE_TEMPLATE("PCA reconstructs exactly with all components, and whitens", T, float, double) {
  const auto data = test::load_split<T, double>("iris");
  const Matrix<T>& X = data.X_train;
  const double tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  PCA<T> full({.n_components = X.cols()});
  const Matrix<T> Z = full.fit_transform(X);
  CHECK(test::max_relative_error(full.inverse_transform(Z), X, 1.0) < tolerance);
  CHECK(full.noise_variance() == T(0));
  CHECK(static_cast<double>(full.explained_variance_ratio().sum()) ==
        doctest::Approx(1).epsilon(tolerance));

  // Fewer components: inverse_transform is the projection onto their span (idempotent).
  PCA<T> two({.n_components = 2});
  const Matrix<T> projected = two.inverse_transform(two.fit_transform(X));
  CHECK(test::max_relative_error(two.inverse_transform(two.transform(projected)), projected, 1.0) <
        10 * tolerance);

  // Whitening: unit variance (ddof = 1), uncorrelated scores; inverse_transform undoes it.
  PCA<T> white({.n_components = 3, .whiten = true});
  const Matrix<double> W = white.fit_transform(X).template cast<double>();
  const Matrix<double> W_cov = W.transpose() * W / static_cast<double>(X.rows() - 1);
  CHECK((W_cov - Matrix<double>::Identity(3, 3)).cwiseAbs().maxCoeff() < 10 * tolerance);
  // Whitening changes the scores, not the components.
  CHECK(test::max_relative_error(white.components().topRows(2), two.components(), 1.0) < tolerance);
  const Matrix<T> unwhitened = white.inverse_transform(white.transform(X));
  PCA<T> three({.n_components = 3});
  CHECK(test::max_relative_error(unwhitened, three.inverse_transform(three.fit_transform(X)), 1.0) <
        10 * tolerance);

  CHECK(white.get_params().n_components == 3);
  CHECK(white.get_params().whiten);
  CHECK(params::to_string(white.get_params()) == "n_components=3, whiten=true");
  PCA<T> from_dataset({.n_components = 2});
  CHECK(from_dataset.fit(Dataset<T>(X)).components() == two.components());
}

TEST_CASE("PCA rejects bad input with typed errors") {
  Matrix<double> X(5, 4);
  X << 1, 2, 3, 4, 2, 1, 0, 3, 5, 5, 1, 2, 0, 1, 7, 7, 3, 3, 3, 1;
  PCA<double> pca({.n_components = 2});
  CHECK_THROWS_WITH_AS((void)pca.transform(X),
                       doctest::Contains("PCA.transform: expected a fitted estimator"),
                       not_fitted_error);
  CHECK_THROWS_WITH_AS((void)pca.inverse_transform(Matrix<double>::Ones(2, 2)),
                       doctest::Contains("PCA.inverse_transform: expected a fitted estimator"),
                       not_fitted_error);
  CHECK_THROWS_WITH_AS((void)pca.components(),
                       doctest::Contains("PCA.components: expected a fitted estimator"),
                       not_fitted_error);
  CHECK_THROWS_AS((void)pca.explained_variance(), not_fitted_error);
  CHECK_THROWS_AS((void)pca.noise_variance(), not_fitted_error);

  const auto fit_with = [&](std::int64_t k, const Matrix<double>& data) {
    PCA<double>({.n_components = k}).fit(data);
  };
  CHECK_THROWS_WITH_AS(
      fit_with(0, X),
      doctest::Contains(
          "PCA.fit: expected 1 <= n_components <= min(n_samples, n_features) = 4, found 0"),
      onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      fit_with(5, X),
      doctest::Contains(
          "PCA.fit: expected 1 <= n_components <= min(n_samples, n_features) = 4, found 5"),
      onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      fit_with(4, X.topRows(3)),
      doctest::Contains(
          "PCA.fit: expected 1 <= n_components <= min(n_samples, n_features) = 3, found 4"),
      onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      fit_with(1, X.topRows(1)),
      doctest::Contains(
          "PCA.fit: expected at least 2 samples (variances divide by n_samples - 1), found 1"),
      onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      fit_with(1, Matrix<double>(0, 4)),
      doctest::Contains("PCA.fit: expected at least one sample and one feature, found 0 x 4"),
      onelearn::invalid_argument);
  Matrix<double> bad = X;
  bad(3, 2) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS(
      fit_with(2, bad),
      doctest::Contains("PCA.fit: expected finite values in X, found nan at row 3, column 2"),
      onelearn::invalid_argument);

  pca.fit(X);
  CHECK(pca.is_fitted());
  CHECK_THROWS_WITH_AS(
      (void)pca.transform(Matrix<double>::Ones(2, 3)),
      doctest::Contains("PCA.transform: expected X with 4 features, as in fit, found 3"),
      shape_error);
  CHECK_THROWS_WITH_AS(
      (void)pca.transform(bad),
      doctest::Contains("PCA.transform: expected finite values in X, found nan at row 3, column 2"),
      onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      (void)pca.inverse_transform(Matrix<double>::Ones(2, 4)),
      doctest::Contains("PCA.inverse_transform: expected X with 2 columns (n_components), found 4"),
      shape_error);

  // A failed refit leaves the estimator unfitted.
  CHECK_THROWS_AS(pca.fit(bad), onelearn::invalid_argument);
  CHECK_FALSE(pca.is_fitted());
}
