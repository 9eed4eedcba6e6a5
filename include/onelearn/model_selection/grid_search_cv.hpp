#pragma once
/**
 * \class onelearn::model_selection::GridSearchCV
 * \brief Exhaustive cross-validated search over a parameter grid, as scikit-learn's GridSearchCV.
 * \ingroup estimators
 *
 * \code
 * #include <onelearn/model_selection/grid_search_cv.hpp>
 * namespace ms = onelearn::model_selection;
 *
 * auto pipe = onelearn::pipeline::make_pipeline(
 *     onelearn::preprocessing::StandardScaler<double>(),
 *     onelearn::linear_model::LogisticRegression<double>());
 * ms::GridSearchCV search(pipe, {{"logisticregression__C", {0.01, 0.1, 1.0, 10.0}}},
 *                         {.cv = ms::StratifiedKFold({.n_splits = 5}), .scoring = "accuracy"});
 * search.fit(X, labels);
 * double C = std::get<double>(search.best_params().front().second);
 * double best = search.best_score();                 // mean cross-validated score
 * onelearn::Labels predicted = search.predict(X_test);  // best_estimator(), refitted on all of X
 * const ms::CVResults& table = search.cv_results();   // mean_test_score, rank_test_score, ...
 * table.to_csv("results.csv");                        // or to_json
 *
 * // Several grids (scikit-learn's list of dicts):
 * ms::GridSearchCV both(ridge, std::vector<ms::ParamGrid>{{{"alpha", {0.1, 1.0}}},
 *                                                         {{"fit_intercept", {false}}}});
 *
 * // The (candidate, fold) fits spread over MPI ranks (include onelearn/exec/mpi.hpp); every
 * // rank passes the same X, y and ends with the same table and best estimator:
 * ms::GridSearchCV spread(ridge, {{"alpha", {0.1, 1.0, 10.0}}}, {.cv = 5},
 *                         onelearn::exec::mpi{comm});
 * \endcode
 *
 * model_selection::GridSearchCV: exhaustive search over a grid of parameter values with
 * cross-validation, as scikit-learn's GridSearchCV (1.2.1).
 *
 * Method: the candidates are those of scikit-learn's ParameterGrid: for each grid in order,
 * the parameter names sorted (as Python sorts strings: byte-wise), then every combination of
 * their values with the last name varying fastest. Every candidate is first applied to a copy
 * of the estimator (so a bad name or value fails before any fitting), and the folds are
 * computed once. Then, for each candidate and each fold, a copy of the estimator with the
 * candidate's parameters (set by name with set_params, so "<step>__<param>" reaches into a
 * Pipeline) is fitted on the train rows and scored on the test rows (model_selection/
 * cross_validate.hpp). mean_test_score is the unweighted mean over the folds, std_test_score
 * the population standard deviation, rank_test_score scipy's rankdata(-mean, "min") (equal
 * means share the lowest rank; a NaN mean ranks last); best_index is the first candidate of
 * rank 1, so ties go to the earliest candidate in grid order, as in scikit-learn. With refit
 * the best candidate is fitted on all the rows.
 *
 * \par Options (GridSearchCVOptions)
 * - `cv` (CV, default 5): an integer (StratifiedKFold for class labels, KFold otherwise), a
 *   splitter or explicit folds.
 * - `scoring` (string, default ""): a scorer name (model_selection/scorers.hpp) or "" for the
 *   estimator's score().
 * - `refit` (bool, default true): fit best_estimator() on all the data.
 * - `groups` (Labels, one per row): for GroupKFold.
 * - `verbose` (int, default 0): >= 1 logs (core/log.hpp's sink; rank 0 only) a line with the
 *   number of fits, "GridSearchCV: fitting 5 folds for each of 4 candidates, totalling 20
 *   fits", one line per (candidate, fold) fit, "GridSearchCV: [CV 2/5] candidate 3/4
 *   {C=1}: score 0.936544, fit 0.01s; elapsed 0.3s, remaining ~0.5s", and one after refit,
 *   "GridSearchCV: refitted the best candidate {C=1} on 150 rows in 0.01s; elapsed 0.6s".
 *   Under exec::mpi rank 0 reports the fits it runs itself. Not compared across ranks.
 *
 * \par Attributes (after fit)
 * - `best_params()` (ParamSet: (name, value) pairs in the candidate's order), `best_score()`,
 *   `best_index()`, `best_estimator()` (refit only), `n_splits()`, `candidates()` (available
 *   from construction), `cv_results()` (CVResults: per candidate `params`,
 *   `mean_test_score`, `std_test_score`, `rank_test_score`, `split_test_scores[i]`
 *   (scikit-learn's `split<i>_test_score`), `mean_fit_time`, `std_fit_time`, `mean_score_time`,
 *   `std_score_time`; `column(name)` by scikit-learn's column name; `to_csv(path)` and
 *   `to_json(path)`, written to a temporary file and renamed).
 * - predict, predict_proba, score, transform: forwarded to best_estimator().
 *
 * Distribution: GridSearchCV<Estimator, exec::mpi> (constructed with an exec::mpi as last
 * argument; include onelearn/exec/mpi.hpp) spreads the (candidate, fold) fits over the ranks
 * round-robin and all-gathers the scores, so every rank holds the same cv_results() (scores
 * bit-identical to a run in one process) and the same best_estimator(). Every rank passes the
 * same, whole X and y: the trials are spread, not the rows; each trial's estimator fits
 * locally (Estimator is a local one, e.g. Ridge<double>). An error in any trial is raised on
 * every rank.
 *
 * \par Differences from scikit-learn
 * - No n_jobs: in one process the candidates run one after the other; across processes see
 *   Distribution above (tune::run spreads arbitrary training functions).
 * - A fit that throws ends the search with that exception (error_score="raise"); no
 *   return_train_score and a single scorer.
 * - A grid with no parameters or a parameter with no values is an error (scikit-learn
 *   evaluates the estimator as is for an empty dict).
 * - Values are ParamValue (bool, integer, double, string); an integer value sets a double
 *   parameter and an integral double an integer one (core/params.hpp).
 * - CSV/JSON: numbers are printed in the shortest form that reads back exactly (1.0 prints as
 *   1); a parameter absent from a candidate's grid is empty (CSV) or null (JSON), NaN is null.
 *
 * Errors: `invalid_argument` at construction for no grids, a grid without parameters, a
 * parameter without values or named twice in one grid, and from fit for a name or value the
 * estimator rejects (its message names it), a bad scorer, and the cross-validation errors of
 * cross_validate; `shape_error` for y or groups of the wrong length; `not_fitted_error` for
 * the attributes before fit and for best_estimator() (and predict...) with refit = false;
 * `io_error` from to_csv/to_json. Under exec::mpi every error of fit is raised on every rank.
 */


#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/model_selection/cross_validate.hpp"
#include "onelearn/model_selection/detail/search_cv.hpp"

namespace onelearn::model_selection {

/// Keyword arguments of GridSearchCV (scikit-learn's names).
struct GridSearchCVOptions {
  CV cv = 5;              ///< integer, splitter or explicit folds
  std::string scoring{};  ///< scorer name; "": the estimator's score()
  bool refit = true;      ///< fit best_estimator() on all the data
  Labels groups{};        ///< per-row groups, for GroupKFold
  int verbose = 0;        ///< >= 1: a progress line per fit (rank 0); not compared across ranks
};

/// Exhaustive search over parameter grids with cross-validation. See the file's documentation.
template <class Estimator, exec::ExecutionPolicy Exec = exec::local>
class GridSearchCV
    : public detail::SearchCVBase<GridSearchCV<Estimator, Exec>, Estimator, Exec> {
  using Base = detail::SearchCVBase<GridSearchCV<Estimator, Exec>, Estimator, Exec>;
  friend Base;
  using T = typename Estimator::value_type;

 public:
  GridSearchCV(Estimator estimator, const ParamGrid& grid, GridSearchCVOptions options = {},
               Exec exec = {})
      : GridSearchCV(std::move(estimator), std::vector<ParamGrid>{grid}, std::move(options),
                     std::move(exec)) {}

  GridSearchCV(Estimator estimator, const std::vector<ParamGrid>& grids,
               GridSearchCVOptions options = {}, Exec exec = {})
      : Base("GridSearchCV", std::move(estimator), options.scoring, options.refit, std::move(exec),
             options.verbose),
        options_(std::move(options)),
        candidates_(detail::expand_grids("GridSearchCV", grids)) {}

  /// Every candidate, in evaluation order (available before fit).
  [[nodiscard]] const std::vector<ParamSet>& candidates() const noexcept { return candidates_; }
  [[nodiscard]] const GridSearchCVOptions& options() const noexcept { return options_; }

 private:
  /// The settings a distributed fit compares across the ranks first (SearchCVBase::start).
  void describe_search(onelearn::detail::NamedValues& values) const {
    detail::describe_common(values, options_, candidates_);
  }

  template <class Y>
  void search(const MatrixRef<T>& X, const Y& y) {
    constexpr std::string_view where = "GridSearchCV.fit";
    detail::SearchProgress progress = this->progress();
    std::vector<Fold> folds;
    std::vector<Estimator> models;
    this->exec().propagate_errors([&] {
      folds = detail::prepare_folds<Estimator, Y>(where, X.rows(), y, options_.cv,
                                                  options_.scoring, options_.groups);
      models = detail::configure_candidates(where, this->estimator(), candidates_);
    });
    progress.plan(progress.fits_here(folds.size() * candidates_.size()));
    progress.announce("", folds.size(), candidates_.size());
    CVResults results;
    detail::evaluate_candidates(models, candidates_, X, y, folds, options_.scoring, this->exec(),
                                results, progress);
    results.rank_test_score = detail::rank_min_descending(results.mean_test_score);
    // The first candidate of rank 1: ties go to the earliest in grid order, as scikit-learn.
    const auto best = std::find(results.rank_test_score.begin(), results.rank_test_score.end(), 1);
    const index_t best_index = best - results.rank_test_score.begin();
    this->conclude(X, y, std::move(results), best_index, progress);
  }

  GridSearchCVOptions options_;
  std::vector<ParamSet> candidates_;
};

}  // namespace onelearn::model_selection
