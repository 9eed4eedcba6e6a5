#pragma once
/**
 * \class onelearn::model_selection::RandomizedSearchCV
 * \brief Cross-validated search over parameter settings drawn from distributions, as scikit-learn's
 * RandomizedSearchCV.
 * \ingroup estimators
 *
 * \code
 * #include <onelearn/model_selection/randomized_search_cv.hpp>
 * namespace ms = onelearn::model_selection;
 * namespace tune = onelearn::tune;
 *
 * ms::RandomizedSearchCV search(
 *     onelearn::linear_model::Ridge<double>(),
 *     tune::Space{{"alpha", tune::log_uniform{1e-3, 1e2}},          // log(alpha) uniform
 *                 {"fit_intercept", tune::choice{{true, false}}}},
 *     {.n_iter = 20, .cv = ms::KFold({.n_splits = 5}), .random_state = 7});
 * search.fit(X, y);
 * double alpha = std::get<double>(search.best_params().front().second);
 * search.cv_results().to_csv("random_search.csv");  // the table of GridSearchCV
 *
 * // Every rank of an MPI job fits a share of the (candidate, fold) pairs and all hold the same
 * // table (include onelearn/exec/mpi.hpp):
 * ms::RandomizedSearchCV spread(ridge, space, {.n_iter = 20}, onelearn::exec::mpi{comm});
 * \endcode
 *
 * model_selection::RandomizedSearchCV: cross-validated search over `n_iter` parameter settings
 * drawn from distributions, as scikit-learn's RandomizedSearchCV (1.2.1). The distributions are
 * tune::Space's (tune/space.hpp): `uniform{low, high}` (scipy's uniform(low, high - low)),
 * `log_uniform{low, high}` (scipy's loguniform), `integer{low, high}` (both ends included;
 * scipy's randint(low, high + 1)) and `choice{{v...}}` (scikit-learn's list of values).
 *
 * Method: the candidates are drawn at construction, as scikit-learn's ParameterSampler does:
 * the names are sorted (byte-wise, as Python sorts strings) and each candidate draws every
 * parameter in that order from one std::mt19937_64 seeded with `random_state`, with
 * tune/space.hpp's platform-independent sampling. When every parameter is a choice, the
 * candidates are drawn without replacement from their grid (ParameterGrid order) and n_iter is
 * capped at the grid size, as scikit-learn does. Then each candidate is evaluated exactly as in
 * GridSearchCV (model_selection/grid_search_cv.hpp): same cv, scorers, ranking, best_index (the
 * first of rank 1), refit, cv_results() table with to_csv/to_json, and the same distribution
 * over the ranks of an exec::mpi given as last constructor argument.
 *
 * \par Options (RandomizedSearchCVOptions)
 * - `n_iter` (default 10, >= 1): number of candidates drawn.
 * - `cv` (CV, default 5), `scoring` (default ""), `refit` (default true), `groups`, `verbose`:
 *   as GridSearchCV (the lines say "RandomizedSearchCV").
 * - `random_state` (std::uint64_t, default 0): the seed of the draws; the same seed gives the
 *   same candidates on every platform and every rank.
 *
 * \par Attributes (after fit)
 * As GridSearchCV: `best_params()`, `best_score()`, `best_index()`, `best_estimator()`,
 * `n_splits()`, `cv_results()`; `candidates()` is available from construction. predict,
 * predict_proba, score and transform are forwarded to best_estimator().
 *
 * \par Differences from scikit-learn
 * - The random stream is mt19937_64, not NumPy's: a seed gives other candidates than
 *   scikit-learn's for the same random_state (their distribution is the same). random_state
 *   always has a value (default 0), so a search is reproducible unless a seed is chosen.
 * - Distributions are tune::Space's four kinds, not arbitrary scipy.stats objects; a
 *   grid that is all choices with fewer points than n_iter draws every point (scikit-learn
 *   also warns).
 * - A fit that throws ends the search (error_score="raise"); a single scorer.
 *
 * Errors: `invalid_argument` at construction for an invalid space (empty, a parameter without a
 * name or named twice, bad bounds, an empty choice; tune::Space::validate) and n_iter = 0; from
 * fit, as GridSearchCV: a parameter name or value the estimator rejects (named in the message),
 * a bad scorer, the cross-validation errors (fewer samples than folds, a class with fewer
 * members than folds, ...); `shape_error` for y or groups of the wrong length;
 * `not_fitted_error` for the attributes before fit. Under exec::mpi every error of fit is
 * raised on every rank.
 */

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/model_selection/cross_validate.hpp"
#include "onelearn/model_selection/detail/search_cv.hpp"
#include "onelearn/tune/space.hpp"

namespace onelearn::model_selection {

/// Keyword arguments of RandomizedSearchCV (scikit-learn's names).
struct RandomizedSearchCVOptions {
  std::size_t n_iter = 10;         ///< number of candidates drawn
  CV cv = 5;                       ///< integer, splitter or explicit folds
  std::string scoring{};           ///< scorer name; "": the estimator's score()
  bool refit = true;               ///< fit best_estimator() on all the data
  Labels groups{};                 ///< per-row groups, for GroupKFold
  std::uint64_t random_state = 0;  ///< seed of the draws
  int verbose = 0;  ///< >= 1: a progress line per fit (rank 0); not compared across ranks
};

namespace detail {

/// scikit-learn's ParameterSampler over a tune::Space: names sorted, without replacement when
/// every parameter is a choice.
inline std::vector<ParamSet> sample_candidates(std::string_view where, const tune::Space& space,
                                               std::size_t n_iter, std::uint64_t seed) {
  space.validate(where);
  if (n_iter == 0) {
    throw invalid_argument(std::string(where) + ": expected n_iter >= 1, found 0");
  }
  std::vector<tune::Dimension> dims = space.dimensions();
  std::stable_sort(dims.begin(), dims.end(),
                   [](const auto& a, const auto& b) { return a.name < b.name; });
  tune::Space sorted;
  for (const tune::Dimension& d : dims) sorted.add(d.name, d.distribution);
  const bool all_choices = std::all_of(dims.begin(), dims.end(), [](const tune::Dimension& d) {
    return std::holds_alternative<tune::choice>(d.distribution);
  });
  std::mt19937_64 engine(seed);
  std::vector<ParamSet> out;
  if (all_choices) {
    const std::uint64_t size = tune::detail::grid_size(where, sorted);
    const std::uint64_t n = std::min<std::uint64_t>(n_iter, size);
    std::set<std::uint64_t> seen;
    while (out.size() < n) {
      // A uniform point of the grid; repeats are drawn again (rejection keeps it uniform).
      const auto index = static_cast<std::uint64_t>(
          tune::detail::uniform_integer(engine, 0, static_cast<std::int64_t>(size - 1)));
      if (seen.insert(index).second) out.push_back(tune::detail::grid_point(sorted, index));
    }
    return out;
  }
  for (std::size_t i = 0; i < n_iter; ++i) out.push_back(tune::detail::sample(sorted, engine));
  return out;
}

}  // namespace detail

/// Cross-validated search over parameters drawn from distributions. See the file's
/// documentation.
template <class Estimator, exec::ExecutionPolicy Exec = exec::local>
class RandomizedSearchCV
    : public detail::SearchCVBase<RandomizedSearchCV<Estimator, Exec>, Estimator, Exec> {
  using Base = detail::SearchCVBase<RandomizedSearchCV<Estimator, Exec>, Estimator, Exec>;
  friend Base;
  using T = typename Estimator::value_type;

 public:
  RandomizedSearchCV(Estimator estimator, const tune::Space& param_distributions,
                     RandomizedSearchCVOptions options = {}, Exec exec = {})
      : Base("RandomizedSearchCV", std::move(estimator), options.scoring, options.refit,
             std::move(exec), options.verbose),
        options_(std::move(options)),
        candidates_(detail::sample_candidates("RandomizedSearchCV", param_distributions,
                                              options_.n_iter, options_.random_state)) {}

  /// The drawn candidates, in evaluation order (available before fit).
  [[nodiscard]] const std::vector<ParamSet>& candidates() const noexcept { return candidates_; }
  [[nodiscard]] const RandomizedSearchCVOptions& options() const noexcept { return options_; }

 private:
  /// The settings a distributed fit compares across the ranks first (SearchCVBase::start).
  void describe_search(onelearn::detail::NamedValues& values) const {
    detail::describe_common(values, options_, candidates_);
    values.add("n_iter", static_cast<std::int64_t>(options_.n_iter));
    values.add("random_state", options_.random_state);
  }

  template <class Y>
  void search(const MatrixRef<T>& X, const Y& y) {
    constexpr std::string_view where = "RandomizedSearchCV.fit";
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
    const auto best = std::find(results.rank_test_score.begin(), results.rank_test_score.end(), 1);
    const index_t best_index = best - results.rank_test_score.begin();
    this->conclude(X, y, std::move(results), best_index, progress);
  }

  RandomizedSearchCVOptions options_;
  std::vector<ParamSet> candidates_;
};

}  // namespace onelearn::model_selection
