// LogisticRegression under exec::mpi with 2 and 3 ranks: each rank fits its shard; every rank
// must hold exactly the same model, equal (to the optimizer's tolerance) to the fit on the
// concatenated data.
//
// Checks here use CHECK, never REQUIRE: a REQUIRE that stops one rank's test case early would
// leave the other ranks waiting in a collective.
#include <doctest/doctest.h>

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "onelearn/core/dataset.hpp"
#include "onelearn/exec/mpi.hpp"
#include "onelearn/linear_model/logistic_regression.hpp"
#include "onelearn/preprocessing/standard_scaler.hpp"
#include "mpi_support.hpp"
#include "support.hpp"

using namespace onelearn;
using linear_model::LogisticRegression;

namespace {

using test::world;

using test::all_but_last;

/// Whether every rank holds bit-for-bit the same values as this one.
template <class Derived>
bool same_on_every_rank(const Eigen::MatrixBase<Derived>& values, const exec::mpi& comm) {
  const Vector<double> mine = values.template cast<double>().reshaped();  // exact: T -> double
  const std::vector<double> all =
      comm.allgatherv(std::span<const double>(mine.data(), static_cast<std::size_t>(mine.size())));
  if (all.size() != static_cast<std::size_t>(mine.size()) * static_cast<std::size_t>(comm.size()))
    return false;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i] != mine(static_cast<index_t>(i % static_cast<std::size_t>(mine.size())))) {
      return false;
    }
  }
  return true;
}

/// tests/data/<name> standardised with a StandardScaler fitted on X_train.
template <class T>
std::pair<ClassificationDataset<T>, ClassificationDataset<T>> scaled(const char* name) {
  const auto data = test::load_split<T, std::int64_t>(name);
  preprocessing::StandardScaler<T> scaler;
  scaler.fit(data.X_train);
  return {ClassificationDataset<T>(scaler.transform(data.X_train), data.y_train),
          ClassificationDataset<T>(scaler.transform(data.X_test), data.y_test)};
}

}  // namespace

TEST_CASE_TEMPLATE("distributed LogisticRegression equals the fit on the concatenated data", T,
                   float, double) {
  const auto comm = world();
  for (const char* name : {"iris", "digits"}) {
    CAPTURE(name);
    const auto reference = test::sklearn_reference(name);
    const auto [train, test_set] = scaled<T>(name);

    LogisticRegression<T> local;
    local.fit(train);
    LogisticRegression<T, exec::mpi> distributed({}, comm);
    distributed.fit(train.shard(comm));

    // Every rank took the same steps: the same model to the last bit.
    CHECK(same_on_every_rank(distributed.coef(), comm));
    CHECK(same_on_every_rank(distributed.intercept(), comm));
    CHECK(distributed.classes() == local.classes());
    CHECK(distributed.converged());
    CHECK(std::abs(distributed.n_iter() - local.n_iter()) <= 2);
    // The all-reduced sums differ from the local ones by rounding only, so both runs take the
    // same steps up to rounding and stop at the same iteration, but L-BFGS amplifies that
    // rounding over ~90 iterations. Tolerance: 1e-4 relative (floor 1e-2), what the
    // relative-reduction stop leaves undetermined anyway (the unit test measures the stopping
    // point 2e-5..4e-5 away from the exact minimum in log loss). Measured: at most 1e-5.
    const double tolerance = 1e-4;
    MESSAGE(std::string(name), ": n_iter local ", local.n_iter(), ", distributed ",
            distributed.n_iter(), ", coef relative difference ",
            test::max_relative_error(distributed.coef(), local.coef(), 1e-2));
    CHECK(test::max_relative_error(distributed.coef(), local.coef(), 1e-2) < tolerance);
    CHECK(test::max_relative_error(distributed.intercept(), local.intercept(), 1e-2) < tolerance);

    // score is collective: each rank scores its shard of the test set, all get the global
    // accuracy, scikit-learn's (or within one test sample in float).
    const auto my_test = test_set.shard(comm);
    const double accuracy =
        static_cast<double>(distributed.score(my_test.features(), my_test.targets()));
    CHECK(std::abs(accuracy - reference["logreg_C1_scaled_test_accuracy"].get<double>()) <=
          1.0 / reference["n_test"].get<double>() + 1e-12);
    CHECK(distributed.predict(my_test.features()) == local.predict(my_test.features()));

    // A rank with no rows at all, and sample weights.
    Vector<T> weights(train.size());
    for (index_t i = 0; i < train.size(); ++i) weights(i) = static_cast<T>(1 + i % 3);
    const ClassificationDataset<T> weighted(train.features(), train.targets(), weights);
    LogisticRegression<T> local_weighted({.C = 0.5});
    local_weighted.fit(weighted);
    LogisticRegression<T, exec::mpi> with_empty_rank({.C = 0.5}, comm);
    with_empty_rank.fit(all_but_last(weighted, comm));
    CHECK(same_on_every_rank(with_empty_rank.coef(), comm));
    CHECK(test::max_relative_error(with_empty_rank.coef(), local_weighted.coef(), 1e-2) <
          tolerance);
    CHECK(test::max_relative_error(with_empty_rank.intercept(), local_weighted.intercept(), 1e-2) <
          tolerance);
  }
}

TEST_CASE("distributed LogisticRegression gathers classes that only some ranks hold") {
  // Rows sorted by label, relabelled -5, 5, 15, then sharded: each rank sees only some of the
  // classes. Then a binary problem (labels 5 and 15) where the last rank holds no rows.
  const auto comm = world();
  const auto [train, test_set] = scaled<double>("iris");
  std::vector<index_t> order(static_cast<std::size_t>(train.size()));
  std::iota(order.begin(), order.end(), index_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](index_t a, index_t b) { return train.targets()(a) < train.targets()(b); });
  const ClassificationDataset<double> sorted =
      ClassificationDataset<double>(train.features(), Labels(train.targets().array() * 10 - 5))
          .subset(order);

  LogisticRegression<double> local;
  local.fit(sorted);
  CHECK(local.classes() == (Labels(3) << -5, 5, 15).finished());
  LogisticRegression<double, exec::mpi> distributed({}, comm);
  distributed.fit(sorted.shard(comm));
  CHECK(distributed.classes() == local.classes());
  CHECK(same_on_every_rank(distributed.coef(), comm));
  CHECK(test::max_relative_error(distributed.coef(), local.coef(), 1e-2) < 1e-6);

  std::vector<index_t> upper;
  for (index_t i = 0; i < sorted.size(); ++i) {
    if (sorted.targets()(i) > 0) upper.push_back(i);
  }
  const ClassificationDataset<double> binary = sorted.subset(upper);
  LogisticRegression<double> local_binary({.penalty = "none"});
  local_binary.fit(binary);
  LogisticRegression<double, exec::mpi> distributed_binary({.penalty = "none"}, comm);
  distributed_binary.fit(all_but_last(binary, comm));
  CHECK(distributed_binary.classes() == (Labels(2) << 5, 15).finished());
  CHECK(distributed_binary.coef().rows() == 1);
  CHECK(same_on_every_rank(distributed_binary.coef(), comm));
  CHECK(test::max_relative_error(distributed_binary.coef(), local_binary.coef(), 1e-2) < 1e-6);
}

TEST_CASE("bad input on one rank fails the distributed LogisticRegression on every rank") {
  const auto comm = world();
  const int last = comm.size() - 1;
  const bool culprit = comm.rank() == last;
  const auto [train, test_set] = scaled<double>("iris");
  const auto shard = train.shard(comm);
  const std::string prefix = "on rank " + std::to_string(last) + ": ";

  // Parameters that differ (out of range) on one rank only: the ranks' values, on every rank.
  LogisticRegression<double, exec::mpi> negative_C({.C = culprit ? -1.0 : 1.0}, comm);
  CHECK_THROWS_WITH_AS(
      negative_C.fit(shard.features(), shard.targets()),
      doctest::Contains("LogisticRegression.fit: ranks disagree on C: 1 on rank"),
      onelearn::invalid_argument);
  LogisticRegression<double, exec::mpi> bad_penalty({.penalty = culprit ? "l1" : "l2"}, comm);
  CHECK_THROWS_WITH_AS(
      bad_penalty.fit(shard.features(), shard.targets()),
      doctest::Contains("LogisticRegression.fit: ranks disagree on penalty: \"l2\" on rank"),
      onelearn::invalid_argument);
  // Out of range on every rank: the range error, raised everywhere.
  LogisticRegression<double, exec::mpi> negative_everywhere({.C = -1.0}, comm);
  CHECK_THROWS_WITH_AS(negative_everywhere.fit(shard.features(), shard.targets()),
                       doctest::Contains("LogisticRegression.fit: expected C > 0, found -1"),
                       onelearn::invalid_argument);
  LogisticRegression<double, exec::mpi> bad_iter({.max_iter = culprit ? -3 : 100}, comm);
  CHECK_THROWS_AS(bad_iter.fit(shard.features(), shard.targets()), onelearn::invalid_argument);

  // NaN on one rank.
  LogisticRegression<double, exec::mpi> model({}, comm);
  Matrix<double> X = shard.features();
  if (culprit) X(0, 2) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS(
      model.fit(X, shard.targets()),
      doctest::Contains((prefix + "LogisticRegression.fit: expected finite values in X").c_str()),
      onelearn::invalid_argument);

  // Labels of the wrong length on one rank.
  const Labels labels = culprit ? Labels(shard.targets().head(shard.size() - 1)) : shard.targets();
  CHECK_THROWS_WITH_AS(
      model.fit(shard.features(), labels),
      doctest::Contains((prefix + "LogisticRegression.fit: expected y to have").c_str()),
      shape_error);

  // One rank with a different number of features: a shape_error everywhere, not a hang.
  const Matrix<double> narrow =
      culprit ? Matrix<double>(shard.features().leftCols(3)) : shard.features();
  CHECK_THROWS_WITH_AS(model.fit(narrow, shard.targets()),
                       doctest::Contains("ranks disagree on the number of features of X"),
                       shape_error);

  // One class over all ranks: every rank fails alike (each rank alone also has one class).
  CHECK_THROWS_WITH_AS(
      model.fit(shard.features(), Labels::Constant(shard.size(), 7)),
      doctest::Contains("LogisticRegression.fit: expected samples of at least 2 classes, found "
                        "only class 7"),
      onelearn::invalid_argument);
  // No rows anywhere.
  CHECK_THROWS_WITH_AS(model.fit(Matrix<double>(0, 4), Labels(0)),
                       doctest::Contains("LogisticRegression.fit: expected at least one sample"),
                       onelearn::invalid_argument);
  CHECK_FALSE(model.is_fitted());

  // After all that, a good fit still works on every rank.
  model.fit(shard.features(), shard.targets());
  CHECK(model.is_fitted());
  CHECK(same_on_every_rank(model.coef(), comm));
}
