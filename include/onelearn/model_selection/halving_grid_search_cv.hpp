#pragma once
/**
 * \class onelearn::model_selection::HalvingGridSearchCV
 * \brief Successive halving over a parameter grid, as scikit-learn's HalvingGridSearchCV.
 * \ingroup estimators
 *
 * \code
 * #include <onelearn/model_selection/halving_grid_search_cv.hpp>
 * namespace ms = onelearn::model_selection;
 *
 * ms::HalvingGridSearchCV search(
 *     onelearn::linear_model::Ridge<double>(),
 *     {{"alpha", {0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0}}},
 *     {.cv = ms::KFold({.n_splits = 5}), .factor = 3, .random_state = 0});
 * search.fit(X, y);                                   // 331 rows: 10 candidates on 36 samples,
 * std::vector<onelearn::index_t> r = search.n_resources();  // 4 on 108, 2 on 324: {36, 108, 324}
 * double alpha = std::get<double>(search.best_params().front().second);
 * const ms::CVResults& table = search.cv_results();   // every iteration's rows, with the
 * table.to_csv("halving.csv");                        // "iter" and "n_resources" columns
 * \endcode
 *
 * model_selection::HalvingGridSearchCV: successive halving over a parameter grid, as
 * scikit-learn's HalvingGridSearchCV (1.2.1, `from sklearn.experimental import
 * enable_halving_search_cv`), with the resource being the number of samples.
 *
 * Method (scikit-learn's, step for step): the candidates are GridSearchCV's. The base folds
 * come from `cv` once. min_resources_ is n_splits * 2 (times the number of classes for class
 * labels) for "smallest" and "exhaust", or the given number; max_resources_ the number of rows
 * ("auto") or the given number. n_required_iterations = 1 + floor(log(n_candidates) /
 * log(factor)); with "exhaust", min_resources_ = max(min_resources_, max_resources_ //
 * factor^(n_required_iterations - 1)); n_possible_iterations = 1 + floor(log(max_resources_ //
 * min_resources_) / log(factor)); the search runs min(possible, required) iterations
 * (required ones with aggressive_elimination, repeating the first resource count while
 * needed). Iteration i uses n_resources = int(factor^power * min_resources_) (capped at
 * max_resources_) samples: each base fold's train and test rows are subsampled to
 * int(n_resources / n_samples * size) rows, taking the first rows of a permutation drawn as
 * NumPy's RandomState(random_state).shuffle draws it (MT19937 seeded as NumPy's legacy
 * seeding, each draw a masked rejection sample), a new generator for every train and test set
 * as scikit-learn's _SubsampleMetaSplitter does. So the subsamples, and therefore the scores,
 * the candidates kept and the best candidate, are scikit-learn's for the same integer
 * random_state. The candidates are evaluated as in GridSearchCV; the ceil(n_candidates /
 * factor) best of an iteration (by mean_test_score, in ascending order of it, as
 * scikit-learn's _top_k) go on to the next. cv_results() holds the rows of every iteration
 * (with `iter` and `n_resources`), ranked together; best_index() is the best row of the last
 * iteration (the first of equal means); refit fits it on all the rows.
 *
 * \par Options (HalvingGridSearchCVOptions)
 * - `cv` (CV, default 5), `scoring` (default ""), `refit` (default true), `groups`: as
 *   GridSearchCV (`cv` must give the same folds each time, as all onelearn splitters do).
 * - `verbose` (int, default 0): as GridSearchCV's, with a line opening each iteration,
 *   "HalvingGridSearchCV: iteration 1/3, 36 samples: fitting 5 folds for each of 10
 *   candidates, totalling 50 fits"; the time left counts the fits of every iteration alike,
 *   so it is low while the early iterations, on fewer samples, run.
 * - `factor` (double, default 3, > 1): the fraction 1/factor of candidates kept and the growth
 *   of the resources per iteration.
 * - `min_resources` (ResourceCount, default "exhaust"): "exhaust", "smallest" or a number of
 *   samples >= 1.
 * - `max_resources` (ResourceCount, default "auto"): "auto" (all rows) or a number of samples
 *   in [1, number of rows].
 * - `aggressive_elimination` (bool, default false): run as many iterations as needed to get
 *   down to fewer than `factor` candidates, repeating the first resource count.
 * - `random_state` (std::uint32_t, default 0): seed of the subsampling (NumPy-compatible).
 *
 * \par Attributes (after fit)
 * As GridSearchCV (`best_params()`, `best_score()`, `best_index()`, `best_estimator()`,
 * `n_splits()`, `cv_results()`, `candidates()`), plus scikit-learn's `n_resources()`,
 * `n_candidates()` (per iteration), `n_iterations()`, `n_required_iterations()`,
 * `n_possible_iterations()`, `n_remaining_candidates()`, `min_resources()`, `max_resources()`.
 *
 * \par Differences from scikit-learn
 * - The resource is always the number of samples (scikit-learn can also use an estimator
 *   parameter such as max_iter as the resource).
 * - random_state has a default (0) instead of None (NumPy's global generator), so a search is
 *   reproducible; with the same integer the subsamples are scikit-learn's. The rows of a
 *   subsample are in scikit-learn's (permuted) order too, so an estimator whose result
 *   depends on row order gives scikit-learn's results up to rounding.
 * - No return_train_score, a single scorer, a fit that throws ends the search.
 * - Under exec::mpi (last constructor argument; see GridSearchCV) each iteration's
 *   (candidate, fold) fits are spread over the ranks.
 *
 * Errors: `invalid_argument` at construction for the grid errors of GridSearchCV (empty search
 * space, ...), factor <= 1 or not finite, min_resources or max_resources that are an unknown
 * word or < 1; from fit for min_resources_ > max_resources_ (e.g. fewer samples than
 * 2 * n_splits * n_classes), max_resources greater than the number of rows, a subsample with an
 * empty train or test set, and every error of GridSearchCV's fit (unknown parameter names,
 * fewer samples than folds, a class with fewer members than folds, ...); `shape_error` and
 * `not_fitted_error` as GridSearchCV. Under exec::mpi every error of fit is raised on every
 * rank.
 */

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/model_selection/cross_validate.hpp"
#include "onelearn/model_selection/detail/search_cv.hpp"

namespace onelearn::model_selection {

/// A resource count as scikit-learn takes it: a word ("exhaust", "smallest", "auto") or a
/// number of samples.
class ResourceCount {
 public:
  ResourceCount(const char* word) : value_(std::string(word)) {}  // NOLINT: reads like sklearn
  ResourceCount(std::string word) : value_(std::move(word)) {}    // NOLINT
  template <std::integral I>
  requires(!std::same_as<I, bool>) ResourceCount(I count)  // NOLINT
      : value_(static_cast<std::int64_t>(count)) {}

  [[nodiscard]] bool is_count() const noexcept {
    return std::holds_alternative<std::int64_t>(value_);
  }
  [[nodiscard]] std::int64_t count() const { return std::get<std::int64_t>(value_); }
  [[nodiscard]] const std::string& word() const { return std::get<std::string>(value_); }
  /// "exhaust" or "120", for comparing across ranks.
  [[nodiscard]] std::string describe() const { return is_count() ? std::to_string(count()) : word(); }

 private:
  std::variant<std::string, std::int64_t> value_;
};

/// Keyword arguments of HalvingGridSearchCV (scikit-learn's names).
struct HalvingGridSearchCVOptions {
  CV cv = 5;                              ///< integer, splitter or explicit folds
  std::string scoring{};                  ///< scorer name; "": the estimator's score()
  bool refit = true;                      ///< fit best_estimator() on all the data
  Labels groups{};                        ///< per-row groups, for GroupKFold
  double factor = 3;                      ///< 1/factor of the candidates go on
  ResourceCount min_resources = "exhaust";  ///< "exhaust", "smallest" or a count
  ResourceCount max_resources = "auto";     ///< "auto" or a count
  bool aggressive_elimination = false;    ///< iterate until fewer than factor candidates
  std::uint32_t random_state = 0;         ///< seed of the subsampling (NumPy-compatible)
  int verbose = 0;  ///< >= 1: a progress line per fit (rank 0); not compared across ranks
};

namespace detail {

/// A uniform integer in [0, max] drawn as NumPy's random_interval (legacy RandomState.shuffle):
/// the draw masked to the bits of max, rejected while above it.
inline std::uint64_t numpy_interval(std::mt19937& engine, std::uint64_t max) {
  if (max == 0) return 0;
  std::uint64_t mask = max;
  for (int shift = 1; shift <= 32; shift *= 2) mask |= mask >> shift;
  std::uint64_t value = 0;
  if (max <= 0xffffffffULL) {
    do {
      value = static_cast<std::uint64_t>(engine()) & mask;
    } while (value > max);
  } else {
    do {
      const auto high = static_cast<std::uint64_t>(engine());
      value = ((high << 32) | static_cast<std::uint64_t>(engine())) & mask;
    } while (value > max);
  }
  return value;
}

/// sklearn.utils.resample(rows, replace=False, n_samples=k, random_state=seed): the first k of
/// rows permuted by np.random.RandomState(seed).shuffle (std::mt19937 is MT19937 and its
/// seeding NumPy's legacy integer seeding).
inline std::vector<index_t> numpy_subsample(const std::vector<index_t>& rows, index_t k,
                                            std::uint32_t seed) {
  std::mt19937 engine(seed);
  std::vector<std::size_t> order(rows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (std::size_t i = order.size(); i-- > 1;) {
    std::swap(order[i], order[static_cast<std::size_t>(numpy_interval(engine, i))]);
  }
  std::vector<index_t> out(static_cast<std::size_t>(k));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = rows[order[i]];
  return out;
}

/// Python's math.log(x, base): log(x) / log(base), the same floating-point steps.
inline std::int64_t floor_log(double x, double base) {
  return static_cast<std::int64_t>(std::floor(std::log(x) / std::log(base)));
}

}  // namespace detail

/// Successive halving over parameter grids. See the file's documentation.
template <class Estimator, exec::ExecutionPolicy Exec = exec::local>
class HalvingGridSearchCV
    : public detail::SearchCVBase<HalvingGridSearchCV<Estimator, Exec>, Estimator, Exec> {
  using Base = detail::SearchCVBase<HalvingGridSearchCV<Estimator, Exec>, Estimator, Exec>;
  friend Base;
  using T = typename Estimator::value_type;

 public:
  HalvingGridSearchCV(Estimator estimator, const ParamGrid& grid,
                      HalvingGridSearchCVOptions options = {}, Exec exec = {})
      : HalvingGridSearchCV(std::move(estimator), std::vector<ParamGrid>{grid},
                            std::move(options), std::move(exec)) {}

  HalvingGridSearchCV(Estimator estimator, const std::vector<ParamGrid>& grids,
                      HalvingGridSearchCVOptions options = {}, Exec exec = {})
      : Base("HalvingGridSearchCV", std::move(estimator), options.scoring, options.refit,
             std::move(exec), options.verbose),
        options_(std::move(options)),
        candidates_(detail::expand_grids("HalvingGridSearchCV", grids)) {
    const std::string where = "HalvingGridSearchCV";
    if (!std::isfinite(options_.factor) || !(options_.factor > 1)) {
      throw invalid_argument(where + ": expected factor > 1, found " +
                             detail::number_text(options_.factor));
    }
    check_resource("min_resources", options_.min_resources, {"exhaust", "smallest"});
    check_resource("max_resources", options_.max_resources, {"auto"});
  }

  /// Every candidate of the grid, in grid order (available before fit).
  [[nodiscard]] const std::vector<ParamSet>& candidates() const noexcept { return candidates_; }
  [[nodiscard]] const HalvingGridSearchCVOptions& options() const noexcept { return options_; }

  /// Samples used in each iteration (scikit-learn's n_resources_).
  [[nodiscard]] const std::vector<index_t>& n_resources() const { return fitted(n_resources_); }
  /// Candidates evaluated in each iteration (n_candidates_).
  [[nodiscard]] const std::vector<index_t>& n_candidates() const {
    return fitted(n_candidates_);
  }
  [[nodiscard]] index_t n_iterations() const { return fitted(n_iterations_); }
  [[nodiscard]] index_t n_required_iterations() const { return fitted(n_required_iterations_); }
  [[nodiscard]] index_t n_possible_iterations() const { return fitted(n_possible_iterations_); }
  /// Candidates kept after the last iteration (n_remaining_candidates_).
  [[nodiscard]] index_t n_remaining_candidates() const {
    return fitted(n_remaining_candidates_);
  }
  [[nodiscard]] index_t min_resources() const { return fitted(min_resources_); }
  [[nodiscard]] index_t max_resources() const { return fitted(max_resources_); }

 private:
  static void check_resource(std::string_view name, const ResourceCount& r,
                             std::initializer_list<std::string_view> words) {
    std::string allowed;
    bool known = false;
    for (const std::string_view w : words) {
      allowed += "'" + std::string(w) + "', ";
      known = known || (!r.is_count() && r.word() == w);
    }
    if (r.is_count() ? r.count() >= 1 : known) return;
    throw invalid_argument("HalvingGridSearchCV: expected " + std::string(name) + " to be " +
                           allowed + "or a number of samples >= 1, found " +
                           (r.is_count() ? std::to_string(r.count()) : "'" + r.word() + "'"));
  }

  template <class V>
  const V& fitted(const V& value) const {
    (void)this->cv_results();  // not_fitted_error before fit
    return value;
  }

  /// The settings a distributed fit compares across the ranks first (SearchCVBase::start).
  void describe_search(onelearn::detail::NamedValues& values) const {
    detail::describe_common(values, options_, candidates_);
    values.add("factor", options_.factor);
    values.add("min_resources", options_.min_resources.describe());
    values.add("max_resources", options_.max_resources.describe());
    values.add("aggressive_elimination", options_.aggressive_elimination);
    values.add("random_state", options_.random_state);
  }

  template <class Y>
  void search(const MatrixRef<T>& X, const Y& y) {
    constexpr std::string_view where = "HalvingGridSearchCV.fit";
    detail::SearchProgress progress = this->progress();
    const index_t n_samples = X.rows();
    std::vector<Fold> folds;
    std::vector<ParamSet> candidates = candidates_;
    std::vector<Estimator> models;
    const double factor = options_.factor;
    index_t min_res = 0;
    index_t max_res = 0;
    std::int64_t required = 0;
    std::int64_t possible = 0;
    this->exec().propagate_errors([&] {
      folds = detail::prepare_folds<Estimator, Y>(where, n_samples, y, options_.cv,
                                                  options_.scoring, options_.groups);
      detail::configure_candidates(where, this->estimator(), candidates);  // names and values
      if (options_.min_resources.is_count()) {
        min_res = options_.min_resources.count();
      } else {
        // scikit-learn's "magic factor" 2: two samples per fold (and per class).
        min_res = static_cast<index_t>(folds.size()) * 2;
        if constexpr (std::is_same_v<Y, Labels>) {
          min_res *= static_cast<index_t>(std::set<std::int64_t>(y.begin(), y.end()).size());
        }
      }
      max_res = options_.max_resources.is_count() ? options_.max_resources.count() : n_samples;
      if (max_res > n_samples) {
        throw invalid_argument(std::string(where) + ": expected max_resources <= the number of " +
                               "samples (" + std::to_string(n_samples) + "), found " +
                               std::to_string(max_res));
      }
      required = 1 + detail::floor_log(static_cast<double>(candidates.size()), factor);
      if (!options_.min_resources.is_count() && options_.min_resources.word() == "exhaust") {
        // Start as high as possible so that the last required iteration uses the most samples.
        min_res = std::max(min_res, static_cast<index_t>(std::floor(
                                        static_cast<double>(max_res) /
                                        std::pow(factor, static_cast<double>(required - 1)))));
      }
      if (min_res > max_res) {
        throw invalid_argument(std::string(where) + ": expected min_resources_ <= " +
                               "max_resources_, found min_resources_=" + std::to_string(min_res) +
                               " greater than max_resources_=" + std::to_string(max_res));
      }
      possible = 1 + detail::floor_log(
                         std::floor(static_cast<double>(max_res) / static_cast<double>(min_res)),
                         factor);
    });
    const std::int64_t n_iterations =
        options_.aggressive_elimination ? required : std::min(possible, required);
    // Every iteration's fits, for the time left: each keeps ceil(n / factor) candidates.
    for (std::int64_t itr = 0, n = static_cast<std::int64_t>(candidates.size()); itr < n_iterations;
         ++itr) {
      progress.plan(progress.fits_here(folds.size() * static_cast<std::size_t>(n)));
      n = std::min(n, static_cast<std::int64_t>(std::ceil(static_cast<double>(n) / factor)));
    }

    CVResults results;
    std::vector<index_t> resources_per_iter, candidates_per_iter;
    for (std::int64_t itr = 0; itr < n_iterations; ++itr) {
      const std::int64_t power =
          options_.aggressive_elimination ? std::max<std::int64_t>(0, itr - required + possible)
                                          : itr;
      const auto n_resources = std::min(
          max_res, static_cast<index_t>(std::pow(factor, static_cast<double>(power)) *
                                        static_cast<double>(min_res)));
      resources_per_iter.push_back(n_resources);
      candidates_per_iter.push_back(static_cast<index_t>(candidates.size()));

      // _SubsampleMetaSplitter: each base fold's train and test rows cut down to the fraction.
      const double fraction = static_cast<double>(n_resources) / static_cast<double>(n_samples);
      std::vector<Fold> subsampled;
      this->exec().propagate_errors([&] {
        for (std::size_t f = 0; f < folds.size(); ++f) {
          Fold cut;
          for (auto [from, to] : {std::pair{&folds[f].train, &cut.train},
                                  std::pair{&folds[f].test, &cut.test}}) {
            const auto k =
                static_cast<index_t>(fraction * static_cast<double>(from->size()));
            if (k == 0) {
              throw invalid_argument(std::string(where) + ": expected every subsampled train " +
                                     "and test set to hold a sample, found none in fold " +
                                     std::to_string(f) + " at n_resources=" +
                                     std::to_string(n_resources));
            }
            *to = detail::numpy_subsample(*from, k, options_.random_state);
          }
          subsampled.push_back(std::move(cut));
        }
        models = detail::configure_candidates(where, this->estimator(), candidates);
      });
      const std::size_t first_row = results.n_candidates();
      if (progress.enabled()) {
        progress.announce("iteration " + std::to_string(itr + 1) + "/" +
                              std::to_string(n_iterations) + ", " + std::to_string(n_resources) +
                              " samples: ",
                          subsampled.size(), candidates.size());
      }
      detail::evaluate_candidates(models, candidates, X, y, subsampled, options_.scoring,
                                  this->exec(), results, progress);
      for (std::size_t c = 0; c < candidates.size(); ++c) {
        results.iter.push_back(itr);
        results.n_resources.push_back(n_resources);
      }

      // _top_k: the ceil(n / factor) best, in ascending order of their mean score (NaN first).
      const auto keep = static_cast<std::size_t>(
          std::ceil(static_cast<double>(candidates.size()) / factor));
      std::vector<std::size_t> order(candidates.size());
      for (std::size_t c = 0; c < order.size(); ++c) order[c] = c;
      const auto mean = [&](std::size_t c) { return results.mean_test_score[first_row + c]; };
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (std::isnan(mean(a)) || std::isnan(mean(b))) return std::isnan(mean(a)) && !std::isnan(mean(b));
        return mean(a) < mean(b);
      });
      std::vector<ParamSet> next;
      for (std::size_t i = order.size() - std::min(keep, order.size()); i < order.size(); ++i) {
        next.push_back(candidates[order[i]]);
      }
      candidates = std::move(next);
    }
    results.rank_test_score = detail::rank_min_descending(results.mean_test_score);

    // The best row of the last iteration (nanargmax: the first of equal means).
    const auto last = results.iter.back();
    std::size_t best = 0;
    bool found = false;
    for (std::size_t i = 0; i < results.n_candidates(); ++i) {
      if (results.iter[i] != last) continue;
      if (!found) best = i;  // all NaN: the first row of the iteration
      if (!std::isnan(results.mean_test_score[i]) &&
          (!found || std::isnan(results.mean_test_score[best]) ||
           results.mean_test_score[i] > results.mean_test_score[best])) {
        best = i;
      }
      found = true;
    }
    n_resources_ = std::move(resources_per_iter);
    n_candidates_ = std::move(candidates_per_iter);
    n_iterations_ = n_iterations;
    n_required_iterations_ = required;
    n_possible_iterations_ = possible;
    n_remaining_candidates_ = static_cast<index_t>(candidates.size());
    min_resources_ = min_res;
    max_resources_ = max_res;
    this->conclude(X, y, std::move(results), static_cast<index_t>(best), progress);
  }

  HalvingGridSearchCVOptions options_;
  std::vector<ParamSet> candidates_;
  std::vector<index_t> n_resources_, n_candidates_;
  index_t n_iterations_ = 0, n_required_iterations_ = 0, n_possible_iterations_ = 0;
  index_t n_remaining_candidates_ = 0, min_resources_ = 0, max_resources_ = 0;
};

}  // namespace onelearn::model_selection
