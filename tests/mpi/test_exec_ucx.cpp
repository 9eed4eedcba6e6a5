// exec::ucx under 2 and 3 ranks: every collective against exec::mpi's result on the same data
// (MPI_Allreduce & co. are the independent reference), bit-identical all-reduce results on every
// rank, the agreement checks, the timeout and peer-failure paths, and the estimators (Ridge,
// KMeans, LogisticRegression, GaussianNB, PCA, StandardScaler) and data-parallel nn::Sequential
// (sharded optimizer state or not) whose exec::ucx fits must equal their exec::mpi fits on the
// same uneven shards.
//
// Checks here use CHECK, never REQUIRE: a REQUIRE that stops one rank's test case early would
// leave the other ranks waiting in a collective.
#include <doctest/doctest.h>

#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "onelearn/cluster/k_means.hpp"
#include "onelearn/core/dataset.hpp"
#include "onelearn/decomposition/pca.hpp"
#include "onelearn/exec/mpi.hpp"
#include "onelearn/exec/ucx.hpp"
#include "onelearn/linear_model/logistic_regression.hpp"
#include "onelearn/linear_model/ridge.hpp"
#include "onelearn/naive_bayes/gaussian_nb.hpp"
#include "onelearn/nn/sequential.hpp"
#include "onelearn/preprocessing/standard_scaler.hpp"
#include "onelearn/tune/run.hpp"
#include "mpi_support.hpp"
#include "support.hpp"
#include "weights_support.hpp"

using namespace onelearn;

namespace {

using onelearn::test::weights_error;

using test::world;

/// Whether every rank holds exactly these bits (rank 0's are broadcast by MPI and compared).
template <class T>
bool bitwise_same_on_every_rank(const std::vector<T>& values) {
  std::vector<T> root = values;
  if (!root.empty()) MPI_Bcast(root.data(), static_cast<int>(root.size() * sizeof(T)), MPI_BYTE, 0, MPI_COMM_WORLD);
  // memcmp must not see the null data() of empty vectors (undefined, and UBSan says so).
  int same =
      values.empty() || std::memcmp(root.data(), values.data(), values.size() * sizeof(T)) == 0
          ? 1
          : 0;
  MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return same == 1;
}

/// Rank r's test data: scrambled values of mixed magnitude (so that float sums depend on their
/// order, which makes the bit-identity check meaningful), or large integers for int64.
template <class T>
std::vector<T> rank_values(std::size_t n, int rank) {
  std::vector<T> values(n);
  std::uint64_t state = 0x9E3779B97F4A7C15ULL * static_cast<std::uint64_t>(rank + 1);
  for (std::size_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const auto bits = state >> 11;
    if constexpr (std::is_integral_v<T>) {
      values[i] = static_cast<T>(bits % 2000000000000ULL) - 1000000000000LL;
    } else {
      const double unit = static_cast<double>(bits) / 9007199254740992.0 - 0.5;  // [-0.5, 0.5)
      values[i] = static_cast<T>(unit * std::pow(10.0, static_cast<double>(i % 7) - 3.0));
    }
  }
  return values;
}

/// Largest |ucx - mpi| over rounding scale: each sum may differ from MPI's by the rounding of
/// p-1 additions in another order, at most (p-1) eps sum|x| per element.
template <class T>
bool sums_agree(const std::vector<T>& ucx_result, const std::vector<T>& mpi_result,
                const std::vector<T>& absolute_sums, int ranks) {
  for (std::size_t i = 0; i < ucx_result.size(); ++i) {
    const double bound = 2.0 * ranks * std::numeric_limits<T>::epsilon() * static_cast<double>(absolute_sums[i]);
    if (std::abs(static_cast<double>(ucx_result[i]) - static_cast<double>(mpi_result[i])) > bound) return false;
  }
  return true;
}

const char* op_name(exec::reduce_op op) {
  return op == exec::reduce_op::sum ? "sum" : op == exec::reduce_op::min ? "min" : "max";
}

}  // namespace

TEST_CASE_TEMPLATE("exec::ucx allreduce equals MPI_Allreduce and is bit-identical on every rank", T,
                   float, double, std::int64_t) {
  const auto mpi = world();
  const int p = mpi.size();
  // The defaults (shared memory: every rank of a test runs on one host); shared memory in
  // rounds of 64 bytes (many rounds, parts of a round empty when it holds fewer values than
  // ranks); and, with shared memory off, the ring with tiny chunks (many chunks per segment,
  // uneven last chunk) and recursive doubling for every size.
  const exec::ucx defaults(MPI_COMM_WORLD);
  CHECK(defaults.uses_shared_memory());
  const exec::ucx tiny_rounds(MPI_COMM_WORLD, {.shared_memory_bytes = 64});
  const exec::ucx tiny_chunks(MPI_COMM_WORLD, {.small_message_bytes = 0, .chunk_bytes = 64, .shared_memory_bytes = 0});
  const exec::ucx doubling(MPI_COMM_WORLD, {.small_message_bytes = std::size_t{1} << 40, .shared_memory_bytes = 0});
  CHECK_FALSE(doubling.uses_shared_memory());
  const std::size_t mib = (std::size_t{1} << 20) / sizeof(T);
  const std::vector<std::size_t> sizes{0, 1, static_cast<std::size_t>(p - 1), 7, 1001, 4099, mib, 9 * mib + 3};

  for (const std::size_t n : sizes) {
    CAPTURE(n);
    for (const auto op : {exec::reduce_op::sum, exec::reduce_op::min, exec::reduce_op::max}) {
      if (n > mib && op != exec::reduce_op::sum) continue;  // 9 MiB: sums only (time)
      CAPTURE(op_name(op));
      const auto mine = rank_values<T>(n, mpi.rank());
      auto expected = mine;
      mpi.allreduce(std::span(expected), op);
      std::vector<T> absolute_sums(n);
      for (std::size_t i = 0; i < n; ++i) absolute_sums[i] = mine[i] < 0 ? static_cast<T>(-mine[i]) : mine[i];
      if constexpr (std::is_floating_point_v<T>) mpi.allreduce(std::span(absolute_sums), exec::reduce_op::sum);

      for (const auto* policy : {&defaults, &tiny_rounds, &tiny_chunks, &doubling}) {
        if ((policy == &tiny_chunks || policy == &tiny_rounds) && n > 4099) continue;  // 64-byte pieces of megabytes: slow
        auto result = mine;
        policy->allreduce(std::span(result), op);
        if (std::is_integral_v<T> || op != exec::reduce_op::sum) {
          CHECK(result == expected);  // exact: integers, or min/max
        } else {
          CHECK(sums_agree(result, expected, absolute_sums, p));
        }
        CHECK(bitwise_same_on_every_rank(result));
      }
    }
  }
}

TEST_CASE("exec::ucx broadcast from every root, small and chunked") {
  const exec::ucx ucx(MPI_COMM_WORLD, {.chunk_bytes = 4096});
  for (int root = 0; root < ucx.size(); ++root) {
    CAPTURE(root);
    for (const std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{100003}}) {
      CAPTURE(n);
      const auto from_root = rank_values<double>(n, root);
      auto values = ucx.rank() == root ? from_root : std::vector<double>(n, -1.0);
      ucx.broadcast(std::span(values), root);
      CHECK(values == from_root);
      std::vector<std::int64_t> ints(n, ucx.rank() == root ? 42 + root : 0);
      ucx.broadcast(std::span(ints), root);
      CHECK(ints == std::vector<std::int64_t>(n, 42 + root));
    }
  }
  std::array<float, 2> bad{};
  CHECK_THROWS_AS(ucx.broadcast(std::span(bad), ucx.size()), onelearn::invalid_argument);
}

TEST_CASE("exec::ucx allgatherv with uneven and empty contributions equals MPI's") {
  const auto mpi = world();
  const exec::ucx ucx(MPI_COMM_WORLD);
  // Rank r contributes r values (rank 0 none); then rank 1 a large block, the others 5 values.
  for (const bool large : {false, true}) {
    CAPTURE(large);
    const std::size_t n = large ? (ucx.rank() == 1 ? 300001 : 5) : static_cast<std::size_t>(ucx.rank());
    const auto mine = rank_values<double>(n, ucx.rank());
    const auto got = ucx.allgatherv(std::span<const double>(mine));
    const auto expected = mpi.allgatherv(std::span<const double>(mine));
    CHECK(got == expected);
    const auto mine_int = rank_values<std::int64_t>(n, ucx.rank());
    CHECK(ucx.allgatherv(std::span<const std::int64_t>(mine_int)) ==
          mpi.allgatherv(std::span<const std::int64_t>(mine_int)));
  }
  // Nobody contributes anything.
  CHECK(ucx.allgatherv(std::span<const float>()).empty());
}

TEST_CASE("exec::ucx alltoallv with uneven, empty and large pieces equals MPI's") {
  const auto mpi = world();
  const exec::ucx ucx(MPI_COMM_WORLD);
  const int p = ucx.size();
  const int r = ucx.rank();
  // Rank r sends rank q (r * p + q) % 4 values, or, in the large round, 300001 to rank 1 from
  // rank 0 and none from rank 0 to itself.
  for (const bool large : {false, true}) {
    CAPTURE(large);
    std::vector<std::int64_t> counts(static_cast<std::size_t>(p));
    std::size_t total = 0;
    for (int q = 0; q < p; ++q) {
      std::int64_t n = (r * p + q) % 4;
      if (large && r == 0) n = q == 1 ? 300001 : 0;
      counts[static_cast<std::size_t>(q)] = n;
      total += static_cast<std::size_t>(n);
    }
    const auto values = rank_values<double>(total, r);
    CHECK(ucx.alltoallv(std::span<const double>(values), std::span<const std::int64_t>(counts)) ==
          mpi.alltoallv(std::span<const double>(values), std::span<const std::int64_t>(counts)));
    const auto ints = rank_values<std::int64_t>(total, r);
    CHECK(ucx.alltoallv(std::span<const std::int64_t>(ints), std::span<const std::int64_t>(counts)) ==
          mpi.alltoallv(std::span<const std::int64_t>(ints), std::span<const std::int64_t>(counts)));
  }
  // Nobody sends anything.
  const std::vector<std::int64_t> none(static_cast<std::size_t>(p), 0);
  CHECK(ucx.alltoallv(std::span<const float>(), std::span<const std::int64_t>(none)).empty());
  // One rank's counts do not cut its values into one piece per rank: every rank refuses the call
  // after the count exchange, and the policy stays usable.
  const std::vector<float> two{1.0F, 2.0F};
  std::vector<std::int64_t> counts(static_cast<std::size_t>(p), 0);
  counts[0] = 2;
  if (r == p - 1) counts[0] = 3;
  if (r == p - 1) {
    CHECK_THROWS_WITH_AS(static_cast<void>(ucx.alltoallv(std::span<const float>(two), std::span<const std::int64_t>(counts))),
                         doctest::Contains("expected counts summing to the buffer's"), onelearn::invalid_argument);
  } else {
    CHECK_THROWS_WITH_AS(static_cast<void>(ucx.alltoallv(std::span<const float>(two), std::span<const std::int64_t>(counts))),
                         doctest::Contains(("rank " + std::to_string(p - 1) + "'s counts were refused").c_str()),
                         onelearn::invalid_argument);
  }
  CHECK_THROWS_AS(static_cast<void>(ucx.alltoallv(std::span<const float>(), std::span<const std::int64_t>(none).first(1))),
                  onelearn::invalid_argument);
  CHECK(ucx.alltoallv(std::span<const float>(), std::span<const std::int64_t>(none)).empty());
}

TEST_CASE("exec::ucx barrier waits for the last rank to arrive") {
  const exec::ucx ucx(MPI_COMM_WORLD);
  ucx.barrier();
  const auto start = std::chrono::steady_clock::now();
  if (ucx.rank() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ucx.barrier();
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(waited >= 0.19);  // every rank, not only rank 0, spent the 200 ms
}

TEST_CASE("exec::ucx copies share one worker and one sequence of collectives") {
  const exec::ucx original(MPI_COMM_WORLD);
  const exec::ucx copy = original;  // NOLINT(performance-unnecessary-copy-initialization)
  std::array<std::int64_t, 1> a{1};
  std::array<std::int64_t, 1> b{10};
  original.allreduce(std::span(a), exec::reduce_op::sum);
  copy.allreduce(std::span(b), exec::reduce_op::sum);
  original.allreduce(std::span(a), exec::reduce_op::sum);
  CHECK(a[0] == copy.size() * copy.size());
  CHECK(b[0] == 10 * copy.size());
}

TEST_CASE("exec::ucx: ranks that disagree on a shape all get the same shape_error") {
  const exec::ucx ucx(MPI_COMM_WORLD);
  const std::array<std::int64_t, 2> same{100, 4};
  CHECK_NOTHROW(ucx.check_same_shape("X", same));

  const std::array<std::int64_t, 2> differs{100, ucx.rank() == ucx.size() - 1 ? 5 : 4};
  const std::string expected = "ranks disagree on X: expected the same on every rank, found rank 0 (100, 4)" +
                               std::string(ucx.size() == 2 ? ", rank 1 (100, 5)" : ", rank 1 (100, 4), rank 2 (100, 5)");
  CHECK_THROWS_WITH_AS(ucx.check_same_shape("X", differs), doctest::Contains(expected.c_str()), shape_error);
  const std::vector<std::int64_t> ragged(ucx.rank() == 0 ? 3 : 2, 7);
  CHECK_THROWS_AS(ucx.check_same_shape("Y", ragged), shape_error);
}

TEST_CASE("exec::ucx: ranks that disagree on a setting all get the same invalid_argument") {
  const exec::ucx ucx(MPI_COMM_WORLD);
  const int last = ucx.size() - 1;
  const std::vector<exec::NamedValue> same{{"alpha", "1"}, {"fit_intercept", "true"}};
  CHECK_NOTHROW(ucx.check_same_values("Ridge.fit", same));
  const std::vector<exec::NamedValue> differs{{"alpha", ucx.rank() == last ? "100" : "1"},
                                              {"fit_intercept", "true"}};
  const std::string expected = "Ridge.fit: ranks disagree on alpha: 1 on " +
                               std::string(ucx.size() == 2 ? "rank 0" : "ranks 0 and 1") + ", 100 on rank " +
                               std::to_string(last) + "; expected the same on every rank";
  CHECK_THROWS_WITH_AS(ucx.check_same_values("Ridge.fit", differs), expected.c_str(), invalid_argument);
}

TEST_CASE("exec::ucx: an error on one rank is raised on every rank with its type") {
  const exec::ucx ucx(MPI_COMM_WORLD);
  const int last = ucx.size() - 1;
  const std::string expected = "on rank " + std::to_string(last) + ": model not fitted";
  CHECK_THROWS_WITH_AS(ucx.propagate_errors([&] {
    if (ucx.rank() == last) throw not_fitted_error("model not fitted");
  }),
                       doctest::Contains(expected.c_str()), not_fitted_error);
  CHECK_THROWS_WITH_AS(ucx.propagate_errors([&] {
    if (ucx.rank() == 0) throw 42;
  }),
                       doctest::Contains("on rank 0: an exception not derived from std::exception"),
                       std::runtime_error);
  int calls = 0;
  CHECK_NOTHROW(ucx.propagate_errors([&] { ++calls; }));
  CHECK(calls == 1);
}

TEST_CASE("exec::ucx: a rank that skips a collective makes the others time out, not hang") {
  const auto mpi = world();
  const int last = mpi.size() - 1;
  {
    const exec::ucx tiny(MPI_COMM_WORLD, {.timeout = std::chrono::milliseconds(300)});
    std::vector<double> values(5, 1.0);
    if (mpi.rank() != last) {
      const std::string where = "exec::ucx: rank " + std::to_string(mpi.rank()) + ": allreduce #0: timed out after 300 ms";
      const auto start = std::chrono::steady_clock::now();
      CHECK_THROWS_WITH_AS(tiny.allreduce(std::span(values), exec::reduce_op::sum),
                           doctest::Contains(where.c_str()), distributed_error);
      CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
      // The policy is now unusable, and says so at once instead of waiting again.
      CHECK_THROWS_WITH_AS(tiny.barrier(), doctest::Contains("unusable after an earlier failure"),
                           distributed_error);
    }
    mpi.barrier();  // the skipping rank leaves only once the others have given up
  }
  // A new policy works normally afterwards.
  const exec::ucx fresh(MPI_COMM_WORLD);
  std::array<double, 1> one{1.0};
  fresh.allreduce(std::span(one), exec::reduce_op::sum);
  CHECK(one[0] == mpi.size());
}

TEST_CASE("exec::ucx: ranks that pass different sizes get a distributed_error, not wrong data") {
  const auto mpi = world();
  {
    const exec::ucx ucx(MPI_COMM_WORLD, {.timeout = std::chrono::seconds(5)});
    // The root sends 4 values, the others expect 6: they must not accept the short message.
    std::vector<double> values(mpi.rank() == 0 ? 4 : 6, 1.0);
    if (mpi.rank() != 0) {
      CHECK_THROWS_WITH_AS(ucx.broadcast(std::span(values), 0),
                           doctest::Contains("expected 48 bytes from rank 0, found 32"), distributed_error);
    } else {
      ucx.broadcast(std::span(values), 0);
    }
    mpi.barrier();
  }
}

TEST_CASE("exec::ucx: ranks that pass different sizes to a shared-memory all-reduce all get a distributed_error") {
  const auto mpi = world();
  for (const std::size_t mine : {std::size_t{0}, std::size_t{3}}) {
    const exec::ucx ucx(MPI_COMM_WORLD, {.timeout = std::chrono::seconds(5)});
    CHECK(ucx.uses_shared_memory());
    // Rank 0 passes `mine` values (none, or 3), the others 5: every rank must refuse, at once.
    std::vector<float> values(mpi.rank() == 0 ? mine : 5, 1.0f);
    const std::string expected = mpi.rank() == 0 ? "expected " + std::to_string(mine) + " values from rank 1, found 5"
                                                 : "expected 5 values from rank 0, found " + std::to_string(mine);
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_WITH_AS(ucx.allreduce(std::span(values), exec::reduce_op::sum),
                         doctest::Contains(expected.c_str()), distributed_error);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
    mpi.barrier();
  }
}

TEST_CASE("exec::ucx: shared_memory_bytes below 64 (other than 0) is an invalid_argument on every rank") {
  CHECK_THROWS_WITH_AS(exec::ucx(MPI_COMM_WORLD, {.shared_memory_bytes = 8}),
                       doctest::Contains("expected shared_memory_bytes 0 (off) or >= 64, found 8"), invalid_argument);
}

TEST_CASE("exec::ucx: ranks that pass different shared_memory_bytes all get an invalid_argument") {
  const auto mpi = world();
  const std::size_t bytes = mpi.rank() == 0 ? 0 : 4096;
  CHECK_THROWS_WITH_AS(exec::ucx(MPI_COMM_WORLD, {.shared_memory_bytes = bytes}),
                       doctest::Contains("expected the same shared_memory_bytes and detect_peer_failure on every rank, "
                                         "found shared-memory segments of 0 to 4096 bytes"),
                       invalid_argument);
}

TEST_CASE("exec::ucx with peer-failure detection: a rank that leaves fails the others' collective") {
  const auto mpi = world();
  const int last = mpi.size() - 1;
  exec::ucx_options options{.timeout = std::chrono::seconds(10), .detect_peer_failure = true};
  std::optional<exec::ucx> policy(std::in_place, MPI_COMM_WORLD, options);
  std::vector<float> values(3, 1.0f);
  policy->allreduce(std::span(values), exec::reduce_op::sum);  // connected and working
  CHECK(values[0] == static_cast<float>(mpi.size()));
  if (mpi.rank() == last) policy.reset();  // its worker and endpoints are gone
  mpi.barrier();
  if (mpi.rank() != last) {
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_AS(policy->allreduce(std::span(values), exec::reduce_op::sum), distributed_error);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(seconds < 12.0);
    MESSAGE("rank " << mpi.rank() << " noticed the departure after " << seconds << " s");
  }
  policy.reset();
  mpi.barrier();
}

TEST_CASE_TEMPLATE("Ridge and KMeans under exec::ucx equal their fits under exec::mpi", T, float, double) {
  const auto mpi = world();
  const exec::ucx ucx(MPI_COMM_WORLD);
  const auto data = test::load_split<T>("diabetes");
  const Dataset<T> train(data.X_train, data.y_train);
  const auto shard = train.shard(mpi);
  const double tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-12;

  linear_model::Ridge<T, exec::mpi> ridge_mpi({.alpha = 1.0}, mpi);
  ridge_mpi.fit(shard);
  linear_model::Ridge<T, exec::ucx> ridge_ucx({.alpha = 1.0}, ucx);
  ridge_ucx.fit(train.shard(ucx));
  CHECK(test::max_relative_error(ridge_ucx.coef(), ridge_mpi.coef()) < tolerance);
  CHECK(static_cast<double>(ridge_ucx.intercept()) ==
        doctest::Approx(static_cast<double>(ridge_mpi.intercept())).epsilon(tolerance));
  // And both equal scikit-learn's Ridge(alpha=1) on all the rows.
  const auto reference = test::sklearn_reference("diabetes");
  CHECK(test::max_relative_error(ridge_ucx.coef(), test::to_vector<double>(reference["ridge_a1_coef"])) <
        (std::is_same_v<T, float> ? 1e-5 : 1e-10));

  const cluster::KMeansParams params{.n_clusters = 4, .n_init = 2, .random_state = 3};
  cluster::KMeans<T, exec::mpi> km_mpi(params, mpi);
  km_mpi.fit(shard.features());
  cluster::KMeans<T, exec::ucx> km_ucx(params, ucx);
  km_ucx.fit(shard.features());
  CHECK(test::max_relative_error(km_ucx.cluster_centers(), km_mpi.cluster_centers(), 1e-3) < tolerance);
  CHECK(static_cast<double>(km_ucx.inertia()) ==
        doctest::Approx(static_cast<double>(km_mpi.inertia())).epsilon(tolerance));
  CHECK(km_ucx.n_iter() == km_mpi.n_iter());
  CHECK(km_ucx.labels() == km_mpi.labels());

  // Bad input on one rank fails the exec::ucx fit on every rank.
  Matrix<T> X = shard.features();
  if (ucx.rank() == ucx.size() - 1) X(0, 0) = std::numeric_limits<T>::quiet_NaN();
  CHECK_THROWS_WITH_AS(ridge_ucx.fit(X, shard.targets()),
                       doctest::Contains("Ridge.fit: expected finite values in X"), onelearn::invalid_argument);
}

namespace {

/// Rank r's rows of `data` in deliberately uneven shards: rank r holds a share proportional to
/// r + 1 (iris, 112 rows: 37 + 75 on 2 ranks, 18 + 38 + 56 on 3), so that no two ranks hold the
/// same number of rows and both policies see the same uneven split.
template <class D>
D uneven_shard(const D& data, int rank, int ranks) {
  const auto bound = [&](int r) {
    return static_cast<index_t>(static_cast<long long>(data.size()) * r * (r + 1) / (ranks * (ranks + 1)));
  };
  return data.rows(bound(rank), bound(rank + 1));
}

/// The largest value over the ranks (to report the worst rank's difference).
double max_over_ranks(double value) {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return value;
}

}  // namespace

// The exec::mpi fit on the same shards is the reference: both all-reduce the same per-rank
// sums, so they differ only by the order in which exec::ucx's ring or recursive doubling adds
// the ranks' contributions (rounding). Double only: each estimator is compiled for both policies.
TEST_CASE("LogisticRegression, GaussianNB, PCA and StandardScaler under exec::ucx equal their exec::mpi fits") {
  const auto mpi = world();
  const exec::ucx ucx(MPI_COMM_WORLD);
  const int rank = mpi.rank();
  const int ranks = mpi.size();
  const double exact = 1e-10;  // closed-form sums: only the reduction order differs

  SUBCASE("LogisticRegression (multinomial, iris standardised)") {
    const auto data = test::load_split<double, std::int64_t>("iris");
    preprocessing::StandardScaler<double> scaler;
    scaler.fit(data.X_train);
    const ClassificationDataset<double> train(scaler.transform(data.X_train), data.y_train);
    const Matrix<double> X_test = scaler.transform(data.X_test);
    const auto shard = uneven_shard(train, rank, ranks);

    linear_model::LogisticRegression<double, exec::mpi> by_mpi({}, mpi);
    by_mpi.fit(shard);
    linear_model::LogisticRegression<double, exec::ucx> by_ucx({}, ucx);
    by_ucx.fit(shard);
    // L-BFGS amplifies the reductions' rounding over its iterations: 1e-6 (floor 1e-3).
    const double coef_error = max_over_ranks(test::max_relative_error(by_ucx.coef(), by_mpi.coef(), 1e-3));
    const double intercept_error =
        max_over_ranks(test::max_relative_error(by_ucx.intercept(), by_mpi.intercept(), 1e-3));
    MESSAGE("LogisticRegression on ", ranks, " ranks: coef ", coef_error, ", intercept ", intercept_error,
            ", n_iter ucx ", by_ucx.n_iter(), " mpi ", by_mpi.n_iter());
    CHECK(by_ucx.coef().rows() == 3);  // multinomial: one row per class
    CHECK(coef_error < 1e-6);
    CHECK(intercept_error < 1e-6);
    CHECK(by_ucx.classes() == by_mpi.classes());
    CHECK(by_ucx.n_iter() == by_mpi.n_iter());
    CHECK(bitwise_same_on_every_rank(std::vector<double>(by_ucx.coef().data(), by_ucx.coef().data() + by_ucx.coef().size())));
    CHECK(by_ucx.predict(X_test) == by_mpi.predict(X_test));
    CHECK(max_over_ranks(test::max_relative_error(by_ucx.predict_proba(X_test), by_mpi.predict_proba(X_test), 1e-3)) < 1e-6);
  }

  SUBCASE("GaussianNB (iris)") {
    const auto data = test::load_split<double, std::int64_t>("iris");
    const ClassificationDataset<double> train(data.X_train, data.y_train);
    const auto shard = uneven_shard(train, rank, ranks);

    naive_bayes::GaussianNB<double, exec::mpi> by_mpi({}, mpi);
    by_mpi.fit(shard);
    naive_bayes::GaussianNB<double, exec::ucx> by_ucx({}, ucx);
    by_ucx.fit(shard);
    const double theta_error = max_over_ranks(test::max_relative_error(by_ucx.theta(), by_mpi.theta(), 1e-3));
    const double var_error = max_over_ranks(test::max_relative_error(by_ucx.var(), by_mpi.var()));
    MESSAGE("GaussianNB on ", ranks, " ranks: theta ", theta_error, ", var ", var_error);
    CHECK(by_ucx.classes() == by_mpi.classes());
    CHECK(test::max_relative_error(by_ucx.class_count(), by_mpi.class_count()) < exact);
    CHECK(test::max_relative_error(by_ucx.class_prior(), by_mpi.class_prior()) < exact);
    CHECK(theta_error < exact);
    CHECK(var_error < exact);
    CHECK(by_ucx.epsilon() == doctest::Approx(by_mpi.epsilon()).epsilon(exact));
    CHECK(by_ucx.predict(data.X_test) == by_mpi.predict(data.X_test));
    CHECK(test::max_relative_error(by_ucx.predict_proba(data.X_test), by_mpi.predict_proba(data.X_test), 1e-3) <
          exact);
  }

  SUBCASE("PCA (digits, 4 components)") {
    const auto data = test::load_split<double, std::int64_t>("digits");
    const Dataset<double> full(data.X_train);
    const auto shard = uneven_shard(full, rank, ranks);

    decomposition::PCA<double, exec::mpi> by_mpi({.n_components = 4}, mpi);
    by_mpi.fit(shard);
    decomposition::PCA<double, exec::ucx> by_ucx({.n_components = 4}, ucx);
    by_ucx.fit(shard);
    // Components compared with signs (svd_flip is resolved over the ranks); near-zero entries
    // absolutely (floor 1e-3).
    const double components_error =
        max_over_ranks(test::max_relative_error(by_ucx.components(), by_mpi.components(), 1e-3));
    const double variance_error =
        max_over_ranks(test::max_relative_error(by_ucx.explained_variance(), by_mpi.explained_variance()));
    MESSAGE("PCA on ", ranks, " ranks: components ", components_error, ", explained_variance ", variance_error);
    CHECK(components_error < exact);
    CHECK(variance_error < exact);
    CHECK(test::max_relative_error(by_ucx.singular_values(), by_mpi.singular_values()) < exact);
    CHECK(test::max_relative_error(by_ucx.mean(), by_mpi.mean(), 1e-3) < exact);
    CHECK(by_ucx.noise_variance() == doctest::Approx(by_mpi.noise_variance()).epsilon(exact));
    CHECK(by_ucx.n_samples() == full.size());
    CHECK(test::max_relative_error(by_ucx.transform(data.X_test), by_mpi.transform(data.X_test), 1.0) < 10 * exact);
  }

  SUBCASE("StandardScaler (digits)") {
    const auto data = test::load_split<double, std::int64_t>("digits");
    const Dataset<double> full(data.X_train);
    const auto shard = uneven_shard(full, rank, ranks);

    preprocessing::StandardScaler<double, exec::mpi> by_mpi({}, mpi);
    by_mpi.fit(shard.features());
    preprocessing::StandardScaler<double, exec::ucx> by_ucx({}, ucx);
    by_ucx.fit(shard.features());
    const double mean_error = max_over_ranks(test::max_relative_error(by_ucx.mean(), by_mpi.mean(), 1e-3));
    const double scale_error = max_over_ranks(test::max_relative_error(by_ucx.scale(), by_mpi.scale()));
    MESSAGE("StandardScaler on ", ranks, " ranks: mean ", mean_error, ", scale ", scale_error);
    CHECK(mean_error < exact);
    CHECK(scale_error < exact);
    CHECK(test::max_relative_error(by_ucx.var(), by_mpi.var()) < exact);
    CHECK(by_ucx.n_samples_seen() == full.size());
    CHECK(test::max_relative_error(by_ucx.transform(data.X_test), by_mpi.transform(data.X_test), 1e-3) <
          10 * exact);
  }
}

// Replicated data-parallel training through the same GradientSync: exec::mpi overlaps bucketed
// MPI_Iallreduce (or MPI_Ireduce_scatter when sharded) with the backward pass; exec::ucx
// completes each bucket's reduction when it starts (its non-blocking collectives are eager),
// then all-gathers the parameters when sharded. Both must take the one-process step on each
// global batch, so their weights agree up to the rounding of another reduction order.
TEST_CASE("nn::Sequential<double, exec::ucx> trains as nn::Sequential<double, exec::mpi>") {
  const auto mpi = world();
  const exec::ucx ucx(MPI_COMM_WORLD);
  const auto split = test::load_split<double, std::int64_t>("digits");
  const Matrix<double> X = split.X_train.topRows(286) / 16.0;  // 286 rows: uneven last batch
  const Labels y = split.y_train.head(286);

  for (const bool shard_state : {false, true}) {
    CAPTURE(shard_state);
    const nn::FitOptions options{.epochs = 2, .batch_size = 32, .shuffle = true, .seed = 5,
                                 .replicated = true, .shard_optimizer_state = shard_state};
    const auto train = [&](auto& model) {
      model.add(nn::Input({64})).add(nn::Dense(32)).add(nn::ReLU{}).add(nn::Dense(10));
      model.compile(nn::Adam{.learning_rate = 1e-2}, nn::SparseCategoricalCrossentropy{.from_logits = true});
      return model.fit(X, y, options);
    };
    nn::Sequential<double, exec::mpi> by_mpi(mpi);
    const nn::History mpi_history = train(by_mpi);
    nn::Sequential<double, exec::ucx> by_ucx(ucx);
    const nn::History ucx_history = train(by_ucx);

    const auto w_ucx = by_ucx.get_weights();
    const double error = max_over_ranks(weights_error(w_ucx, by_mpi.get_weights()));
    MESSAGE("Sequential on ", mpi.size(), " ranks, shard_optimizer_state ", shard_state, ": weights ", error);
    CHECK(error < 1e-11);
    bool identical = !w_ucx.empty();
    for (const auto& w : w_ucx) identical = bitwise_same_on_every_rank(w) && identical;
    CHECK(identical);
    // It trained: the logged loss (over all ranks' rows) fell, as exec::mpi's.
    const auto& ucx_loss = ucx_history.at("loss");
    CHECK(ucx_loss.back() < ucx_loss.front());
    CHECK(ucx_loss.back() == doctest::Approx(mpi_history.at("loss").back()).epsilon(1e-9));
    if (shard_state) {
      // Sharded with the policy's collectives: each rank holds its share of Adam's state, as
      // under exec::mpi (the same shard plan).
      CHECK(by_ucx.optimizer_state_bytes() == by_mpi.optimizer_state_bytes());
      CHECK(static_cast<double>(by_ucx.optimizer_state_bytes()) * mpi.size() <
            2.0 * 2.0 * 8.0 * (64 * 32 + 32 + 32 * 10 + 10));  // unsharded: 2 slots x 8 bytes x n
    }
  }
}

// reproducible_blocks through exec::ucx's allgatherv: one process's blocked fit, bit for bit.
TEST_CASE("nn::Sequential<double, exec::ucx> with reproducible_blocks equals one process's bits") {
  const exec::ucx ucx(MPI_COMM_WORLD);
  const auto split = test::load_split<double, std::int64_t>("digits");
  const Matrix<double> X = split.X_train.topRows(286) / 16.0;
  const Labels y = split.y_train.head(286);
  nn::FitOptions options{.epochs = 2, .batch_size = 32, .shuffle = true, .seed = 5,
                         .validation_split = 0.1, .reproducible_blocks = 5};
  const auto train = [&](auto& model) {
    model.add(nn::Input({64})).add(nn::Dense(32)).add(nn::ReLU{}).add(nn::Dense(10));
    model.compile(nn::Adam{.learning_rate = 1e-2}, nn::SparseCategoricalCrossentropy{.from_logits = true});
    return model.fit(X, y, options);
  };
  nn::Sequential<double> local;
  const nn::History local_history = train(local);
  options.replicated = true;
  nn::Sequential<double, exec::ucx> by_ucx(ucx);
  const nn::History ucx_history = train(by_ucx);
  CHECK(by_ucx.get_weights() == local.get_weights());
  CHECK(ucx_history == local_history);
}

// The concept checks every element type the code uses (the primitives and the derived ones).
static_assert(exec::CollectivePrimitives<exec::ucx>);
static_assert(exec::ExecutionPolicy<exec::ucx>);
static_assert(exec::detail::primitives_for<exec::ucx, float>);
static_assert(exec::detail::primitives_for<exec::ucx, double>);
static_assert(exec::detail::primitives_for<exec::ucx, std::int64_t>);
static_assert(std::is_same_v<exec::ucx::request, exec::ready_request>);

TEST_CASE_TEMPLATE("exec::ucx non-blocking collectives are complete when they return and equal exec::mpi's", T,
                   float, double, std::int64_t) {
  const auto mpi = world();
  const exec::ucx ucx(MPI_COMM_WORLD);
  const int p = ucx.size();
  const int r = ucx.rank();
  std::vector<T> by_ucx = rank_values<T>(100, r);
  std::vector<T> by_mpi = by_ucx;
  auto request = ucx.iallreduce(std::span(by_ucx), exec::reduce_op::max);
  CHECK(request.test());
  request.wait();
  mpi.iallreduce(std::span(by_mpi), exec::reduce_op::max).wait();
  CHECK(by_ucx == by_mpi);  // max: exact whatever the order

  // Uneven pieces, rank 1's empty.
  std::vector<std::int64_t> counts(static_cast<std::size_t>(p));
  std::int64_t total = 0;
  for (int k = 0; k < p; ++k) {
    counts[static_cast<std::size_t>(k)] = k == 1 ? 0 : 3 * k + 5;
    total += counts[static_cast<std::size_t>(k)];
  }
  const auto n = static_cast<std::size_t>(counts[static_cast<std::size_t>(r)]);
  std::vector<T> values = rank_values<T>(static_cast<std::size_t>(total), r);
  std::vector<T> values_for_mpi = values;
  std::vector<T> mine(n);
  std::vector<T> mine_by_mpi(n);
  std::vector<exec::ucx::request> requests;
  requests.push_back(ucx.ireduce_scatter(std::span(values), std::span(mine), counts, exec::reduce_op::min));
  ucx.wait_all(requests);
  mpi.ireduce_scatter(std::span(values_for_mpi), std::span(mine_by_mpi), counts, exec::reduce_op::min).wait();
  CHECK(mine == mine_by_mpi);

  std::vector<T> buffer(static_cast<std::size_t>(total), T(0));
  std::vector<T> buffer_for_mpi = buffer;
  std::size_t offset = 0;
  for (int k = 0; k < r; ++k) offset += static_cast<std::size_t>(counts[static_cast<std::size_t>(k)]);
  for (std::size_t i = 0; i < n; ++i) buffer[offset + i] = buffer_for_mpi[offset + i] = static_cast<T>(r + 1);
  CHECK(ucx.iallgatherv_in_place(std::span(buffer), counts).test());
  mpi.iallgatherv_in_place(std::span(buffer_for_mpi), counts).wait();
  CHECK(buffer == buffer_for_mpi);
}

TEST_CASE("exec::ucx split: sub-groups by color, ordered by key, as exec::mpi's") {
  const auto mpi = world();
  const exec::ucx ucx(MPI_COMM_WORLD, {.timeout = std::chrono::seconds(60)});
  const int r = ucx.rank();
  const exec::ucx group = ucx.split(r % 2, -r);
  const exec::mpi mpi_group = mpi.split(r % 2, -r);
  CHECK(group.size() == mpi_group.size());
  CHECK(group.rank() == mpi_group.rank());
  CHECK(group.options().timeout == std::chrono::seconds(60));
  std::vector<double> by_ucx = rank_values<double>(1000, r);
  std::vector<double> by_mpi = by_ucx;
  group.allreduce(std::span(by_ucx), exec::reduce_op::max);
  mpi_group.allreduce(std::span(by_mpi), exec::reduce_op::max);
  CHECK(by_ucx == by_mpi);
  const exec::ucx one = group.split(0, 0).split(group.rank(), 0);  // down to one rank
  CHECK(one.size() == 1);
  std::array<std::int64_t, 1> alone{7};
  one.allreduce(std::span(alone), exec::reduce_op::sum);
  CHECK(alone[0] == 7);
  CHECK_THROWS_AS(static_cast<void>(ucx.split(r == 0 ? -2 : 0, 0)), invalid_argument);
}

TEST_CASE("tune::run on exec::ucx with sub-groups equals tune::run on exec::mpi") {
  const auto mpi = world();
  const exec::ucx ucx(MPI_COMM_WORLD);
  const auto data = test::load_split<double>("diabetes");
  const Dataset<double> train_set(data.X_train, data.y_train);
  const Dataset<double> test_set(data.X_test, data.y_test);
  // Each trial fits Ridge data-parallel on its group, each rank holding a shard of the rows.
  auto train_with = [&]<class Exec>(const tune::Trial& trial, tune::Reporter& reporter, const Exec&) {
    const auto policy = trial.exec<Exec>();
    linear_model::Ridge<double, Exec> ridge({.alpha = trial.get<double>("alpha")}, policy);
    const auto fit_rows = train_set.shard(policy);
    const auto test_rows = test_set.shard(policy);
    ridge.fit(fit_rows.features(), fit_rows.targets());
    const double score = ridge.score(test_rows.features(), test_rows.targets());
    reporter.report(1, score);
    return score;
  };
  auto train_ucx = [&](const tune::Trial& t, tune::Reporter& rep) { return train_with(t, rep, ucx); };
  auto train_mpi = [&](const tune::Trial& t, tune::Reporter& rep) { return train_with(t, rep, mpi); };
  const tune::Space alphas{{"alpha", tune::log_uniform{1e-3, 1e1}}};
  for (int ranks_per_trial : {1, 2}) {
    CAPTURE(ranks_per_trial);
    const tune::RunOptions options{.n_trials = 5, .seed = 3, .ranks_per_trial = ranks_per_trial};
    const tune::Results by_ucx = tune::run(train_ucx, alphas, options, ucx);
    const tune::Results by_mpi = tune::run(train_mpi, alphas, options, mpi);
    CHECK(by_ucx.size() == 5);
    CHECK(by_ucx.size() == by_mpi.size());
    for (std::size_t i = 0; i < by_ucx.size() && i < by_mpi.size(); ++i) {
      CHECK(by_ucx[i].status == tune::Status::ok);
      CHECK(by_ucx[i].params == by_mpi[i].params);
      CHECK(by_ucx[i].score == doctest::Approx(by_mpi[i].score).epsilon(1e-10));
    }
  }
}
