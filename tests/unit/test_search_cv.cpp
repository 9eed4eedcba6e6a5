// RandomizedSearchCV and HalvingGridSearchCV (issue 7), and the bad inputs of criterion 5 for
// them. GridSearchCV itself is tested in test_model_selection.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "onelearn/linear_model/ridge.hpp"
#include "onelearn/model_selection/cross_validate.hpp"
#include "onelearn/model_selection/grid_search_cv.hpp"
#include "onelearn/model_selection/halving_grid_search_cv.hpp"
#include "onelearn/model_selection/kfold.hpp"
#include "onelearn/model_selection/randomized_search_cv.hpp"
#include "onelearn/naive_bayes/gaussian_nb.hpp"
#include "support.hpp"

using namespace onelearn;
using namespace onelearn::model_selection;
using linear_model::Ridge;
using naive_bayes::GaussianNB;

namespace {

double alpha_of(const ParamSet& p) { return std::get<double>(p.at(0).second); }

std::vector<double> alphas_of(const CVResults& r) {
  std::vector<double> out;
  for (const ParamSet& p : r.params) out.push_back(alpha_of(p));
  return out;
}

void check_close(const std::vector<double>& got, const std::vector<double>& expected,
                 double eps = 1e-9) {
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i] == doctest::Approx(expected[i]).epsilon(eps));
  }
}

const std::vector<ParamValue> ten_alphas{0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0};

}  // namespace

// ---------------------------------------------------------------------------------------------
// RandomizedSearchCV

TEST_CASE("RandomizedSearchCV draws: seeded, within bounds, names sorted, grid without "
          "replacement") {
  const tune::Space space{{"max_iter", tune::integer{3, 6}},
                          {"alpha", tune::log_uniform{1e-3, 1e2}},
                          {"tol", tune::uniform{-1.0, 2.0}},
                          {"solver", tune::choice{{std::string("a"), std::string("b")}}}};
  const Ridge<double> ridge;
  RandomizedSearchCV a(ridge, space, {.n_iter = 300, .random_state = 11});
  RandomizedSearchCV b(ridge, space, {.n_iter = 300, .random_state = 11});
  RandomizedSearchCV c(ridge, space, {.n_iter = 300, .random_state = 12});
  REQUIRE(a.candidates().size() == 300);
  CHECK(a.candidates() == b.candidates());  // same seed, same candidates
  CHECK(a.candidates() != c.candidates());
  std::set<std::int64_t> integers;
  std::set<std::string> choices;
  double alpha_min = 1e9, alpha_max = 0, tol_min = 1e9, tol_max = -1e9;
  std::size_t small_alpha = 0;
  for (const ParamSet& p : a.candidates()) {
    REQUIRE(p.size() == 4);
    // ParameterSampler's order: names sorted.
    CHECK(p[0].first == "alpha");
    CHECK(p[1].first == "max_iter");
    CHECK(p[2].first == "solver");
    CHECK(p[3].first == "tol");
    const double alpha = std::get<double>(p[0].second);
    const std::int64_t it = std::get<std::int64_t>(p[1].second);
    const double tol = std::get<double>(p[3].second);
    CHECK(alpha >= 1e-3);
    CHECK(alpha < 1e2);
    CHECK(it >= 3);
    CHECK(it <= 6);
    CHECK(tol >= -1.0);
    CHECK(tol < 2.0);
    integers.insert(it);
    choices.insert(std::get<std::string>(p[2].second));
    alpha_min = std::min(alpha_min, alpha);
    alpha_max = std::max(alpha_max, alpha);
    tol_min = std::min(tol_min, tol);
    tol_max = std::max(tol_max, tol);
    small_alpha += alpha < 0.1 ? 1 : 0;
  }
  // Both ends of the integer range are drawn; the choices both appear.
  CHECK(integers == std::set<std::int64_t>{3, 4, 5, 6});
  CHECK(choices == std::set<std::string>{"a", "b"});
  CHECK(alpha_min < 2e-3);
  CHECK(alpha_max > 50.0);
  CHECK(tol_min < -0.9);
  CHECK(tol_max > 1.9);
  // Log-uniform: P(alpha < 0.1) = 2/5 (two decades of five); 300 draws: 120 +- 3 sd (~25).
  CHECK(small_alpha > 95);
  CHECK(small_alpha < 145);

  // All choices: drawn without replacement from the 2 x 3 grid; n_iter capped at its size.
  const tune::Space grid{{"fit_intercept", tune::choice{{true, false}}},
                         {"alpha", tune::choice{{0.1, 1.0, 10.0}}}};
  RandomizedSearchCV all(ridge, grid, {.n_iter = 50, .random_state = 3});
  REQUIRE(all.candidates().size() == 6);
  const std::set<ParamSet> distinct(all.candidates().begin(), all.candidates().end());
  CHECK(distinct.size() == 6);
  RandomizedSearchCV four(ridge, grid, {.n_iter = 4, .random_state = 3});
  CHECK(four.candidates().size() == 4);
  CHECK(std::set<ParamSet>(four.candidates().begin(), four.candidates().end()).size() == 4);
}

TEST_CASE_TEMPLATE("RandomizedSearchCV over Ridge alpha on diabetes", T, float, double) {
  const auto data = test::load_split<T>("diabetes");
  // The grid the random search is held against: alpha in decades, cv=KFold(5).
  GridSearchCV grid(Ridge<T>(), {{"alpha", {0.001, 0.01, 0.1, 1.0, 10.0, 100.0}}},
                    {.cv = KFold()});
  grid.fit(data.X_train, data.y_train);
  RandomizedSearchCV search(Ridge<T>(), tune::Space{{"alpha", tune::log_uniform{1e-3, 1e2}}},
                            {.n_iter = 15, .cv = KFold(), .random_state = 2});
  search.fit(data.X_train, data.y_train);
  const CVResults& r = search.cv_results();
  REQUIRE(r.n_candidates() == 15);
  CHECK(r.n_splits() == 5);
  // Every row is cross_val_score of its candidate (an independent path through the folds).
  for (std::size_t i = 0; i < 15; i += 4) {
    CAPTURE(i);
    const std::vector<double> scores =
        cross_val_score(Ridge<T>({.alpha = alpha_of(r.params[i])}), data.X_train, data.y_train,
                        KFold());
    for (std::size_t f = 0; f < 5; ++f) CHECK(r.split_test_scores[f][i] == scores[f]);
  }
  // The best drawn alpha is at least as good as the grid's point nearest to it (in log scale),
  // and within 0.5% of the grid's best (the CV curve is flat near its top).
  const double best_alpha = alpha_of(search.best_params());
  std::size_t nearest = 0;
  for (std::size_t g = 1; g < grid.candidates().size(); ++g) {
    if (std::abs(std::log(alpha_of(grid.candidates()[g])) - std::log(best_alpha)) <
        std::abs(std::log(alpha_of(grid.candidates()[nearest])) - std::log(best_alpha))) {
      nearest = g;
    }
  }
  CAPTURE(best_alpha);
  CHECK(search.best_score() >= grid.cv_results().mean_test_score[nearest]);
  CHECK(search.best_score() > grid.best_score() - 0.005);
  CHECK(search.best_score() == r.mean_test_score[static_cast<std::size_t>(search.best_index())]);
  CHECK(r.rank_test_score[static_cast<std::size_t>(search.best_index())] == 1);
  // refit: best_estimator() is Ridge(best alpha) on all the rows.
  Ridge<T> refit({.alpha = best_alpha});
  refit.fit(data.X_train, data.y_train);
  CHECK(search.best_estimator().coef() == refit.coef());
  CHECK(search.predict(data.X_test) == refit.predict(data.X_test));
}

// ---------------------------------------------------------------------------------------------
// HalvingGridSearchCV against scikit-learn 1.2.1

TEST_CASE("NumPy-compatible subsampling equals RandomState(seed).shuffle") {
  // np.random.RandomState(0).permutation(20) and, a = np.arange(20);
  // np.random.RandomState(7).shuffle(a): what sklearn.utils.resample(replace=False) draws.
  std::vector<index_t> rows(20);
  for (index_t i = 0; i < 20; ++i) rows[static_cast<std::size_t>(i)] = i;
  CHECK(model_selection::detail::numpy_subsample(rows, 20, 0) ==
        std::vector<index_t>{18, 1, 19, 8, 10, 17, 6, 13, 4, 2, 5, 14, 9, 7, 16, 11, 3, 0, 15, 12});
  CHECK(model_selection::detail::numpy_subsample(rows, 5, 7) == std::vector<index_t>{1, 17, 2, 5, 11});
  for (auto& r : rows) r += 100;  // the permutation indexes the given rows
  CHECK(model_selection::detail::numpy_subsample(rows, 3, 7) == std::vector<index_t>{101, 117, 102});
}

TEST_CASE("HalvingGridSearchCV over Ridge alpha on diabetes equals scikit-learn's") {
  const auto data = test::load_split<double>("diabetes");
  // from sklearn.experimental import enable_halving_search_cv
  // s = HalvingGridSearchCV(Ridge(), {"alpha": [0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0,
  //     10.0, 30.0]}, cv=KFold(5), factor=3, random_state=0).fit(X_train, y_train)  # 331 rows
  // n_resources_ [36, 108, 324], n_candidates_ [10, 4, 2], n_required_iterations_ 3,
  // n_possible_iterations_ 3, min_resources_ 36, max_resources_ 331, n_remaining_candidates_ 1
  HalvingGridSearchCV search(Ridge<double>(), {{"alpha", ten_alphas}},
                             {.cv = KFold({.n_splits = 5}), .random_state = 0});
  search.fit(data.X_train, data.y_train);
  CHECK(search.n_resources() == std::vector<index_t>{36, 108, 324});
  CHECK(search.n_candidates() == std::vector<index_t>{10, 4, 2});
  CHECK(search.n_iterations() == 3);
  CHECK(search.n_required_iterations() == 3);
  CHECK(search.n_possible_iterations() == 3);
  CHECK(search.min_resources() == 36);
  CHECK(search.max_resources() == 331);
  CHECK(search.n_remaining_candidates() == 1);
  const CVResults& r = search.cv_results();
  CHECK(r.iter == std::vector<std::int64_t>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2});
  CHECK(r.n_resources == std::vector<std::int64_t>{36, 36, 36, 36, 36, 36, 36, 36, 36, 36, 108,
                                                   108, 108, 108, 324, 324});
  // The candidates kept, in _top_k's order (ascending mean score).
  CHECK(alphas_of(r) == std::vector<double>{0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0,
                                            30.0, 0.3, 0.01, 0.03, 0.1, 0.01, 0.03});
  // The subsamples are scikit-learn's, so are the scores.
  check_close(r.mean_test_score,
              {0.043024040241034144, 0.09754842989478915, 0.15664769584923888,
               0.2068256064140977, 0.20945835593709364, 0.13178792716052903,
               -0.020362271103733832, -0.1295167345102969, -0.18479937405866673,
               -0.20291739835737096, 0.45835401811384086, 0.5521167062078931, 0.5580721870391724,
               0.539115652237213, 0.5142959314298098, 0.5161399910271378});
  check_close(r.split_test_scores[0],
              {0.15147676357175466, 0.17361038922282412, 0.20118719561893983,
               0.22937114622092147, 0.23589287838603634, 0.17523923947046538,
               0.05300405753406534, -0.03027824034199411, -0.07108878947070041,
               -0.08427650966859446, 0.4407511639206666, 0.5266566212879887, 0.5344488688554143,
               0.5189082600729624, 0.4314975492232319, 0.43711788184376243});
  CHECK(r.rank_test_score ==
        std::vector<std::int64_t>{12, 11, 9, 8, 7, 10, 13, 14, 15, 16, 6, 2, 1, 3, 5, 4});
  // best_params_ {'alpha': 0.03}, best_index_ 15, best_score_ 0.5161399910271378: the best of
  // the last iteration, though row 12 ranks first over all rows.
  CHECK(search.best_index() == 15);
  CHECK(alpha_of(search.best_params()) == 0.03);
  CHECK(search.best_score() == doctest::Approx(0.5161399910271378).epsilon(1e-9));
  Ridge<double> refit({.alpha = 0.03});
  refit.fit(data.X_train, data.y_train);
  CHECK(search.best_estimator().coef() == refit.coef());

  // The table has scikit-learn's iter and n_resources columns, first.
  CHECK(r.column("n_resources")[14] == 324.0);
  const auto csv = std::filesystem::temp_directory_path() / "onelearn_test_search_cv_halving.csv";
  r.to_csv(csv);
  std::ifstream in(csv);
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  CHECK(header.rfind("iter,n_resources,mean_fit_time,std_fit_time,", 0) == 0);
  CHECK(row.rfind("0,36,", 0) == 0);
  std::filesystem::remove(csv);
}

TEST_CASE("HalvingGridSearchCV schedules: factor 2, aggressive elimination, max_resources") {
  const auto data = test::load_split<double>("diabetes");
  SUBCASE("factor=2, random_state=3") {
    // HalvingGridSearchCV(Ridge(), {"alpha": ten}, cv=KFold(5), factor=2, random_state=3):
    // n_resources_ [41, 82, 164, 328], n_candidates_ [10, 5, 3, 2], best {'alpha': 0.1} at 18,
    // best_score_ 0.5270064808694893.
    HalvingGridSearchCV search(Ridge<double>(), {{"alpha", ten_alphas}},
                               {.cv = KFold(), .factor = 2, .random_state = 3});
    search.fit(data.X_train, data.y_train);
    CHECK(search.n_resources() == std::vector<index_t>{41, 82, 164, 328});
    CHECK(search.n_candidates() == std::vector<index_t>{10, 5, 3, 2});
    CHECK(alphas_of(search.cv_results()) ==
          std::vector<double>{0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 0.003,
                              0.3, 0.01, 0.03, 0.1, 0.01, 0.03, 0.1, 0.1, 0.03});
    CHECK(search.best_index() == 18);
    CHECK(alpha_of(search.best_params()) == 0.1);
    CHECK(search.best_score() == doctest::Approx(0.5270064808694893).epsilon(1e-9));
  }
  SUBCASE("max_resources=60, with and without aggressive_elimination") {
    // HalvingGridSearchCV(Ridge(), {"alpha": ten}, cv=KFold(5),
    //     scoring="neg_mean_squared_error", random_state=0, max_resources=60,
    //     aggressive_elimination=True): n_resources_ [10, 10, 30], n_candidates_ [10, 4, 2],
    //     n_required 3, n_possible 2, best {'alpha': 0.003} at 15, -3514.284007123809.
    // Without aggressive_elimination: n_resources_ [10, 30], n_candidates_ [10, 4],
    //     best {'alpha': 0.01} at 11, -3319.53953196659, n_remaining_candidates_ 2.
    HalvingGridSearchCV aggressive(Ridge<double>(), {{"alpha", ten_alphas}},
                                   {.cv = KFold(),
                                    .scoring = "neg_mean_squared_error",
                                    .max_resources = 60,
                                    .aggressive_elimination = true});
    aggressive.fit(data.X_train, data.y_train);
    CHECK(aggressive.n_resources() == std::vector<index_t>{10, 10, 30});
    CHECK(aggressive.n_candidates() == std::vector<index_t>{10, 4, 2});
    CHECK(aggressive.n_required_iterations() == 3);
    CHECK(aggressive.n_possible_iterations() == 2);
    CHECK(alphas_of(aggressive.cv_results()) ==
          std::vector<double>{0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 0.03,
                              0.01, 0.001, 0.003, 0.001, 0.003});
    check_close(aggressive.cv_results().mean_test_score,
                {-4298.899080295819, -4219.704892338201, -4418.559462824328,
                 -4760.3767701310735, -5260.992877652107, -5972.544333827374, -6589.5766120594,
                 -6848.453753319334, -6951.42656764562, -6982.17105801953, -4760.3767701310735,
                 -4418.559462824328, -4298.899080295819, -4219.704892338201, -3827.722342417654,
                 -3514.284007123809});
    CHECK(aggressive.best_index() == 15);
    CHECK(alpha_of(aggressive.best_params()) == 0.003);

    HalvingGridSearchCV plain(Ridge<double>(), {{"alpha", ten_alphas}},
                              {.cv = KFold(),
                               .scoring = "neg_mean_squared_error",
                               .refit = false,
                               .max_resources = 60});
    plain.fit(data.X_train, data.y_train);
    CHECK(plain.n_resources() == std::vector<index_t>{10, 30});
    CHECK(plain.n_candidates() == std::vector<index_t>{10, 4});
    CHECK(plain.n_remaining_candidates() == 2);
    CHECK(plain.best_index() == 11);
    CHECK(alpha_of(plain.best_params()) == 0.01);
    CHECK(plain.best_score() == doctest::Approx(-3319.53953196659).epsilon(1e-9));
    CHECK_THROWS_AS((void)plain.best_estimator(), not_fitted_error);
  }
}

TEST_CASE("HalvingGridSearchCV of a classifier: min_resources counts the classes, ties") {
  const auto iris = test::load_split<double, std::int64_t>("iris");  // 112 rows, 3 classes
  // HalvingGridSearchCV(GaussianNB(), {"var_smoothing": [1e-9, 1e-6, 1e-3, 1e-2, 1e-1, 1.0]},
  //     cv=StratifiedKFold(3), min_resources="smallest", random_state=0).fit(X_train, y_train)
  // min_resources_ 18 (3 folds x 2 x 3 classes), n_resources_ [18, 54], n_candidates_ [6, 2];
  // five candidates tie in iteration 0 and _top_k's (stable) argsort keeps the last two of
  // them: var_smoothing 0.01 and 0.1. best {'var_smoothing': 0.01} at 6, 0.9237472766884531.
  HalvingGridSearchCV search(GaussianNB<double>(),
                             {{"var_smoothing", {1e-9, 1e-6, 1e-3, 1e-2, 1e-1, 1.0}}},
                             {.cv = StratifiedKFold({.n_splits = 3}), .min_resources = "smallest"});
  search.fit(iris.X_train, iris.y_train);
  CHECK(search.min_resources() == 18);
  CHECK(search.n_resources() == std::vector<index_t>{18, 54});
  CHECK(search.n_candidates() == std::vector<index_t>{6, 2});
  std::vector<double> vs;
  for (const ParamSet& p : search.cv_results().params) vs.push_back(alpha_of(p));
  CHECK(vs == std::vector<double>{1e-9, 1e-6, 1e-3, 1e-2, 1e-1, 1.0, 1e-2, 1e-1});
  check_close(search.cv_results().mean_test_score,
              {0.9333333333333332, 0.9333333333333332, 0.9333333333333332, 0.9333333333333332,
               0.9333333333333332, 0.8111111111111112, 0.9237472766884531, 0.9052287581699346});
  CHECK(search.best_index() == 6);
  CHECK(search.best_score() == doctest::Approx(0.9237472766884531).epsilon(1e-9));
  CHECK(search.predict(iris.X_test).size() == iris.y_test.size());
}

// ---------------------------------------------------------------------------------------------
// Bad input (issue 7, criterion 5)

TEST_CASE("RandomizedSearchCV and HalvingGridSearchCV reject bad input with typed errors") {
  const auto data = test::load_split<double>("diabetes");
  const Ridge<double> ridge;
  // Empty search space.
  CHECK_THROWS_WITH_AS(RandomizedSearchCV(ridge, tune::Space{}), doctest::Contains("empty"),
                       invalid_argument);
  CHECK_THROWS_WITH_AS(HalvingGridSearchCV(ridge, ParamGrid{}),
                       doctest::Contains("empty search space"), invalid_argument);
  CHECK_THROWS_AS(RandomizedSearchCV(ridge, tune::Space{{"alpha", tune::choice{}}}),
                  invalid_argument);
  CHECK_THROWS_AS(RandomizedSearchCV(ridge, tune::Space{{"alpha", tune::log_uniform{0.0, 1.0}}}),
                  invalid_argument);
  CHECK_THROWS_WITH_AS(
      RandomizedSearchCV(ridge, tune::Space{{"alpha", tune::uniform{}}}, {.n_iter = 0}),
      doctest::Contains("n_iter"), invalid_argument);
  // Halving settings.
  CHECK_THROWS_WITH_AS(HalvingGridSearchCV(ridge, {{"alpha", {1.0}}}, {.factor = 1.0}),
                       doctest::Contains("factor"), invalid_argument);
  CHECK_THROWS_WITH_AS(HalvingGridSearchCV(ridge, {{"alpha", {1.0}}}, {.min_resources = "most"}),
                       doctest::Contains("'most'"), invalid_argument);
  CHECK_THROWS_AS(HalvingGridSearchCV(ridge, {{"alpha", {1.0}}}, {.max_resources = 0}),
                  invalid_argument);
  CHECK_THROWS_AS(HalvingGridSearchCV(ridge, {{"alpha", {1.0}}}, {.max_resources = "exhaust"}),
                  invalid_argument);
  HalvingGridSearchCV too_many(ridge, {{"alpha", {1.0, 2.0}}}, {.max_resources = 1000});
  CHECK_THROWS_WITH_AS(too_many.fit(data.X_train, data.y_train), doctest::Contains("331"),
                       invalid_argument);
  // Unknown parameter name: a typed error naming it, before any fit.
  RandomizedSearchCV unknown(ridge, tune::Space{{"beta", tune::uniform{0.0, 1.0}}});
  CHECK_THROWS_WITH_AS(unknown.fit(data.X_train, data.y_train),
                       doctest::Contains("unknown parameter 'beta'"), invalid_argument);
  CHECK_THROWS_AS((void)unknown.best_params(), not_fitted_error);
  HalvingGridSearchCV unknown_h(ridge, {{"alpah", {1.0, 2.0}}});
  CHECK_THROWS_WITH_AS(unknown_h.fit(data.X_train, data.y_train),
                       doctest::Contains("unknown parameter 'alpah'"), invalid_argument);
  CHECK_THROWS_AS((void)unknown_h.n_resources(), not_fitted_error);
  // Fewer samples than folds.
  const Matrix<double> X4 = data.X_train.topRows(4);
  const Vector<double> y4 = data.y_train.head(4);
  RandomizedSearchCV few(ridge, tune::Space{{"alpha", tune::uniform{0.1, 1.0}}}, {.n_iter = 2});
  CHECK_THROWS_WITH_AS(few.fit(X4, y4), doctest::Contains("n_splits=5"), invalid_argument);
  HalvingGridSearchCV few_h(ridge, {{"alpha", {1.0, 2.0}}});
  CHECK_THROWS_WITH_AS(few_h.fit(X4, y4), doctest::Contains("n_splits=5"), invalid_argument);
  // Enough samples for the folds but fewer than min_resources_ (2 per fold): scikit-learn's
  // "min_resources_=10 is greater than max_resources_=8".
  HalvingGridSearchCV small(ridge, {{"alpha", {1.0, 2.0}}});
  CHECK_THROWS_WITH_AS(small.fit(data.X_train.topRows(8), data.y_train.head(8)),
                       doctest::Contains("min_resources_=10"), invalid_argument);
  // A class with fewer members than folds in stratified splitting (an error, not a warning).
  const auto iris = test::load_split<double, std::int64_t>("iris");
  Labels y = iris.y_train;
  Matrix<double> X = iris.X_train;
  std::vector<index_t> keep;  // every row of classes 0 and 1, two of class 2
  index_t twos = 0;
  for (index_t i = 0; i < y.size(); ++i) {
    if (y(i) != 2 || twos++ < 2) keep.push_back(i);
  }
  const Matrix<double> X_few = X(keep, Eigen::all);
  const Labels y_few = y(keep);
  RandomizedSearchCV strat(GaussianNB<double>(),
                           tune::Space{{"var_smoothing", tune::log_uniform{1e-9, 1e-3}}},
                           {.n_iter = 2, .cv = StratifiedKFold({.n_splits = 3})});
  CHECK_THROWS_WITH_AS(strat.fit(X_few, y_few), doctest::Contains("for class 2"),
                       invalid_argument);
  HalvingGridSearchCV strat_h(GaussianNB<double>(), {{"var_smoothing", {1e-9, 1e-3}}},
                              {.cv = 3, .min_resources = "smallest"});
  CHECK_THROWS_WITH_AS(strat_h.fit(X_few, y_few), doctest::Contains("for class 2"),
                       invalid_argument);
  // y of the wrong length.
  CHECK_THROWS_AS(few.fit(data.X_train, y4), shape_error);
}
