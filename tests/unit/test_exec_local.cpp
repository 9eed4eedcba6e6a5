// exec::local: the collectives are identities, so the same algorithm code runs on one process.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/exec/local.hpp"

using namespace onelearn;

TEST_CASE("exec::local collectives leave the data as it is") {
  const exec::local local;
  CHECK(local.rank() == 0);
  CHECK(local.size() == 1);
  std::array<double, 3> d{1.5, -2, 3};
  local.allreduce(std::span(d), exec::reduce_op::sum);
  CHECK(d == std::array<double, 3>{1.5, -2, 3});
  std::array<std::int64_t, 2> i{4, 5};
  local.allreduce(std::span(i), exec::reduce_op::max);
  local.broadcast(std::span(i), 0);
  CHECK(i == std::array<std::int64_t, 2>{4, 5});
  const std::vector<float> f{1, 2};
  CHECK(local.allgatherv(std::span<const float>(f)) == f);
  // One rank: the one piece is all of the values, and comes back to it.
  const std::span<const float> f_values(f);
  const std::array<std::int64_t, 1> all_of_f{2};
  CHECK(local.alltoallv(f_values, std::span(all_of_f)) == f);
  const std::array<std::int64_t, 1> too_few{1};
  CHECK_THROWS_WITH_AS(static_cast<void>(local.alltoallv(f_values, std::span(too_few))),
                       doctest::Contains("expected one count equal to the 2 values, found 1 counts (1)"),
                       invalid_argument);
  const std::array<std::int64_t, 2> two_ranks{1, 1};
  CHECK_THROWS_AS(static_cast<void>(local.alltoallv(f_values, std::span(two_ranks))), invalid_argument);
  const std::array<std::int64_t, 2> shape{3, 4};
  local.check_same_shape("X", shape);  // never throws: one rank agrees with itself
  local.barrier();
}

TEST_CASE("exec::local propagate_errors passes the error through with its type") {
  const exec::local local;
  CHECK_THROWS_WITH_AS(local.propagate_errors([] { throw shape_error("bad shape"); }), "bad shape",
                       shape_error);
  int calls = 0;
  local.propagate_errors([&] { ++calls; });
  CHECK(calls == 1);
}

TEST_CASE("throw_error rethrows the type an error_code names") {
  CHECK_THROWS_AS(throw_error(error_code::invalid_argument, "m"), onelearn::invalid_argument);
  CHECK_THROWS_AS(throw_error(error_code::shape_error, "m"), shape_error);
  CHECK_THROWS_AS(throw_error(error_code::not_fitted, "m"), not_fitted_error);
  CHECK_THROWS_AS(throw_error(error_code::io_error, "m"), io_error);
  CHECK_THROWS_AS(throw_error(error_code::distributed, "m"), distributed_error);
  CHECK_THROWS_WITH_AS(throw_error(error_code::runtime, "plain"), "plain", std::runtime_error);
  // Every onelearn error is also catchable as onelearn::error and as the std base.
  try {
    throw_error(error_code::not_fitted, "m");
  } catch (const onelearn::error& e) {
    CHECK(e.code() == error_code::not_fitted);
  }
  CHECK_THROWS_AS(throw_error(error_code::io_error, "m"), std::runtime_error);
  CHECK_THROWS_AS(throw_error(error_code::shape_error, "m"), std::invalid_argument);
}

// The concept checks every element type the code uses.
static_assert(exec::CollectivePrimitives<exec::local>);
static_assert(exec::ExecutionPolicy<exec::local>);
static_assert(exec::detail::primitives_for<exec::local, float>);
static_assert(exec::detail::primitives_for<exec::local, double>);
static_assert(exec::detail::primitives_for<exec::local, std::int64_t>);

TEST_CASE("exec::local non-blocking collectives are complete at once, split is local") {
  const exec::local local;
  std::vector<float> values{1, 2, 3};
  auto request = local.iallreduce(std::span(values), exec::reduce_op::sum);
  CHECK(request.test());
  request.wait();
  CHECK(values == std::vector<float>{1, 2, 3});
  std::vector<double> mine(3);
  std::vector<double> whole{4, 5, 6};
  const std::array<std::int64_t, 1> counts{3};
  std::vector<exec::local::request> requests;
  requests.push_back(local.ireduce_scatter(std::span(whole), std::span(mine), counts, exec::reduce_op::sum));
  requests.push_back(local.iallgatherv_in_place(std::span(whole), counts));
  local.wait_all(requests);
  CHECK(mine == whole);
  const exec::local group = local.split(3, 1);
  CHECK(group.size() == 1);
}
