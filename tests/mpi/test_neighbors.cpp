// NearestNeighbors, KNeighborsClassifier and KNeighborsRegressor under exec::mpi with 2 and 3
// ranks: the training rows are sharded (unevenly, and with a rank that holds none), every rank
// passes the same queries, and every rank must get exactly the answer of one process on the
// concatenated rows.
//
// Checks here use CHECK, never REQUIRE: a REQUIRE that stops one rank's test case early would
// leave the other ranks waiting in a collective.
#include <doctest/doctest.h>

#include <mpi.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "onelearn/core/dataset.hpp"
#include "onelearn/exec/mpi.hpp"
#include "onelearn/neighbors/k_neighbors_classifier.hpp"
#include "onelearn/neighbors/k_neighbors_regressor.hpp"
#include "onelearn/neighbors/nearest_neighbors.hpp"
#include "onelearn/preprocessing/standard_scaler.hpp"
#include "mpi_support.hpp"
#include "support.hpp"

using namespace onelearn;

namespace {

using test::world;

/// Rank r's rows when the last rank holds none: the others split all of them (unevenly when
/// the count does not divide).
template <class D>
D all_but_last(const D& data, const exec::mpi& comm) {
  if (comm.size() == 1) return data;
  return comm.rank() == comm.size() - 1 ? data.rows(0, 0)
                                        : data.shard(comm.rank(), comm.size() - 1);
}

/// Rank r's rows when rank 0 holds only 3 rows and the others split the rest.
template <class D>
D lopsided(const D& data, const exec::mpi& comm) {
  if (comm.size() == 1) return data;
  if (comm.rank() == 0) return data.rows(0, 3);
  return data.rows(3, data.size()).shard(comm.rank() - 1, comm.size() - 1);
}

/// Standardised digits or iris as the knn5 reference (StandardScaler fitted on X_train).
template <class T>
std::pair<ClassificationDataset<T>, ClassificationDataset<T>> scaled(const char* name) {
  const auto data = test::load_split<double, std::int64_t>(name);
  preprocessing::StandardScaler<double> scaler;
  scaler.fit(data.X_train);
  return {ClassificationDataset<T>(scaler.transform(data.X_train).template cast<T>(), data.y_train),
          ClassificationDataset<T>(scaler.transform(data.X_test).template cast<T>(), data.y_test)};
}

}  // namespace

TEST_CASE_TEMPLATE("distributed KNeighborsClassifier equals the one-process fit", T, float,
                   double) {
  const auto comm = world();
  for (const char* name : {"iris", "digits"}) {
    CAPTURE(name);
    const auto reference = test::sklearn_reference(name);
    const auto [train, test_set] = scaled<T>(name);
    for (const std::string weights : {"uniform", "distance"}) {
      CAPTURE(weights);
      const neighbors::KNeighborsClassifierParams params{.n_neighbors = 5, .weights = weights};
      neighbors::KNeighborsClassifier<T> local(params);
      local.fit(train);
      const auto expected = local.kneighbors(test_set.features());
      for (int split = 0; split < 3; ++split) {
        CAPTURE(split);
        const auto mine = split == 0   ? train.shard(comm)
                          : split == 1 ? all_but_last(train, comm)
                                       : lopsided(train, comm);
        neighbors::KNeighborsClassifier<T, exec::mpi> distributed(params, comm);
        distributed.fit(mine);
        CHECK(distributed.n_samples_fit() == train.size());
        CHECK(distributed.classes() == local.classes());
        // Exact distances of the same pairs in the same order: bit-identical, not close.
        const auto found = distributed.kneighbors(test_set.features());
        CHECK(found.indices == expected.indices);
        CHECK(found.distances == expected.distances);
        CHECK(distributed.predict(test_set.features()) == local.predict(test_set.features()));
        CHECK(distributed.predict_proba(test_set.features()) ==
              local.predict_proba(test_set.features()));
        if (weights == "uniform") {
          CHECK(
              static_cast<double>(distributed.score(test_set.features(), test_set.targets())) ==
              doctest::Approx(reference["knn5_scaled_test_accuracy"].get<double>()).epsilon(1e-6));
        }
      }
    }
  }
}

TEST_CASE_TEMPLATE("distributed NearestNeighbors breaks ties across ranks by the global index", T,
                   float, double) {
  // Integer points in {0..2}^2: every point has many exact duplicates, spread over the ranks.
  // The global order (lower concatenated row first) must win, whatever rank holds the row.
  const auto comm = world();
  const std::uint64_t seed = 11;
  CAPTURE(seed);
  std::mt19937_64 engine(seed);  // the same stream on every rank
  Matrix<T> X(200, 2), Q(40, 2);
  for (index_t i = 0; i < X.size(); ++i) X.data()[i] = static_cast<T>(engine() % 3);
  for (index_t i = 0; i < Q.size(); ++i) Q.data()[i] = static_cast<T>(engine() % 3);
  const Dataset<T> all(X);
  neighbors::NearestNeighbors<T> local({.n_neighbors = 30});
  local.fit(X);
  const auto expected = local.kneighbors(Q);
  for (int split = 0; split < 3; ++split) {
    CAPTURE(split);
    const auto mine = split == 0   ? all.shard(comm)
                      : split == 1 ? all_but_last(all, comm)
                                   : lopsided(all, comm);
    neighbors::NearestNeighbors<T, exec::mpi> distributed({.n_neighbors = 30}, comm);
    distributed.fit(mine.features());
    const auto found = distributed.kneighbors(Q);
    CHECK(found.indices == expected.indices);
    CHECK(found.distances == expected.distances);
    // k larger than some ranks' row counts (rank 0 of the lopsided split holds 3).
    const auto many = distributed.kneighbors(Q, 150);
    CHECK(many.indices == local.kneighbors(Q, 150).indices);
  }
}

TEST_CASE_TEMPLATE("distributed KNeighborsRegressor equals the one-process fit", T, float, double) {
  const auto comm = world();
  const auto data = test::load_split<T>("diabetes");
  const Dataset<T> train(data.X_train, data.y_train);
  for (const std::string weights : {"uniform", "distance"}) {
    CAPTURE(weights);
    neighbors::KNeighborsRegressor<T> local({.weights = weights});
    local.fit(train);
    neighbors::KNeighborsRegressor<T, exec::mpi> distributed({.weights = weights}, comm);
    distributed.fit(all_but_last(train, comm));
    // The same neighbours in the same order, their targets summed in the same order.
    CHECK(distributed.predict(data.X_test) == local.predict(data.X_test));
    CHECK(distributed.score(data.X_test, data.y_test) == local.score(data.X_test, data.y_test));
  }
  // scikit-learn 1.2.1: KNeighborsRegressor(5).fit(X_train, y_train).score(X_test, y_test)
  neighbors::KNeighborsRegressor<T, exec::mpi> sharded({}, comm);
  sharded.fit(lopsided(train, comm));
  CHECK(static_cast<double>(sharded.score(data.X_test, data.y_test)) ==
        doctest::Approx(0.18912404854026388).epsilon(std::is_same_v<T, float> ? 1e-5 : 1e-12));
}

TEST_CASE("distributed neighbours: ranks that pass different queries fail on every rank") {
  const auto comm = world();
  const int last = comm.size() - 1;
  const bool culprit = comm.rank() == last;
  const std::string prefix = "on rank " + std::to_string(last) + ": ";
  const auto [train, test_set] = scaled<double>("iris");
  neighbors::KNeighborsClassifier<double, exec::mpi> knn({}, comm);
  knn.fit(train.shard(comm));
  neighbors::NearestNeighbors<double, exec::mpi> nn({}, comm);
  nn.fit(train.shard(comm));
  const Matrix<double>& Q = test_set.features();

  // One value differs on one rank.
  Matrix<double> changed = Q;
  if (culprit) changed(5, 2) += 1e-12;
  CHECK_THROWS_WITH_AS((void)knn.predict(changed),
                       doctest::Contains("KNeighborsClassifier.predict: expected the same "
                                         "queries (and the same n_neighbors and y) on every rank"),
                       distributed_error);
  CHECK_THROWS_AS((void)nn.kneighbors(changed), distributed_error);
  CHECK_THROWS_AS((void)knn.predict_proba(changed), distributed_error);

  // Different numbers of queries.
  const Matrix<double> fewer = culprit ? Matrix<double>(Q.topRows(Q.rows() - 1)) : Q;
  CHECK_THROWS_WITH_AS((void)nn.kneighbors(fewer),
                       doctest::Contains("NearestNeighbors.kneighbors: expected the same queries "
                                         "on every rank, found query matrices of different "
                                         "shapes"),
                       shape_error);

  // A different n_neighbors, or a different y to score.
  CHECK_THROWS_AS((void)nn.kneighbors(Q, culprit ? 4 : 5), distributed_error);
  Labels y = test_set.targets();
  if (culprit) y(0) = y(0) + 1;
  CHECK_THROWS_AS((void)knn.score(Q, y), distributed_error);

  // Bad input on one rank: the same typed error everywhere, naming that rank.
  Matrix<double> nan = Q;
  if (culprit) nan(1, 1) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS(
      (void)knn.predict(nan),
      doctest::Contains(
          (prefix + "KNeighborsClassifier.predict: expected finite values in X").c_str()),
      onelearn::invalid_argument);
  const Matrix<double> narrow = culprit ? Matrix<double>(Q.leftCols(3)) : Q;
  CHECK_THROWS_AS((void)knn.predict(narrow), shape_error);
  CHECK_THROWS_WITH_AS(
      (void)nn.kneighbors(Q, 1000),
      doctest::Contains("expected n_neighbors <= n_samples_fit = 112, found n_neighbors = 1000"),
      onelearn::invalid_argument);

  // Fit: one rank with a bad parameter or NaN fails every rank; a rank with other features too.
  neighbors::KNeighborsClassifier<double, exec::mpi> bad_k({.n_neighbors = culprit ? 0 : 5}, comm);
  CHECK_THROWS_WITH_AS(bad_k.fit(train.shard(comm)),
                       doctest::Contains("KNeighborsClassifier.fit: ranks disagree on "
                                         "n_neighbors: 5 on rank"),
                       onelearn::invalid_argument);
  const auto shard = train.shard(comm);
  Matrix<double> X = shard.features();
  if (culprit) X(0, 0) = std::numeric_limits<double>::infinity();
  neighbors::KNeighborsRegressor<double, exec::mpi> reg({}, comm);
  CHECK_THROWS_AS(reg.fit(X, shard.targets().cast<double>()), onelearn::invalid_argument);
  const Matrix<double> fewer_features =
      culprit ? Matrix<double>(shard.features().leftCols(2)) : shard.features();
  CHECK_THROWS_WITH_AS(nn.fit(fewer_features),
                       doctest::Contains("ranks disagree on the number of features of X"),
                       shape_error);
  CHECK_FALSE(nn.is_fitted());
  CHECK_FALSE(reg.is_fitted());

  // After all that, the estimators still work together.
  CHECK(knn.predict(Q).size() == Q.rows());
}
