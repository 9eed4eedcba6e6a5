// exec::mpi under 2 and 3 ranks: the collectives, the agreement checks, and the two estimators,
// whose distributed fits must equal the fit on the concatenated data.
//
// Checks here use CHECK, never REQUIRE: a REQUIRE that stops one rank's test case early would
// leave the other ranks waiting in a collective.
#include <doctest/doctest.h>

#include <mpi.h>

#include <array>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <vector>

#include "onelearn/core/dataset.hpp"
#include "onelearn/exec/mpi.hpp"
#include "onelearn/linear_model/linear_regression.hpp"
#include "onelearn/preprocessing/standard_scaler.hpp"
#include "support.hpp"

using namespace onelearn;

namespace {
exec::mpi world() { return exec::mpi(MPI_COMM_WORLD); }
}  // namespace

TEST_CASE_TEMPLATE("allreduce sums, mins and maxes across ranks", T, float, double, std::int64_t) {
  const auto comm = world();
  const int p = comm.size();
  const int r = comm.rank();
  std::vector<T> values{static_cast<T>(r + 1), static_cast<T>(-r), static_cast<T>(10 * r)};
  auto sums = values;
  comm.allreduce(std::span(sums), exec::reduce_op::sum);
  CHECK(sums[0] == static_cast<T>(p * (p + 1) / 2));
  CHECK(sums[1] == static_cast<T>(-(p * (p - 1) / 2)));
  auto mins = values;
  comm.allreduce(std::span(mins), exec::reduce_op::min);
  CHECK(mins[1] == static_cast<T>(-(p - 1)));
  auto maxes = values;
  comm.allreduce(std::span(maxes), exec::reduce_op::max);
  CHECK(maxes[2] == static_cast<T>(10 * (p - 1)));
}

TEST_CASE("exec::mpi refuses a null communicator") {
  CHECK_THROWS_WITH_AS(exec::mpi(MPI_COMM_NULL), doctest::Contains("found MPI_COMM_NULL"),
                       distributed_error);
}

TEST_CASE("broadcast and allgatherv with uneven contributions") {
  const auto comm = world();
  std::array<double, 2> from_root{comm.rank() == 1 ? 3.5 : 0.0, comm.rank() == 1 ? -1.0 : 0.0};
  comm.broadcast(std::span(from_root), 1);
  CHECK(from_root == std::array<double, 2>{3.5, -1.0});

  // Rank r contributes r values equal to r: 0 values from rank 0, 1 from rank 1, ...
  const std::vector<std::int64_t> mine(static_cast<std::size_t>(comm.rank()), comm.rank());
  const auto all = comm.allgatherv(std::span<const std::int64_t>(mine));
  std::vector<std::int64_t> expected;
  for (int r = 0; r < comm.size(); ++r) expected.insert(expected.end(), static_cast<std::size_t>(r), r);
  CHECK(all == expected);
}

TEST_CASE("ranks that disagree on a shape all get the same shape_error") {
  const auto comm = world();
  const std::array<std::int64_t, 2> same{100, 4};
  CHECK_NOTHROW(comm.check_same_shape("X", same));

  const std::array<std::int64_t, 2> differs{100, comm.rank() == comm.size() - 1 ? 5 : 4};
  CHECK_THROWS_WITH_AS(comm.check_same_shape("X", differs),
                       doctest::Contains("ranks disagree on X: expected the same on every rank, found rank 0 (100, 4)"),
                       shape_error);
  // A different number of dimensions is a disagreement too, not a hang.
  const std::vector<std::int64_t> ragged(comm.rank() == 0 ? 3 : 2, 7);
  CHECK_THROWS_AS(comm.check_same_shape("Y", ragged), shape_error);
}

TEST_CASE("an error on one rank is raised on every rank with its type") {
  const auto comm = world();
  const int last = comm.size() - 1;
  const std::string expected = "on rank " + std::to_string(last) + ": model not fitted";
  CHECK_THROWS_WITH_AS(comm.propagate_errors([&] {
    if (comm.rank() == last) throw not_fitted_error("model not fitted");
  }),
                       doctest::Contains(expected.c_str()), not_fitted_error);
  // Even an exception that is not a std::exception reaches every rank, as a runtime_error.
  CHECK_THROWS_WITH_AS(comm.propagate_errors([&] {
    if (comm.rank() == 0) throw 42;
  }),
                       doctest::Contains("on rank 0: an exception not derived from std::exception"),
                       std::runtime_error);
  int calls = 0;
  CHECK_NOTHROW(comm.propagate_errors([&] { ++calls; }));
  CHECK(calls == 1);
}

TEST_CASE_TEMPLATE("distributed StandardScaler equals the fit on the concatenated data", T, float,
                   double) {
  const auto comm = world();
  for (const char* name : {"iris", "digits", "diabetes"}) {
    CAPTURE(name);
    const auto data = test::load_split<T, double>(name);
    const Dataset<T> full(data.X_train);
    const auto shard = full.shard(comm);

    preprocessing::StandardScaler<T> local;
    local.fit(full.features());
    preprocessing::StandardScaler<T, exec::mpi> distributed({}, comm);
    distributed.fit(shard.features());

    // float: the sums are accumulated in double, so only the last rounding differs.
    const double tolerance = std::is_same_v<T, float> ? 1e-6 : 1e-10;
    CHECK(test::max_relative_error(distributed.mean(), local.mean(), 1e-3) < tolerance);
    CHECK(test::max_relative_error(distributed.scale(), local.scale()) < tolerance);
    CHECK(distributed.n_samples_seen() == full.size());
    // Transform is local: each rank's transformed shard is its part of the full transform.
    const auto [begin, end] = Dataset<T>::shard_bounds(full.size(), comm.rank(), comm.size());
    const Matrix<T> expected = local.transform(full.features()).middleRows(begin, end - begin);
    CHECK(test::max_relative_error(distributed.transform(shard.features()), expected, 1e-3) <
          10 * tolerance);
  }
}

TEST_CASE_TEMPLATE("distributed LinearRegression equals the fit on the concatenated data", T, float,
                   double) {
  const auto comm = world();
  const auto reference = test::sklearn_reference("diabetes");
  const auto data = test::load_split<T>("diabetes");
  const Dataset<T> train(data.X_train, data.y_train);
  const Dataset<T> test_set(data.X_test, data.y_test);
  const double tolerance = std::is_same_v<T, float> ? 1e-4 : 1e-10;

  linear_model::LinearRegression<T> local;
  local.fit(train);
  linear_model::LinearRegression<T, exec::mpi> distributed({}, comm);
  distributed.fit(train.shard(comm));
  CHECK(test::max_relative_error(distributed.coef(), local.coef()) < tolerance);
  CHECK(distributed.intercept() == doctest::Approx(local.intercept()).epsilon(tolerance));

  // score is collective: each rank scores its shard of the test set, all get the global R^2.
  const auto my_test = test_set.shard(comm);
  const T r2 = distributed.score(my_test.features(), my_test.targets());
  CHECK(r2 == doctest::Approx(reference["linreg_test_r2"].get<double>()).epsilon(std::is_same_v<T, float> ? 2e-5 : 1e-10));
}

TEST_CASE("distributed LinearRegression with shards smaller than the number of features") {
  // 20 rows, 10 features: with 2 or 3 ranks every shard is shorter than it is wide, so the
  // per-rank QR triangles are trapezoids; the stacked problem must still be the full one.
  const auto comm = world();
  const auto data = test::load_split<double>("diabetes");
  const Dataset<double> small(data.X_train.topRows(20), data.y_train.head(20));
  linear_model::LinearRegression<double> local;
  local.fit(small);
  linear_model::LinearRegression<double, exec::mpi> distributed({}, comm);
  distributed.fit(small.shard(comm));
  CHECK(test::max_relative_error(distributed.coef(), local.coef()) < 1e-9);
  CHECK(distributed.intercept() == doctest::Approx(local.intercept()).epsilon(1e-10));

  // A rank with no rows at all still takes part.
  const auto empty_on_last = comm.rank() == comm.size() - 1 ? small.rows(0, 0) : small.shard(comm.rank(), comm.size() - 1);
  linear_model::LinearRegression<double, exec::mpi> with_empty_rank({}, comm);
  with_empty_rank.fit(empty_on_last);
  CHECK(test::max_relative_error(with_empty_rank.coef(), local.coef()) < 1e-9);
}

TEST_CASE("bad input on one rank fails the distributed fit on every rank") {
  const auto comm = world();
  const auto data = test::load_split<double>("diabetes");
  const Dataset<double> train(data.X_train, data.y_train);
  auto shard = train.shard(comm);
  Matrix<double> X = shard.features();
  const bool culprit = comm.rank() == comm.size() - 1;
  if (culprit) X(0, 3) = std::numeric_limits<double>::quiet_NaN();

  linear_model::LinearRegression<double, exec::mpi> model({}, comm);
  const std::string expected = "on rank " + std::to_string(comm.size() - 1) +
                               ": LinearRegression.fit: expected finite values in X";
  CHECK_THROWS_WITH_AS(model.fit(X, shard.targets()), doctest::Contains(expected.c_str()),
                       onelearn::invalid_argument);
  preprocessing::StandardScaler<double, exec::mpi> scaler({}, comm);
  CHECK_THROWS_AS(scaler.fit(X), onelearn::invalid_argument);

  // One rank with a different number of features: a shape_error everywhere, not a hang.
  const Matrix<double> narrow = culprit ? Matrix<double>(shard.features().leftCols(9))
                                        : shard.features();
  CHECK_THROWS_WITH_AS(scaler.fit(narrow), doctest::Contains("ranks disagree on the number of features of X"),
                       shape_error);
  CHECK_THROWS_AS(model.fit(narrow, shard.targets()), shape_error);
}
