#pragma once
/**
 * \code
 * #include <onelearn/model_selection/grid_search_cv.hpp>
 * namespace ms = onelearn::model_selection;
 *
 * auto pipe = onelearn::pipeline::make_pipeline(StandardScaler<double>(),
 *                                               LogisticRegression<double>());
 * ms::GridSearchCV search(pipe, {{"logisticregression__C", {0.01, 0.1, 1.0, 10.0}}},
 *                         {.cv = ms::StratifiedKFold({.n_splits = 5}), .scoring = "accuracy"});
 * search.fit(X, labels);
 * double C = std::get<double>(search.best_params().front().second);
 * double best = search.best_score();                 // mean cross-validated score
 * Labels predicted = search.predict(X_test);          // best_estimator(), refitted on all of X
 * const ms::CVResults& table = search.cv_results();   // mean_test_score, rank_test_score, ...
 * table.to_csv("results.csv");                        // or to_json
 *
 * // Several grids (scikit-learn's list of dicts):
 * ms::GridSearchCV both(ridge, std::vector<ms::ParamGrid>{{{"alpha", {0.1, 1.0}}},
 *                                                         {{"fit_intercept", {false}}}});
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
 *
 * \par Attributes (after fit)
 * - `best_params()` (ParamSet: (name, value) pairs in the candidate's order), `best_score()`,
 *   `best_index()`, `best_estimator()` (refit only), `n_splits()`, `candidates()` (available
 *   from construction), `cv_results()` (CVResults: per candidate `params`,
 *   `mean_test_score`, `std_test_score`, `rank_test_score`, `split_test_scores[i]`
 *   (scikit-learn's split<i>_test_score), `mean_fit_time`, `std_fit_time`, `mean_score_time`,
 *   `std_score_time`; `column(name)` by scikit-learn's column name; `to_csv(path)` and
 *   `to_json(path)`, written to a temporary file and renamed).
 * - predict, predict_proba, score, transform: forwarded to best_estimator().
 *
 * \par Differences from scikit-learn
 * - The candidates run one after the other in this process (no n_jobs); tune::run is what
 *   spreads trials over MPI ranks.
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
 * `io_error` from to_csv/to_json.
 */

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/io.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/model_selection/cross_validate.hpp"

namespace onelearn::model_selection {

/// Parameter names, each with the values to try: one of scikit-learn's param_grid dicts.
using ParamGrid = std::vector<std::pair<std::string, std::vector<ParamValue>>>;

/// One candidate: (name, value) pairs.
using ParamSet = std::vector<std::pair<std::string, ParamValue>>;

/// Keyword arguments of GridSearchCV (scikit-learn's names).
struct GridSearchCVOptions {
  CV cv = 5;              ///< integer, splitter or explicit folds
  std::string scoring{};  ///< scorer name; "": the estimator's score()
  bool refit = true;      ///< fit best_estimator() on all the data
  Labels groups{};        ///< per-row groups, for GroupKFold
};

namespace detail {

inline std::string number_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
  return {buffer, end};
}

inline std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\u%04x", static_cast<unsigned>(c));
          out += hex;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

inline std::string json_number(double v) { return std::isfinite(v) ? number_text(v) : "null"; }

inline std::string json_value(const ParamValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using V = std::remove_cvref_t<decltype(x)>;
        if constexpr (std::is_same_v<V, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_same_v<V, std::int64_t>) {
          return std::to_string(x);
        } else if constexpr (std::is_same_v<V, double>) {
          return json_number(x);
        } else {
          return json_string(x);
        }
      },
      v);
}

/// A CSV field: the value's text, quoted when it holds a comma, a quote or a line break.
inline std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

inline std::string csv_value(const ParamValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* d = std::get_if<double>(&v)) return number_text(*d);
  return json_value(v);
}

inline std::string params_json(const ParamSet& p) {
  std::string out = "{";
  for (std::size_t i = 0; i < p.size(); ++i) {
    out += (i ? ", " : "") + json_string(p[i].first) + ": " + json_value(p[i].second);
  }
  return out + "}";
}

/// scikit-learn's mean and (population) standard deviation over the splits.
inline std::pair<double, double> mean_std(const std::vector<double>& x) {
  double sum = 0;
  for (const double v : x) sum += v;
  const double mean = sum / static_cast<double>(x.size());
  double squares = 0;
  for (const double v : x) squares += (v - mean) * (v - mean);
  return {mean, std::sqrt(squares / static_cast<double>(x.size()))};
}

/// scipy's rankdata(-means, method="min"), with NaN replaced by (smallest mean - 1) first, as
/// scikit-learn 1.2 does; all NaN: every rank is 1.
inline std::vector<std::int64_t> rank_min_descending(std::vector<double> means) {
  double smallest = std::numeric_limits<double>::infinity();
  bool any = false;
  for (const double m : means) {
    if (!std::isnan(m)) {
      smallest = std::min(smallest, m);
      any = true;
    }
  }
  std::vector<std::int64_t> rank(means.size(), 1);
  if (!any) return rank;
  for (double& m : means) {
    if (std::isnan(m)) m = smallest - 1;
  }
  for (std::size_t i = 0; i < means.size(); ++i) {
    for (const double other : means) {
      if (other > means[i]) ++rank[i];
    }
  }
  return rank;
}

/// scikit-learn's ParameterGrid: per grid, names sorted, the last varying fastest.
inline std::vector<ParamSet> expand_grids(std::string_view where,
                                          const std::vector<ParamGrid>& grids) {
  if (grids.empty()) {
    throw invalid_argument(std::string(where) + ": expected at least one parameter grid, " +
                           "found an empty search space");
  }
  std::vector<ParamSet> out;
  for (std::size_t g = 0; g < grids.size(); ++g) {
    ParamGrid grid = grids[g];
    if (grid.empty()) {
      throw invalid_argument(std::string(where) + ": expected at least one parameter in grid " +
                             std::to_string(g) + ", found an empty search space");
    }
    std::stable_sort(grid.begin(), grid.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t j = 0; j < grid.size(); ++j) {
      if (grid[j].second.empty()) {
        throw invalid_argument(std::string(where) + ": expected at least one value for " +
                               "parameter '" + grid[j].first + "', found none");
      }
      if (j > 0 && grid[j].first == grid[j - 1].first) {
        throw invalid_argument(std::string(where) + ": expected each parameter once per grid, " +
                               "found '" + grid[j].first + "' twice");
      }
    }
    std::vector<std::size_t> at(grid.size(), 0);
    while (true) {
      ParamSet candidate;
      for (std::size_t j = 0; j < grid.size(); ++j) {
        candidate.emplace_back(grid[j].first, grid[j].second[at[j]]);
      }
      out.push_back(std::move(candidate));
      // Odometer: the last name varies fastest, as itertools.product.
      std::size_t j = grid.size();
      while (j > 0 && ++at[j - 1] == grid[j - 1].second.size()) at[--j] = 0;
      if (j == 0) break;
    }
  }
  return out;
}

template <class Estimator>
void apply_params(Estimator& estimator, const ParamSet& params) {
  for (const auto& [name, value] : params) {
    const std::initializer_list<std::pair<std::string_view, ParamValue>> one{{name, value}};
    estimator.set_params(one);
  }
}

}  // namespace detail

/// The table of a search's results, one entry per candidate in every column (scikit-learn's
/// cv_results_).
struct CVResults {
  std::vector<ParamSet> params;
  std::vector<std::vector<double>> split_test_scores;  ///< [split][candidate]
  std::vector<double> mean_test_score, std_test_score;
  std::vector<std::int64_t> rank_test_score;
  std::vector<double> mean_fit_time, std_fit_time, mean_score_time, std_score_time;

  [[nodiscard]] std::size_t n_candidates() const noexcept { return params.size(); }
  [[nodiscard]] std::size_t n_splits() const noexcept { return split_test_scores.size(); }

  /// Every parameter name of any candidate, sorted: the param_<name> columns.
  [[nodiscard]] std::vector<std::string> param_names() const {
    std::vector<std::string> out;
    for (const ParamSet& p : params) {
      for (const auto& kv : p) out.push_back(kv.first);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  /// The value of parameter `name` in candidate i, if it has one.
  [[nodiscard]] std::optional<ParamValue> param(std::size_t i, std::string_view name) const {
    for (const auto& kv : params.at(i)) {
      if (kv.first == name) return kv.second;
    }
    return std::nullopt;
  }

  /// Column names in scikit-learn's order.
  [[nodiscard]] std::vector<std::string> columns() const {
    std::vector<std::string> out{"mean_fit_time", "std_fit_time", "mean_score_time",
                                 "std_score_time"};
    for (const std::string& p : param_names()) out.push_back("param_" + p);
    out.emplace_back("params");
    for (std::size_t s = 0; s < n_splits(); ++s) {
      out.push_back("split" + std::to_string(s) + "_test_score");
    }
    for (const char* c : {"mean_test_score", "std_test_score", "rank_test_score"}) {
      out.emplace_back(c);
    }
    return out;
  }

  /// A numeric column by its scikit-learn name ("mean_test_score", "split3_test_score",
  /// "rank_test_score", "mean_fit_time", ...).
  [[nodiscard]] std::vector<double> column(std::string_view name) const {
    if (name == "mean_test_score") return mean_test_score;
    if (name == "std_test_score") return std_test_score;
    if (name == "mean_fit_time") return mean_fit_time;
    if (name == "std_fit_time") return std_fit_time;
    if (name == "mean_score_time") return mean_score_time;
    if (name == "std_score_time") return std_score_time;
    if (name == "rank_test_score") return {rank_test_score.begin(), rank_test_score.end()};
    for (std::size_t s = 0; s < n_splits(); ++s) {
      if (name == "split" + std::to_string(s) + "_test_score") return split_test_scores[s];
    }
    std::string known;
    for (const std::string& c : columns()) {
      if (c.rfind("param", 0) != 0) known += (known.empty() ? "" : ", ") + c;
    }
    throw invalid_argument("CVResults.column: expected one of " + known + ", found '" +
                           std::string(name) + "'");
  }

  /// One row per candidate, the columns of columns(); written to a temporary file and renamed.
  void to_csv(const std::filesystem::path& path) const {
    const std::vector<std::string> names = columns();
    const std::vector<std::string> param_cols = param_names();
    std::ostringstream out;
    for (std::size_t c = 0; c < names.size(); ++c) out << (c ? "," : "") << names[c];
    out << '\n';
    for (std::size_t i = 0; i < n_candidates(); ++i) {
      out << detail::number_text(mean_fit_time[i]) << ',' << detail::number_text(std_fit_time[i])
          << ',' << detail::number_text(mean_score_time[i]) << ','
          << detail::number_text(std_score_time[i]);
      for (const std::string& p : param_cols) {
        const auto v = param(i, p);
        out << ',' << (v ? detail::csv_field(detail::csv_value(*v)) : std::string());
      }
      out << ',' << detail::csv_field(detail::params_json(params[i]));
      for (std::size_t s = 0; s < n_splits(); ++s) {
        out << ',' << detail::number_text(split_test_scores[s][i]);
      }
      out << ',' << detail::number_text(mean_test_score[i]) << ','
          << detail::number_text(std_test_score[i]) << ',' << rank_test_score[i] << '\n';
    }
    io::detail::write_file_atomically(path, out.str(), [](std::ostream&) {});
  }

  /// A JSON object of columns (as scikit-learn's cv_results_ dict): numeric columns are
  /// arrays, "params" an array of objects, "param_<name>" arrays with null where a candidate
  /// lacks the parameter. Written to a temporary file and renamed.
  void to_json(const std::filesystem::path& path) const {
    std::ostringstream out;
    const auto numbers = [&](const std::vector<double>& v) {
      out << '[';
      for (std::size_t i = 0; i < v.size(); ++i)
        out << (i ? ", " : "") << detail::json_number(v[i]);
      out << ']';
    };
    out << "{\n";
    const std::pair<const char*, const std::vector<double>*> times[] = {
        {"mean_fit_time", &mean_fit_time},
        {"std_fit_time", &std_fit_time},
        {"mean_score_time", &mean_score_time},
        {"std_score_time", &std_score_time}};
    for (const auto& [name, values] : times) {
      out << "  \"" << name << "\": ";
      numbers(*values);
      out << ",\n";
    }
    for (const std::string& p : param_names()) {
      out << "  " << detail::json_string("param_" + p) << ": [";
      for (std::size_t i = 0; i < n_candidates(); ++i) {
        const auto v = param(i, p);
        out << (i ? ", " : "") << (v ? detail::json_value(*v) : std::string("null"));
      }
      out << "],\n";
    }
    out << "  \"params\": [";
    for (std::size_t i = 0; i < n_candidates(); ++i) {
      out << (i ? ", " : "") << detail::params_json(params[i]);
    }
    out << "],\n";
    for (std::size_t s = 0; s < n_splits(); ++s) {
      out << "  \"split" << s << "_test_score\": ";
      numbers(split_test_scores[s]);
      out << ",\n";
    }
    out << "  \"mean_test_score\": ";
    numbers(mean_test_score);
    out << ",\n  \"std_test_score\": ";
    numbers(std_test_score);
    out << ",\n  \"rank_test_score\": [";
    for (std::size_t i = 0; i < rank_test_score.size(); ++i) {
      out << (i ? ", " : "") << rank_test_score[i];
    }
    out << "]\n}\n";
    io::detail::write_file_atomically(path, out.str(), [](std::ostream&) {});
  }
};

/// Exhaustive search over parameter grids with cross-validation. See the file's documentation.
template <class Estimator>
class GridSearchCV {
  using T = typename Estimator::value_type;

 public:
  using value_type = T;
  using estimator_type = Estimator;

  GridSearchCV(Estimator estimator, const ParamGrid& grid, GridSearchCVOptions options = {})
      : GridSearchCV(std::move(estimator), std::vector<ParamGrid>{grid}, std::move(options)) {}

  GridSearchCV(Estimator estimator, const std::vector<ParamGrid>& grids,
               GridSearchCVOptions options = {})
      : estimator_(std::move(estimator)),
        options_(std::move(options)),
        candidates_(detail::expand_grids("GridSearchCV", grids)) {}

  GridSearchCV& fit(const MatrixRef<T>& X, const VectorRef<T>& y) requires
      requires(Estimator& e, const Matrix<T>& x, const Vector<T>& v) {
    e.fit(x, v);
  }
  { return fit_impl(X, Vector<T>(y)); }

  GridSearchCV& fit(const MatrixRef<T>& X, const LabelsRef& y) requires
      requires(Estimator& e, const Matrix<T>& x, const Labels& v) {
    e.fit(x, v);
  }
  { return fit_impl(X, Labels(y)); }

  /// Every candidate, in evaluation order (available before fit).
  [[nodiscard]] const std::vector<ParamSet>& candidates() const noexcept { return candidates_; }

  [[nodiscard]] const ParamSet& best_params() const {
    check("best_params");
    return candidates_[static_cast<std::size_t>(best_index_)];
  }
  [[nodiscard]] double best_score() const {
    check("best_score");
    return results_.mean_test_score[static_cast<std::size_t>(best_index_)];
  }
  [[nodiscard]] index_t best_index() const {
    check("best_index");
    return best_index_;
  }
  [[nodiscard]] const Estimator& best_estimator() const {
    check("best_estimator");
    if (!best_estimator_) {
      throw not_fitted_error("GridSearchCV.best_estimator: expected a search with refit=true, " +
                             std::string("found refit=false (no estimator was refitted)"));
    }
    return *best_estimator_;
  }
  [[nodiscard]] const CVResults& cv_results() const {
    check("cv_results");
    return results_;
  }
  [[nodiscard]] index_t n_splits() const {
    check("n_splits");
    return static_cast<index_t>(results_.n_splits());
  }
  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const Estimator& estimator() const noexcept { return estimator_; }
  [[nodiscard]] const GridSearchCVOptions& options() const noexcept { return options_; }

  [[nodiscard]] auto predict(const MatrixRef<T>& X) const requires
      requires(const Estimator& e, const Matrix<T>& x) {
    e.predict(x);
  }
  { return best_estimator().predict(X); }
  [[nodiscard]] auto predict_proba(const MatrixRef<T>& X) const requires
      requires(const Estimator& e, const Matrix<T>& x) {
    e.predict_proba(x);
  }
  { return best_estimator().predict_proba(X); }
  [[nodiscard]] auto transform(const MatrixRef<T>& X) const requires
      requires(const Estimator& e, const Matrix<T>& x) {
    e.transform(x);
  }
  { return best_estimator().transform(X); }
  /// The search's scorer on (X, y) with best_estimator() (scikit-learn's GridSearchCV.score).
  [[nodiscard]] double score(const MatrixRef<T>& X, const VectorRef<T>& y) const requires
      requires(Estimator& e, const Matrix<T>& x, const Vector<T>& v) {
    e.fit(x, v);
  }
  { return score_with(options_.scoring, best_estimator(), X, Vector<T>(y)); }
  [[nodiscard]] double score(const MatrixRef<T>& X, const LabelsRef& y) const requires
      requires(Estimator& e, const Matrix<T>& x, const Labels& v) {
    e.fit(x, v);
  }
  { return score_with(options_.scoring, best_estimator(), X, Labels(y)); }

 private:
  template <class Y>
  GridSearchCV& fit_impl(const MatrixRef<T>& X, const Y& y) {
    constexpr std::string_view where = "GridSearchCV.fit";
    fitted_ = false;
    best_estimator_.reset();
    const std::vector<Fold> folds = detail::prepare_folds<Estimator, Y>(
        where, X.rows(), y, options_.cv, options_.scoring, options_.groups);
    // Every candidate on a copy first: a bad name or value fails before hours of fitting.
    std::vector<Estimator> models;
    models.reserve(candidates_.size());
    for (const ParamSet& candidate : candidates_) {
      Estimator model = estimator_;
      try {
        detail::apply_params(model, candidate);
      } catch (const invalid_argument& e) {
        throw invalid_argument(std::string(where) + ": candidate " +
                               detail::params_json(candidate) + ": " + e.what());
      }
      models.push_back(std::move(model));
    }

    const std::size_t n_candidates = candidates_.size();
    const std::size_t n_folds = folds.size();
    CVResults results;
    results.params = candidates_;
    results.split_test_scores.assign(n_folds, std::vector<double>(n_candidates));
    for (std::size_t c = 0; c < n_candidates; ++c) {
      std::vector<double> test(n_folds), fit_time(n_folds), score_time(n_folds);
      for (std::size_t f = 0; f < n_folds; ++f) {
        Estimator model = models[c];
        const detail::FoldScore s =
            detail::fit_and_score(model, X, y, folds[f], options_.scoring, false);
        test[f] = results.split_test_scores[f][c] = s.test_score;
        fit_time[f] = s.fit_time;
        score_time[f] = s.score_time;
      }
      const auto [mean, sd] = detail::mean_std(test);
      results.mean_test_score.push_back(mean);
      results.std_test_score.push_back(sd);
      const auto [fit_mean, fit_sd] = detail::mean_std(fit_time);
      results.mean_fit_time.push_back(fit_mean);
      results.std_fit_time.push_back(fit_sd);
      const auto [score_mean, score_sd] = detail::mean_std(score_time);
      results.mean_score_time.push_back(score_mean);
      results.std_score_time.push_back(score_sd);
    }
    results.rank_test_score = detail::rank_min_descending(results.mean_test_score);
    const auto best = std::find(results.rank_test_score.begin(), results.rank_test_score.end(), 1);
    best_index_ = best - results.rank_test_score.begin();
    results_ = std::move(results);

    if (options_.refit) {
      Estimator model = models[static_cast<std::size_t>(best_index_)];
      model.fit(X, y);
      best_estimator_ = std::move(model);
    }
    fitted_ = true;
    return *this;
  }

  void check(std::string_view attribute) const {
    validation::check_fitted("GridSearchCV." + std::string(attribute), fitted_);
  }

  Estimator estimator_;
  GridSearchCVOptions options_;
  std::vector<ParamSet> candidates_;
  CVResults results_;
  std::optional<Estimator> best_estimator_;
  index_t best_index_ = 0;
  bool fitted_ = false;
};

}  // namespace onelearn::model_selection
