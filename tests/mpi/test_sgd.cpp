// SGDClassifier and SGDRegressor under exec::mpi with 2 and 3 ranks: synchronous model
// averaging (one epoch per rank over its own rows, then one weighted all-reduce of the
// weights). Per-sample SGD on several ranks is not the one-process fit, so the checks are:
// every rank ends with the same model; on one rank (MPI_COMM_SELF) it is exec::local's fit bit
// for bit; with 2 and 3 ranks its test accuracy / R² is within a stated margin of the local
// fit's.
//
// Checks here use CHECK, never REQUIRE: a REQUIRE that stops one rank's test case early would
// leave the other ranks waiting in a collective.
#include <doctest/doctest.h>

#include <mpi.h>

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "onelearn/core/dataset.hpp"
#include "onelearn/exec/mpi.hpp"
#include "onelearn/linear_model/sgd_classifier.hpp"
#include "onelearn/linear_model/sgd_regressor.hpp"
#include "onelearn/preprocessing/standard_scaler.hpp"
#include "mpi_support.hpp"
#include "support.hpp"

using namespace onelearn;
using linear_model::SGDClassifier;
using linear_model::SGDClassifierParams;
using linear_model::SGDRegressor;
using linear_model::SGDRegressorParams;

namespace {

using test::world;

using test::all_but_last;

/// tests/data/<name> with X standardised by a scaler fitted on the training rows.
template <class T, class Y>
std::pair<Dataset<T, Y>, Dataset<T, Y>> scaled(const char* name) {
  const auto data = test::load_split<double, Y>(name);
  preprocessing::StandardScaler<double> scaler;
  scaler.fit(data.X_train);
  return {Dataset<T, Y>(scaler.transform(data.X_train).template cast<T>(), data.y_train),
          Dataset<T, Y>(scaler.transform(data.X_test).template cast<T>(), data.y_test)};
}

/// True on every rank when every rank holds exactly the same values (bit for bit).
template <class Derived>
bool same_on_every_rank(const exec::mpi& comm, const Eigen::MatrixBase<Derived>& values) {
  std::vector<double> low(static_cast<std::size_t>(values.size()));
  for (index_t i = 0; i < values.size(); ++i) {
    low[static_cast<std::size_t>(i)] = static_cast<double>(values.derived().reshaped()(i));
  }
  std::vector<double> high = low;
  comm.allreduce(std::span(low), exec::reduce_op::min);
  comm.allreduce(std::span(high), exec::reduce_op::max);
  return low == high;
}

}  // namespace

TEST_CASE_TEMPLATE("distributed SGDClassifier: same model everywhere, accuracy near the local fit",
                   T, float, double) {
  const auto comm = world();
  // Test accuracy, mean over the seeds, of the averaged fit against the local fit. Iris moves
  // by up to 0.2 between seeds whatever the policy (38 test rows), so its mean over 20 seeds
  // still scatters by ~0.015; digits moves by ~0.01. Margins: iris 0.06, digits 0.02.
  struct Case {
    std::string dataset;
    std::string loss;
    std::string penalty;
    std::uint64_t seeds;
    double margin;
  };
  for (const Case& c :
       {Case{"iris", "hinge", "l2", 20, 0.06}, Case{"iris", "log_loss", "elasticnet", 20, 0.06},
        Case{"digits", "hinge", "l2", 3, 0.02}, Case{"digits", "modified_huber", "l1", 3, 0.02}}) {
    CAPTURE(c.dataset);
    CAPTURE(c.loss);
    const auto [train, test_set] = scaled<T, std::int64_t>(c.dataset.c_str());
    const auto my_train = train.shard(comm);
    const auto my_test = test_set.shard(comm);
    double local_sum = 0;
    double distributed_sum = 0;
    const std::uint64_t seeds = c.seeds;
    for (std::uint64_t seed = 0; seed < seeds; ++seed) {
      const SGDClassifierParams params{.loss = c.loss, .penalty = c.penalty, .random_state = seed};
      SGDClassifier<T> local(params);
      local.fit(train.features(), train.targets());
      local_sum += static_cast<double>(local.score(test_set.features(), test_set.targets()));

      SGDClassifier<T, exec::mpi> distributed(params, comm);
      distributed.fit(my_train.features(), my_train.targets());
      CHECK(distributed.classes() == local.classes());
      CHECK(same_on_every_rank(comm, distributed.coef()));
      CHECK(same_on_every_rank(comm, distributed.intercept()));
      CHECK(distributed.n_iter() < 1000);  // every rank stopped, at the same epoch
      CHECK(same_on_every_rank(
          comm, Vector<double>::Constant(1, static_cast<double>(distributed.n_iter()))));
      CHECK(distributed.t() == static_cast<double>(distributed.n_iter() * train.size() + 1));
      // score is collective: each rank scores its shard, all get the global accuracy.
      const T accuracy = distributed.score(my_test.features(), my_test.targets());
      CHECK(same_on_every_rank(comm, Vector<double>::Constant(1, static_cast<double>(accuracy))));
      distributed_sum += static_cast<double>(accuracy);
    }
    const double local_mean = local_sum / static_cast<double>(seeds);
    const double distributed_mean = distributed_sum / static_cast<double>(seeds);
    if (comm.rank() == 0) {
      MESSAGE(comm.size(), " ranks, ", c.dataset, " ", c.loss, " ", c.penalty,
              ": mean test accuracy ", distributed_mean, " (local ", local_mean, ")");
    }
    CHECK(std::abs(distributed_mean - local_mean) < c.margin);
  }
}

TEST_CASE_TEMPLATE("distributed SGDRegressor: same model everywhere, R2 near the local fit", T,
                   float, double) {
  const auto comm = world();
  const auto [train, test_set] = scaled<T, T>("diabetes");
  const auto my_train = train.shard(comm);
  const auto my_test = test_set.shard(comm);
  for (const std::string loss : {"squared_error", "huber"}) {
    CAPTURE(loss);
    const SGDRegressorParams params{
        .loss = loss, .penalty = "elasticnet", .epsilon = 10.0, .random_state = 3};
    SGDRegressor<T> local(params);
    local.fit(train);
    const double local_r2 =
        static_cast<double>(local.score(test_set.features(), test_set.targets()));
    SGDRegressor<T, exec::mpi> distributed(params, comm);
    distributed.fit(my_train);
    CHECK(same_on_every_rank(comm, distributed.coef()));
    CHECK(same_on_every_rank(comm, Vector<T>::Constant(1, distributed.intercept())));
    const double r2 = static_cast<double>(distributed.score(my_test.features(), my_test.targets()));
    if (comm.rank() == 0) {
      MESSAGE(comm.size(), " ranks, diabetes ", loss, ": test R2 ", r2, " (local ", local_r2, ")");
    }
    // Measured: |difference| <= 0.0013 at 2 and 3 ranks.
    CHECK(std::abs(r2 - local_r2) < 0.01);

    // A rank without rows contributes nothing and still ends with the model.
    SGDRegressor<T, exec::mpi> with_empty_rank(params, comm);
    with_empty_rank.fit(all_but_last(train, comm));
    CHECK(same_on_every_rank(comm, with_empty_rank.coef()));
    CHECK(
        std::abs(static_cast<double>(with_empty_rank.score(my_test.features(), my_test.targets())) -
                 local_r2) < 0.01);
  }
}

TEST_CASE_TEMPLATE("exec::mpi on one rank is exec::local bit for bit", T, float, double) {
  // MPI_COMM_SELF: a one-rank communicator on every process, each fitting all the rows.
  const exec::mpi self(MPI_COMM_SELF);
  const auto [iris, iris_test] = scaled<T, std::int64_t>("iris");
  for (const std::string penalty : {"l2", "elasticnet"}) {
    CAPTURE(penalty);
    const SGDClassifierParams params{.loss = "log_loss", .penalty = penalty, .random_state = 9};
    SGDClassifier<T> local(params);
    local.fit(iris);
    SGDClassifier<T, exec::mpi> one_rank(params, self);
    one_rank.fit(iris);
    CHECK(one_rank.coef() == local.coef());
    CHECK(one_rank.intercept() == local.intercept());
    CHECK(one_rank.n_iter() == local.n_iter());
    CHECK(one_rank.t() == local.t());
    CHECK(one_rank.predict_proba(iris_test.features()) ==
          local.predict_proba(iris_test.features()));
    // and partial_fit continues alike.
    local.partial_fit(iris.features(), iris.targets());
    one_rank.partial_fit(iris.features(), iris.targets());
    CHECK(one_rank.coef() == local.coef());
  }
  const auto [diabetes, diabetes_test] = scaled<T, T>("diabetes");
  const SGDRegressorParams params{.penalty = "l1", .random_state = 2, .learning_rate = "adaptive"};
  SGDRegressor<T> local(params);
  local.fit(diabetes);
  SGDRegressor<T, exec::mpi> one_rank(params, self);
  one_rank.fit(diabetes);
  CHECK(one_rank.coef() == local.coef());
  CHECK(one_rank.intercept() == local.intercept());
  CHECK(one_rank.n_iter() == local.n_iter());
}

TEST_CASE("distributed partial_fit and bad input fail on every rank") {
  const auto comm = world();
  const int last = comm.size() - 1;
  const bool culprit = comm.rank() == last;
  const std::string prefix = "on rank " + std::to_string(last) + ": ";
  const auto [train, test_set] = scaled<double, std::int64_t>("iris");
  const auto shard = train.shard(comm);
  const Labels classes = (Labels(3) << 0, 1, 2).finished();

  // partial_fit: one averaged epoch per call, the same on every rank.
  SGDClassifier<double, exec::mpi> online({.random_state = 1}, comm);
  online.partial_fit(shard.features(), shard.targets(), classes);
  online.partial_fit(shard.features(), shard.targets());
  CHECK(online.n_iter() == 1);
  CHECK(online.t() == static_cast<double>(2 * train.size() + 1));
  CHECK(same_on_every_rank(comm, online.coef()));
  // It equals a fit of two epochs without early stopping.
  SGDClassifier<double, exec::mpi> two_epochs(
      {.max_iter = 2, .tol = -std::numeric_limits<double>::infinity(), .random_state = 1}, comm);
  two_epochs.fit(shard.features(), shard.targets());
  CHECK(two_epochs.coef() == online.coef());

  // Ranks that disagree on the classes.
  SGDClassifier<double, exec::mpi> disagree({}, comm);
  const Labels mine = culprit ? Labels((Labels(4) << 0, 1, 2, 3).finished()) : classes;
  CHECK_THROWS_WITH_AS(disagree.partial_fit(shard.features(), shard.targets(), mine),
                       doctest::Contains("ranks disagree on the classes passed to partial_fit"),
                       shape_error);

  // NaN on one rank.
  Matrix<double> X = shard.features();
  if (culprit) X(0, 1) = std::numeric_limits<double>::quiet_NaN();
  SGDClassifier<double, exec::mpi> model({}, comm);
  CHECK_THROWS_WITH_AS(
      model.fit(X, shard.targets()),
      doctest::Contains((prefix + "SGDClassifier.fit: expected finite values in X").c_str()),
      onelearn::invalid_argument);
  SGDRegressor<double, exec::mpi> regressor({}, comm);
  CHECK_THROWS_WITH_AS(
      regressor.fit(X, shard.targets().cast<double>()),
      doctest::Contains((prefix + "SGDRegressor.fit: expected finite values in X").c_str()),
      onelearn::invalid_argument);

  // A parameter that differs (out of range) on one rank only: the ranks' values, on every rank.
  SGDClassifier<double, exec::mpi> negative({.alpha = culprit ? -1.0 : 1e-4}, comm);
  CHECK_THROWS_WITH_AS(
      negative.fit(shard.features(), shard.targets()),
      doctest::Contains("SGDClassifier.fit: ranks disagree on alpha: 1e-04 on rank"),
      onelearn::invalid_argument);
  SGDRegressor<double, exec::mpi> bad_loss({.loss = culprit ? "hinge" : "huber"}, comm);
  CHECK_THROWS_WITH_AS(bad_loss.fit(shard.features(), shard.targets().cast<double>()),
                       doctest::Contains("SGDRegressor.fit: ranks disagree on loss: \"huber\" on rank"),
                       onelearn::invalid_argument);

  // One rank with a different number of features: a shape_error everywhere, not a hang.
  const Matrix<double> narrow =
      culprit ? Matrix<double>(shard.features().leftCols(3)) : shard.features();
  CHECK_THROWS_WITH_AS(model.fit(narrow, shard.targets()),
                       doctest::Contains("ranks disagree on the number of features of X"),
                       shape_error);
  CHECK_THROWS_AS(regressor.fit(narrow, shard.targets().cast<double>()), shape_error);

  // Labels of the wrong length on one rank.
  const Labels labels = culprit ? Labels(shard.targets().head(shard.size() - 1)) : shard.targets();
  CHECK_THROWS_WITH_AS(
      model.fit(shard.features(), labels),
      doctest::Contains((prefix + "SGDClassifier.fit: expected y to have").c_str()), shape_error);
  CHECK_FALSE(model.is_fitted());
  CHECK_FALSE(regressor.is_fitted());
}
