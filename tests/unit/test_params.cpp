#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

#include "onelearn/core/params.hpp"
#include "onelearn/linear_model/linear_regression.hpp"
#include "onelearn/preprocessing/standard_scaler.hpp"

using namespace onelearn;

namespace {
struct SearchParams {
  double C = 1.0;
  int max_iter = 100;
  bool fit_intercept = true;
  std::string solver = "lbfgs";
  std::int64_t seed = 0;
  static constexpr std::array<std::string_view, 5> names{"C", "max_iter", "fit_intercept",
                                                         "solver", "seed"};
};
}  // namespace

TEST_CASE("Params print like scikit-learn's repr, in declaration order") {
  const SearchParams p{.C = 0.5, .solver = "saga"};
  CHECK(params::to_string(p) ==
        R"(C=0.5, max_iter=100, fit_intercept=true, solver="saga", seed=0)");
}

TEST_CASE("Params compare and hash field by field") {
  const SearchParams a{.C = 0.5};
  SearchParams b{.C = 0.5};
  CHECK(params::equal(a, b));
  CHECK(params::hash(a) == params::hash(b));
  b.max_iter = 101;
  CHECK_FALSE(params::equal(a, b));
  CHECK(params::hash(a) != params::hash(b));  // not guaranteed in general, but true for these
}

TEST_CASE("get and set a parameter by name") {
  SearchParams p;
  params::set(p, "C", 10.0);
  params::set(p, "max_iter", std::int64_t{300});
  params::set(p, "max_iter", 400.0);  // an integral double is accepted for an int field
  params::set(p, "fit_intercept", false);
  params::set(p, "solver", std::string("newton-cg"));
  params::set(p, "C", std::int64_t{2});  // an int is accepted for a double field
  CHECK(p.C == 2.0);
  CHECK(p.max_iter == 400);
  CHECK_FALSE(p.fit_intercept);
  CHECK(p.solver == "newton-cg");
  CHECK(std::get<double>(params::get(p, "C")) == 2.0);
  CHECK(std::get<std::int64_t>(params::get(p, "max_iter")) == 400);
  CHECK(std::get<std::string>(params::get(p, "solver")) == "newton-cg");

  const auto listed = params::to_list(p);
  REQUIRE(listed.size() == 5);
  CHECK(listed[1].first == "max_iter");
  CHECK(std::get<bool>(listed[2].second) == false);
}

TEST_CASE("setting a parameter by a wrong name or type says what was expected") {
  SearchParams p;
  CHECK_THROWS_WITH_AS(params::set(p, "c", 1.0),
                       "unknown parameter 'c'; expected one of: C, max_iter, fit_intercept, solver, seed",
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(params::set(p, "max_iter", 2.5),
                       doctest::Contains("parameter 'max_iter': expected an integer"),
                       onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(params::set(p, "fit_intercept", std::int64_t{1}),
                       doctest::Contains("expected a bool"), onelearn::invalid_argument);
  CHECK_THROWS_WITH_AS(params::set(p, "max_iter", std::int64_t{1} << 40),
                       doctest::Contains("does not fit its integer type"),
                       onelearn::invalid_argument);
  CHECK_THROWS_AS((void)params::get(p, "alpha"), onelearn::invalid_argument);
}

TEST_CASE("estimators expose get_params and set_params like scikit-learn") {
  preprocessing::StandardScaler<double> scaler({.with_mean = false});
  CHECK_FALSE(scaler.get_params().with_mean);
  CHECK(scaler.get_params().with_std);
  CHECK(std::get<bool>(scaler.get_param("with_mean")) == false);

  // set_params returns the estimator, so calls chain.
  auto& same = scaler.set_params({{"with_mean", true}, {"with_std", false}});
  CHECK(&same == &scaler);
  CHECK(scaler.get_params().with_mean);
  CHECK_FALSE(scaler.get_params().with_std);

  // All or nothing: a bad name in the list leaves every parameter as it was.
  CHECK_THROWS_WITH_AS(scaler.set_params({{"with_mean", false}, {"with_sdt", true}}),
                       doctest::Contains("unknown parameter 'with_sdt'"),
                       onelearn::invalid_argument);
  CHECK(scaler.get_params().with_mean);

  linear_model::LinearRegression<float> model;
  CHECK(model.get_params().fit_intercept);
  model.set_params({.fit_intercept = false});
  CHECK(params::to_string(model.get_params()) == "fit_intercept=false");
}
