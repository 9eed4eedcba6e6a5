// exec::mpi under 2 and 3 ranks: the collectives, the agreement checks, the timeouts that turn a
// rank that never joins a collective into an error, and the two estimators, whose distributed
// fits must equal the fit on the concatenated data.
//
// Checks here use CHECK, never REQUIRE: a REQUIRE that stops one rank's test case early would
// leave the other ranks waiting in a collective.
#include <doctest/doctest.h>

#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "onelearn/core/dataset.hpp"
#include "onelearn/exec/mpi.hpp"
#include "onelearn/linear_model/linear_regression.hpp"
#include "onelearn/preprocessing/standard_scaler.hpp"
#include "mpi_support.hpp"
#include "support.hpp"

using namespace onelearn;

namespace {
using test::world;
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

TEST_CASE("ranks that disagree on the number of steps all get a shape_error") {
  const auto comm = world();
  const std::array<std::int64_t, 1> steps{comm.rank() == 0 ? 11 : 10};
  CHECK_THROWS_WITH_AS(comm.check_same_shape("the number of steps", steps),
                       doctest::Contains("ranks disagree on the number of steps: expected the same on every rank, found rank 0 (11), rank 1 (10)"),
                       shape_error);
}

namespace {
using std::chrono::milliseconds;
using std::chrono::steady_clock;

/// Runs `waiting` on every rank but the last and `late` on the last rank, on a duplicate of
/// MPI_COMM_WORLD. The last rank starts `late` only after the others have finished `waiting`
/// (which times out), so that its collective completes the ones they abandoned and MPI stays
/// consistent for the rest of the suite; the others keep MPI progressing in a barrier meanwhile.
template <class Waiting, class Late>
void with_late_rank(Waiting waiting, Late late) {
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank != size - 1) {
    waiting(dup);
    MPI_Barrier(MPI_COMM_WORLD);  // releases the late rank
    MPI_Barrier(MPI_COMM_WORLD);  // progresses the abandoned collective while it completes
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    late(dup);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Comm_free(&dup);
}
}  // namespace

TEST_CASE("a collective that one rank does not join times out on the others, naming rank, operation and step") {
  // Static: MPI may write the result of the abandoned all-reduce into it after the test returns.
  static std::vector<double> values;
  values.assign(3, 1.0);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  with_late_rank(
      [&](MPI_Comm dup) {
        const exec::mpi comm(dup, {.timeout = milliseconds(200), .on_timeout = exec::timeout_action::throw_error});
        comm.set_step("epoch", 3, "batch", 17);
        const std::string expected = "exec::mpi: rank " + std::to_string(comm.rank()) +
                                     ": MPI_Allreduce #0 (step: epoch 3, batch 17): timed out after 200 ms";
        const auto start = steady_clock::now();
        CHECK_THROWS_WITH_AS(comm.allreduce(std::span(values), exec::reduce_op::sum),
                             doctest::Contains(expected.c_str()), distributed_error);
        const auto waited = steady_clock::now() - start;
        CHECK(waited >= milliseconds(200));
        CHECK(waited < milliseconds(5000));  // the sleeps of the wait loop are capped at 1 ms
        // The collective is still pending on the communicator: every later call, on any copy of
        // the policy, fails at once instead of matching the wrong calls of the other ranks.
        const exec::mpi copy = comm;
        CHECK_THROWS_WITH_AS(copy.barrier(), doctest::Contains("MPI_Barrier #1 (step: epoch 3, batch 17): this exec::mpi is unusable after an earlier failure"),
                             distributed_error);
        std::array<double, 1> more{1.0};
        CHECK_THROWS_AS(comm.broadcast(std::span(more)), distributed_error);
      },
      [&](MPI_Comm dup) {
        const exec::mpi comm(dup, {.timeout = milliseconds(30000), .on_timeout = exec::timeout_action::throw_error});
        comm.allreduce(std::span(values), exec::reduce_op::sum);
        CHECK(values == std::vector<double>(3, size));  // the others' contributions arrived
      });
}

TEST_CASE("wait_all applies the timeout to requests the caller started and clears them") {
  with_late_rank(
      [&](MPI_Comm dup) {
        const exec::mpi comm(dup, {.timeout = milliseconds(100), .on_timeout = exec::timeout_action::throw_error});
        comm.set_step("epoch", 0);
        std::array<MPI_Request, 1> requests{MPI_REQUEST_NULL};
        MPI_Ibarrier(dup, requests.data());
        CHECK_THROWS_WITH_AS(comm.wait_all(requests, "MPI_Iallreduce (gradient buckets)"),
                             doctest::Contains("MPI_Iallreduce (gradient buckets) #0 (step: epoch 0): timed out after 100 ms"),
                             distributed_error);
        // Taken over by the policy, so that a later MPI_Waitall on them cannot hang.
        CHECK(requests[0] == MPI_REQUEST_NULL);
      },
      [&](MPI_Comm dup) {
        // MPI_Ibarrier, not MPI_Barrier: blocking and non-blocking collectives never match.
        MPI_Request request = MPI_REQUEST_NULL;
        MPI_Ibarrier(dup, &request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
      });
}

TEST_CASE("a rank late by less than the timeout is waited for") {
  // abort: blocking calls under the watchdog, which must not fire; throw_error: the wait loop.
  for (const auto action : {exec::timeout_action::abort, exec::timeout_action::throw_error}) {
    const exec::mpi comm(MPI_COMM_WORLD, {.timeout = milliseconds(20000), .on_timeout = action});
    const int last = comm.size() - 1;
    // 300 ms: the others go through the spin, yield and sleep phases of the wait loop.
    if (comm.rank() == last) std::this_thread::sleep_for(milliseconds(300));
    std::vector<std::int64_t> values{comm.rank(), 1};
    comm.allreduce(std::span(values), exec::reduce_op::sum);
    CHECK(values[0] == comm.size() * (comm.size() - 1) / 2);
    CHECK(values[1] == comm.size());
    if (comm.rank() == 0) std::this_thread::sleep_for(milliseconds(300));
    std::array<double, 2> from_root{comm.rank() == 0 ? 2.5 : 0.0, 0.0};
    comm.broadcast(std::span(from_root));
    CHECK(from_root[0] == 2.5);
    if (comm.rank() == last) std::this_thread::sleep_for(milliseconds(50));
    CHECK_NOTHROW(comm.barrier());
  }
}

TEST_CASE("exec::mpi options and the step label") {
  const auto comm = world();
  CHECK(comm.options().timeout == std::chrono::minutes(10));
  CHECK(comm.options().on_timeout == exec::timeout_action::abort);
  CHECK(comm.step().empty());
  comm.set_step("epoch", 4);
  const auto copy = comm;  // copies share the label
  CHECK(copy.step() == "epoch 4");
  copy.set_step("epoch", 4, "batch", -1);
  CHECK(comm.step() == "epoch 4, batch -1");
  comm.set_step("a label longer than thirty-one characters", 2);
  CHECK(comm.step() == "a label longer than thirty-one  2");
  comm.clear_step();
  CHECK(comm.step().empty());

  CHECK_THROWS_WITH_AS(exec::mpi(MPI_COMM_WORLD, {.timeout = milliseconds(0)}),
                       doctest::Contains("exec::mpi: expected a positive timeout, found 0 ms"),
                       onelearn::invalid_argument);
  CHECK_THROWS_AS(exec::mpi(MPI_COMM_WORLD, {.timeout = milliseconds(-5)}), onelearn::invalid_argument);
  std::array<double, 1> value{1.0};
  const std::string bad_root = "exec::mpi::broadcast: expected 0 <= root < " + std::to_string(comm.size()) +
                               ", found " + std::to_string(comm.size());
  CHECK_THROWS_WITH_AS(comm.broadcast(std::span(value), comm.size()), doctest::Contains(bad_root.c_str()),
                       onelearn::invalid_argument);

  // no_timeout: the blocking MPI calls, same results.
  const exec::mpi blocking(MPI_COMM_WORLD, {.timeout = exec::mpi_options::no_timeout});
  std::vector<double> sums{1.0, static_cast<double>(blocking.rank())};
  blocking.allreduce(std::span(sums), exec::reduce_op::sum);
  CHECK(sums[0] == blocking.size());
  CHECK(sums[1] == blocking.size() * (blocking.size() - 1) / 2);
  const std::vector<std::int64_t> mine(static_cast<std::size_t>(blocking.rank()), blocking.rank());
  CHECK(blocking.allgatherv(std::span<const std::int64_t>(mine)).size() ==
        static_cast<std::size_t>(blocking.size() * (blocking.size() - 1) / 2));
  CHECK_NOTHROW(blocking.barrier());
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

// The concept checks every element type the code uses (the primitives and the derived ones).
static_assert(exec::CollectivePrimitives<exec::mpi>);
static_assert(exec::ExecutionPolicy<exec::mpi>);
static_assert(exec::detail::primitives_for<exec::mpi, float>);
static_assert(exec::detail::primitives_for<exec::mpi, double>);
static_assert(exec::detail::primitives_for<exec::mpi, std::int64_t>);
static_assert(exec::CollectiveRequest<exec::mpi::request>);

TEST_CASE_TEMPLATE("exec::mpi iallreduce: a request completed by wait, test or wait_all", T, float, double,
                   std::int64_t) {
  const auto comm = world();
  const int p = comm.size();
  std::vector<T> a{static_cast<T>(comm.rank() + 1), T(2)};
  std::vector<T> b{static_cast<T>(comm.rank())};
  auto first = comm.iallreduce(std::span(a), exec::reduce_op::sum);
  auto second = comm.iallreduce(std::span(b), exec::reduce_op::max);
  while (!first.test()) {
  }
  CHECK(first.test());  // stays complete
  first.wait();         // nothing left to wait for
  CHECK(a == std::vector<T>{static_cast<T>(p * (p + 1) / 2), static_cast<T>(2 * p)});
  second.wait();
  CHECK(b[0] == static_cast<T>(p - 1));
  std::vector<exec::mpi::request> requests;
  std::vector<T> c(5, T(1));
  std::vector<T> d(3, T(2));
  requests.push_back(comm.iallreduce(std::span(c), exec::reduce_op::sum));
  requests.push_back(comm.iallreduce(std::span(d), exec::reduce_op::min));
  comm.wait_all(requests);
  CHECK(c == std::vector<T>(5, static_cast<T>(p)));
  CHECK(d == std::vector<T>(3, T(2)));
  CHECK(requests[0].test());
  { auto dropped = comm.iallreduce(std::span(c), exec::reduce_op::sum); }  // destroyed: waits
  CHECK(c == std::vector<T>(5, static_cast<T>(p * p)));
}

TEST_CASE("exec::mpi ireduce_scatter and iallgatherv_in_place move each rank's piece") {
  const auto comm = world();
  const int p = comm.size();
  const int r = comm.rank();
  // Uneven pieces, rank 1's empty: counts[k] = k == 1 ? 0 : k + 2.
  std::vector<std::int64_t> counts(static_cast<std::size_t>(p));
  std::int64_t total = 0;
  std::int64_t offset = 0;
  for (int k = 0; k < p; ++k) {
    counts[static_cast<std::size_t>(k)] = k == 1 ? 0 : k + 2;
    if (k == r) offset = total;
    total += counts[static_cast<std::size_t>(k)];
  }
  std::vector<double> values(static_cast<std::size_t>(total));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i) + r;
  const auto mine_count = static_cast<std::size_t>(counts[static_cast<std::size_t>(r)]);
  std::vector<double> mine(mine_count, -1.0);
  auto scattered = comm.ireduce_scatter(std::span(values), std::span(mine), counts, exec::reduce_op::sum);
  scattered.wait();
  for (std::size_t i = 0; i < mine_count; ++i) {
    CHECK(mine[i] == doctest::Approx(p * static_cast<double>(static_cast<std::size_t>(offset) + i) + p * (p - 1) / 2.0));
  }
  // Each rank fills its own piece with its rank; the all-gather fills the rest.
  std::vector<double> buffer(static_cast<std::size_t>(total), -1.0);
  std::fill_n(buffer.begin() + offset, mine_count, static_cast<double>(r));
  std::vector<exec::mpi::request> requests;
  requests.push_back(comm.iallgatherv_in_place(std::span(buffer), counts));
  comm.wait_all(requests);
  std::size_t at = 0;
  for (int k = 0; k < p; ++k) {
    for (std::int64_t i = 0; i < counts[static_cast<std::size_t>(k)]; ++i) CHECK(buffer[at++] == k);
  }
  CHECK_THROWS_AS(static_cast<void>(comm.iallgatherv_in_place(std::span(buffer), std::span(counts).first(1))),
                  invalid_argument);
}

TEST_CASE_TEMPLATE("exec::mpi alltoallv: each rank's piece for rank q arrives at q, in rank order", T, double,
                   std::int64_t) {
  // abort: the blocking MPI_Alltoall(v) under the watchdog; throw_error: their non-blocking
  // forms and the wait loop.
  for (const auto action : {exec::timeout_action::abort, exec::timeout_action::throw_error}) {
    CAPTURE(static_cast<int>(action));
    const exec::mpi comm(MPI_COMM_WORLD, {.timeout = milliseconds(20000), .on_timeout = action});
    const int p = comm.size();
    const int r = comm.rank();
    // Rank r sends rank q (r + 2 q + 1) % 3 values (some pieces empty, some rank's own piece
    // not), value = 1000 r + 10 q + i.
    auto piece_size = [](int from, int to) { return static_cast<std::size_t>((from + 2 * to + 1) % 3); };
    auto value = [](int from, int to, std::size_t i) { return static_cast<T>(1000 * from + 10 * to + static_cast<int>(i)); };
    std::vector<std::int64_t> counts(static_cast<std::size_t>(p));
    std::vector<T> values;
    for (int q = 0; q < p; ++q) {
      counts[static_cast<std::size_t>(q)] = static_cast<std::int64_t>(piece_size(r, q));
      for (std::size_t i = 0; i < piece_size(r, q); ++i) values.push_back(value(r, q, i));
    }
    std::vector<T> expected;
    for (int from = 0; from < p; ++from) {
      for (std::size_t i = 0; i < piece_size(from, r); ++i) expected.push_back(value(from, r, i));
    }
    CHECK(comm.alltoallv(std::span<const T>(values), std::span<const std::int64_t>(counts)) == expected);
    // Counts that do not cut a rank's values into one piece per rank: every rank refuses the
    // call (the others after the count exchange), none waits for a timeout.
    const auto one_count = std::span<const std::int64_t>(counts).first(1);
    CHECK_THROWS_WITH_AS(static_cast<void>(comm.alltoallv(std::span<const T>(values), one_count)),
                         doctest::Contains("expected one count per rank"), invalid_argument);
    std::vector<std::int64_t> too_many = counts;
    if (r == p - 1) too_many[0] += 1;
    if (r == p - 1) {
      CHECK_THROWS_WITH_AS(
          static_cast<void>(comm.alltoallv(std::span<const T>(values), std::span<const std::int64_t>(too_many))),
          doctest::Contains("expected counts summing to the buffer's"), invalid_argument);
    } else {
      CHECK_THROWS_WITH_AS(
          static_cast<void>(comm.alltoallv(std::span<const T>(values), std::span<const std::int64_t>(too_many))),
          doctest::Contains(("rank " + std::to_string(p - 1) + "'s counts were refused").c_str()), invalid_argument);
    }
    // The policy is still usable: the refusals completed their count exchange.
    CHECK(comm.alltoallv(std::span<const T>(values), std::span<const std::int64_t>(counts)) == expected);
  }
}

TEST_CASE("exec::mpi split: sub-groups by color, ordered by key, with their own collectives") {
  const auto comm = world();
  const int r = comm.rank();
  // Two groups (even and odd ranks), each ordered by descending world rank.
  const exec::mpi group = comm.split(r % 2, -r);
  const int members = (comm.size() + 1 - r % 2) / 2;
  CHECK(group.size() == members);
  CHECK(group.rank() == members - 1 - r / 2);
  std::array<std::int64_t, 1> sum{r};
  group.allreduce(std::span(sum), exec::reduce_op::sum);
  std::int64_t expected = 0;
  for (int k = r % 2; k < comm.size(); k += 2) expected += k;
  CHECK(sum[0] == expected);
  CHECK(group.options().timeout == comm.options().timeout);
  const exec::mpi copy = group;  // copies share the communicator; the last one frees it
  copy.barrier();
  CHECK_THROWS_WITH_AS(static_cast<void>(comm.split(r == 0 ? -1 : 0, 0)),
                       doctest::Contains("on rank 0: exec::mpi::split: expected a color >= 0, found -1"),
                       invalid_argument);
}
