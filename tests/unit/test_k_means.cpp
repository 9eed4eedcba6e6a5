#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "onelearn/cluster/k_means.hpp"
#include "onelearn/core/concepts.hpp"
#include "onelearn/preprocessing/standard_scaler.hpp"
#include "support.hpp"

using namespace onelearn;
using cluster::KMeans;
using cluster::KMeansParams;

static_assert(check_transformer<KMeans<double>>());
static_assert(concepts::Predictor<KMeans<float>> && concepts::Transformer<KMeans<float>>);

namespace {

/// sum_i ||x_i - c_{label_i}||^2 in double: the k-means objective, written out independently.
template <class T>
double objective(const Matrix<T>& X, const Matrix<T>& centers, const Labels& labels) {
  double total = 0;
  for (index_t i = 0; i < X.rows(); ++i) {
    for (index_t j = 0; j < X.cols(); ++j) {
      const double d = static_cast<double>(X(i, j)) - static_cast<double>(centers(labels(i), j));
      total += d * d;
    }
  }
  return total;
}

/// Brute-force nearest centre of each row (first on ties).
template <class T>
Labels nearest(const Matrix<T>& X, const Matrix<T>& centers) {
  Labels out(X.rows());
  for (index_t i = 0; i < X.rows(); ++i) {
    double best = std::numeric_limits<double>::infinity();
    for (index_t c = 0; c < centers.rows(); ++c) {
      const double d =
          (X.row(i).template cast<double>() - centers.row(c).template cast<double>()).squaredNorm();
      if (d < best) {
        best = d;
        out(i) = c;
      }
    }
  }
  return out;
}

/// Well-separated blobs: `per_blob` points around each row of `centres`, uniform noise in
/// [-spread, spread] per coordinate, drawn from `seed`. Rows are blob 0's, then blob 1's, ...
Matrix<double> blobs(const Matrix<double>& centres, index_t per_blob, double spread,
                     std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> noise(-spread, spread);
  Matrix<double> X(centres.rows() * per_blob, centres.cols());
  for (index_t b = 0; b < centres.rows(); ++b) {
    for (index_t i = 0; i < per_blob; ++i) {
      for (index_t j = 0; j < centres.cols(); ++j) {
        X(b * per_blob + i, j) = centres(b, j) + noise(engine);
      }
    }
  }
  return X;
}

}  // namespace

TEST_CASE_TEMPLATE("KMeans matches scikit-learn's inertia on iris, digits and diabetes", T, float,
                   double) {
  // scikit-learn: KMeans(3, init=Z[:3], n_init=1, max_iter=300, tol=0, algorithm="lloyd") on
  // the standardized X_train Z.
  for (const char* name : {"iris", "digits", "diabetes"}) {
    CAPTURE(name);
    const auto reference = test::sklearn_reference(name);
    const auto data = test::load_split<T, double>(name);
    const Matrix<T> Z = preprocessing::StandardScaler<T>().fit_transform(data.X_train);

    KMeans<T> km({.n_clusters = 3, .n_init = 1, .max_iter = 300, .tol = 0});
    CHECK(&km.set_init(Z.topRows(3)).fit(Z) == &km);
    CHECK(km.get_params().init == "given");
    const double expected = reference["kmeans_k3_init_first3_scaled_inertia"].get<double>();
    const double tolerance = std::is_same_v<T, float> ? 1e-4 : 1e-9;
    CHECK(static_cast<double>(km.inertia()) == doctest::Approx(expected).epsilon(tolerance));
    std::ostringstream report;
    report << std::setprecision(17) << name << ": inertia " << static_cast<double>(km.inertia())
           << " (scikit-learn " << expected << "), " << km.n_iter() << " iterations";
    MESSAGE(report.str());

    // Independent checks of what Lloyd converged to: labels are the nearest centres, each centre
    // is the mean of its rows, and the inertia is the objective of those labels and centres.
    const Matrix<T>& centers = km.cluster_centers();
    CHECK(centers.rows() == 3);
    CHECK(centers.cols() == Z.cols());
    CHECK(km.labels() == nearest(Z, centers));
    CHECK(km.predict(Z) == km.labels());
    CHECK(objective(Z, centers, km.labels()) ==
          doctest::Approx(static_cast<double>(km.inertia())).epsilon(tolerance));
    for (index_t c = 0; c < 3; ++c) {
      Vector<double> sum = Vector<double>::Zero(Z.cols());
      double count = 0;
      for (index_t i = 0; i < Z.rows(); ++i) {
        if (km.labels()(i) != c) continue;
        sum += Z.row(i).template cast<double>().transpose();
        count += 1;
      }
      CHECK(count > 0);
      CHECK(test::max_relative_error(centers.row(c).transpose(), sum / count, 1e-3) <
            (std::is_same_v<T, float> ? 1e-4 : 1e-10));
    }
    CHECK(static_cast<double>(km.score(Z)) ==
          doctest::Approx(-static_cast<double>(km.inertia())).epsilon(tolerance));
    CHECK(km.n_iter() >= 1);
    CHECK(km.n_iter() < 300);
  }
}

TEST_CASE_TEMPLATE("KMeans with k-means++ recovers well-separated blobs", T, float, double) {
  const std::uint64_t seed = 20240611;
  MESSAGE("random seed ", seed);
  Matrix<double> centres(4, 3);
  centres << 0, 0, 0, 10, 0, 0, 0, 10, 0, 0, 0, 10;
  const index_t per_blob = 50;
  const Matrix<T> X = blobs(centres, per_blob, 1.0, seed).cast<T>();

  for (std::uint64_t random_state : {0ULL, 1ULL, 42ULL}) {
    CAPTURE(random_state);
    KMeans<T> km({.n_clusters = 4, .random_state = random_state});
    km.fit(X);
    // Each blob is one cluster, and the four clusters are different.
    std::set<std::int64_t> seen;
    for (index_t b = 0; b < 4; ++b) {
      const auto label = km.labels()(b * per_blob);
      CHECK((km.labels().segment(b * per_blob, per_blob).array() == label).all());
      seen.insert(label);
      // Its centre is the blob's sample mean, within the noise of the true centre.
      const Vector<double> blob_mean =
          X.middleRows(b * per_blob, per_blob).template cast<double>().colwise().mean().transpose();
      CHECK(test::max_relative_error(km.cluster_centers().row(label).transpose(), blob_mean, 1.0) <
            1e-5);
      CHECK((km.cluster_centers().row(label).template cast<double>() - centres.row(b)).norm() <
            0.5);
    }
    CHECK(seen.size() == 4);
    // The inertia of that clustering, from the blob means.
    double expected = 0;
    for (index_t b = 0; b < 4; ++b) {
      const Matrix<double> blob = X.middleRows(b * per_blob, per_blob).template cast<double>();
      expected += (blob.rowwise() - blob.colwise().mean()).squaredNorm();
    }
    CHECK(static_cast<double>(km.inertia()) ==
          doctest::Approx(expected).epsilon(std::is_same_v<T, float> ? 1e-5 : 1e-12));

    // The same seed gives the same centres.
    KMeans<T> again({.n_clusters = 4, .n_init = 10, .random_state = random_state});
    CHECK(again.fit(X).cluster_centers() == km.cluster_centers());
  }

  // One seeding is enough here too, and k-means++ never picks the same row twice for
  // well-separated blobs: predict on the true centres gives four different labels.
  KMeans<T> once({.n_clusters = 4, .n_init = 1, .random_state = 7});
  const Labels of_centres = once.fit(X).predict(centres.cast<T>());
  CHECK(std::set<std::int64_t>(of_centres.data(), of_centres.data() + 4).size() == 4);
}

TEST_CASE("KMeans relocates an empty cluster to the farthest point") {
  // Start: centres 1, 11 and 1000. Nothing is nearest to 1000; the point farthest from its
  // centre is 30 (19 from 11), so the empty cluster restarts at 30 and 30 leaves cluster 1.
  Matrix<double> X(7, 1);
  X << 0, 1, 2, 10, 11, 12, 30;
  Matrix<double> init(3, 1);
  init << 1, 11, 1000;
  for (double tol : {0.0, 1e-4}) {
    CAPTURE(tol);
    KMeans<double> km({.n_clusters = 3, .tol = tol});
    km.set_init(init).fit(X);
    CHECK(km.cluster_centers()(0, 0) == doctest::Approx(1).epsilon(1e-12));
    CHECK(km.cluster_centers()(1, 0) == doctest::Approx(11).epsilon(1e-12));
    CHECK(km.cluster_centers()(2, 0) == doctest::Approx(30).epsilon(1e-12));
    Labels expected(7);
    expected << 0, 0, 0, 1, 1, 1, 2;
    CHECK(km.labels() == expected);
    CHECK(km.inertia() == doctest::Approx(4).epsilon(1e-12));  // 1 + 0 + 1 + 1 + 0 + 1 + 0
    // Iteration 1 relocates; iteration 2 moves 30's label, and the centres move by no more than
    // rounding (11 was computed as (10 + 11 + 12 + 30 - 30) / 3 in iteration 1), which stops
    // the run when tol > 0; with tol = 0 a rounding-sized shift may need iteration 3, where no
    // label changes.
    if (tol > 0) {
      CHECK(km.n_iter() == 2);
    } else {
      CHECK(km.n_iter() >= 2);
      CHECK(km.n_iter() <= 3);
    }
  }
}

TEST_CASE_TEMPLATE("KMeans labels and inertia agree with the final centres", T, float, double) {
  const auto data = test::load_split<T, double>("iris");
  const Matrix<T> Z = preprocessing::StandardScaler<T>().fit_transform(data.X_train);
  // max_iter = 1: stopped before convergence, so the rows are assigned once more to the final
  // centres; a large tol stops after one iteration too.
  for (const KMeansParams& params :
       {KMeansParams{.n_clusters = 3, .max_iter = 1}, KMeansParams{.n_clusters = 3, .tol = 1e3}}) {
    KMeans<T> km(params);
    km.set_init(Z.topRows(3)).fit(Z);
    CHECK(km.n_iter() == 1);
    CHECK(km.labels() == nearest(Z, km.cluster_centers()));
    CHECK(objective(Z, km.cluster_centers(), km.labels()) ==
          doctest::Approx(static_cast<double>(km.inertia())).epsilon(1e-6));
  }

  // transform: Euclidean distances to the centres; fit_transform and fit_predict agree with fit.
  KMeans<T> km({.n_clusters = 3, .random_state = 3});
  const Matrix<T> distances = km.fit_transform(Z);
  CHECK(distances.rows() == Z.rows());
  CHECK(distances.cols() == 3);
  const Matrix<T>& centers = km.cluster_centers();
  for (index_t i = 0; i < Z.rows(); i += 7) {
    for (index_t c = 0; c < 3; ++c) {
      const double d =
          (Z.row(i).template cast<double>() - centers.row(c).template cast<double>()).norm();
      CHECK(static_cast<double>(distances(i, c)) == doctest::Approx(d).epsilon(1e-6));
    }
  }
  KMeans<T> same({.n_clusters = 3, .random_state = 3});
  CHECK(same.fit_predict(Z) == km.labels());
  KMeans<T> from_dataset({.n_clusters = 3, .random_state = 3});
  CHECK(from_dataset.fit(Dataset<T>(Z)).cluster_centers() == centers);
  // score on other data: minus its objective.
  const Matrix<T> rest = Z.bottomRows(10);
  CHECK(static_cast<double>(km.score(rest)) ==
        doctest::Approx(-objective(rest, centers, nearest(rest, centers))).epsilon(1e-6));
}

TEST_CASE("KMeans parameters by name") {
  KMeans<double> km({.n_clusters = 5});
  CHECK(std::get<std::int64_t>(km.get_param("n_clusters")) == 5);
  CHECK(std::get<std::string>(km.get_param("init")) == "k-means++");
  CHECK(std::get<std::int64_t>(km.get_param("n_init")) == 10);
  CHECK(std::get<std::int64_t>(km.get_param("max_iter")) == 300);
  CHECK(std::get<double>(km.get_param("tol")) == 1e-4);
  km.set_params({{"n_clusters", std::int64_t{2}}, {"random_state", std::int64_t{9}}});
  CHECK(km.get_params().n_clusters == 2);
  CHECK(km.get_params().random_state == 9);
  CHECK(params::to_string(km.get_params()) ==
        "n_clusters=2, init=\"k-means++\", n_init=10, max_iter=300, tol=0.0001, random_state=9, "
        "verbose=0");
  CHECK_THROWS_WITH_AS(km.set_params({{"n_cluster", std::int64_t{2}}}),
                       doctest::Contains("unknown parameter 'n_cluster'"),
                       onelearn::invalid_argument);
}

TEST_CASE("KMeans rejects bad input with typed errors") {
  Matrix<double> X(5, 3);
  X << 0, 1, 2, 1, 0, 2, 5, 5, 5, 6, 5, 4, 9, 9, 9;
  KMeans<double> km({.n_clusters = 2});
  CHECK_THROWS_WITH_AS((void)km.predict(X),
                       doctest::Contains("KMeans.predict: expected a fitted estimator"),
                       not_fitted_error);
  CHECK_THROWS_WITH_AS((void)km.transform(X),
                       doctest::Contains("KMeans.transform: expected a fitted estimator"),
                       not_fitted_error);
  CHECK_THROWS_WITH_AS((void)km.cluster_centers(),
                       doctest::Contains("KMeans.cluster_centers: expected a fitted estimator"),
                       not_fitted_error);
  CHECK_THROWS_AS((void)km.inertia(), not_fitted_error);
  CHECK_THROWS_AS((void)km.labels(), not_fitted_error);
  CHECK_THROWS_AS((void)km.score(X), not_fitted_error);

  Matrix<double> bad = X;
  bad(2, 1) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS(
      km.fit(bad),
      doctest::Contains("KMeans.fit: expected finite values in X, found nan at row 2, column 1"),
      onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      km.fit(Matrix<double>(0, 3)),
      doctest::Contains("KMeans.fit: expected at least one sample and one feature, found 0 x 3"),
      onelearn::invalid_argument);

  const auto fit_with = [&](const KMeansParams& params) { KMeans<double>(params).fit(X); };
  CHECK_THROWS_WITH_AS(
      fit_with({.n_clusters = 6}),
      doctest::Contains(
          "KMeans.fit: expected n_clusters <= n_samples, found n_clusters = 6 > 5 samples"),
      onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(fit_with({.n_clusters = 0}),
                       doctest::Contains("KMeans.fit: expected n_clusters >= 1, found 0"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      fit_with({.n_clusters = 2, .init = "random"}),
      doctest::Contains("KMeans.fit: expected init \"k-means++\" or \"given\", found \"random\""),
      onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(fit_with({.n_clusters = 2, .n_init = 0}),
                       doctest::Contains("KMeans.fit: expected n_init >= 1, found 0"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(fit_with({.n_clusters = 2, .max_iter = -3}),
                       doctest::Contains("KMeans.fit: expected max_iter >= 1, found -3"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(fit_with({.n_clusters = 2, .tol = -1}),
                       doctest::Contains("KMeans.fit: expected a finite tol >= 0, found -1"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(
      fit_with({.n_clusters = 2, .init = "given"}),
      doctest::Contains(
          "KMeans.fit: expected initial centers (set_init) with init \"given\", found none"),
      onelearn::invalid_argument);

  KMeans<double> given({.n_clusters = 2});
  given.set_init(X.topRows(3));
  CHECK_THROWS_WITH_AS(given.fit(X),
                       doctest::Contains("KMeans.fit: expected initial centers of shape 2 x 3 "
                                         "(n_clusters x n_features), found 3 x 3"),
                       shape_error);
  given.set_init(X.topLeftCorner(2, 2));
  CHECK_THROWS_AS(given.fit(X), shape_error);
  Matrix<double> nan_init = X.topRows(2);
  nan_init(1, 0) = std::numeric_limits<double>::infinity();
  given.set_init(nan_init);
  CHECK_THROWS_WITH_AS(given.fit(X),
                       doctest::Contains("KMeans.fit: expected finite values in the initial "
                                         "centers, found inf at row 1, column 0"),
                       onelearn::invalid_argument);

  km.fit(X);
  CHECK(km.is_fitted());
  CHECK(km.n_features_in() == 3);
  CHECK_THROWS_WITH_AS(
      (void)km.predict(Matrix<double>::Ones(2, 4)),
      doctest::Contains("KMeans.predict: expected X with 3 features, as in fit, found 4"),
      shape_error);
  CHECK_THROWS_AS((void)km.transform(Matrix<double>::Ones(2, 2)), shape_error);
  CHECK_THROWS_WITH_AS(
      (void)km.predict(bad),
      doctest::Contains(
          "KMeans.predict: expected finite values in X, found nan at row 2, column 1"),
      onelearn::invalid_argument);
  CHECK(km.predict(Matrix<double>(0, 3)).size() == 0);

  // A failed refit leaves the estimator unfitted rather than half-updated.
  CHECK_THROWS_AS(km.fit(bad), onelearn::invalid_argument);
  CHECK_FALSE(km.is_fitted());
}

namespace {

/// Runs detail::lloyd with and without Hamerly's bounds from the same start and checks that they
/// agree exactly: the bounded assignment must reproduce the plain one row for row.
template <class T>
void check_bounded_equals_plain(const Matrix<T>& X, const Matrix<T>& init, index_t max_iter) {
  const exec::local exec;
  const auto rows = detail::partition_rows(exec, X.rows());
  const auto plain = detail::lloyd<T>(exec, rows, X, init, max_iter, 0.0, false);
  const auto bounded = detail::lloyd<T>(exec, rows, X, init, max_iter, 0.0, true);
  CHECK(bounded.labels == plain.labels);
  CHECK(bounded.n_iter == plain.n_iter);
  CHECK(test::max_relative_error(bounded.centers.template cast<double>(),
                                 plain.centers.template cast<double>(), 1.0) <= 1e-12);
  CHECK(bounded.inertia == doctest::Approx(plain.inertia).epsilon(1e-12));
  // Not a trivial run: the centres moved, so the bounds had to follow them.
  CHECK(plain.n_iter > 1);
}

}  // namespace

TEST_CASE_TEMPLATE("Lloyd with Hamerly's bounds gives exactly the plain Lloyd result", T, float,
                   double) {
  SUBCASE("digits, k = 10, the first rows as init") {
    const Matrix<T> X = test::load_split<T, double>("digits").X_train;
    check_bounded_equals_plain<T>(X, X.topRows(10), 300);
  }
  SUBCASE("standardized iris, k = 3 and k = 8") {
    const auto data = test::load_split<T, double>("iris");
    const Matrix<T> Z = preprocessing::StandardScaler<T>().fit_transform(data.X_train);
    check_bounded_equals_plain<T>(Z, Z.topRows(3), 300);
    check_bounded_equals_plain<T>(Z, Z.topRows(8), 300);
  }
  SUBCASE("blobs with exact ties") {
    // Two mirrored blobs and a column of points on the mirror plane x = 0, plus an integer
    // grid whose points are exactly equidistant from integer and half-integer centres: many
    // rows tie (or nearly tie, after rounding) between two centres in every iteration.
    Matrix<double> centres(4, 3);
    centres << -4, 0, 0, 4, 0, 0, 0, 6, 0, 0, -6, 0;
    Matrix<double> B = blobs(centres, 400, 1.5, 7);
    const index_t grid = 12;
    Matrix<double> X(B.rows() + grid * grid + 50, 3);
    X.topRows(B.rows()) = B;
    for (index_t a = 0; a < grid; ++a) {
      for (index_t b = 0; b < grid; ++b) {
        X.row(B.rows() + a * grid + b) << static_cast<double>(a - grid / 2),
            static_cast<double>(b - grid / 2), 0.0;
      }
    }
    for (index_t i = 0; i < 50; ++i) {
      X.row(B.rows() + grid * grid + i) << 0.0, static_cast<double>(i % 10) - 4.5, 1.0;
    }
    // Mirror-symmetric init at integer points: the ties are exact at the start.
    Matrix<double> init(4, 3);
    init << -2, 0, 0, 2, 0, 0, 0, 3, 0, 0, -3, 0;
    check_bounded_equals_plain<T>(X.cast<T>(), init.cast<T>(), 300);
    // A stopped run too (the final re-assignment), and an init taken from the rows.
    check_bounded_equals_plain<T>(X.cast<T>(), init.cast<T>(), 3);
    check_bounded_equals_plain<T>(X.cast<T>(), X.cast<T>().bottomRows(6), 300);
  }
  SUBCASE("small integer grids: exact ties after the updates, and empty clusters") {
    // 24 points with coordinates in 0..8 and k = 4: the means are often dyadic, so rows tie
    // exactly between two updated centres (the bounded pass then cannot prove the label and its
    // gathered GEMM sees no gap, so the row's original block is recomputed), and clusters empty
    // (relocation, then a full pass). Seeds 21, 91, 197, 199 and 255 are such cases.
    for (unsigned seed = 0; seed < 300; ++seed) {
      CAPTURE(seed);
      std::mt19937 engine(seed);
      std::uniform_int_distribution<int> coordinate(0, 8);
      Matrix<T> X(24, 2);
      for (index_t i = 0; i < X.rows(); ++i) {
        X(i, 0) = static_cast<T>(coordinate(engine));
        X(i, 1) = static_cast<T>(coordinate(engine));
      }
      check_bounded_equals_plain<T>(X, X.topRows(4), 100);
    }
  }
}
