// MultinomialNB and the collective metrics under exec::mpi with 2 and 3 ranks: each rank passes
// its shard (uneven, and with a rank that holds no rows at all), and every rank must get what
// one process gets from the concatenated data.
//
// Checks here use CHECK, never REQUIRE: a REQUIRE that stops one rank's test case early would
// leave the other ranks waiting in a collective.
#include <doctest/doctest.h>

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "onelearn/core/dataset.hpp"
#include "onelearn/exec/mpi.hpp"
#include "onelearn/metrics/adjusted_rand_score.hpp"
#include "onelearn/metrics/confusion_matrix.hpp"
#include "onelearn/metrics/log_loss.hpp"
#include "onelearn/metrics/mean_absolute_error.hpp"
#include "onelearn/metrics/mean_squared_error.hpp"
#include "onelearn/metrics/precision_recall_f1.hpp"
#include "onelearn/naive_bayes/multinomial_nb.hpp"
#include "mpi_support.hpp"
#include "support.hpp"

using namespace onelearn;
using naive_bayes::MultinomialNB;

namespace {

using test::world;

/// [begin, end) of this rank's rows out of n: even shards, or (empty_last) the last rank holds
/// none and the others split all of them.
std::pair<index_t, index_t> my_rows(index_t n, const exec::mpi& comm, bool empty_last) {
  if (!empty_last || comm.size() == 1)
    return Dataset<double>::shard_bounds(n, comm.rank(), comm.size());
  if (comm.rank() == comm.size() - 1) return {n, n};
  return Dataset<double>::shard_bounds(n, comm.rank(), comm.size() - 1);
}

template <class D>
D my_shard(const D& data, const exec::mpi& comm, bool empty_last) {
  const auto [begin, end] = my_rows(data.size(), comm, empty_last);
  return data.rows(begin, end);
}

using test::cyclic_weights;

}  // namespace

TEST_CASE_TEMPLATE("distributed MultinomialNB equals the fit on the concatenated data", T, float,
                   double) {
  const auto comm = world();
  const auto data = test::load_split<T, std::int64_t>("digits");
  const ClassificationDataset<T> weighted_train(data.X_train, data.y_train,
                                                cyclic_weights<T>(data.X_train.rows()));
  const ClassificationDataset<T> train(data.X_train, data.y_train);
  const ClassificationDataset<T> test_set(data.X_test, data.y_test);
  const double tolerance = std::is_same_v<T, float> ? 1e-7 : 1e-12;

  for (const bool empty_last : {false, true}) {
    for (const bool weighted : {false, true}) {
      CAPTURE(empty_last);
      CAPTURE(weighted);
      const ClassificationDataset<T>& full = weighted ? weighted_train : train;
      const naive_bayes::MultinomialNBParams params{.alpha = weighted ? 0.5 : 1.0};
      MultinomialNB<T> local(params);
      local.fit(full);
      MultinomialNB<T, exec::mpi> distributed(params, comm);
      distributed.fit(my_shard(full, comm, empty_last));
      CHECK(distributed.classes() == local.classes());
      // Sums of small integers (pixels times integer weights) in double: exact in any order.
      CHECK(distributed.class_count() == local.class_count());
      CHECK(distributed.feature_count() == local.feature_count());
      CHECK(test::max_relative_error(distributed.feature_log_prob(), local.feature_log_prob()) <
            tolerance);
      CHECK(test::max_relative_error(distributed.class_log_prior(), local.class_log_prior()) <
            tolerance);
      const auto my_test = my_shard(test_set, comm, empty_last);
      CHECK(distributed.predict(my_test.features()) == local.predict(my_test.features()));
      // score is collective: every rank gets the accuracy over all the test rows, and without
      // weights it is scikit-learn's: MultinomialNB().fit(X_train, y_train).score(X_test, y_test)
      const double accuracy =
          static_cast<double>(distributed.score(my_test.features(), my_test.targets()));
      CHECK(accuracy == doctest::Approx(static_cast<double>(local.score(data.X_test, data.y_test)))
                            .epsilon(1e-12));
      if (!weighted) CHECK(accuracy == doctest::Approx(0.9044444444444445).epsilon(1e-7));
    }
  }
}

TEST_CASE("distributed MultinomialNB gathers classes that only some ranks hold") {
  // Rows sorted by label, then sharded: each rank sees only some of the classes.
  const auto comm = world();
  const auto data = test::load_split<double, std::int64_t>("digits");
  std::vector<index_t> order(static_cast<std::size_t>(data.y_train.size()));
  std::iota(order.begin(), order.end(), index_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](index_t a, index_t b) { return data.y_train(a) < data.y_train(b); });
  const ClassificationDataset<double> sorted =
      ClassificationDataset<double>(data.X_train, Labels(data.y_train.array() * 3 - 7))
          .subset(order);
  MultinomialNB<double> local;
  local.fit(sorted);
  for (const bool empty_last : {false, true}) {
    CAPTURE(empty_last);
    MultinomialNB<double, exec::mpi> distributed({}, comm);
    distributed.fit(my_shard(sorted, comm, empty_last));
    CHECK(distributed.classes() == local.classes());
    CHECK(distributed.feature_count() == local.feature_count());
    CHECK(test::max_relative_error(distributed.feature_log_prob(), local.feature_log_prob()) <
          1e-12);
  }
}

TEST_CASE("bad input on one rank fails the distributed MultinomialNB on every rank") {
  const auto comm = world();
  const int last = comm.size() - 1;
  const bool culprit = comm.rank() == last;
  const std::string prefix = "on rank " + std::to_string(last) + ": ";
  const auto data = test::load_split<double, std::int64_t>("digits");
  const auto shard = ClassificationDataset<double>(data.X_train, data.y_train).shard(comm);
  MultinomialNB<double, exec::mpi> nb({}, comm);

  Matrix<double> negative = shard.features();
  if (culprit) negative(1, 5) = -2;
  CHECK_THROWS_WITH_AS(
      nb.fit(negative, shard.targets()),
      doctest::Contains((prefix + "MultinomialNB.fit: expected non-negative X (counts), found -2 "
                                  "at row 1, column 5")
                            .c_str()),
      onelearn::invalid_argument);
  MultinomialNB<double, exec::mpi> bad_alpha({.alpha = culprit ? -1.0 : 1.0}, comm);
  CHECK_THROWS_WITH_AS(
      bad_alpha.fit(shard.features(), shard.targets()),
      doctest::Contains("MultinomialNB.fit: ranks disagree on alpha: 1 on rank"),
      onelearn::invalid_argument);
  const Labels labels = culprit ? Labels(shard.targets().head(shard.size() - 1)) : shard.targets();
  CHECK_THROWS_WITH_AS(
      nb.fit(shard.features(), labels),
      doctest::Contains((prefix + "MultinomialNB.fit: expected y to have").c_str()), shape_error);
  const Matrix<double> narrow =
      culprit ? Matrix<double>(shard.features().leftCols(60)) : shard.features();
  CHECK_THROWS_WITH_AS(nb.fit(narrow, shard.targets()),
                       doctest::Contains("ranks disagree on the number of features of X"),
                       shape_error);
  // Nothing anywhere: an error on every rank, not a hang.
  CHECK_THROWS_WITH_AS(nb.fit(Matrix<double>(0, 64), Labels(0)),
                       doctest::Contains("MultinomialNB.fit: expected at least one sample"),
                       onelearn::invalid_argument);
  CHECK_FALSE(nb.is_fitted());
}

TEST_CASE("collective metrics equal the metrics of the concatenated samples") {
  // The samples: digits' test labels against a MultinomialNB's predictions and probabilities
  // (fitted on one process; every rank fits the same model).
  const auto comm = world();
  const auto data = test::load_split<double, std::int64_t>("digits");
  MultinomialNB<double> model;
  model.fit(data.X_train, data.y_train);
  const Labels& y_true = data.y_test;
  const Labels y_pred = model.predict(data.X_test);
  const Matrix<double> proba = model.predict_proba(data.X_test);
  const Vector<double> weights = cyclic_weights<double>(y_true.size());
  // Binary labels: "is it a 3?".
  const Labels b_true = (y_true.array() == 3).cast<std::int64_t>();
  const Labels b_pred = (y_pred.array() == 3).cast<std::int64_t>();
  const Vector<double> t_real = y_true.cast<double>();
  const Vector<double> p_real = y_pred.cast<double>();
  const double tolerance = 1e-12;

  for (const bool empty_last : {false, true}) {
    CAPTURE(empty_last);
    const auto [begin, end] = my_rows(y_true.size(), comm, empty_last);
    const index_t n = end - begin;
    const Labels my_true = y_true.segment(begin, n);
    const Labels my_pred = y_pred.segment(begin, n);
    const Vector<double> my_weights = weights.segment(begin, n);

    for (const char* average : {"micro", "macro", "weighted"}) {
      CAPTURE(average);
      const metrics::PrecisionRecallOptions options{.average = average};
      const auto local = metrics::precision_recall_fscore(y_true, y_pred, 2.0, options);
      const auto global = metrics::precision_recall_fscore(my_true, my_pred, 2.0, options, comm);
      CHECK(global.precision == doctest::Approx(local.precision).epsilon(tolerance));
      CHECK(global.recall == doctest::Approx(local.recall).epsilon(tolerance));
      CHECK(global.fscore == doctest::Approx(local.fscore).epsilon(tolerance));
      CHECK(metrics::f1_score<double>(my_true, my_pred, my_weights, options, comm) ==
            doctest::Approx(metrics::f1_score<double>(y_true, y_pred, weights, options))
                .epsilon(tolerance));
    }
    CHECK(metrics::precision_score(Labels(b_true.segment(begin, n)),
                                   Labels(b_pred.segment(begin, n)), {}, comm) ==
          doctest::Approx(metrics::precision_score(b_true, b_pred)).epsilon(tolerance));
    CHECK(metrics::confusion_matrix(my_true, my_pred, comm) ==
          metrics::confusion_matrix(y_true, y_pred));
    const Labels some = (Labels(3) << 8, 3, 5).finished();
    CHECK(metrics::confusion_matrix(my_true, my_pred, some, comm) ==
          metrics::confusion_matrix(y_true, y_pred, some));
    CHECK(metrics::log_loss<double>(my_true, proba.middleRows(begin, n), {}, comm) ==
          doctest::Approx(metrics::log_loss<double>(y_true, proba)).epsilon(tolerance));
    CHECK(metrics::log_loss<double>(my_true, proba.middleRows(begin, n), my_weights,
                                    {.normalize = false}, comm) ==
          doctest::Approx(metrics::log_loss<double>(y_true, proba, weights, {.normalize = false}))
              .epsilon(tolerance));
    const Vector<double> my_t = t_real.segment(begin, n), my_p = p_real.segment(begin, n);
    CHECK(metrics::mean_squared_error<double>(my_t, my_p, {.squared = false}, comm) ==
          doctest::Approx(metrics::mean_squared_error<double>(t_real, p_real, {.squared = false}))
              .epsilon(tolerance));
    CHECK(metrics::mean_absolute_error<double>(my_t, my_p, my_weights, comm) ==
          doctest::Approx(metrics::mean_absolute_error<double>(t_real, p_real, weights))
              .epsilon(tolerance));
    // The pair counts are integers: the distributed score is the same double.
    CHECK(metrics::adjusted_rand_score(my_true, my_pred, comm) ==
          metrics::adjusted_rand_score(y_true, y_pred));
  }

  // A length mismatch on one rank fails on every rank.
  const int last = comm.size() - 1;
  const auto [begin, end] = my_rows(y_true.size(), comm, false);
  const Labels my_true = y_true.segment(begin, end - begin);
  const Labels my_pred = comm.rank() == last ? Labels(y_pred.segment(begin, end - begin - 1))
                                             : Labels(y_pred.segment(begin, end - begin));
  const std::string prefix = "on rank " + std::to_string(last) + ": ";
  CHECK_THROWS_WITH_AS((void)metrics::f1_score(my_true, my_pred, {.average = "macro"}, comm),
                       doctest::Contains((prefix + "f1_score: expected y_pred to have").c_str()),
                       shape_error);
  CHECK_THROWS_AS((void)metrics::confusion_matrix(my_true, my_pred, comm), shape_error);
  CHECK_THROWS_AS((void)metrics::adjusted_rand_score(my_true, my_pred, comm), shape_error);
  // No samples on any rank: the same error everywhere.
  CHECK_THROWS_WITH_AS(
      (void)metrics::mean_squared_error<double>(Vector<double>(0), Vector<double>(0), {}, comm),
      doctest::Contains("mean_squared_error: expected at least 1 sample"),
      onelearn::invalid_argument);
}
