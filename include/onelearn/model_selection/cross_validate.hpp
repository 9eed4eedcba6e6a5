#pragma once
/**
 * \file
 * \brief cross_validate and cross_val_score: k-fold evaluation of an estimator.
 * \ingroup model_selection
 *
 * \code
 * #include <onelearn/model_selection/cross_validate.hpp>
 * namespace ms = onelearn::model_selection;
 *
 * onelearn::linear_model::Ridge<double> ridge({.alpha = 1.0});
 * std::vector<double> r2 = ms::cross_val_score(ridge, X, y);            // 5-fold KFold, score()
 * auto res = ms::cross_validate(ridge, X, y, ms::KFold({.n_splits = 10}),
 *                               {.scoring = "neg_mean_squared_error"});
 * // res.test_score[i], res.fit_time[i], res.score_time[i] (seconds), per fold
 *
 * // Classifiers: an integer cv means StratifiedKFold, as in scikit-learn.
 * auto acc = ms::cross_val_score(pipe, X, labels, 5, {.scoring = "accuracy"});
 * auto grouped = ms::cross_validate(clf, X, labels, ms::GroupKFold({.n_splits = 3}),
 *                                   {.groups = patient_id});
 * \endcode
 *
 * model_selection::cross_validate, cross_val_score: k-fold evaluation of an estimator, as
 * scikit-learn's (1.2.1). For each fold of `cv` a fresh copy of `estimator` (estimators are
 * value types: the copy has the prototype's parameters; fit resets any fitted state) is
 * fitted on the fold's train rows and scored on its test rows with the named scorer
 * (model_selection/scorers.hpp; "" means the estimator's own score()).
 *
 * `cv` (CV) is what scikit-learn's cv argument is: an integer k (StratifiedKFold(k) when y
 * holds class labels, KFold(k) otherwise, both without shuffle), one of the splitters (KFold,
 * StratifiedKFold, GroupKFold, ShuffleSplit, StratifiedShuffleSplit), or an explicit list of
 * Folds. The folds are computed once, before any fitting.
 *
 * \par Options (CrossValidateOptions)
 * - `scoring` (string, default ""): a scorer name, or "" for estimator.score.
 * - `return_train_score` (bool, default false): also score each fitted copy on its train rows.
 * - `groups` (Labels, one per row): the groups GroupKFold splits by.
 *
 * \par Result (CrossValidateResult)
 * - `test_score`, `fit_time`, `score_time` (seconds, steady clock), and `train_score` (empty
 *   unless asked for): one entry per fold, in fold order.
 *
 * \par Differences from scikit-learn
 * - Runs the folds one after the other in this process (no n_jobs); the estimator's own
 *   threading still applies. Trials over MPI ranks are the job of tune::run.
 * - A fold whose fit or score throws ends the whole call with that exception (scikit-learn's
 *   error_score="raise"); no NaN scores.
 * - One scorer per call (scikit-learn also takes a list or dict of them).
 * - Not for estimators with a distributed policy: the folds are cut from the rows this
 *   process passes.
 *
 * Errors (invalid_argument, before anything is fitted): y of another length than X's rows
 * (shape_error), groups of another length (shape_error), a scorer that is unknown or does not
 * fit the estimator or y, a stratified splitter with real-valued targets, GroupKFold without
 * groups, an explicit fold with an index out of range or an empty train or test set, and every
 * error of the splitters (n_splits greater than the number of samples, a class with fewer
 * members than folds, ...).
 */

#include <chrono>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/model_selection/detail/split_common.hpp"
#include "onelearn/model_selection/kfold.hpp"
#include "onelearn/model_selection/scorers.hpp"
#include "onelearn/model_selection/shuffle_split.hpp"

namespace onelearn::model_selection {

/// A cross-validation strategy, as scikit-learn's cv argument: an integer, a splitter or
/// explicit folds.
class CV {
  template <class S>
  static constexpr std::string_view splitter_name() {
    if constexpr (std::is_same_v<S, KFold>) return "KFold";
    if constexpr (std::is_same_v<S, StratifiedKFold>) return "StratifiedKFold";
    if constexpr (std::is_same_v<S, GroupKFold>) return "GroupKFold";
    if constexpr (std::is_same_v<S, ShuffleSplit>) return "ShuffleSplit";
    if constexpr (std::is_same_v<S, StratifiedShuffleSplit>) return "StratifiedShuffleSplit";
  }

 public:
  /// k folds: StratifiedKFold(k) for class labels, KFold(k) otherwise.
  template <std::integral I>
  requires(!std::same_as<I, bool>)
      CV(I n_splits)  // NOLINT(google-explicit-constructor): cv = 5 reads like scikit-learn's
      : splitter_(static_cast<std::int64_t>(n_splits)) {}
  CV(KFold s) : splitter_(s) {}                                 // NOLINT
  CV(StratifiedKFold s) : splitter_(s) {}                       // NOLINT
  CV(GroupKFold s) : splitter_(s) {}                            // NOLINT
  CV(ShuffleSplit s) : splitter_(s) {}                          // NOLINT
  CV(StratifiedShuffleSplit s) : splitter_(s) {}                // NOLINT
  CV(std::vector<Fold> folds) : splitter_(std::move(folds)) {}  // NOLINT

  /// The strategy as text, which a distributed search compares across the ranks: "5",
  /// "KFold(n_splits=3, shuffle=true, random_state=0)", "3 explicit folds" (explicit folds index
  /// each rank's own rows, so only their number must agree).
  [[nodiscard]] std::string describe() const {
    return std::visit(
        [](const auto& s) -> std::string {
          using S = std::remove_cvref_t<decltype(s)>;
          if constexpr (std::is_same_v<S, std::int64_t>) {
            return std::to_string(s);
          } else if constexpr (std::is_same_v<S, std::vector<Fold>>) {
            return std::to_string(s.size()) + " explicit folds";
          } else {
            return std::string(splitter_name<S>()) + "(" + onelearn::params::to_string(s.get_params()) + ")";
          }
        },
        splitter_);
  }

  /// The folds for n_samples rows with targets y (Labels or Vector<T>) and groups (empty:
  /// none).
  template <class Y>
  [[nodiscard]] std::vector<Fold> split(std::string_view where, const Y& y,
                                        const Labels& groups) const {
    constexpr bool labels = std::is_same_v<Y, Labels>;
    const index_t n = y.size();
    const auto needs_labels = [&](std::string_view splitter) {
      throw invalid_argument(std::string(where) + ": expected class labels (Labels) as y for " +
                             std::string(splitter) + ", found real-valued targets");
    };
    return std::visit(
        [&](const auto& s) -> std::vector<Fold> {
          using S = std::remove_cvref_t<decltype(s)>;
          if constexpr (std::is_same_v<S, std::int64_t>) {
            if constexpr (labels) {
              return StratifiedKFold({.n_splits = s}).split(y);
            } else {
              return KFold({.n_splits = s}).split(n);
            }
          } else if constexpr (std::is_same_v<S, KFold> || std::is_same_v<S, ShuffleSplit>) {
            return s.split(n);
          } else if constexpr (std::is_same_v<S, StratifiedKFold> ||
                               std::is_same_v<S, StratifiedShuffleSplit>) {
            if constexpr (labels) {
              return s.split(y);
            } else {
              needs_labels(std::is_same_v<S, StratifiedKFold> ? "StratifiedKFold"
                                                              : "StratifiedShuffleSplit");
              return {};
            }
          } else if constexpr (std::is_same_v<S, GroupKFold>) {
            if (groups.size() == 0) {
              throw invalid_argument(std::string(where) + ": expected groups (one label per " +
                                     "row) for GroupKFold, found none");
            }
            return s.split(groups);
          } else {
            check_folds(where, s, n);
            return s;
          }
        },
        splitter_);
  }

 private:
  static void check_folds(std::string_view where, const std::vector<Fold>& folds, index_t n) {
    if (folds.empty()) {
      throw invalid_argument(std::string(where) + ": expected at least one fold, found none");
    }
    for (std::size_t f = 0; f < folds.size(); ++f) {
      for (const auto* part : {&folds[f].train, &folds[f].test}) {
        if (part->empty()) {
          throw invalid_argument(std::string(where) + ": expected non-empty train and test " +
                                 "sets, found an empty one in fold " + std::to_string(f));
        }
        for (const index_t i : *part) {
          if (i < 0 || i >= n) {
            throw invalid_argument(std::string(where) + ": expected fold indices in [0, " +
                                   std::to_string(n) + "), found " + std::to_string(i) +
                                   " in fold " + std::to_string(f));
          }
        }
      }
    }
  }

  std::variant<std::int64_t, KFold, StratifiedKFold, GroupKFold, ShuffleSplit,
               StratifiedShuffleSplit, std::vector<Fold>>
      splitter_;
};

/// Keyword arguments of cross_validate (scikit-learn's names).
struct CrossValidateOptions {
  std::string scoring{};            ///< scorer name; "": the estimator's score()
  bool return_train_score = false;  ///< also score on the train rows
  Labels groups{};                  ///< per-row groups, for GroupKFold
};

/// Per-fold results of cross_validate, in fold order.
struct CrossValidateResult {
  std::vector<double> test_score;
  std::vector<double> train_score;  ///< empty unless return_train_score
  std::vector<double> fit_time;     ///< seconds
  std::vector<double> score_time;   ///< seconds
};

namespace detail {

using clock = std::chrono::steady_clock;

inline double seconds_since(clock::time_point start) {
  return std::chrono::duration<double>(clock::now() - start).count();
}

/// The checks cross_validate and GridSearchCV make before fitting anything.
template <class Estimator, class Y>
std::vector<Fold> prepare_folds(std::string_view where, index_t n_rows, const Y& y, const CV& cv,
                                std::string_view scoring, const Labels& groups) {
  validation::check_same_length(where, "y", n_rows, y.size());
  if (groups.size() > 0) validation::check_same_length(where, "groups", n_rows, groups.size());
  check_scoring<Estimator, Y>(where, scoring);
  return cv.split(where, y, groups);
}

/// One fold: fits `model` on the train rows and scores it on the test rows.
struct FoldScore {
  double test_score = 0;
  double train_score = 0;
  double fit_time = 0;
  double score_time = 0;
};

template <class Estimator, class Y>
FoldScore fit_and_score(Estimator& model, const MatrixRef<typename Estimator::value_type>& X,
                        const Y& y, const Fold& fold, std::string_view scoring, bool train_score) {
  using T = typename Estimator::value_type;
  const Matrix<T> X_train = X(fold.train, Eigen::all);
  const Y y_train = y(fold.train);
  FoldScore out;
  auto start = clock::now();
  model.fit(X_train, y_train);
  out.fit_time = seconds_since(start);
  const Matrix<T> X_test = X(fold.test, Eigen::all);
  const Y y_test = y(fold.test);
  start = clock::now();
  out.test_score = score_with(scoring, model, X_test, y_test);
  out.score_time = seconds_since(start);
  if (train_score) out.train_score = score_with(scoring, model, X_train, y_train);
  return out;
}

template <class Estimator, class Y>
CrossValidateResult cross_validate_impl(const Estimator& estimator,
                                        const MatrixRef<typename Estimator::value_type>& X,
                                        const Y& y, const CV& cv,
                                        const CrossValidateOptions& options) {
  const std::vector<Fold> folds = prepare_folds<Estimator, Y>("cross_validate", X.rows(), y, cv,
                                                              options.scoring, options.groups);
  CrossValidateResult out;
  for (const Fold& fold : folds) {
    Estimator model = estimator;
    const FoldScore s =
        fit_and_score(model, X, y, fold, options.scoring, options.return_train_score);
    out.test_score.push_back(s.test_score);
    out.fit_time.push_back(s.fit_time);
    out.score_time.push_back(s.score_time);
    if (options.return_train_score) out.train_score.push_back(s.train_score);
  }
  return out;
}

}  // namespace detail

/// Cross-validates a regressor (real-valued targets).
template <class Estimator>
CrossValidateResult cross_validate(const Estimator& estimator,
                                   const MatrixRef<typename Estimator::value_type>& X,
                                   const VectorRef<typename Estimator::value_type>& y,
                                   const CV& cv = 5, const CrossValidateOptions& options = {}) {
  return detail::cross_validate_impl<Estimator>(
      estimator, X, Vector<typename Estimator::value_type>(y), cv, options);
}

/// Cross-validates a classifier (class labels).
template <class Estimator>
CrossValidateResult cross_validate(const Estimator& estimator,
                                   const MatrixRef<typename Estimator::value_type>& X,
                                   const LabelsRef& y, const CV& cv = 5,
                                   const CrossValidateOptions& options = {}) {
  return detail::cross_validate_impl<Estimator>(estimator, X, Labels(y), cv, options);
}

/// The test scores of cross_validate, one per fold.
template <class Estimator>
std::vector<double> cross_val_score(const Estimator& estimator,
                                    const MatrixRef<typename Estimator::value_type>& X,
                                    const VectorRef<typename Estimator::value_type>& y,
                                    const CV& cv = 5, const CrossValidateOptions& options = {}) {
  return cross_validate(estimator, X, y, cv, options).test_score;
}

template <class Estimator>
std::vector<double> cross_val_score(const Estimator& estimator,
                                    const MatrixRef<typename Estimator::value_type>& X,
                                    const LabelsRef& y, const CV& cv = 5,
                                    const CrossValidateOptions& options = {}) {
  return cross_validate(estimator, X, y, cv, options).test_score;
}

}  // namespace onelearn::model_selection
