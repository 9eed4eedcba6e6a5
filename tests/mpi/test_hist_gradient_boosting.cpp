// HistGradientBoostingClassifier / HistGradientBoostingRegressor under exec::mpi and exec::ucx
// with 2 and 3 ranks and uneven shards (rank 0 holds a handful of rows): the bin thresholds,
// the number of iterations and the predictions equal those of one process on the concatenated
// rows (to rounding: histogram sums are added in another order), early stopping included (its
// validation split does not depend on the number of ranks); bad input on one rank raises the
// same typed error on every rank.
//
// Checks here use CHECK, never REQUIRE: a REQUIRE that stops one rank's test case early would
// leave the other ranks waiting in a collective.
#include <doctest/doctest.h>

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "onelearn/ensemble/hist_gradient_boosting.hpp"
#include "onelearn/exec/mpi.hpp"
#include "onelearn/io/npy.hpp"
// exec::ucx is optional (Debian: libucx-dev); tests/cmake/mpi_tests.cmake leaves its own test
// file out without it, and this file leaves out its exec::ucx case.
#if __has_include(<ucp/api/ucp.h>)
#define ONELEARN_TEST_UCX 1
#include "onelearn/exec/ucx.hpp"
#endif
#include "mpi_support.hpp"
#include "support.hpp"

using namespace onelearn;
using ensemble::HistGradientBoostingClassifier;
using ensemble::HistGradientBoostingRegressor;
using ensemble::HistGradientBoostingClassifierParams;
using ensemble::HistGradientBoostingRegressorParams;

namespace {

using test::world;

/// Rank r's rows [begin, end): rank 0 gets 7 rows, the others split the rest unevenly
/// (rank r's share grows with r).
std::pair<index_t, index_t> uneven(index_t n, int rank, int size) {
  if (size == 1) return {0, n};
  if (rank == 0) return {0, 7};
  const index_t rest = n - 7;
  index_t weights = 0;
  for (int r = 1; r < size; ++r) weights += r;
  index_t begin = 7;
  for (int r = 1; r < rank; ++r) begin += rest * r / weights;
  const index_t end = rank == size - 1 ? n : begin + rest * rank / weights;
  return {begin, end};
}

template <class M>
M shard_rows(const M& all, int rank, int size) {
  const auto [begin, end] = uneven(all.rows(), rank, size);
  return all.middleRows(begin, end - begin);
}

/// Diabetes with NaN in two features (rows chosen by a fixed rule).
Matrix<double> with_missing(Matrix<double> X) {
  for (index_t i = 0; i < X.rows(); ++i) {
    if (i % 7 == 3) X(i, 2) = std::numeric_limits<double>::quiet_NaN();
    if (i % 11 == 5) X(i, 8) = std::numeric_limits<double>::quiet_NaN();
  }
  return X;
}

double max_abs_difference(const Matrix<double>& a, const Matrix<double>& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return std::numeric_limits<double>::infinity();
  return (a - b).cwiseAbs().maxCoeff();
}

template <class Exec>
void check_regressor_agrees(const Exec& policy) {
  const auto data = test::load_split<double>("diabetes");
  const Matrix<double> X = with_missing(data.X_train);
  const Matrix<double> X_test = with_missing(data.X_test);
  for (const std::string early_stopping : {"false", "true"}) {
    CAPTURE(early_stopping);
    const HistGradientBoostingRegressorParams params{
        .max_iter = 40, .early_stopping = early_stopping, .n_iter_no_change = 3};
    HistGradientBoostingRegressor<double> local(params);
    local.fit(X, data.y_train);
    HistGradientBoostingRegressor<double, Exec> distributed(params, policy);
    distributed.fit(shard_rows(X, policy.rank(), policy.size()),
                    shard_rows(data.y_train, policy.rank(), policy.size()));
    CHECK(distributed.bin_thresholds() == local.bin_thresholds());
    CHECK(distributed.n_iter() == local.n_iter());
    CHECK(distributed.train_score().size() == local.train_score().size());
    const Matrix<double> a = distributed.predict(X_test);
    const Matrix<double> b = local.predict(X_test);
    CHECK(max_abs_difference(a, b) < 1e-9);  // targets ~150: ~1e-12 relative
    const double r2 = distributed.score(shard_rows(X_test, policy.rank(), policy.size()),
                                        shard_rows(data.y_test, policy.rank(), policy.size()));
    CHECK(std::abs(r2 - local.score(X_test, data.y_test)) < 1e-9);
  }
}

template <class Exec>
void check_classifier_agrees(const Exec& policy, const std::string& name, std::int64_t max_iter) {
  const auto data = test::load_split<double, std::int64_t>(name);
  for (const std::string early_stopping : {"false", "true"}) {
    CAPTURE(name);
    CAPTURE(early_stopping);
    const HistGradientBoostingClassifierParams params{
        .max_iter = max_iter, .early_stopping = early_stopping, .n_iter_no_change = 3};
    HistGradientBoostingClassifier<double> local(params);
    local.fit(data.X_train, data.y_train);
    HistGradientBoostingClassifier<double, Exec> distributed(params, policy);
    distributed.fit(shard_rows(data.X_train, policy.rank(), policy.size()),
                    shard_rows(data.y_train, policy.rank(), policy.size()));
    CHECK(distributed.classes() == local.classes());
    CHECK(distributed.n_iter() == local.n_iter());
    CHECK(max_abs_difference(distributed.decision_function(data.X_test),
                             local.decision_function(data.X_test)) < 1e-10);
    CHECK(distributed.predict(data.X_test) == local.predict(data.X_test));
  }
}

}  // namespace

TEST_CASE("HistGradientBoosting under exec::mpi with uneven shards equals the one-process fit") {
  const exec::mpi comm = world();
  check_regressor_agrees(comm);
  check_classifier_agrees(comm, "iris", 30);
  check_classifier_agrees(comm, "digits", 10);
}

TEST_CASE("HistGradientBoosting with fewer features than ranks equals the one-process fit") {
  // Each rank searches its block of the features; with 2 features on 3 ranks, one rank has
  // none (an empty piece of every reduce-scatter, no split of its own to offer).
  const exec::mpi comm = world();
  const auto data = test::load_split<double>("diabetes");
  const Matrix<double> X = data.X_train.leftCols(2);
  const Matrix<double> X_test = data.X_test.leftCols(2);
  const HistGradientBoostingRegressorParams params{.max_iter = 20, .early_stopping = "false"};
  HistGradientBoostingRegressor<double> local(params);
  local.fit(X, data.y_train);
  HistGradientBoostingRegressor<double, exec::mpi> distributed(params, comm);
  distributed.fit(shard_rows(X, comm.rank(), comm.size()),
                  shard_rows(data.y_train, comm.rank(), comm.size()));
  CHECK(max_abs_difference(distributed.predict(X_test), local.predict(X_test)) < 1e-9);
}

#ifdef ONELEARN_TEST_UCX
TEST_CASE("HistGradientBoosting under exec::ucx with uneven shards equals the one-process fit") {
  const exec::ucx ucx(MPI_COMM_WORLD);
  check_regressor_agrees(ucx);
  check_classifier_agrees(ucx, "iris", 30);
}
#endif

TEST_CASE("HistGradientBoosting binary classifier across ranks, one rank without a class") {
  const exec::mpi comm = world();
  // iris reduced to two classes; sorted by label, so rank 0's 7 rows hold one class only.
  const auto data = test::load_split<double, std::int64_t>("iris");
  std::vector<index_t> keep;
  for (index_t i = 0; i < data.y_train.size(); ++i) {
    if (data.y_train(i) != 0) keep.push_back(i);
  }
  std::sort(keep.begin(), keep.end(),
            [&](index_t a, index_t b) { return data.y_train(a) < data.y_train(b); });
  Matrix<double> X(static_cast<index_t>(keep.size()), data.X_train.cols());
  Labels y(static_cast<index_t>(keep.size()));
  for (std::size_t j = 0; j < keep.size(); ++j) {
    X.row(static_cast<index_t>(j)) = data.X_train.row(keep[j]);
    y(static_cast<index_t>(j)) = data.y_train(keep[j]);
  }
  const HistGradientBoostingClassifierParams params{.max_iter = 20, .min_samples_leaf = 5};
  HistGradientBoostingClassifier<double> local(params);
  local.fit(X, y);
  HistGradientBoostingClassifier<double, exec::mpi> distributed(params, comm);
  distributed.fit(shard_rows(X, comm.rank(), comm.size()), shard_rows(y, comm.rank(), comm.size()));
  CHECK(distributed.n_trees_per_iteration() == 1);
  CHECK(max_abs_difference(distributed.predict_proba(data.X_test), local.predict_proba(data.X_test)) <
        1e-12);
}

TEST_CASE("HistGradientBoosting with categorical features across ranks equals the one-process fit") {
  // The known categories come from every rank's rows: rank 0's 7 rows miss most of them.
  const exec::mpi comm = world();
  const auto X = io::load_npy<Matrix<double>>(test::data_path("hgb/cat_X.npy"));
  const auto X_test = io::load_npy<Matrix<double>>(test::data_path("hgb/cat_X_test.npy"));
  const auto y = io::load_npy<Labels>(test::data_path("hgb/cat_y_multi.npy"));
  const HistGradientBoostingClassifierParams settings{
      .max_iter = 10, .min_samples_leaf = 5, .categorical_features = "110", .early_stopping = "false"};
  HistGradientBoostingClassifier<double> local(settings);
  local.fit(X, y);
  HistGradientBoostingClassifier<double, exec::mpi> distributed(settings, comm);
  distributed.fit(shard_rows(X, comm.rank(), comm.size()), shard_rows(y, comm.rank(), comm.size()));
  CHECK(distributed.bin_thresholds() == local.bin_thresholds());
  CHECK(max_abs_difference(distributed.decision_function(X_test), local.decision_function(X_test)) <
        1e-9);

  // A value that is no category on one rank only: the same error on every rank.
  Matrix<double> bad = shard_rows(X, comm.rank(), comm.size());
  if (comm.rank() == comm.size() - 1) bad(1, 0) = 0.5;
  CHECK_THROWS_WITH_AS(distributed.fit(bad, shard_rows(y, comm.rank(), comm.size())),
                       doctest::Contains("integer categories"), invalid_argument);
}

TEST_CASE("HistGradientBoosting bad input on one rank raises on every rank") {
  const exec::mpi comm = world();
  const auto data = test::load_split<double>("diabetes");
  Matrix<double> X = shard_rows(data.X_train, comm.rank(), comm.size());
  const Vector<double> y = shard_rows(data.y_train, comm.rank(), comm.size());
  if (comm.rank() == 1) X(2, 3) = std::numeric_limits<double>::infinity();
  HistGradientBoostingRegressor<double, exec::mpi> model({.max_iter = 3}, comm);
  CHECK_THROWS_WITH_AS(model.fit(X, y), doctest::Contains("on rank 1: "), invalid_argument);
  CHECK_FALSE(model.is_fitted());

  Vector<double> weights = Vector<double>::Ones(y.size());
  if (comm.rank() == comm.size() - 1) weights(0) = -2;
  const Matrix<double> clean = shard_rows(data.X_train, comm.rank(), comm.size());
  CHECK_THROWS_WITH_AS(model.fit(clean, y, weights), doctest::Contains("non-negative sample_weight"),
                       invalid_argument);
  CHECK_THROWS_WITH_AS(model.fit(clean, y, Vector<double>::Zero(y.size())),
                       doctest::Contains("positive total sample_weight"), invalid_argument);

  // Every rank holds the same single label: one class over all ranks.
  HistGradientBoostingClassifier<double, exec::mpi> clf({.max_iter = 3}, comm);
  CHECK_THROWS_WITH_AS(clf.fit(clean, Labels::Constant(clean.rows(), 4)),
                       doctest::Contains("expected at least 2 classes"), invalid_argument);
  // A categorical mask of the wrong length on one rank only is a disagreement of parameters;
  // on every rank it is a shape_error everywhere.
  HistGradientBoostingRegressor<double, exec::mpi> masked({.categorical_features = "01"}, comm);
  CHECK_THROWS_AS(masked.fit(clean, y), shape_error);
  // Another number of features on one rank.
  const Matrix<double> narrower = comm.rank() == 0 ? Matrix<double>(clean.leftCols(9)) : clean;
  CHECK_THROWS_AS(model.fit(narrower, y), shape_error);
}
