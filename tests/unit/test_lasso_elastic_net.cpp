#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>

#include "onelearn/core/concepts.hpp"
#include "onelearn/linear_model/elastic_net.hpp"
#include "onelearn/linear_model/lasso.hpp"
#include "onelearn/preprocessing/standard_scaler.hpp"
#include "support.hpp"

using namespace onelearn;
using linear_model::ElasticNet;
using linear_model::Lasso;
using linear_model::LassoParams;

static_assert(check_regressor<Lasso<float>>());
static_assert(check_regressor<Lasso<double>>());
static_assert(check_regressor<ElasticNet<float>>());
static_assert(check_regressor<ElasticNet<double>>());

namespace {

/// The diabetes split with features standardised by a scaler fitted on the training rows.
template <class T>
test::Split<T> scaled_diabetes() {
  auto data = test::load_split<T>("diabetes");
  preprocessing::StandardScaler<T> scaler;
  scaler.fit(data.X_train);
  data.X_train = scaler.transform(data.X_train);
  data.X_test = scaler.transform(data.X_test);
  return data;
}

/// The gradient of the smooth part, g = Xᵀ(y - X coef - intercept) / n, in double: at an
/// elastic-net optimum g_j = alpha·l1·sign(coef_j) + alpha·(1 - l1)·coef_j where coef_j != 0,
/// and |g_j| <= alpha·l1 where coef_j = 0 (the KKT conditions).
template <class Model>
Vector<double> smooth_gradient(const Model& model, const Matrix<double>& X,
                               const Vector<double>& y) {
  const Vector<double> residual = (y - X * model.coef().template cast<double>()).array() -
                                  static_cast<double>(model.intercept());
  return X.transpose() * residual / static_cast<double>(X.rows());
}

/// Largest violation of the KKT conditions, relative to alpha.
template <class Model, class T>
double kkt_violation(const Model& model, const Matrix<T>& X, const Vector<T>& y, double alpha,
                     double l1_ratio) {
  const Vector<double> g = smooth_gradient(model, Matrix<double>(X.template cast<double>()),
                                           Vector<double>(y.template cast<double>()));
  const Vector<double> w = model.coef().template cast<double>();
  double worst = 0;
  for (index_t j = 0; j < w.size(); ++j) {
    const double violation = w(j) == 0
                                 ? std::max(0.0, std::abs(g(j)) - alpha * l1_ratio)
                                 : std::abs(g(j) - alpha * l1_ratio * (w(j) > 0 ? 1.0 : -1.0) -
                                            alpha * (1 - l1_ratio) * w(j));
    worst = std::max(worst, violation / alpha);
  }
  return worst;
}

}  // namespace

TEST_CASE_TEMPLATE("Lasso matches scikit-learn's test R^2 on standardised diabetes", T, float,
                   double) {
  // The reference is Lasso(alpha=0.1, max_iter=100000, tol=1e-10) on features standardised
  // with a scaler fitted on X_train (bench/anchors/make_fixtures.py). At tol=1e-10 the descent
  // is still ~1e-10 from its limit, so agreement to ~1e-13 means the same passes were made.
  const auto reference = test::sklearn_reference("diabetes");
  const auto data = scaled_diabetes<T>();
  Lasso<T> model({.alpha = 0.1, .max_iter = 100000, .tol = 1e-10});
  CHECK(&model.fit(data.X_train, data.y_train) == &model);
  const auto r2 = static_cast<double>(model.score(data.X_test, data.y_test));
  const double expected = reference["lasso_a0.1_scaled_test_r2"].get<double>();
  MESSAGE("Lasso test R^2 relative error vs scikit-learn: ", std::abs(r2 - expected) / expected,
          " after ", model.n_iter(), " passes");
  CHECK(r2 == doctest::Approx(expected).epsilon(std::is_same_v<T, float> ? 2e-5 : 1e-12));
  CHECK(model.n_iter() >= 1);
  CHECK(model.n_iter() < 100000);
}

TEST_CASE_TEMPLATE("Lasso stops by scikit-learn's duality-gap rule", T, float, double) {
  const auto data = scaled_diabetes<T>();
  const Vector<double> y = data.y_train.template cast<double>();
  const double yc_norm2 = (y.array() - y.mean()).square().sum();
  const auto n = static_cast<double>(y.size());
  for (const double tol : {1e-2, 1e-4, 1e-8}) {
    CAPTURE(tol);
    Lasso<T> model({.alpha = 0.1, .tol = tol});
    model.fit(data.X_train, data.y_train);
    // The gap is reported on the scale of the 1/(2n) objective: below tol · ‖y - mean(y)‖² / n.
    CHECK(static_cast<double>(model.dual_gap()) < tol * yc_norm2 / n);
    CHECK(model.dual_gap() >= 0);
    CHECK(model.n_iter() < 1000);
  }
  // A tighter tolerance takes more passes and ends closer to the optimum.
  Lasso<T> loose({.alpha = 0.1, .tol = 1e-2}), tight({.alpha = 0.1, .tol = 1e-8});
  loose.fit(data.X_train, data.y_train);
  tight.fit(data.X_train, data.y_train);
  CHECK(tight.n_iter() > loose.n_iter());
  CHECK(tight.dual_gap() < loose.dual_gap());
}

TEST_CASE_TEMPLATE("Lasso and ElasticNet solutions satisfy the KKT conditions", T, float, double) {
  const auto data = scaled_diabetes<T>();
  const double tolerance = std::is_same_v<T, float> ? 2e-4 : 1e-7;
  for (const double alpha : {0.05, 0.5, 3.0}) {
    CAPTURE(alpha);
    Lasso<T> lasso({.alpha = alpha, .max_iter = 100000, .tol = 1e-12});
    lasso.fit(data.X_train, data.y_train);
    const double lasso_violation = kkt_violation(lasso, data.X_train, data.y_train, alpha, 1.0);
    MESSAGE("Lasso KKT violation / alpha: ", lasso_violation);
    CHECK(lasso_violation < tolerance);
    CHECK(lasso.n_iter() < 100000);

    for (const double l1_ratio : {0.0, 0.3, 0.8}) {
      CAPTURE(l1_ratio);
      ElasticNet<T> enet({.alpha = alpha, .l1_ratio = l1_ratio, .max_iter = 100000, .tol = 1e-12});
      enet.fit(data.X_train, data.y_train);
      CHECK(kkt_violation(enet, data.X_train, data.y_train, alpha, l1_ratio) < tolerance);
    }
  }
  // Without an intercept the conditions hold for the raw (uncentred) features.
  auto shifted = data.X_train;
  shifted.array() += T(2);
  ElasticNet<T> through_origin(
      {.alpha = 0.2, .l1_ratio = 0.6, .fit_intercept = false, .tol = 1e-12});
  through_origin.fit(shifted, data.y_train);
  CHECK(through_origin.intercept() == 0);
  CHECK(kkt_violation(through_origin, shifted, data.y_train, 0.2, 0.6) < tolerance);
}

TEST_CASE("Lasso and ElasticNet on an orthogonal design are soft-thresholding (by hand)") {
  // Centred, orthogonal columns with ‖x_j‖² = n = 4, so XᵀX / n = I and the problem separates:
  // coef_j = S(z_j, alpha·l1) / (1 + alpha·(1 - l1)) with z = Xᵀy / n and S the soft threshold.
  // y = [3, 1, 2, 6] gives z = [(3 - 1 + 2 - 6) / 4, (3 + 1 - 2 - 6) / 4] = [-0.5, -1],
  // and the intercept is mean(y) = 3 since the columns have mean 0.
  Matrix<double> X(4, 2);
  X << 1, 1, -1, 1, 1, -1, -1, -1;
  Vector<double> y(4);
  y << 3, 1, 2, 6;

  Lasso<double> small({.alpha = 0.3});
  small.fit(X, y);
  CHECK(small.coef()(0) == doctest::Approx(-0.2).epsilon(1e-12));
  CHECK(small.coef()(1) == doctest::Approx(-0.7).epsilon(1e-12));
  CHECK(small.intercept() == doctest::Approx(3.0).epsilon(1e-12));

  Lasso<double> large({.alpha = 0.6});  // |z_0| = 0.5 < 0.6: the first coefficient is zeroed
  large.fit(X, y);
  CHECK(large.coef()(0) == 0.0);
  CHECK(large.coef()(1) == doctest::Approx(-0.4).epsilon(1e-12));

  ElasticNet<double> enet({.alpha = 0.3, .l1_ratio = 0.5});  // threshold 0.15, divisor 1.15
  enet.fit(X, y);
  CHECK(enet.coef()(0) == doctest::Approx(-0.35 / 1.15).epsilon(1e-12));
  CHECK(enet.coef()(1) == doctest::Approx(-0.85 / 1.15).epsilon(1e-12));
  CHECK(enet.intercept() == doctest::Approx(3.0).epsilon(1e-12));
  Matrix<double> x_new(1, 2);
  x_new << 2, -1;
  CHECK(enet.predict(x_new)(0) ==
        doctest::Approx(3.0 + 2 * (-0.35 / 1.15) + 0.85 / 1.15).epsilon(1e-12));
}

TEST_CASE_TEMPLATE("Lasso is zero from alpha_max = max|Xᵀ(y - mean y)| / n on, and not below", T,
                   float, double) {
  const auto data = scaled_diabetes<T>();
  const Matrix<double> X = data.X_train.template cast<double>();
  const Vector<double> y = data.y_train.template cast<double>();
  const Matrix<double> Xc = X.rowwise() - X.colwise().mean();
  const Vector<double> yc = y.array() - y.mean();
  const double alpha_max =
      (Xc.transpose() * yc).cwiseAbs().maxCoeff() / static_cast<double>(y.size());
  Lasso<T> above({.alpha = alpha_max * 1.001});
  above.fit(data.X_train, data.y_train);
  CHECK(above.coef().cwiseAbs().maxCoeff() == 0);
  CHECK(static_cast<double>(above.intercept()) == doctest::Approx(y.mean()).epsilon(1e-6));
  Lasso<T> below({.alpha = alpha_max * 0.95});
  below.fit(data.X_train, data.y_train);
  CHECK((below.coef().array() != 0).count() >= 1);
  // An elastic net with l1_ratio r has the same threshold at alpha_max / r.
  ElasticNet<T> enet({.alpha = alpha_max / 0.5 * 1.001, .l1_ratio = 0.5});
  enet.fit(data.X_train, data.y_train);
  CHECK(enet.coef().cwiseAbs().maxCoeff() == 0);
}

TEST_CASE_TEMPLATE("ElasticNet with l1_ratio = 1 is the Lasso", T, float, double) {
  const auto data = scaled_diabetes<T>();
  for (const double alpha : {0.1, 1.0}) {
    Lasso<T> lasso({.alpha = alpha});
    ElasticNet<T> enet({.alpha = alpha, .l1_ratio = 1.0});
    lasso.fit(data.X_train, data.y_train);
    enet.fit(data.X_train, data.y_train);
    CHECK(enet.coef() == lasso.coef());
    CHECK(enet.intercept() == lasso.intercept());
    CHECK(enet.n_iter() == lasso.n_iter());
    CHECK(enet.dual_gap() == lasso.dual_gap());
  }
}

TEST_CASE_TEMPLATE("Lasso and ElasticNet sample weights act as repeated rows", T, float, double) {
  Matrix<T> X(5, 2);
  X << 1, 0, 2, 1, 3, 5, 4, 2, 0, 3;
  Vector<T> y(5);
  y << 1, 3, 2, 7, 4;
  Vector<T> weights(5);
  weights << 1, 2, 1, 3, 1;
  Matrix<T> Xr(8, 2);
  Xr << 1, 0, 2, 1, 2, 1, 3, 5, 4, 2, 4, 2, 4, 2, 0, 3;
  Vector<T> yr(8);
  yr << 1, 3, 3, 2, 7, 7, 7, 4;
  const double tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-9;
  Lasso<T> weighted({.alpha = 0.2, .tol = 1e-12}), repeated({.alpha = 0.2, .tol = 1e-12});
  weighted.fit(X, y, weights);
  repeated.fit(Xr, yr);
  CHECK(test::max_relative_error(weighted.coef(), repeated.coef(), 1e-6) < tolerance);
  CHECK(static_cast<double>(weighted.intercept()) ==
        doctest::Approx(static_cast<double>(repeated.intercept())).epsilon(tolerance));
  // Only the ratios of the weights matter (they are rescaled to sum to n).
  ElasticNet<T> doubled({.alpha = 0.2, .l1_ratio = 0.4, .tol = 1e-12});
  ElasticNet<T> single({.alpha = 0.2, .l1_ratio = 0.4, .tol = 1e-12});
  doubled.fit(X, y, Vector<T>(weights * T(2)));
  single.fit(Xr, yr);
  CHECK(test::max_relative_error(doubled.coef(), single.coef(), 1e-6) < tolerance);
  ElasticNet<T> from_dataset({.alpha = 0.2, .l1_ratio = 0.4, .tol = 1e-12});
  from_dataset.fit(Dataset<T>(X, y, Vector<T>(weights * T(2))));
  CHECK(from_dataset.coef() == doubled.coef());
}

TEST_CASE("Lasso random selection reaches the cyclic solution, reproducibly") {
  const auto data = scaled_diabetes<double>();
  Lasso<double> cyclic({.alpha = 0.1, .max_iter = 100000, .tol = 1e-12});
  cyclic.fit(data.X_train, data.y_train);
  for (const std::uint32_t seed : {0u, 1u, 12345u}) {
    CAPTURE(seed);
    const LassoParams params{.alpha = 0.1,
                             .max_iter = 100000,
                             .tol = 1e-12,
                             .selection = "random",
                             .random_state = seed};
    Lasso<double> shuffled(params);
    shuffled.fit(data.X_train, data.y_train);
    const double violation = kkt_violation(shuffled, data.X_train, data.y_train, 0.1, 1.0);
    const double distance = test::max_relative_error(shuffled.coef(), cyclic.coef(), 1e-3);
    MESSAGE("random selection: KKT violation / alpha ", violation, ", distance to cyclic ",
            distance);
    CHECK(violation < 1e-6);
    CHECK(distance < 1e-5);
    Lasso<double> again(params);
    again.fit(data.X_train, data.y_train);
    CHECK(again.coef() == shuffled.coef());
    CHECK(again.n_iter() == shuffled.n_iter());
  }
}

TEST_CASE("Lasso stops at max_iter with the gap of the last pass") {
  const auto data = scaled_diabetes<double>();
  Lasso<double> capped({.alpha = 0.01, .max_iter = 2, .tol = 0.0});
  capped.fit(data.X_train, data.y_train);
  CHECK(capped.n_iter() == 2);
  CHECK(capped.dual_gap() > 0);
  Lasso<double> converged({.alpha = 0.01});
  converged.fit(data.X_train, data.y_train);
  CHECK(converged.n_iter() > 2);
  CHECK(converged.dual_gap() < capped.dual_gap());
}

TEST_CASE("Lasso and ElasticNet parameters by name") {
  ElasticNet<double> model;
  CHECK(model.get_params().alpha == 1.0);
  CHECK(model.get_params().l1_ratio == 0.5);
  CHECK(model.get_params().max_iter == 1000);
  CHECK(model.get_params().tol == 1e-4);
  CHECK(model.get_params().selection == "cyclic");
  model.set_params(
      {{"l1_ratio", 0.25}, {"selection", std::string("random")}, {"max_iter", std::int64_t{50}}});
  CHECK(model.get_params().l1_ratio == 0.25);
  CHECK(model.get_params().selection == "random");
  CHECK(model.get_params().max_iter == 50);
  Lasso<double> lasso;
  CHECK_THROWS_WITH_AS(lasso.set_params({{"l1_ratio", 0.5}}),
                       doctest::Contains("unknown parameter 'l1_ratio'"),
                       onelearn::invalid_argument);
  CHECK(params::to_string(lasso.get_params()) ==
        "alpha=1, fit_intercept=true, max_iter=1000, tol=0.0001, selection=\"cyclic\", "
        "random_state=0");
}

TEST_CASE_TEMPLATE("Lasso and ElasticNet reject bad input with typed errors", T, float, double) {
  const Matrix<T> X = Matrix<T>::Random(8, 3);
  const Vector<T> y = Vector<T>::Random(8);
  Lasso<T> lasso;
  ElasticNet<T> enet;
  CHECK_THROWS_WITH_AS((void)lasso.predict(X),
                       doctest::Contains("Lasso.predict: expected a fitted estimator"),
                       not_fitted_error);
  CHECK_THROWS_WITH_AS((void)enet.coef(),
                       doctest::Contains("ElasticNet.coef: expected a fitted estimator"),
                       not_fitted_error);
  CHECK_THROWS_WITH_AS((void)enet.n_iter(),
                       doctest::Contains("ElasticNet.n_iter: expected a fitted"), not_fitted_error);
  CHECK_THROWS_WITH_AS((void)lasso.dual_gap(),
                       doctest::Contains("Lasso.dual_gap: expected a fitted"), not_fitted_error);

  CHECK_THROWS_WITH_AS(Lasso<T>({.alpha = -0.5}).fit(X, y),
                       doctest::Contains("Lasso.fit: expected alpha >= 0, found -0.5"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(ElasticNet<T>({.l1_ratio = 1.5}).fit(X, y),
                       doctest::Contains("ElasticNet.fit: expected l1_ratio in [0, 1], found 1.5"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(ElasticNet<T>({.l1_ratio = -0.1}).fit(X, y),
                       doctest::Contains("expected l1_ratio in [0, 1], found -0.1"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(Lasso<T>({.max_iter = 0}).fit(X, y),
                       doctest::Contains("Lasso.fit: expected max_iter >= 1, found 0"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(ElasticNet<T>({.tol = -1e-3}).fit(X, y),
                       doctest::Contains("ElasticNet.fit: expected tol >= 0, found -0.001"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      Lasso<T>({.selection = "shuffle"}).fit(X, y),
      doctest::Contains(
          "Lasso.fit: expected selection \"cyclic\" or \"random\", found \"shuffle\""),
      onelearn::invalid_argument);

  Matrix<T> bad_X = X;
  bad_X(5, 0) = std::numeric_limits<T>::infinity();
  CHECK_THROWS_WITH_AS(
      lasso.fit(bad_X, y),
      doctest::Contains("Lasso.fit: expected finite values in X, found inf at row 5, column 0"),
      onelearn::invalid_argument);
  Vector<T> bad_y = y;
  bad_y(1) = std::numeric_limits<T>::quiet_NaN();
  CHECK_THROWS_WITH_AS(
      enet.fit(X, bad_y),
      doctest::Contains("ElasticNet.fit: expected finite values in y, found nan at row 1"),
      onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      enet.fit(X, Vector<T>::Zero(7)),
      doctest::Contains("ElasticNet.fit: expected y to have 8 entries (one per row of X), found 7"),
      shape_error);
  CHECK_THROWS_WITH_AS(
      lasso.fit(X, y, Vector<T>::Zero(8)),
      doctest::Contains("Lasso.fit: expected a positive total sample_weight, found 0"),
      onelearn::invalid_argument);
  CHECK_FALSE(lasso.is_fitted());

  lasso.fit(X, y);
  CHECK_THROWS_WITH_AS(
      (void)lasso.predict(Matrix<T>::Ones(2, 4)),
      doctest::Contains("Lasso.predict: expected X with 3 features, as in fit, found 4"),
      shape_error);
  CHECK_THROWS_WITH_AS((void)lasso.score(X, Vector<T>::Zero(3)),
                       doctest::Contains("Lasso.score: expected y to have 8 entries"), shape_error);
}
