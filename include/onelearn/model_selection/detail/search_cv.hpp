#pragma once
// What GridSearchCV, RandomizedSearchCV and HalvingGridSearchCV share: the candidate types, the
// cv_results table (CVResults) with its CSV/JSON output, scikit-learn's ranking, the
// evaluation of (candidate, fold) fits, spread over the ranks of an execution policy, and the
// common attributes (best_*, refit, predict...) in SearchCVBase.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "onelearn/base/agreement.hpp"
#include "onelearn/core/detail/progress.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/io/atomic_file.hpp"
#include "onelearn/io/text_writer.hpp"
#include "onelearn/model_selection/cross_validate.hpp"

namespace onelearn::model_selection {

/// Parameter names, each with the values to try: one of scikit-learn's param_grid dicts.
using ParamGrid = std::vector<std::pair<std::string, std::vector<ParamValue>>>;

/// One candidate: (name, value) pairs.
using ParamSet = std::vector<std::pair<std::string, ParamValue>>;

namespace detail {

// The JSON and CSV pieces come from io/text_writer.hpp; halving_grid_search_cv.hpp and the
// functions below name them as detail::.
using io::csv_field;
using io::json_number;
using io::json_string;
using io::number_text;

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
/// cv_results_). `iter` and `n_resources` are filled by HalvingGridSearchCV only (empty
/// otherwise, and then not among the columns).
struct CVResults {
  std::vector<std::int64_t> iter;         ///< successive halving: the iteration of each row
  std::vector<std::int64_t> n_resources;  ///< successive halving: samples used in that iteration
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
    std::vector<std::string> out;
    if (!iter.empty()) out = {"iter", "n_resources"};
    for (const char* c : {"mean_fit_time", "std_fit_time", "mean_score_time", "std_score_time"}) {
      out.emplace_back(c);
    }
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
    if (!iter.empty() && name == "iter") return {iter.begin(), iter.end()};
    if (!iter.empty() && name == "n_resources") return {n_resources.begin(), n_resources.end()};
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
    const std::vector<std::string> param_cols = param_names();
    io::CsvWriter out;
    for (const std::string& name : columns()) out.field(name);
    out.end_row();
    for (std::size_t i = 0; i < n_candidates(); ++i) {
      if (!iter.empty()) out.field(iter[i]).field(n_resources[i]);
      out.field(mean_fit_time[i]).field(std_fit_time[i]);
      out.field(mean_score_time[i]).field(std_score_time[i]);
      for (const std::string& p : param_cols) {
        const auto v = param(i, p);
        out.field(v ? detail::csv_value(*v) : std::string());
      }
      out.field(detail::params_json(params[i]));
      for (std::size_t s = 0; s < n_splits(); ++s) out.field(split_test_scores[s][i]);
      out.field(mean_test_score[i]).field(std_test_score[i]).field(rank_test_score[i]).end_row();
    }
    io::write_file_atomically(path, out.text());
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
    const auto integers = [&](const char* name, const std::vector<std::int64_t>& v) {
      out << "  \"" << name << "\": [";
      for (std::size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
      out << "],\n";
    };
    if (!iter.empty()) {
      integers("iter", iter);
      integers("n_resources", n_resources);
    }
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
    io::write_file_atomically(path, out.str());
  }
};


namespace detail {

/// The verbose lines of a search (verbose >= 1, rank 0 only), through core/log.hpp's sink:
///   "GridSearchCV: fitting 3 folds for each of 4 candidates, totalling 12 fits"
///   "GridSearchCV: [CV 2/3] candidate 1/4 {alpha=0.1}: score 0.936544, fit 0.01s; elapsed
///    0.02s, remaining ~0.1s"   (one per (candidate, fold) fit)
///   "GridSearchCV: refitted the best candidate {alpha=1} on 60 rows in 0.01s"
/// Under a distributed policy rank 0 reports the fits it runs itself (every size()-th pair), and
/// the time left is that of its own share, which the other ranks run alongside.
class SearchProgress {
 public:
  template <exec::ExecutionPolicy Exec>
  SearchProgress(std::string_view who, std::int64_t verbose, const Exec& exec)
      : log_(who, verbose, exec),
        rank_(static_cast<std::size_t>(exec.rank())),
        ranks_(static_cast<std::size_t>(exec.size())) {}

  [[nodiscard]] bool enabled() const noexcept { return log_.enabled(); }

  /// The (candidate, fold) pairs of n_pairs that this rank runs (pair k on rank k mod size()).
  [[nodiscard]] std::size_t fits_here(std::size_t n_pairs) const noexcept {
    return n_pairs > rank_ ? (n_pairs - rank_ + ranks_ - 1) / ranks_ : 0;
  }

  /// Adds `fits` to the fits this rank will report, the base of the time left.
  void plan(std::size_t fits) noexcept { total_ += fits; }

  /// "<who>: [prefix]fitting F folds for each of C candidates, totalling F*C fits".
  void announce(std::string_view prefix, std::size_t n_folds, std::size_t n_candidates) const {
    if (!enabled()) return;
    const std::size_t n_pairs = n_folds * n_candidates;
    std::string text(prefix);
    text += "fitting " + std::to_string(n_folds) + " folds for each of " +
            std::to_string(n_candidates) + " candidates, totalling " + std::to_string(n_pairs) +
            " fits";
    if (ranks_ > 1) {
      text += " (" + std::to_string(fits_here(n_pairs)) + " on this rank of " +
              std::to_string(ranks_) + ")";
    }
    log_.note(text);
  }

  void fit_done(std::size_t candidate, std::size_t n_candidates, std::size_t fold,
                std::size_t n_folds, const ParamSet& params, double score, double fit_time) {
    ++done_;
    if (!enabled()) return;
    log_.step("[CV " + std::to_string(fold + 1) + "/" + std::to_string(n_folds) + "] candidate " +
                  std::to_string(candidate + 1) + "/" + std::to_string(n_candidates) + " " +
                  onelearn::detail::exact_text(params) + ": score " +
                  onelearn::detail::format_quantity(score) + ", fit " +
                  onelearn::detail::format_duration(fit_time),
              static_cast<double>(done_), static_cast<double>(total_));
  }

  void refitted(const ParamSet& params, index_t rows, double seconds) const {
    if (!enabled()) return;
    log_.note("refitted the best candidate " + onelearn::detail::exact_text(params) + " on " +
              std::to_string(rows) + " rows in " + onelearn::detail::format_duration(seconds) +
              "; elapsed " + onelearn::detail::format_duration(log_.elapsed()));
  }

  [[nodiscard]] const onelearn::detail::ProgressLog& log() const noexcept { return log_; }

 private:
  onelearn::detail::ProgressLog log_;
  std::size_t rank_ = 0;
  std::size_t ranks_ = 1;
  std::size_t done_ = 0;
  std::size_t total_ = 0;
};

/// A copy of `estimator` per candidate, each with the candidate's parameters: a bad name or
/// value fails here, before any fitting, with the candidate in the message.
template <class Estimator>
std::vector<Estimator> configure_candidates(std::string_view where, const Estimator& estimator,
                                            const std::vector<ParamSet>& candidates) {
  std::vector<Estimator> models;
  models.reserve(candidates.size());
  for (const ParamSet& candidate : candidates) {
    Estimator model = estimator;
    try {
      apply_params(model, candidate);
    } catch (const invalid_argument& e) {
      throw invalid_argument(std::string(where) + ": candidate " + params_json(candidate) + ": " +
                             e.what());
    }
    models.push_back(std::move(model));
  }
  return models;
}

/// Fits and scores every (candidate, fold) pair and appends one row per candidate to `results`
/// (params, split scores, means and standard deviations; not the ranks).
///
/// Pair k = candidate * n_folds + fold runs on rank k mod exec.size() (round-robin, so equal
/// candidates' folds are spread evenly); each rank fits its pairs with the local models, then
/// the (score, fit time, score time) triples are all-gathered, so every rank appends the same
/// rows, with bit-identical scores to a run in one process (same rows, same estimator code).
/// The local fits run inside exec.propagate_errors: a trial that throws on one rank is raised,
/// with its message, on every rank. With exec::local everything runs here, in order. Each fit
/// is reported to `progress` (its verbose line).
template <class Estimator, class Y, exec::ExecutionPolicy Exec>
void evaluate_candidates(const std::vector<Estimator>& models, const std::vector<ParamSet>& params,
                         const MatrixRef<typename Estimator::value_type>& X, const Y& y,
                         const std::vector<Fold>& folds, std::string_view scoring, const Exec& exec,
                         CVResults& results, SearchProgress& progress) {
  const std::size_t n_candidates = models.size();
  const std::size_t n_folds = folds.size();
  const std::size_t n_pairs = n_candidates * n_folds;
  const auto ranks = static_cast<std::size_t>(exec.size());
  const auto rank = static_cast<std::size_t>(exec.rank());
  std::vector<double> mine;
  exec.propagate_errors([&] {
    for (std::size_t k = rank; k < n_pairs; k += ranks) {
      Estimator model = models[k / n_folds];
      const FoldScore s = fit_and_score(model, X, y, folds[k % n_folds], scoring, false);
      mine.insert(mine.end(), {s.test_score, s.fit_time, s.score_time});
      progress.fit_done(k / n_folds, n_candidates, k % n_folds, n_folds, params[k / n_folds],
                        s.test_score, s.fit_time);
    }
  });
  const std::vector<double> all = exec.allgatherv(std::span<const double>(mine));
  // Back to pair order: rank r contributed pairs r, r + ranks, ... in that order.
  std::vector<double> test(n_pairs), fit_time(n_pairs), score_time(n_pairs);
  std::size_t at = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    for (std::size_t k = r; k < n_pairs; k += ranks, at += 3) {
      test[k] = all[at];
      fit_time[k] = all[at + 1];
      score_time[k] = all[at + 2];
    }
  }
  if (results.split_test_scores.empty()) results.split_test_scores.resize(n_folds);
  for (std::size_t c = 0; c < n_candidates; ++c) {
    const auto slice = [&](const std::vector<double>& v) {
      const auto begin = v.begin() + static_cast<std::ptrdiff_t>(c * n_folds);
      return std::vector<double>(begin, begin + static_cast<std::ptrdiff_t>(n_folds));
    };
    const std::vector<double> scores = slice(test);
    for (std::size_t f = 0; f < n_folds; ++f) results.split_test_scores[f].push_back(scores[f]);
    results.params.push_back(params[c]);
    const auto [mean, sd] = mean_std(scores);
    results.mean_test_score.push_back(mean);
    results.std_test_score.push_back(sd);
    const auto [fit_mean, fit_sd] = mean_std(slice(fit_time));
    results.mean_fit_time.push_back(fit_mean);
    results.std_fit_time.push_back(fit_sd);
    const auto [score_mean, score_sd] = mean_std(slice(score_time));
    results.mean_score_time.push_back(score_mean);
    results.std_score_time.push_back(score_sd);
  }
}

/// The settings every search shares, as check_same_values compares them: the options (all but
/// verbose: only rank 0 prints), and every candidate's parameters (a grid or a draw that differs
/// on one rank shows here).
template <class Options>
void describe_common(onelearn::detail::NamedValues& values, const Options& options,
                     const std::vector<ParamSet>& candidates) {
  values.add("cv", options.cv.describe());
  values.add("scoring", '"' + options.scoring + '"');
  values.add("refit", options.refit);
  values.add("groups", options.groups.size() > 0 ? "given" : "not given");
  values.add("candidates", static_cast<std::int64_t>(candidates.size()));
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    values.add("candidate " + std::to_string(i), onelearn::detail::exact_text(candidates[i]));
  }
}

/// What every *SearchCV shares: the fitted state, the best_* attributes, refit and the methods
/// forwarded to best_estimator(). Derived provides `template <class Y> void search(X, y)`,
/// which fills the table and picks the best row through conclude().
template <class Derived, class Estimator, exec::ExecutionPolicy Exec>
class SearchCVBase {
  using T = typename Estimator::value_type;

 public:
  using value_type = T;
  using estimator_type = Estimator;
  using exec_type = Exec;

  Derived& fit(const MatrixRef<T>& X, const VectorRef<T>& y) requires
      requires(Estimator& e, const Matrix<T>& x, const Vector<T>& v) {
    e.fit(x, v);
  }
  { return start(X, Vector<T>(y)); }

  Derived& fit(const MatrixRef<T>& X, const LabelsRef& y) requires
      requires(Estimator& e, const Matrix<T>& x, const Labels& v) {
    e.fit(x, v);
  }
  { return start(X, Labels(y)); }

  [[nodiscard]] const ParamSet& best_params() const {
    check("best_params");
    return results_.params[static_cast<std::size_t>(best_index_)];
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
      throw not_fitted_error(std::string(name_) + ".best_estimator: expected a search with " +
                             "refit=true, found refit=false (no estimator was refitted)");
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
  [[nodiscard]] const Exec& exec() const noexcept { return exec_; }

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
  /// The search's scorer on (X, y) with best_estimator() (scikit-learn's *SearchCV.score).
  [[nodiscard]] double score(const MatrixRef<T>& X, const VectorRef<T>& y) const requires
      requires(Estimator& e, const Matrix<T>& x, const Vector<T>& v) {
    e.fit(x, v);
  }
  { return score_with(scoring_, best_estimator(), X, Vector<T>(y)); }
  [[nodiscard]] double score(const MatrixRef<T>& X, const LabelsRef& y) const requires
      requires(Estimator& e, const Matrix<T>& x, const Labels& v) {
    e.fit(x, v);
  }
  { return score_with(scoring_, best_estimator(), X, Labels(y)); }

 protected:
  SearchCVBase(std::string_view name, Estimator estimator, std::string scoring, bool refit,
               Exec exec, std::int64_t verbose = 0)
      : name_(name),
        estimator_(std::move(estimator)),
        scoring_(std::move(scoring)),
        refit_(refit),
        exec_(std::move(exec)),
        verbose_(verbose) {}

  /// The verbose lines of one fit of the search; the clock starts here.
  [[nodiscard]] SearchProgress progress() const { return SearchProgress(name_, verbose_, exec_); }

  /// Stores the table and the best row; with refit, fits the best candidate on all of (X, y)
  /// (on every rank, each with the same rows, inside propagate_errors).
  template <class Y>
  void conclude(const MatrixRef<T>& X, const Y& y, CVResults results, index_t best,
                const SearchProgress& progress) {
    results_ = std::move(results);
    best_index_ = best;
    if (refit_) {
      Estimator model = estimator_;
      const ParamSet& params = results_.params[static_cast<std::size_t>(best)];
      apply_params(model, params);
      const double before = progress.log().elapsed();
      exec_.propagate_errors([&] { model.fit(X, y); });
      progress.refitted(params, X.rows(), progress.log().elapsed() - before);
      best_estimator_ = std::move(model);
    }
    fitted_ = true;
  }

  [[nodiscard]] std::string_view name() const noexcept { return name_; }
  [[nodiscard]] const std::string& scoring() const noexcept { return scoring_; }

 private:
  template <class Y>
  Derived& start(const MatrixRef<T>& X, const Y& y) {
    fitted_ = false;
    best_estimator_.reset();
    results_ = CVResults{};
    if constexpr (Exec::is_distributed) {
      // Ranks with other candidates or options would fit different models, or fall out of
      // step in the collectives of the fits: compare everything the search decides first.
      onelearn::detail::NamedValues values;
      static_cast<const Derived*>(this)->describe_search(values);
      using EstimatorParams = std::remove_cvref_t<decltype(estimator_.get_params())>;
      if constexpr (params::HasNames<EstimatorParams>) {
        values.add_params("estimator.", estimator_.get_params());
      }
      exec_.check_same_values(std::string(name_) + ".fit", values.values());
    }
    static_cast<Derived*>(this)->search(X, y);
    return static_cast<Derived&>(*this);
  }

  void check(std::string_view attribute) const {
    validation::check_fitted(std::string(name_) + "." + std::string(attribute), fitted_);
  }

  std::string_view name_;
  Estimator estimator_;
  std::string scoring_;
  bool refit_ = true;
  Exec exec_;
  std::int64_t verbose_ = 0;
  CVResults results_;
  std::optional<Estimator> best_estimator_;
  index_t best_index_ = 0;
  bool fitted_ = false;
};

}  // namespace detail

}  // namespace onelearn::model_selection
