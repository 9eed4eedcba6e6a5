// KMeans and PCA under exec::mpi with 2 and 3 ranks: each rank fits on its shard of the rows,
// and every rank must end with the model fitted by one process on the concatenated data.
//
// Checks here use CHECK, never REQUIRE: a REQUIRE that stops one rank's test case early would
// leave the other ranks waiting in a collective.
#include <doctest/doctest.h>

#include <mpi.h>

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <type_traits>

#include "onelearn/cluster/k_means.hpp"
#include "onelearn/core/dataset.hpp"
#include "onelearn/decomposition/pca.hpp"
#include "onelearn/exec/mpi.hpp"
#include "onelearn/preprocessing/standard_scaler.hpp"
#include "mpi_support.hpp"
#include "support.hpp"

using namespace onelearn;

namespace {

using test::world;

/// True on every rank when every rank holds bit-for-bit the same values (all-reduced max of
/// (x, -x) gives the largest and minus the smallest over the ranks).
template <class Derived>
bool same_on_every_rank(const exec::mpi& comm, const Eigen::MatrixBase<Derived>& values) {
  Matrix<double> flat = values.template cast<double>();
  const index_t n = flat.size();
  Vector<double> extremes(2 * n);
  extremes.head(n) = Eigen::Map<const Vector<double>>(flat.data(), n);
  extremes.tail(n) = -extremes.head(n);
  const Vector<double> mine = extremes;
  comm.allreduce(std::span<double>(extremes.data(), static_cast<std::size_t>(extremes.size())),
                 exec::reduce_op::max);
  int agree = extremes == mine ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &agree, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return agree == 1;
}

template <class T>
double tolerance_for() {
  return std::is_same_v<T, float> ? 1e-5 : 1e-10;
}

}  // namespace

TEST_CASE_TEMPLATE("distributed KMeans from given centres equals the fit on the concatenated data",
                   T, float, double) {
  const auto comm = world();
  for (const char* name : {"iris", "digits", "diabetes"}) {
    CAPTURE(name);
    const auto reference = test::sklearn_reference(name);
    const auto data = test::load_split<T, double>(name);
    const Dataset<T> full(preprocessing::StandardScaler<T>().fit_transform(data.X_train));
    const auto shard = full.shard(comm);
    const Matrix<T> init = full.features().topRows(3);
    const cluster::KMeansParams params{.n_clusters = 3, .n_init = 1, .tol = 0};

    cluster::KMeans<T> local(params);
    local.set_init(init).fit(full);
    cluster::KMeans<T, exec::mpi> distributed(params, comm);
    distributed.set_init(init).fit(shard);

    const double tolerance = tolerance_for<T>();
    CHECK(test::max_relative_error(distributed.cluster_centers(), local.cluster_centers(), 1e-3) <
          tolerance);
    CHECK(static_cast<double>(distributed.inertia()) ==
          doctest::Approx(static_cast<double>(local.inertia())).epsilon(tolerance));
    CHECK(static_cast<double>(distributed.inertia()) ==
          doctest::Approx(reference["kmeans_k3_init_first3_scaled_inertia"].get<double>())
              .epsilon(std::is_same_v<T, float> ? 1e-4 : 1e-9));
    CHECK(distributed.n_iter() == local.n_iter());
    // Each rank's labels are its part of the single-process labels.
    const auto [begin, end] = Dataset<T>::shard_bounds(full.size(), comm.rank(), comm.size());
    CHECK(distributed.labels() == local.labels().segment(begin, end - begin));
    CHECK(same_on_every_rank(comm, distributed.cluster_centers()));
    // predict and transform are local; score is collective over the shards.
    CHECK(distributed.predict(shard.features()) == distributed.labels());
    CHECK(static_cast<double>(distributed.score(shard.features())) ==
          doctest::Approx(-static_cast<double>(local.inertia())).epsilon(tolerance));
  }
}

TEST_CASE_TEMPLATE("distributed k-means++ picks the centres one process picks", T, float, double) {
  // Candidates are drawn by global row number from a stream every rank runs in lockstep, so
  // the distributed seeding is the single-process one on the concatenated data (see
  // detail/kmeans_plusplus.hpp), and the whole fit must agree.
  const auto comm = world();
  const auto data = test::load_split<T, double>("digits");
  const Dataset<T> full(preprocessing::StandardScaler<T>().fit_transform(data.X_train));
  const auto shard = full.shard(comm);
  for (std::uint64_t seed : {0ULL, 7ULL, 2024ULL}) {
    CAPTURE(seed);
    for (std::int64_t k : {1, 5, 10}) {
      CAPTURE(k);
      const cluster::KMeansParams params{.n_clusters = k, .n_init = 2, .random_state = seed};
      cluster::KMeans<T> local(params);
      local.fit(full);
      cluster::KMeans<T, exec::mpi> distributed(params, comm);
      distributed.fit(shard);
      CHECK(same_on_every_rank(comm, distributed.cluster_centers()));
      CHECK(test::max_relative_error(distributed.cluster_centers(), local.cluster_centers(), 1e-3) <
            tolerance_for<T>());
      CHECK(static_cast<double>(distributed.inertia()) ==
            doctest::Approx(static_cast<double>(local.inertia())).epsilon(tolerance_for<T>()));
      CHECK(distributed.n_iter() == local.n_iter());
    }
  }
}

TEST_CASE("distributed KMeans relocates an empty cluster like one process") {
  // The 7 points of the unit test, spread over the ranks: the point farthest from its centre
  // (30) may live on another rank than the one that notices nothing is left in cluster 2.
  const auto comm = world();
  Matrix<double> X(7, 1);
  X << 0, 1, 2, 10, 11, 12, 30;
  Matrix<double> init(3, 1);
  init << 1, 11, 1000;
  const Dataset<double> full(X);
  cluster::KMeans<double, exec::mpi> distributed({.n_clusters = 3}, comm);
  distributed.set_init(init).fit(full.shard(comm));
  cluster::KMeans<double> local({.n_clusters = 3});
  local.set_init(init).fit(X);
  CHECK(distributed.cluster_centers()(2, 0) == doctest::Approx(30).epsilon(1e-12));
  CHECK(test::max_relative_error(distributed.cluster_centers(), local.cluster_centers()) < 1e-12);
  CHECK(distributed.inertia() == doctest::Approx(4).epsilon(1e-12));
  CHECK(distributed.n_iter() == local.n_iter());

  // The same data with every row on rank 0 and none elsewhere.
  cluster::KMeans<double, exec::mpi> lopsided({.n_clusters = 3}, comm);
  lopsided.set_init(init).fit(comm.rank() == 0 ? X : Matrix<double>(0, 1));
  CHECK(test::max_relative_error(lopsided.cluster_centers(), local.cluster_centers()) < 1e-12);
  CHECK(lopsided.labels().size() == (comm.rank() == 0 ? 7 : 0));
}

TEST_CASE_TEMPLATE("distributed PCA equals the fit on the concatenated data", T, float, double) {
  const auto comm = world();
  for (const char* name : {"iris", "digits", "diabetes"}) {
    CAPTURE(name);
    const auto reference = test::sklearn_reference(name);
    const auto data = test::load_split<T, double>(name);
    const Dataset<T> full(data.X_train);
    const auto shard = full.shard(comm);
    for (bool whiten : {false, true}) {
      CAPTURE(whiten);
      decomposition::PCA<T> local({.n_components = 4, .whiten = whiten});
      local.fit(full);
      decomposition::PCA<T, exec::mpi> distributed({.n_components = 4, .whiten = whiten}, comm);
      distributed.fit(shard);

      const double tolerance = tolerance_for<T>();
      // Components: equal signs too (svd_flip resolved over all ranks). Entries near zero are
      // compared absolutely.
      CHECK(test::max_relative_error(distributed.components(), local.components(), 1e-3) <
            tolerance);
      CHECK(test::max_relative_error(distributed.explained_variance(), local.explained_variance()) <
            tolerance);
      CHECK(test::max_relative_error(
                distributed.explained_variance_ratio(),
                test::to_vector<double>(reference["pca_explained_variance_ratio"])) <
            (std::is_same_v<T, float> ? 1e-5 : 1e-9));
      CHECK(test::max_relative_error(distributed.singular_values(), local.singular_values()) <
            tolerance);
      CHECK(test::max_relative_error(distributed.mean(), local.mean(), 1e-3) < tolerance);
      CHECK(static_cast<double>(distributed.noise_variance()) ==
            doctest::Approx(static_cast<double>(local.noise_variance())).epsilon(tolerance));
      CHECK(distributed.n_samples() == full.size());
      CHECK(same_on_every_rank(comm, distributed.components()));
      // transform is local: a rank's scores are its rows of the single-process scores.
      const auto [begin, end] = Dataset<T>::shard_bounds(full.size(), comm.rank(), comm.size());
      const Matrix<T> expected = local.transform(full.features()).middleRows(begin, end - begin);
      CHECK(test::max_relative_error(distributed.transform(shard.features()), expected, 1.0) <
            10 * tolerance);
    }
  }
}

TEST_CASE("distributed PCA with an empty rank and shards narrower than they are wide") {
  const auto comm = world();
  const auto data = test::load_split<double>("diabetes");
  const Dataset<double> small(data.X_train.topRows(8));  // 8 x 10: shards of 2 to 4 rows
  decomposition::PCA<double> local({.n_components = 6});
  local.fit(small);
  decomposition::PCA<double, exec::mpi> distributed({.n_components = 6}, comm);
  distributed.fit(small.shard(comm));
  CHECK(test::max_relative_error(distributed.explained_variance(), local.explained_variance()) <
        1e-9);
  CHECK(test::max_relative_error(distributed.components(), local.components(), 1e-3) < 1e-8);

  const auto on_all_but_last =
      comm.rank() == comm.size() - 1 ? small.rows(0, 0) : small.shard(comm.rank(), comm.size() - 1);
  decomposition::PCA<double, exec::mpi> with_empty_rank({.n_components = 6}, comm);
  with_empty_rank.fit(on_all_but_last);
  CHECK(test::max_relative_error(with_empty_rank.components(), local.components(), 1e-3) < 1e-8);
}

TEST_CASE("bad input on one rank fails distributed KMeans and PCA on every rank") {
  const auto comm = world();
  const auto data = test::load_split<double>("iris");
  const Dataset<double> full(data.X_train);
  Matrix<double> X = full.shard(comm).features();
  const int last = comm.size() - 1;
  const bool culprit = comm.rank() == last;

  Matrix<double> with_nan = X;
  if (culprit) with_nan(0, 2) = std::numeric_limits<double>::quiet_NaN();
  cluster::KMeans<double, exec::mpi> km({.n_clusters = 3}, comm);
  const std::string km_expected =
      "on rank " + std::to_string(last) + ": KMeans.fit: expected finite values in X";
  CHECK_THROWS_WITH_AS(km.fit(with_nan), doctest::Contains(km_expected.c_str()),
                       onelearn::invalid_argument);
  decomposition::PCA<double, exec::mpi> pca({.n_components = 2}, comm);
  const std::string pca_expected =
      "on rank " + std::to_string(last) + ": PCA.fit: expected finite values in X";
  CHECK_THROWS_WITH_AS(pca.fit(with_nan), doctest::Contains(pca_expected.c_str()),
                       onelearn::invalid_argument);

  // A different number of features on one rank: a shape_error everywhere, not a hang.
  const Matrix<double> narrow = culprit ? Matrix<double>(X.leftCols(3)) : X;
  CHECK_THROWS_WITH_AS(km.fit(narrow),
                       doctest::Contains("ranks disagree on the number of features of X"),
                       shape_error);
  CHECK_THROWS_AS(pca.fit(narrow), shape_error);

  // Initial centres that differ between ranks.
  Matrix<double> init = full.features().topRows(3);
  if (culprit) init(1, 1) += 1;
  cluster::KMeans<double, exec::mpi> given({.n_clusters = 3}, comm);
  CHECK_THROWS_WITH_AS(
      given.set_init(init).fit(X),
      doctest::Contains("KMeans.fit: expected the same initial centers on every rank"),
      distributed_error);
  // A bad init shape on one rank only.
  given.set_init(Matrix<double>(full.features().topRows(culprit ? 2 : 3)));
  CHECK_THROWS_WITH_AS(given.fit(X), doctest::Contains("expected initial centers of shape 3 x 4"),
                       shape_error);

  // Counts over all ranks: more clusters than rows in total (each rank has 1 row here), and
  // more components than rows in total.
  const Matrix<double> one_row = X.topRows(1);
  const auto ranks = static_cast<std::int64_t>(comm.size());
  cluster::KMeans<double, exec::mpi> too_many({.n_clusters = ranks + 1}, comm);
  const std::string too_many_expected =
      "KMeans.fit: expected n_clusters <= n_samples, found n_clusters = " +
      std::to_string(ranks + 1) + " > " + std::to_string(ranks) + " samples";
  CHECK_THROWS_WITH_AS(too_many.fit(one_row), doctest::Contains(too_many_expected.c_str()),
                       onelearn::invalid_argument);
  cluster::KMeans<double, exec::mpi> just_enough({.n_clusters = ranks}, comm);
  CHECK_NOTHROW(just_enough.fit(one_row));
  CHECK(just_enough.inertia() < 1e-12);  // every row is its own cluster
  decomposition::PCA<double, exec::mpi> wide({.n_components = ranks + 1}, comm);
  CHECK_THROWS_WITH_AS(
      wide.fit(one_row),
      doctest::Contains("PCA.fit: expected 1 <= n_components <= min(n_samples, n_features)"),
      onelearn::invalid_argument);

  // The estimators still work after all that.
  CHECK_NOTHROW(km.fit(X));
  CHECK(km.is_fitted());
}
