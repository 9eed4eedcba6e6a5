// GridSearchCV, RandomizedSearchCV and HalvingGridSearchCV under exec::mpi with 2 and 3 ranks:
// the (candidate, fold) fits are spread over the ranks and every rank ends with the same
// cv_results (scores bit-identical to the one-process search, computed here on each rank) and
// the same best estimator; an error in one trial is raised on every rank.
//
// Checks here use CHECK, never REQUIRE: a REQUIRE that stops one rank's test case early would
// leave the other ranks waiting in a collective.
#include <doctest/doctest.h>

#include <mpi.h>

#include <span>
#include <string>
#include <vector>

#include "onelearn/exec/mpi.hpp"
#include "onelearn/linear_model/ridge.hpp"
#include "onelearn/model_selection/grid_search_cv.hpp"
#include "onelearn/model_selection/halving_grid_search_cv.hpp"
#include "onelearn/model_selection/kfold.hpp"
#include "onelearn/model_selection/randomized_search_cv.hpp"
#include "mpi_support.hpp"
#include "support.hpp"

using namespace onelearn;
using namespace onelearn::model_selection;
using linear_model::Ridge;

namespace {

using test::world;

/// Every score of the table, in one vector.
std::vector<double> all_scores(const CVResults& r) {
  std::vector<double> out;
  for (const auto& split : r.split_test_scores) out.insert(out.end(), split.begin(), split.end());
  out.insert(out.end(), r.mean_test_score.begin(), r.mean_test_score.end());
  out.insert(out.end(), r.std_test_score.begin(), r.std_test_score.end());
  return out;
}

/// The distributed table equals the local one bit for bit, and every rank holds the same.
void check_same_table(const CVResults& spread, const CVResults& local) {
  CHECK(spread.params == local.params);
  CHECK(spread.rank_test_score == local.rank_test_score);
  CHECK(spread.iter == local.iter);
  CHECK(spread.n_resources == local.n_resources);
  const std::vector<double> mine = all_scores(spread);
  CHECK(mine == all_scores(local));
  std::vector<double> low = mine;
  std::vector<double> high = mine;
  world().allreduce(std::span<double>(low), exec::reduce_op::min);
  world().allreduce(std::span<double>(high), exec::reduce_op::max);
  CHECK(low == mine);
  CHECK(high == mine);
  // The timings are gathered too: one per candidate, every one measured somewhere.
  CHECK(spread.mean_fit_time.size() == local.mean_fit_time.size());
}

}  // namespace

TEST_CASE("GridSearchCV under exec::mpi: the same cv_results and best estimator on every rank") {
  const auto data = test::load_split<double>("diabetes");
  // 10 candidates x 5 folds: 50 pairs, uneven over 3 ranks.
  const std::vector<ParamGrid> grid{
      {{"alpha", {0.001, 0.01, 0.1, 1.0, 10.0}}, {"fit_intercept", {true, false}}}};
  GridSearchCV local(Ridge<double>(), grid, {.cv = KFold()});
  local.fit(data.X_train, data.y_train);
  GridSearchCV spread(Ridge<double>(), grid, {.cv = KFold()}, world());
  spread.fit(data.X_train, data.y_train);
  check_same_table(spread.cv_results(), local.cv_results());
  CHECK(spread.best_index() == local.best_index());
  CHECK(spread.best_index() == 4);  // scikit-learn's best_index_ (test_model_selection.cpp)
  CHECK(spread.best_estimator().coef() == local.best_estimator().coef());
  CHECK(spread.predict(data.X_test) == local.predict(data.X_test));
}

TEST_CASE("RandomizedSearchCV and HalvingGridSearchCV under exec::mpi match one process") {
  const auto data = test::load_split<double>("diabetes");
  const tune::Space space{{"alpha", tune::log_uniform{1e-3, 1e2}},
                          {"fit_intercept", tune::choice{{true, false}}}};
  RandomizedSearchCV local(Ridge<double>(), space, {.n_iter = 7, .cv = 4, .random_state = 5});
  local.fit(data.X_train, data.y_train);
  RandomizedSearchCV spread(Ridge<double>(), space, {.n_iter = 7, .cv = 4, .random_state = 5},
                            world());
  spread.fit(data.X_train, data.y_train);
  check_same_table(spread.cv_results(), local.cv_results());
  CHECK(spread.best_params() == local.best_params());
  CHECK(spread.best_estimator().coef() == local.best_estimator().coef());

  const ParamGrid alphas{{"alpha", {0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0}}};
  HalvingGridSearchCV halving_local(Ridge<double>(), alphas, {.cv = KFold()});
  halving_local.fit(data.X_train, data.y_train);
  HalvingGridSearchCV halving(Ridge<double>(), alphas, {.cv = KFold()}, world());
  halving.fit(data.X_train, data.y_train);
  check_same_table(halving.cv_results(), halving_local.cv_results());
  CHECK(halving.n_resources() == std::vector<index_t>{36, 108, 324});  // scikit-learn's
  CHECK(halving.best_index() == 15);
}

TEST_CASE("An error in one trial is raised on every rank") {
  const auto data = test::load_split<double>("diabetes");
  // One explicit fold, so pair k is candidate k and runs on rank k mod size: the bad candidate
  // (alpha = -1, which Ridge's fit rejects) runs on rank 1 only, under -np 2 and -np 3.
  std::vector<Fold> one_fold(1);
  for (index_t i = 0; i < data.X_train.rows(); ++i) {
    (i < 250 ? one_fold[0].train : one_fold[0].test).push_back(i);
  }
  GridSearchCV search(Ridge<double>(), {{"alpha", {1.0, -1.0}}}, {.cv = one_fold}, world());
  CHECK_THROWS_WITH_AS(search.fit(data.X_train, data.y_train), doctest::Contains("on rank 1"),
                       invalid_argument);
  CHECK_FALSE(search.is_fitted());
  // An unknown parameter name fails before any fit, on every rank.
  RandomizedSearchCV unknown(Ridge<double>(), tune::Space{{"beta", tune::uniform{0.0, 1.0}}},
                             {}, world());
  CHECK_THROWS_WITH_AS(unknown.fit(data.X_train, data.y_train),
                       doctest::Contains("unknown parameter 'beta'"), invalid_argument);
  // The communicator still works afterwards: a good search completes on every rank.
  GridSearchCV good(Ridge<double>(), {{"alpha", {1.0, 2.0}}}, {.cv = one_fold}, world());
  good.fit(data.X_train, data.y_train);
  CHECK(good.cv_results().n_candidates() == 2);
}
