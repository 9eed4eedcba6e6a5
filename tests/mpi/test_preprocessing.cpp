// MinMaxScaler, MaxAbsScaler, Normalizer, OneHotEncoder, LabelEncoder, PolynomialFeatures and
// SimpleImputer under exec::mpi with 2 and 3 ranks: each rank fits its rows, and every rank must
// hold the transformer fitted on the concatenated rows. Two splits of iris: Dataset::shard
// (contiguous, sizes differing by one) and a skewed one where rank 0 holds no rows and rank r
// holds a share proportional to r.
//
// Checks here use CHECK, never REQUIRE: a REQUIRE that stops one rank's test case early would
// leave the other ranks waiting in a collective.
#include <doctest/doctest.h>

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "onelearn/compose/labeled_classifier.hpp"
#include "onelearn/exec/mpi.hpp"
#include "onelearn/naive_bayes/gaussian_nb.hpp"
#include "onelearn/preprocessing/label_encoder.hpp"
#include "onelearn/preprocessing/max_abs_scaler.hpp"
#include "onelearn/preprocessing/min_max_scaler.hpp"
#include "onelearn/preprocessing/normalizer.hpp"
#include "onelearn/preprocessing/one_hot_encoder.hpp"
#include "onelearn/preprocessing/polynomial_features.hpp"
#include "onelearn/preprocessing/simple_imputer.hpp"
#include "mpi_support.hpp"
#include "support.hpp"

using namespace onelearn;
using namespace onelearn::preprocessing;

namespace {

using test::world;

/// [begin, end) of this rank's rows of n: rank 0 none, rank r > 0 a share proportional to r.
std::pair<index_t, index_t> skewed_bounds(index_t n, const exec::mpi& comm) {
  const index_t s = comm.size();
  const index_t total = s * (s - 1) / 2;
  auto start = [&](index_t r) { return total == 0 ? n : n * (r * (r - 1) / 2) / total; };
  if (comm.size() == 1) return {0, n};
  return {start(comm.rank()), start(comm.rank() + 1)};
}

/// The two splits of the rows of X (or of the entries of a vector) this rank holds.
template <class M>
std::vector<M> my_splits(const M& X, const exec::mpi& comm) {
  const auto [begin, end] = Dataset<double>::shard_bounds(X.rows(), comm.rank(), comm.size());
  const auto [skew_begin, skew_end] = skewed_bounds(X.rows(), comm);
  return {M(X.middleRows(begin, end - begin)), M(X.middleRows(skew_begin, skew_end - skew_begin))};
}

/// iris's training features with NaN at (i, i % 4) for every fifth row.
template <class T>
Matrix<T> iris_with_missing() {
  Matrix<T> X = test::load_split<T, std::int64_t>("iris").X_train;
  for (index_t i = 0; i < X.rows(); i += 5) X(i, i % 4) = std::numeric_limits<T>::quiet_NaN();
  return X;
}

/// iris' training rows sorted by class (stable), so that some ranks hold only some classes.
std::pair<Matrix<double>, Labels> iris_sorted_by_class() {
  const auto iris = test::load_split<double, std::int64_t>("iris");
  std::vector<index_t> order(static_cast<std::size_t>(iris.y_train.size()));
  std::iota(order.begin(), order.end(), index_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](index_t a, index_t b) { return iris.y_train(a) < iris.y_train(b); });
  return {iris.X_train(order, Eigen::all), iris.y_train(order)};
}

}  // namespace

TEST_CASE_TEMPLATE(
    "distributed scalers, Normalizer and PolynomialFeatures equal the fit on all rows", T, float,
    double) {
  const auto comm = world();
  const Matrix<T> X = test::load_split<T, std::int64_t>("iris").X_train;
  MinMaxScaler<T> minmax({.feature_range = {-1, 2}});
  minmax.fit(X);
  MaxAbsScaler<T> maxabs;
  maxabs.fit(X);
  Normalizer<T> normalizer({.norm = "l1"});
  normalizer.fit(X);
  PolynomialFeatures<T> poly({.degree = 3, .interaction_only = true});
  poly.fit(X);

  for (const Matrix<T>& mine : my_splits(X, comm)) {
    CAPTURE(mine.rows());
    MinMaxScaler<T, exec::mpi> d_minmax({.feature_range = {-1, 2}}, comm);
    d_minmax.fit(mine);
    // Extremes are exact whatever the split, so everything derived from them is equal.
    CHECK(d_minmax.data_min() == minmax.data_min());
    CHECK(d_minmax.data_max() == minmax.data_max());
    CHECK(d_minmax.scale() == minmax.scale());
    CHECK(d_minmax.min() == minmax.min());
    CHECK(d_minmax.n_samples_seen() == X.rows());
    CHECK(d_minmax.transform(mine) == minmax.transform(mine));

    MaxAbsScaler<T, exec::mpi> d_maxabs({}, comm);
    d_maxabs.fit(mine);
    CHECK(d_maxabs.max_abs() == maxabs.max_abs());
    CHECK(d_maxabs.scale() == maxabs.scale());
    CHECK(d_maxabs.n_samples_seen() == X.rows());

    Normalizer<T, exec::mpi> d_normalizer({.norm = "l1"}, comm);
    d_normalizer.fit(mine);
    CHECK(d_normalizer.n_features_in() == 4);
    CHECK(d_normalizer.transform(mine) == normalizer.transform(mine));

    PolynomialFeatures<T, exec::mpi> d_poly({.degree = 3, .interaction_only = true}, comm);
    d_poly.fit(mine);
    CHECK(d_poly.powers() == poly.powers());
    CHECK(d_poly.transform(mine) == poly.transform(mine));
  }
}

TEST_CASE_TEMPLATE("distributed OneHotEncoder and SimpleImputer equal the fit on all rows", T,
                   float, double) {
  const auto comm = world();
  const Matrix<T> X = iris_with_missing<T>();
  const Matrix<T> complete = test::load_split<T, std::int64_t>("iris").X_train;
  OneHotEncoder<T> encoder;
  encoder.fit(complete);
  SimpleImputer<T> mean, median({.strategy = "median"}), frequent({.strategy = "most_frequent"});
  mean.fit(X);
  median.fit(X);
  frequent.fit(X);
  // Reference values ("iris imputer" in tests/unit/test_preprocessing.cpp, scikit-learn 1.2.1).
  Vector<double> sklearn_median(4);
  sklearn_median << 5.8, 3.0, 4.25, 1.3;
  CHECK(test::max_relative_error(median.statistics(), sklearn_median) < test::tolerance<T>());

  for (const Matrix<T>& mine : my_splits(complete, comm)) {
    CAPTURE(mine.rows());
    OneHotEncoder<T, exec::mpi> d_encoder({}, comm);
    d_encoder.fit(mine);
    // Gathered from every rank. Sizes first: Eigen's == asserts on a size mismatch.
    CHECK(d_encoder.n_output_features() == encoder.n_output_features());
    CHECK(d_encoder.categories().size() == 4);
    for (std::size_t j = 0; j < 4 && d_encoder.categories().size() == 4; ++j) {
      CHECK(d_encoder.categories()[j].size() == encoder.categories()[j].size());
      if (d_encoder.categories()[j].size() == encoder.categories()[j].size()) {
        CHECK(d_encoder.categories()[j] == encoder.categories()[j]);
      }
    }
    if (d_encoder.n_output_features() == encoder.n_output_features()) {
      CHECK(d_encoder.transform(mine) == encoder.transform(mine));
    }
  }
  for (const Matrix<T>& mine : my_splits(X, comm)) {
    CAPTURE(mine.rows());
    SimpleImputer<T, exec::mpi> d_mean({}, comm), d_median({.strategy = "median"}, comm),
        d_frequent({.strategy = "most_frequent"}, comm);
    d_mean.fit(mine);
    d_median.fit(mine);
    d_frequent.fit(mine);
    // Means differ by the order of the double sums only; median and mode are exact.
    CHECK(test::max_relative_error(d_mean.statistics(), mean.statistics()) < 1e-12);
    CHECK(d_median.statistics() == median.statistics());
    CHECK(d_frequent.statistics() == frequent.statistics());
    CHECK(d_median.transform(mine) == median.transform(mine));
  }
}

TEST_CASE("distributed medians and modes are exact with an all-missing column and repeats") {
  const auto comm = world();
  // 11 rows: column 0 has 10 values with many repeats (even count), column 1 is all NaN,
  // column 2 has negative values and -0.0 / 0.0.
  const double missing = std::numeric_limits<double>::quiet_NaN();
  Matrix<double> X(11, 3);
  X << 2, missing, -1,        //
      2, missing, -0.0,       //
      missing, missing, 0.0,  //
      7, missing, -5,         //
      2, missing, 3,          //
      1, missing, -1,         //
      7, missing, 8,          //
      7, missing, missing,    //
      3, missing, -1,         //
      9, missing, 2,          //
      1, missing, 4;
  for (const std::string strategy : {"median", "most_frequent", "mean"}) {
    CAPTURE(strategy);
    SimpleImputer<double> local({.strategy = strategy});
    local.fit(X);
    for (const Matrix<double>& mine : my_splits(X, comm)) {
      SimpleImputer<double, exec::mpi> distributed({.strategy = strategy}, comm);
      distributed.fit(mine);
      CHECK(distributed.n_features_out() == 2);  // column 1 dropped, as in scikit-learn
      CHECK(std::isnan(distributed.statistics()(1)));
      CHECK(distributed.statistics()(0) == doctest::Approx(local.statistics()(0)).epsilon(1e-14));
      CHECK(distributed.statistics()(2) == doctest::Approx(local.statistics()(2)).epsilon(1e-14));
    }
  }
  // By hand: column 0 sorted {1, 1, 2, 2, 2, 3, 7, 7, 7, 9}: median 2.5, mode 2 (ties 7: smaller);
  // column 2 sorted {-5, -1, -1, -1, -0, 0, 2, 3, 4, 8}: median 0, mode -1.
  SimpleImputer<double, exec::mpi> median({.strategy = "median"}, comm);
  median.fit(my_splits(X, comm)[1]);
  CHECK(median.statistics()(0) == 2.5);
  CHECK(median.statistics()(2) == 0.0);
  SimpleImputer<double, exec::mpi> mode({.strategy = "most_frequent"}, comm);
  mode.fit(my_splits(X, comm)[0]);
  CHECK(mode.statistics()(0) == 2);
  CHECK(mode.statistics()(2) == -1);
}

TEST_CASE("distributed LabelEncoder gathers classes that only some ranks hold") {
  const auto comm = world();
  Labels y = test::load_split<double, std::int64_t>("iris").y_train;
  std::sort(y.begin(), y.end());  // each rank then sees only some of the classes
  const Labels labels = y.array() * 10 - 5;
  preprocessing::LabelEncoder<> local;
  const Labels codes = local.fit_transform(labels);
  for (const Labels& mine : my_splits(labels, comm)) {
    CAPTURE(mine.size());
    preprocessing::LabelEncoder<std::int64_t, exec::mpi> distributed({}, comm);
    distributed.fit(mine);
    CHECK(distributed.classes() == (Labels(3) << -5, 5, 15).finished());
    CHECK(distributed.transform(mine) == local.transform(mine));
  }
  preprocessing::LabelEncoder<std::int64_t, exec::mpi> none({}, comm);
  CHECK_THROWS_WITH_AS(none.fit(Labels(0)),
                       doctest::Contains("LabelEncoder.fit: expected at least one label, found 0"),
                       onelearn::invalid_argument);
  CHECK(codes.maxCoeff() == 2);
}

TEST_CASE("distributed text labels: LabelEncoder<std::string> and a LabeledClassifier") {
  // Rows sorted by class: some ranks hold only some of the species, one may hold none.
  const auto comm = world();
  const auto [X, y] = iris_sorted_by_class();
  const Matrix<double> X_test = test::load_split<double, std::int64_t>("iris").X_test;
  const char* const species[] = {"virginica", "setosa", "versicolor"};  // not in sorted order
  auto names = [&](const Labels& codes) {
    std::vector<std::string> out;
    for (index_t i = 0; i < codes.size(); ++i) out.emplace_back(species[codes(i)]);
    return out;
  };
  compose::LabeledClassifier<naive_bayes::GaussianNB<double>> local;
  local.fit(X, names(y));
  const auto X_splits = my_splits(X, comm);
  const auto y_splits = my_splits(y, comm);
  for (std::size_t s = 0; s < X_splits.size(); ++s) {
    CAPTURE(s);
    preprocessing::LabelEncoder<std::string, exec::mpi> encoder({}, comm);
    encoder.fit(names(y_splits[s]));
    CHECK(encoder.classes() == std::vector<std::string>{"setosa", "versicolor", "virginica"});
    compose::LabeledClassifier<naive_bayes::GaussianNB<double, exec::mpi>> distributed({}, comm);
    distributed.fit(X_splits[s], names(y_splits[s]));
    CHECK(distributed.classes() == local.classes());
    CHECK(distributed.predict(X_test) == local.predict(X_test));
  }
}

TEST_CASE("distributed OneHotEncoder<std::string> gathers categories that only some ranks hold") {
  // Rows sorted by class, so some ranks see only some species (one rank may hold no rows).
  const auto comm = world();
  const auto [X, y] = iris_sorted_by_class();
  const char* const species[] = {"virginica", "setosa", "versicolor"};
  // Two text columns: the species, and the petal length in words.
  auto columns = [&](const Matrix<double>& rows, const Labels& codes) {
    OneHotEncoder<std::string>::TextColumns out(2);
    for (index_t i = 0; i < codes.size(); ++i) {
      out[0].emplace_back(species[codes(i)]);
      out[1].emplace_back(rows(i, 2) < 2 ? "short" : rows(i, 2) < 5 ? "medium" : "long");
    }
    return out;
  };
  OneHotEncoder<std::string> local;
  const Matrix<double> Z = local.fit_transform(columns(X, y));
  REQUIRE(local.categories()[1] == std::vector<std::string>{"long", "medium", "short"});
  const auto X_splits = my_splits(X, comm);
  const auto y_splits = my_splits(y, comm);
  for (std::size_t s = 0; s < X_splits.size(); ++s) {
    CAPTURE(s);
    OneHotEncoder<std::string, exec::mpi> distributed({}, comm);
    distributed.fit(columns(X_splits[s], y_splits[s]));
    CHECK(distributed.categories() == local.categories());
    CHECK(distributed.transform(columns(X, y)) == Z);
  }

  // Bad text on one rank: an error on every rank, not a hang.
  const bool culprit = comm.rank() == comm.size() - 1;
  auto uneven = columns(X_splits[0], y_splits[0]);
  if (culprit) uneven[1].emplace_back("extra");
  OneHotEncoder<std::string, exec::mpi> encoder({}, comm);
  CHECK_THROWS_WITH_AS(encoder.fit(uneven),
                       doctest::Contains("expected columns of one length (the rows)"),
                       shape_error);
  auto narrow = columns(X_splits[0], y_splits[0]);
  if (culprit) narrow.pop_back();
  CHECK_THROWS_WITH_AS(encoder.fit(narrow),
                       doctest::Contains("ranks disagree on the number of features of X"),
                       shape_error);
  CHECK_FALSE(encoder.is_fitted());
}

TEST_CASE("bad input on one rank fails the distributed preprocessing fits on every rank") {
  const auto comm = world();
  const int last = comm.size() - 1;
  const bool culprit = comm.rank() == last;
  const std::string prefix = "on rank " + std::to_string(last) + ": ";
  const Matrix<double> X =
      my_splits(test::load_split<double, std::int64_t>("iris").X_train, comm)[0];

  Matrix<double> with_nan = X;
  if (culprit) with_nan(0, 1) = std::numeric_limits<double>::quiet_NaN();
  MinMaxScaler<double, exec::mpi> minmax({}, comm);
  CHECK_THROWS_WITH_AS(
      minmax.fit(with_nan),
      doctest::Contains((prefix + "MinMaxScaler.fit: expected finite values in X").c_str()),
      onelearn::invalid_argument);
  OneHotEncoder<double, exec::mpi> encoder({}, comm);
  CHECK_THROWS_AS(encoder.fit(with_nan), onelearn::invalid_argument);
  SimpleImputer<double, exec::mpi> imputer({}, comm);
  imputer.fit(with_nan);  // NaN is a missing value here, not an error
  CHECK(imputer.is_fitted());
  Matrix<double> with_inf = X;
  if (culprit) with_inf(0, 1) = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH_AS(
      imputer.fit(with_inf),
      doctest::Contains((prefix + "SimpleImputer.fit: expected finite values or NaN").c_str()),
      onelearn::invalid_argument);
  CHECK_FALSE(imputer.is_fitted());

  // A parameter that differs (out of range) on one rank only: the ranks' values, on every rank.
  Normalizer<double, exec::mpi> normalizer({.norm = culprit ? "l3" : "l2"}, comm);
  CHECK_THROWS_WITH_AS(
      normalizer.fit(X),
      doctest::Contains("Normalizer.fit: ranks disagree on norm: \"l2\" on rank"),
      onelearn::invalid_argument);
  PolynomialFeatures<double, exec::mpi> poly({.degree = culprit ? -1 : 2}, comm);
  CHECK_THROWS_AS(poly.fit(X), onelearn::invalid_argument);

  // One rank with a different number of features: a shape_error everywhere, not a hang.
  const Matrix<double> narrow = culprit ? Matrix<double>(X.leftCols(3)) : X;
  CHECK_THROWS_WITH_AS((MaxAbsScaler<double, exec::mpi>({}, comm).fit(narrow)),
                       doctest::Contains("ranks disagree on the number of features of X"),
                       shape_error);
  CHECK_THROWS_AS(encoder.fit(narrow), shape_error);
  CHECK_THROWS_AS((SimpleImputer<double, exec::mpi>({.strategy = "median"}, comm).fit(narrow)),
                  shape_error);

  // No rows on any rank.
  CHECK_THROWS_WITH_AS((MinMaxScaler<double, exec::mpi>({}, comm).fit(Matrix<double>(0, 4))),
                       doctest::Contains("MinMaxScaler.fit: expected at least one sample and one "
                                         "feature, found 0 x 4"),
                       onelearn::invalid_argument);
  CHECK_THROWS_AS((OneHotEncoder<double, exec::mpi>({}, comm).fit(Matrix<double>(0, 4))),
                  onelearn::invalid_argument);
  CHECK_THROWS_AS(
      (SimpleImputer<double, exec::mpi>({.strategy = "median"}, comm).fit(Matrix<double>(0, 4))),
      onelearn::invalid_argument);
  CHECK_FALSE(minmax.is_fitted());
  CHECK_FALSE(encoder.is_fitted());
}
