#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "onelearn/core/concepts.hpp"
#include "onelearn/metrics/accuracy_score.hpp"
#include "onelearn/neighbors/k_neighbors_classifier.hpp"
#include "onelearn/neighbors/k_neighbors_regressor.hpp"
#include "onelearn/neighbors/nearest_neighbors.hpp"
#include "onelearn/preprocessing/standard_scaler.hpp"
#include "support.hpp"

using namespace onelearn;
using neighbors::KNeighborsClassifier;
using neighbors::KNeighborsRegressor;
using neighbors::NearestNeighbors;

static_assert(check_classifier<KNeighborsClassifier<float>>());
static_assert(check_classifier<KNeighborsClassifier<double>>());
static_assert(check_regressor<KNeighborsRegressor<float>>());
static_assert(check_regressor<KNeighborsRegressor<double>>());

namespace {

// The small case given to scikit-learn 1.2.1 below: np.random.RandomState(0), 10 training rows
// and 3 queries of N(0, 1) rounded to one decimal.
template <class T>
Matrix<T> small_X() {
  Matrix<double> X(10, 3);
  X << 1.8, 0.4, 1.0, 2.2, 1.9, -1.0, 1.0, -0.2, -0.1, 0.4, 0.1, 1.5, 0.8, 0.1, 0.4, 0.3, 1.5, -0.2,
      0.3, -0.9, -2.6, 0.7, 0.9, -0.7, 2.3, -1.5, 0.0, -0.2, 1.5, 1.5;
  return X.cast<T>();
}

template <class T>
Matrix<T> small_Q() {
  Matrix<double> Q(3, 3);
  Q << 0.2, 0.4, -0.9, -2.0, -0.3, 0.2, 1.2, 1.2, -0.4;
  return Q.cast<T>();
}

Labels small_y() {
  Labels y(10);
  y << 7, -2, 7, 30, -2, 7, 30, -2, 7, 30;
  return y;
}

/// Standardised iris/digits as the knn5 reference: StandardScaler fitted on X_train, in double,
/// then converted to T.
template <class T>
test::Split<T, std::int64_t> scaled(const char* name) {
  const auto data = test::load_split<double, std::int64_t>(name);
  preprocessing::StandardScaler<double> scaler;
  scaler.fit(data.X_train);
  return {scaler.transform(data.X_train).template cast<T>(),
          scaler.transform(data.X_test).template cast<T>(), data.y_train, data.y_test};
}

/// The k nearest rows by a plain double loop over every pair and a stable sort: the
/// independent reference for the exact neighbours and the tie order (lower row first).
template <class T>
void naive_kneighbors(const Matrix<T>& X, const Matrix<T>& Q, index_t k, Matrix<double>& dist,
                      Matrix<std::int64_t>& ind) {
  dist.resize(Q.rows(), k);
  ind.resize(Q.rows(), k);
  std::vector<double> d(static_cast<std::size_t>(X.rows()));
  std::vector<std::int64_t> order(static_cast<std::size_t>(X.rows()));
  for (index_t i = 0; i < Q.rows(); ++i) {
    for (index_t j = 0; j < X.rows(); ++j) {
      double s = 0;
      for (index_t c = 0; c < X.cols(); ++c) {
        const double diff = static_cast<double>(Q(i, c)) - static_cast<double>(X(j, c));
        s += diff * diff;
      }
      d[static_cast<std::size_t>(j)] = s;
    }
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
      return d[static_cast<std::size_t>(a)] < d[static_cast<std::size_t>(b)];
    });
    for (index_t m = 0; m < k; ++m) {
      ind(i, m) = order[static_cast<std::size_t>(m)];
      dist(i, m) = std::sqrt(d[static_cast<std::size_t>(ind(i, m))]);
    }
  }
}

}  // namespace

TEST_CASE_TEMPLATE(
    "KNeighborsClassifier(5) matches scikit-learn's accuracy on scaled iris and "
    "digits",
    T, float, double) {
  for (const char* name : {"iris", "digits"}) {
    CAPTURE(name);
    const auto reference = test::sklearn_reference(name);
    const auto data = scaled<T>(name);
    KNeighborsClassifier<T> knn;
    CHECK(&knn.fit(data.X_train, data.y_train) == &knn);
    const double expected = reference["knn5_scaled_test_accuracy"].get<double>();
    // An accuracy is a count over n_test: equal means the same number of correct predictions.
    CHECK(metrics::accuracy_score(data.y_test, knn.predict(data.X_test)) ==
          doctest::Approx(expected).epsilon(1e-12));
    CHECK(static_cast<double>(knn.score(data.X_test, data.y_test)) ==
          doctest::Approx(expected).epsilon(1e-6));
    CHECK(knn.n_samples_fit() == reference["n_train"].get<std::int64_t>());
    CHECK(knn.n_features_in() == reference["n_features"].get<index_t>());
    const Labels expected_classes = std::string(name) == "iris"
                                        ? Labels((Labels(3) << 0, 1, 2).finished())
                                        : Labels(Labels::LinSpaced(10, 0, 9));
    CHECK(knn.classes() == expected_classes);
  }
}

TEST_CASE_TEMPLATE(
    "kneighbors, predict_proba and distance weights match scikit-learn on a small "
    "case",
    T, float, double) {
  // Python (scikit-learn 1.2.1), X, Q and y as small_X/small_Q/small_y:
  //   d, i = NearestNeighbors(n_neighbors=4, algorithm="brute").fit(X).kneighbors(Q)
  //   KNeighborsClassifier(4, weights=w, algorithm="brute").fit(X, y).predict_proba(Q)
  //   KNeighborsRegressor(4, weights="distance", algorithm="brute").fit(X, X[:,0]*2 - X[:,1] +
  //   0.5).predict(Q)
  Matrix<double> distances(3, 4);
  distances << 0.7348469228349536, 1.2806248474865698, 1.3076696830622019, 1.4628738838327795,
      2.758622844826744, 2.8354893757515653, 2.8583211855912904, 2.947880594596735,
      0.6557438524302005, 0.9695359714832655, 1.3601470508735445, 1.4177446878757827;
  Matrix<std::int64_t> indices(3, 4);
  indices << 7, 2, 5, 4, 3, 4, 9, 5, 7, 5, 1, 4;
  Matrix<double> proba_distance(3, 3);
  proba_distance << 0.569474294334956, 0.43052570566504395, 0, 0.25114584368967396,
      0.24157062970986812, 0.5072835266004578, 0.7419490333884101, 0.2580509666115898, 0;
  Matrix<double> proba_uniform(3, 3);
  proba_uniform << 0.5, 0.5, 0, 0.25, 0.25, 0.5, 0.75, 0.25, 0;
  Vector<double> regression(3);
  regression << 1.2619653916972964, 0.3666403665827053, 1.1830850945100695;
  const double tolerance = std::is_same_v<T, float> ? 1e-6 : 1e-14;

  const Matrix<T> X = small_X<T>();
  const Matrix<T> Q = small_Q<T>();
  NearestNeighbors<T> nn({.n_neighbors = 4});
  nn.fit(X);
  const auto [d, i] = nn.kneighbors(Q);
  CHECK(i == indices);
  CHECK(test::max_relative_error(d, distances) < tolerance);
  // Another k for one call: the first columns.
  const auto two = nn.kneighbors(Q, 2);
  CHECK(two.indices == indices.leftCols(2));
  CHECK(nn.n_samples_fit() == 10);

  KNeighborsClassifier<T> by_distance({.n_neighbors = 4, .weights = "distance"});
  by_distance.fit(X, small_y());
  CHECK(by_distance.classes() == (Labels(3) << -2, 7, 30).finished());
  CHECK(test::max_relative_error(by_distance.predict_proba(Q), proba_distance, 1e-3) < tolerance);
  CHECK(by_distance.predict(Q) == (Labels(3) << -2, 30, -2).finished());
  CHECK(by_distance.kneighbors(Q).indices == indices);

  // Uniform: query 0 has two votes for -2 and two for 7; the tie goes to the smaller class.
  KNeighborsClassifier<T> uniform({.n_neighbors = 4});
  uniform.fit(X, small_y());
  CHECK(test::max_relative_error(uniform.predict_proba(Q), proba_uniform, 1e-3) < 1e-15);
  CHECK(uniform.predict(Q) == (Labels(3) << -2, 30, -2).finished());

  const Vector<T> y = (X.col(0) * T(2) - X.col(1)).array() + T(0.5);
  KNeighborsRegressor<T> regressor({.n_neighbors = 4, .weights = "distance"});
  regressor.fit(X, y);
  CHECK(test::max_relative_error(regressor.predict(Q), regression) < tolerance);
  CHECK(regressor.kneighbors(Q, 3).indices == indices.leftCols(3));
}

TEST_CASE_TEMPLATE("KNeighborsRegressor matches scikit-learn's R² on diabetes", T, float, double) {
  // Python (scikit-learn 1.2.1) on tests/data/diabetes:
  //   KNeighborsRegressor(5, weights=w, algorithm="brute").fit(X_train, y_train).score(X_test,
  //   y_test) and .predict(X_test[:3])
  const auto data = test::load_split<T>("diabetes");
  const double tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  KNeighborsRegressor<T> uniform;
  uniform.fit(data.X_train, data.y_train);
  CHECK(static_cast<double>(uniform.score(data.X_test, data.y_test)) ==
        doctest::Approx(0.18912404854026388).epsilon(tolerance));
  CHECK(test::max_relative_error(uniform.predict(data.X_test.topRows(3)),
                                 (Vector<double>(3) << 253.6, 188.6, 183.2).finished()) <
        tolerance);
  KNeighborsRegressor<T> by_distance({.weights = "distance"});
  by_distance.fit(Dataset<T>(data.X_train, data.y_train));
  CHECK(static_cast<double>(by_distance.score(data.X_test, data.y_test)) ==
        doctest::Approx(0.18237700067925677).epsilon(tolerance));
  CHECK(test::max_relative_error(
            by_distance.predict(data.X_test.topRows(3)),
            (Vector<double>(3) << 259.9011729031463, 188.53364529803738, 172.44714653400362)
                .finished()) < tolerance);
}

TEST_CASE_TEMPLATE("kneighbors is exact, with ties to the lower row, far from the origin", T, float,
                   double) {
  // Integer points in {0..4}^3 shifted by 1e4: many exact ties, and the expansion
  // ||q||² - 2 q·x + ||x||² cancels badly (float: ||x||² ~ 3e8, ulp 32, distances 0..48).
  // More rows and queries than one block of either, so the blocking is exercised too.
  const std::uint64_t seed = 2024;
  CAPTURE(seed);
  std::mt19937_64 engine(seed);
  const auto draw = [&] { return static_cast<T>(10000 + static_cast<int>(engine() % 5)); };
  Matrix<T> X(1100, 3), Q(300, 3);
  for (index_t i = 0; i < X.size(); ++i) X.data()[i] = draw();
  for (index_t i = 0; i < Q.size(); ++i) Q.data()[i] = draw();
  for (const index_t k : {index_t{1}, index_t{7}, index_t{60}}) {
    CAPTURE(k);
    Matrix<double> expected_d;
    Matrix<std::int64_t> expected_i;
    naive_kneighbors(X, Q, k, expected_d, expected_i);
    NearestNeighbors<T> nn({.n_neighbors = k, .algorithm = "brute", .metric = "euclidean"});
    nn.fit(X);
    const auto [d, i] = nn.kneighbors(Q);
    CHECK(i == expected_i);
    CHECK(d == expected_d.template cast<T>());
  }
  {
    // Near-ties seen from afar: training rows on a grid with 1e-6 perturbations, queries ~100
    // away. The GEMM's rounding (in float) exceeds the gaps between the neighbours' distances;
    // without the error bound on the selection (c = 0 in detail/brute_force.hpp), 8 of the
    // 1000 float indices below come out wrong (checked by hand when this test was written).
    std::mt19937_64 near_ties(2025);
    Matrix<T> grid(2000, 8), far(200, 8);
    for (index_t i = 0; i < grid.size(); ++i) {
      const auto base = static_cast<double>(near_ties() % 4);
      const auto tiny = static_cast<double>(near_ties() % 4);
      grid.data()[i] = static_cast<T>(base + 1e-6 * tiny);
    }
    for (index_t i = 0; i < far.size(); ++i) {
      far.data()[i] = static_cast<T>(100 + static_cast<double>(near_ties() % 4));
    }
    Matrix<double> expected_d;
    Matrix<std::int64_t> expected_i;
    naive_kneighbors(grid, far, 5, expected_d, expected_i);
    NearestNeighbors<T> nn;
    nn.fit(grid);
    const auto [d, i] = nn.kneighbors(far);
    CHECK(i == expected_i);
    CHECK(d == expected_d.template cast<T>());
  }
  // Every training row is its own nearest neighbour at distance 0 only when it has no
  // duplicate before it: with duplicates, the first copy wins.
  NearestNeighbors<T> nn({.n_neighbors = 1});
  nn.fit(X);
  const auto self = nn.kneighbors(X);
  for (index_t j = 0; j < X.rows(); ++j) {
    index_t first = 0;
    while (X.row(first) != X.row(j)) ++first;
    CHECK(self.indices(j, 0) == first);
    CHECK(self.distances(j, 0) == 0);
  }
}

TEST_CASE_TEMPLATE("distance weights: a query on training rows takes only their votes", T, float,
                   double) {
  // Rows 0 and 3 coincide with the query (label 5, targets 1 and 3); rows 1 and 2 are nearer
  // than any other but get weight 0, as in scikit-learn's _get_weights.
  Matrix<T> X(5, 2);
  X << 1, 1, 1.5, 1, 1, 1.5, 1, 1, 9, 9;
  Labels y(5);
  y << 5, 8, 8, 5, 8;
  Vector<T> targets(5);
  targets << 1, 10, 10, 3, 10;
  Matrix<T> query(2, 2);
  query << 1, 1, 1.25, 1;
  KNeighborsClassifier<T> classifier({.n_neighbors = 4, .weights = "distance"});
  classifier.fit(X, y);
  CHECK(classifier.predict(query)(0) == 5);
  CHECK(classifier.predict_proba(query).row(0) == (Matrix<T>(1, 2) << 1, 0).finished());
  KNeighborsRegressor<T> regressor({.n_neighbors = 4, .weights = "distance"});
  regressor.fit(X, targets);
  CHECK(regressor.predict(query)(0) == T(2));
  // Second query: distances 0.25 (rows 0, 3), 0.25 (row 1), sqrt(0.3125) (row 2): weights
  // 4, 4, 4, 1/sqrt(0.3125); label 5 gets 8, label 8 gets 4 + 1.7888...
  const double w2 = 1 / std::sqrt(0.3125);
  const Matrix<T> proba = classifier.predict_proba(query);
  CHECK(static_cast<double>(proba(1, 0)) ==
        doctest::Approx(8 / (12 + w2)).epsilon(std::is_same_v<T, float> ? 1e-6 : 1e-14));
  CHECK(static_cast<double>(regressor.predict(query)(1)) ==
        doctest::Approx((4 * 1 + 4 * 10 + 4 * 3 + w2 * 10) / (12 + w2))
            .epsilon(std::is_same_v<T, float> ? 1e-6 : 1e-14));
  // Uniform: the plain mean of the 4 nearest targets, 1, 3, 10, 10.
  KNeighborsRegressor<T> mean({.n_neighbors = 4});
  mean.fit(X, targets);
  CHECK(mean.predict(query)(0) == T(6));
}

TEST_CASE_TEMPLATE("KNeighborsClassifier keeps arbitrary labels; parameters take effect", T, float,
                   double) {
  const Matrix<T> X = small_X<T>();
  KNeighborsClassifier<T> knn({.n_neighbors = 1});
  knn.fit(X, small_y());
  CHECK(knn.predict(X) == small_y());
  CHECK(knn.score(X, small_y()) == 1);
  // Refit with other labels forgets the old ones.
  knn.fit(X, Labels(small_y().array() * 3));
  CHECK(knn.classes() == (Labels(3) << -6, 21, 90).finished());
  // set_params by name changes the next predictions: k = 10 votes over every row (4 of label
  // 7, 3 each of -2 and 30).
  knn.set_params({{"n_neighbors", std::int64_t{10}}});
  CHECK(std::get<std::int64_t>(knn.get_param("n_neighbors")) == 10);
  CHECK((knn.predict(small_Q<T>()).array() == 21).all());
  CHECK(params::to_string(knn.get_params()) ==
        "n_neighbors=10, weights=\"uniform\", algorithm=\"auto\", p=2, metric=\"minkowski\"");
  KNeighborsClassifier<T> from_dataset({.n_neighbors = 1});
  from_dataset.fit(ClassificationDataset<T>(X, small_y()));
  CHECK(from_dataset.predict(X) == small_y());
}

TEST_CASE_TEMPLATE("neighbors estimators reject bad input with typed errors", T, float, double) {
  const Matrix<T> X = small_X<T>();
  const Labels y = small_y();
  const Vector<T> targets = X.col(0);
  KNeighborsClassifier<T> knn;
  NearestNeighbors<T> nn;
  KNeighborsRegressor<T> reg;
  CHECK_THROWS_WITH_AS((void)knn.predict(X),
                       doctest::Contains("KNeighborsClassifier.predict: expected a fitted"),
                       not_fitted_error);
  CHECK_THROWS_WITH_AS((void)knn.classes(),
                       doctest::Contains("KNeighborsClassifier.classes: expected a fitted"),
                       not_fitted_error);
  CHECK_THROWS_WITH_AS((void)nn.kneighbors(X),
                       doctest::Contains("NearestNeighbors.kneighbors: expected a fitted"),
                       not_fitted_error);
  CHECK_THROWS_WITH_AS((void)reg.predict(X),
                       doctest::Contains("KNeighborsRegressor.predict: expected a fitted"),
                       not_fitted_error);

  CHECK_THROWS_WITH_AS(
      KNeighborsClassifier<T>({.n_neighbors = 0}).fit(X, y),
      doctest::Contains("KNeighborsClassifier.fit: expected n_neighbors > 0, found 0"),
      onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      NearestNeighbors<T>({.n_neighbors = -3}).fit(X),
      doctest::Contains("NearestNeighbors.fit: expected n_neighbors > 0, found -3"),
      onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      KNeighborsRegressor<T>({.weights = "gaussian"}).fit(X, targets),
      doctest::Contains(
          "KNeighborsRegressor.fit: expected weights \"uniform\" or \"distance\", found "
          "\"gaussian\""),
      onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(NearestNeighbors<T>({.algorithm = "kd_tree"}).fit(X),
                       doctest::Contains("expected algorithm \"auto\" or \"brute\""),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(NearestNeighbors<T>({.metric = "cosine"}).fit(X),
                       doctest::Contains("found \"cosine\""), onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(NearestNeighbors<T>({.p = 1}).fit(X),
                       doctest::Contains("expected p = 2 with metric \"minkowski\""),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      knn.fit(X, Labels::Zero(9)),
      doctest::Contains("KNeighborsClassifier.fit: expected y to have 10 entries (one per row "
                        "of X), found 9"),
      shape_error);
  CHECK_THROWS_AS(reg.fit(X, Vector<T>::Zero(11)), shape_error);
  Matrix<T> bad = X;
  bad(4, 1) = std::numeric_limits<T>::quiet_NaN();
  CHECK_THROWS_WITH_AS(
      knn.fit(bad, y),
      doctest::Contains(
          "KNeighborsClassifier.fit: expected finite values in X, found nan at row 4, column 1"),
      onelearn::invalid_argument);
  Vector<T> bad_targets = targets;
  bad_targets(2) = std::numeric_limits<T>::infinity();
  CHECK_THROWS_WITH_AS(reg.fit(X, bad_targets),
                       doctest::Contains("KNeighborsRegressor.fit: expected finite values in y"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(nn.fit(Matrix<T>(0, 3)),
                       doctest::Contains("NearestNeighbors.fit: expected at least one sample"),
                       onelearn::invalid_argument);
  CHECK_FALSE(knn.is_fitted());
  CHECK_FALSE(reg.is_fitted());

  knn.fit(X, y);
  nn.fit(X);
  CHECK_THROWS_WITH_AS(
      (void)knn.predict(Matrix<T>::Ones(2, 2)),
      doctest::Contains("KNeighborsClassifier.predict: expected X with 3 features, as in fit, "
                        "found 2"),
      shape_error);
  CHECK_THROWS_AS((void)nn.kneighbors(Matrix<T>::Ones(2, 4)), shape_error);
  CHECK_THROWS_WITH_AS((void)knn.predict_proba(bad),
                       doctest::Contains("KNeighborsClassifier.predict_proba: expected finite "
                                         "values in X, found nan at row 4"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      (void)nn.kneighbors(X, 11),
      doctest::Contains("NearestNeighbors.kneighbors: expected n_neighbors <= n_samples_fit = "
                        "10, found n_neighbors = 11"),
      onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      (void)nn.kneighbors(X, 0),
      doctest::Contains("NearestNeighbors.kneighbors: expected n_neighbors > 0, found 0"),
      onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)nn.kneighbors(Matrix<T>(0, 3)),
                       doctest::Contains("expected at least one query row, found 0"),
                       onelearn::invalid_argument);
  // n_neighbors > n_samples is found at predict time, as in scikit-learn.
  KNeighborsClassifier<T> too_many({.n_neighbors = 11});
  too_many.fit(X, y);
  CHECK_THROWS_WITH_AS((void)too_many.predict(X),
                       doctest::Contains("expected n_neighbors <= n_samples_fit = 10"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS((void)knn.score(X, Labels::Zero(3)),
                       doctest::Contains("KNeighborsClassifier.score: expected y to have 10"),
                       shape_error);
  if constexpr (std::is_same_v<T, float>) {
    // Finite values whose squared norm overflows float.
    Matrix<T> huge = X;
    huge(2, 0) = T(3e19);
    CHECK_THROWS_WITH_AS(nn.fit(huge),
                         doctest::Contains("squared norm is finite in the data's precision, "
                                           "found one that overflows at row 2"),
                         onelearn::invalid_argument);
  }
}
