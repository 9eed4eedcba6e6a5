// Ridge, Lasso, ElasticNet and GaussianNB under exec::mpi with 2 and 3 ranks: each rank fits
// its shard, and every rank must hold the model fitted on the concatenated data.
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

#include "onelearn/core/dataset.hpp"
#include "onelearn/exec/mpi.hpp"
#include "onelearn/linear_model/elastic_net.hpp"
#include "onelearn/linear_model/lasso.hpp"
#include "onelearn/linear_model/ridge.hpp"
#include "onelearn/metrics/accuracy_score.hpp"
#include "onelearn/naive_bayes/gaussian_nb.hpp"
#include "onelearn/preprocessing/standard_scaler.hpp"
#include "mpi_support.hpp"
#include "support.hpp"

using namespace onelearn;

namespace {

using test::world;

using test::all_but_last;

using test::cyclic_weights;

/// Standardised diabetes (scaler fitted on the training rows), the Lasso reference's setting.
template <class T>
std::pair<Dataset<T>, Dataset<T>> scaled_diabetes() {
  const auto data = test::load_split<T>("diabetes");
  preprocessing::StandardScaler<T> scaler;
  scaler.fit(data.X_train);
  return {Dataset<T>(scaler.transform(data.X_train), data.y_train),
          Dataset<T>(scaler.transform(data.X_test), data.y_test)};
}

}  // namespace

TEST_CASE_TEMPLATE("distributed Ridge equals the fit on the concatenated data", T, float, double) {
  const auto comm = world();
  const auto reference = test::sklearn_reference("diabetes");
  const auto data = test::load_split<T>("diabetes");
  const Dataset<T> train(data.X_train, data.y_train);
  const Dataset<T> test_set(data.X_test, data.y_test);
  // Both fits accumulate in double; only the order of the sums differs.
  const double tolerance = std::is_same_v<T, float> ? 1e-6 : 1e-10;

  linear_model::Ridge<T> local({.alpha = 1.0});
  local.fit(train);
  linear_model::Ridge<T, exec::mpi> distributed({.alpha = 1.0}, comm);
  distributed.fit(train.shard(comm));
  CHECK(test::max_relative_error(distributed.coef(), local.coef()) < tolerance);
  CHECK(static_cast<double>(distributed.intercept()) ==
        doctest::Approx(static_cast<double>(local.intercept())).epsilon(tolerance));
  CHECK(test::max_relative_error(distributed.coef(),
                                 test::to_vector<double>(reference["ridge_a1_coef"])) <
        (std::is_same_v<T, float> ? 1e-5 : 1e-10));

  // score is collective: each rank scores its shard of the test set, all get the global R^2.
  const auto my_test = test_set.shard(comm);
  const T r2 = distributed.score(my_test.features(), my_test.targets());
  CHECK(r2 == doctest::Approx(reference["ridge_a1_test_r2"].get<double>())
                  .epsilon(std::is_same_v<T, float> ? 1e-5 : 1e-10));

  // Weighted, and with a rank that holds no rows.
  const Dataset<T> weighted(data.X_train, data.y_train, cyclic_weights<T>(train.size()));
  linear_model::Ridge<T> local_weighted({.alpha = 0.3, .fit_intercept = true});
  local_weighted.fit(weighted);
  linear_model::Ridge<T, exec::mpi> distributed_weighted({.alpha = 0.3}, comm);
  distributed_weighted.fit(weighted.shard(comm));
  CHECK(test::max_relative_error(distributed_weighted.coef(), local_weighted.coef()) < tolerance);
  linear_model::Ridge<T, exec::mpi> with_empty_rank({.alpha = 0.3}, comm);
  with_empty_rank.fit(all_but_last(weighted, comm));
  CHECK(test::max_relative_error(with_empty_rank.coef(), local_weighted.coef()) < tolerance);
  CHECK(static_cast<double>(with_empty_rank.intercept()) ==
        doctest::Approx(static_cast<double>(local_weighted.intercept())).epsilon(tolerance));
}

TEST_CASE_TEMPLATE("distributed Lasso and ElasticNet equal the fit on the concatenated data", T,
                   float, double) {
  const auto comm = world();
  const auto reference = test::sklearn_reference("diabetes");
  const auto [train, test_set] = scaled_diabetes<T>();
  const double tolerance = std::is_same_v<T, float> ? 1e-6 : 1e-10;

  // The reference's setting (bench/anchors/make_fixtures.py).
  const linear_model::LassoParams lasso_params{.alpha = 0.1, .max_iter = 100000, .tol = 1e-10};
  linear_model::Lasso<T> local(lasso_params);
  local.fit(train);
  linear_model::Lasso<T, exec::mpi> distributed(lasso_params, comm);
  distributed.fit(train.shard(comm));
  // The descent runs on the all-reduced Gram matrix, which differs from the local one by
  // rounding only, so the same passes are made and the coefficients agree to rounding.
  CHECK(distributed.n_iter() == local.n_iter());
  CHECK(test::max_relative_error(distributed.coef(), local.coef(), 1e-3) < tolerance);
  CHECK(static_cast<double>(distributed.intercept()) ==
        doctest::Approx(static_cast<double>(local.intercept())).epsilon(tolerance));
  const auto my_test = test_set.shard(comm);
  CHECK(distributed.score(my_test.features(), my_test.targets()) ==
        doctest::Approx(reference["lasso_a0.1_scaled_test_r2"].get<double>())
            .epsilon(std::is_same_v<T, float> ? 2e-5 : 1e-10));

  // ElasticNet, weighted, random selection (the same stream on every rank), an empty rank.
  const Dataset<T> weighted(train.features(), train.targets(), cyclic_weights<T>(train.size()));
  const linear_model::ElasticNetParams params{
      .alpha = 0.05, .l1_ratio = 0.3, .selection = "random", .random_state = 7};
  linear_model::ElasticNet<T> local_enet(params);
  local_enet.fit(weighted);
  linear_model::ElasticNet<T, exec::mpi> distributed_enet(params, comm);
  distributed_enet.fit(weighted.shard(comm));
  CHECK(distributed_enet.n_iter() == local_enet.n_iter());
  CHECK(test::max_relative_error(distributed_enet.coef(), local_enet.coef(), 1e-3) < tolerance);
  CHECK(static_cast<double>(distributed_enet.dual_gap()) ==
        doctest::Approx(static_cast<double>(local_enet.dual_gap())).epsilon(1e-6));
  linear_model::ElasticNet<T, exec::mpi> with_empty_rank(params, comm);
  with_empty_rank.fit(all_but_last(weighted, comm));
  CHECK(test::max_relative_error(with_empty_rank.coef(), local_enet.coef(), 1e-3) < tolerance);
  CHECK(static_cast<double>(with_empty_rank.intercept()) ==
        doctest::Approx(static_cast<double>(local_enet.intercept())).epsilon(tolerance));
}

TEST_CASE_TEMPLATE("distributed GaussianNB equals the fit on the concatenated data", T, float,
                   double) {
  const auto comm = world();
  const double tolerance = std::is_same_v<T, float> ? 1e-6 : 1e-10;
  for (const char* name : {"iris", "digits"}) {
    CAPTURE(name);
    const auto reference = test::sklearn_reference(name);
    const auto data = test::load_split<T, std::int64_t>(name);
    const ClassificationDataset<T> train(data.X_train, data.y_train);
    const ClassificationDataset<T> test_set(data.X_test, data.y_test);

    naive_bayes::GaussianNB<T> local;
    local.fit(train);
    naive_bayes::GaussianNB<T, exec::mpi> distributed({}, comm);
    distributed.fit(train.shard(comm));
    CHECK(distributed.classes() == local.classes());
    CHECK(test::max_relative_error(distributed.class_count(), local.class_count()) < tolerance);
    CHECK(test::max_relative_error(distributed.class_prior(), local.class_prior()) < tolerance);
    CHECK(test::max_relative_error(distributed.theta(), local.theta(), 1e-3) < tolerance);
    CHECK(test::max_relative_error(distributed.var(), local.var()) < tolerance);
    CHECK(static_cast<double>(distributed.epsilon()) ==
          doctest::Approx(static_cast<double>(local.epsilon())).epsilon(tolerance));

    // score is collective: each rank scores its shard, all get the global accuracy.
    const auto my_test = test_set.shard(comm);
    CHECK(static_cast<double>(distributed.score(my_test.features(), my_test.targets())) ==
          doctest::Approx(reference["gaussian_nb_test_accuracy"].get<double>()).epsilon(1e-7));
    CHECK(distributed.predict(my_test.features()) == local.predict(my_test.features()));
  }
}

TEST_CASE("distributed GaussianNB gathers classes that only some ranks hold") {
  // Rows sorted by label, then sharded: each rank sees only some of the classes, and the last
  // rank sees none at all in the second fit.
  const auto comm = world();
  const auto data = test::load_split<double, std::int64_t>("iris");
  std::vector<index_t> order(static_cast<std::size_t>(data.y_train.size()));
  std::iota(order.begin(), order.end(), index_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](index_t a, index_t b) { return data.y_train(a) < data.y_train(b); });
  ClassificationDataset<double> sorted =
      ClassificationDataset<double>(data.X_train, Labels(data.y_train.array() * 10 - 5))
          .subset(order);

  naive_bayes::GaussianNB<double> local;
  local.fit(sorted);
  CHECK(local.classes() == (Labels(3) << -5, 5, 15).finished());
  naive_bayes::GaussianNB<double, exec::mpi> distributed({}, comm);
  distributed.fit(sorted.shard(comm));
  CHECK(distributed.classes() == local.classes());
  CHECK(test::max_relative_error(distributed.theta(), local.theta()) < 1e-10);
  CHECK(test::max_relative_error(distributed.var(), local.var()) < 1e-10);

  naive_bayes::GaussianNB<double, exec::mpi> with_empty_rank({}, comm);
  with_empty_rank.fit(all_but_last(sorted, comm));
  CHECK(with_empty_rank.classes() == local.classes());
  CHECK(test::max_relative_error(with_empty_rank.var(), local.var()) < 1e-10);
  CHECK(with_empty_rank.class_count() == local.class_count());
}

TEST_CASE("accuracy_score is collective") {
  const auto comm = world();
  // Rank r holds r + 1 samples, of which the first is wrong: (total - ranks) / total correct.
  const auto mine = static_cast<index_t>(comm.rank()) + 1;
  Labels truth = Labels::Constant(mine, 4);
  Labels predicted = truth;
  predicted(0) = 5;
  const double total = comm.size() * (comm.size() + 1) / 2.0;
  CHECK(metrics::accuracy_score(truth, predicted, comm) ==
        doctest::Approx((total - comm.size()) / total));
  // A length mismatch on one rank fails on all of them.
  const Labels short_pred = comm.rank() == 0 ? Labels(predicted.head(mine - 1)) : predicted;
  CHECK_THROWS_WITH_AS(
      (void)metrics::accuracy_score(truth, short_pred, comm),
      doctest::Contains("on rank 0: accuracy_score: expected y_pred to have 1 entries"),
      shape_error);
}

TEST_CASE(
    "bad input on one rank fails the distributed linear models and GaussianNB on every rank") {
  const auto comm = world();
  const int last = comm.size() - 1;
  const bool culprit = comm.rank() == last;
  const auto data = test::load_split<double, std::int64_t>("iris");
  const ClassificationDataset<double> train(data.X_train, data.y_train);
  const auto shard = train.shard(comm);
  const Vector<double> y = shard.targets().cast<double>();
  Matrix<double> X = shard.features();
  if (culprit) X(0, 1) = std::numeric_limits<double>::quiet_NaN();
  const std::string prefix = "on rank " + std::to_string(last) + ": ";

  linear_model::Ridge<double, exec::mpi> ridge({}, comm);
  CHECK_THROWS_WITH_AS(
      ridge.fit(X, y),
      doctest::Contains((prefix + "Ridge.fit: expected finite values in X").c_str()),
      onelearn::invalid_argument);
  linear_model::Lasso<double, exec::mpi> lasso({}, comm);
  CHECK_THROWS_WITH_AS(
      lasso.fit(X, y),
      doctest::Contains((prefix + "Lasso.fit: expected finite values in X").c_str()),
      onelearn::invalid_argument);
  naive_bayes::GaussianNB<double, exec::mpi> nb({}, comm);
  CHECK_THROWS_WITH_AS(
      nb.fit(X, shard.targets()),
      doctest::Contains((prefix + "GaussianNB.fit: expected finite values in X").c_str()),
      onelearn::invalid_argument);

  // Labels of the wrong length on one rank.
  const Labels labels = culprit ? Labels(shard.targets().head(shard.size() - 1)) : shard.targets();
  CHECK_THROWS_WITH_AS(nb.fit(shard.features(), labels),
                       doctest::Contains((prefix + "GaussianNB.fit: expected y to have").c_str()),
                       shape_error);

  // A parameter that differs (out of range) on one rank only: the ranks' values, on every rank.
  linear_model::ElasticNet<double, exec::mpi> enet({.l1_ratio = culprit ? 2.0 : 0.5}, comm);
  CHECK_THROWS_WITH_AS(
      enet.fit(shard.features(), y),
      doctest::Contains("ElasticNet.fit: ranks disagree on l1_ratio: 0.5 on rank"),
      onelearn::invalid_argument);
  linear_model::Ridge<double, exec::mpi> negative({.alpha = culprit ? -1.0 : 1.0}, comm);
  CHECK_THROWS_AS(negative.fit(shard.features(), y), onelearn::invalid_argument);

  // One rank with a different number of features: a shape_error everywhere, not a hang.
  const Matrix<double> narrow =
      culprit ? Matrix<double>(shard.features().leftCols(3)) : shard.features();
  CHECK_THROWS_WITH_AS(ridge.fit(narrow, y),
                       doctest::Contains("ranks disagree on the number of features of X"),
                       shape_error);
  CHECK_THROWS_AS(lasso.fit(narrow, y), shape_error);
  CHECK_THROWS_AS(nb.fit(narrow, shard.targets()), shape_error);

  // The failed fits left nothing half-fitted.
  CHECK_FALSE(ridge.is_fitted());
  CHECK_FALSE(nb.is_fitted());
}
