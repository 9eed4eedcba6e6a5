#pragma once
/**
 * \class onelearn::preprocessing::SimpleImputer
 * \brief Replaces missing values with a per-column statistic, as scikit-learn's SimpleImputer.
 * \ingroup estimators
 *
 * \code
 * #include <onelearn/preprocessing/simple_imputer.hpp>
 *
 * constexpr double missing = std::numeric_limits<double>::quiet_NaN();
 * onelearn::Matrix<double> X(3, 2);
 * X << 1, missing,
 *      missing, 4,
 *      3, 8;
 * onelearn::preprocessing::SimpleImputer<double> imputer({.strategy = "median"});
 * onelearn::Matrix<double> filled = imputer.fit_transform(X);  // NaN -> 2 in column 0, 6 in 1
 * const auto& statistics = imputer.statistics();             // {2, 6}
 *
 * // Data-parallel: each rank passes its own rows (possibly none); every rank ends with the
 * // statistics of all rows, exactly (the median too).
 * onelearn::exec::mpi policy{comm};  // the application's communicator
 * onelearn::preprocessing::SimpleImputer<double, onelearn::exec::mpi> dist({}, policy);
 * dist.fit(my_X);
 * \endcode
 *
 * preprocessing::SimpleImputer: replaces missing values (NaN) with a per-column statistic of the
 * values that are present, as scikit-learn's SimpleImputer (1.2.1) with missing_values=np.nan:
 * - "mean": the mean of the column's present values;
 * - "median": their median (the mean of the two middle values for an even count);
 * - "most_frequent": their most frequent value, the smallest one on ties;
 * - "constant": fill_value, for every column.
 *
 * A column with no present value in fit (all NaN) has no statistic under "mean", "median" and
 * "most_frequent". As in scikit-learn, it is then dropped from transform's output (statistics()
 * holds NaN for it) unless keep_empty_features is true, in which case it is kept and filled with
 * 0. Under "constant" every column is kept. So transform may return fewer columns than
 * n_features_in(); n_features_out() says how many.
 *
 * Method (all exact, whatever the split of the rows): one all-reduce of the per-column counts
 * and sums of present values (and the row count) gives the means. "median" then bisects on the
 * value's bit pattern with all ranks together: at most 64 all-reduces of 2p counts, each rank
 * having sorted its columns once; no rows move (see detail/exact_median.hpp). "most_frequent"
 * all-gathers each rank's distinct values with their counts (traffic: the number of distinct
 * values). Sums are accumulated in double.
 *
 * \par Parameters (SimpleImputerParams)
 * - `strategy` (string, default "mean"): "mean", "median", "most_frequent" or "constant".
 * - `fill_value` (double, default 0): the value for "constant"; finite.
 * - `keep_empty_features` (bool, default false): keep all-missing columns, filled with 0.
 *
 * \par Attributes (after fit)
 * - `statistics()` (Vector<T>, n_features_in): the fill value of each column; NaN for a column
 *   that is dropped.
 * - `n_features_in()`, `n_features_out()`.
 *
 * \par Differences from scikit-learn
 * - The missing value is always NaN (no `missing_values` parameter); no `add_indicator`, no
 *   `copy`, no sparse input, no inverse_transform. scikit-learn warns when it drops a column;
 *   here the drop is only visible in n_features_out() and statistics().
 * - float input: means are accumulated in double (scikit-learn sums in float32), so they may
 *   differ from scikit-learn's in the last bits.
 * - fill_value must be finite (scikit-learn accepts anything).
 *
 * Errors: `not_fitted_error` before fit; `shape_error` for X with other features than in fit or
 * ranks that disagree on the number of features; `invalid_argument` for +-inf in X (NaN is the
 * missing value and is allowed), no samples, an unknown strategy and a fill_value that is not
 * finite. Under exec::mpi every error in fit is raised on every rank.
 */

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/base/agreement.hpp"
#include "onelearn/core/detail/huge_pages.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/preprocessing/detail/checks.hpp"
#include "onelearn/preprocessing/detail/exact_median.hpp"
#include "onelearn/preprocessing/detail/value_counts.hpp"

namespace onelearn::preprocessing {

struct SimpleImputerParams {
  std::string strategy = "mean";     ///< "mean", "median", "most_frequent" or "constant"
  double fill_value = 0;             ///< the value used by "constant"
  bool keep_empty_features = false;  ///< keep all-missing columns (filled with 0)

  static constexpr std::array<std::string_view, 3> names{"strategy", "fill_value",
                                                         "keep_empty_features"};
};

template <class T, exec::ExecutionPolicy Exec = exec::local>
class SimpleImputer : public WithParams<SimpleImputer<T, Exec>, SimpleImputerParams> {
 public:
  using value_type = T;
  using Params = SimpleImputerParams;

  explicit SimpleImputer(const Params& params = {}, Exec exec = {})
      : WithParams<SimpleImputer, Params>(params), exec_(std::move(exec)) {}

  SimpleImputer& fit(const MatrixRef<T>& X) {
    constexpr std::string_view where = "SimpleImputer.fit";
    onelearn::detail::check_same_params(where, this->exec_, this->params_);
    fitted_ = false;
    const Params params = this->params_;
    detail::check_fit_input<T>(
        where, exec_, X,
        [&] {
          detail::check_choice(where, "strategy", params.strategy,
                               {"mean", "median", "most_frequent", "constant"});
          if (!std::isfinite(params.fill_value)) {
            std::ostringstream found;
            found << params.fill_value;
            throw invalid_argument(std::string(where) + ": expected a finite fill_value, found " +
                                   found.str());
          }
        },
        /*allow_nan=*/true);

    // [present values per column (p) | their sums (p) | rows]: one all-reduce.
    const index_t p = X.cols();
    Vector<double> totals = Vector<double>::Zero(2 * p + 1);
    for (index_t i = 0; i < X.rows(); ++i) {
      for (index_t j = 0; j < p; ++j) {
        const auto x = static_cast<double>(X(i, j));
        if (std::isnan(x)) continue;
        totals(j) += 1;
        totals(p + j) += x;
      }
    }
    totals(2 * p) = static_cast<double>(X.rows());
    exec_.allreduce(std::span(totals.data(), static_cast<std::size_t>(totals.size())),
                    exec::reduce_op::sum);
    detail::check_has_samples(where, static_cast<std::int64_t>(totals(2 * p)), p);
    const Vector<double> counts = totals.head(p);

    Vector<double> statistics(p);
    if (params.strategy == "mean") {
      statistics = totals.segment(p, p).cwiseQuotient(counts);  // 0 / 0 = NaN when empty
    } else if (params.strategy == "median") {
      statistics = detail::exact_medians<T>(exec_, X, counts);
    } else if (params.strategy == "most_frequent") {
      const auto merged = detail::allgather_value_counts(exec_, detail::local_value_counts<T>(X));
      for (index_t j = 0; j < p; ++j) {
        const auto& column = merged[static_cast<std::size_t>(j)];
        double best = std::numeric_limits<double>::quiet_NaN();
        std::int64_t best_count = 0;
        for (std::size_t k = 0; k < column.values.size();
             ++k) {  // ascending: ties keep the smaller
          if (column.counts[k] > best_count) {
            best = column.values[k];
            best_count = column.counts[k];
          }
        }
        statistics(j) = best;
      }
    } else {
      statistics.setConstant(params.fill_value);
    }
    if (params.strategy != "constant") {
      for (index_t j = 0; j < p; ++j) {
        if (counts(j) == 0) {
          statistics(j) =
              params.keep_empty_features ? 0.0 : std::numeric_limits<double>::quiet_NaN();
        }
      }
    }

    statistics_ = statistics.template cast<T>();
    kept_.clear();
    for (index_t j = 0; j < p; ++j) {
      if (!std::isnan(statistics(j))) kept_.push_back(j);
    }
    n_features_ = p;
    fitted_ = true;
    return *this;
  }

  /// X with each NaN replaced by its column's statistic, without the dropped (all-missing in
  /// fit) columns: n x n_features_out().
  [[nodiscard]] Matrix<T> transform(const MatrixRef<T>& X) const {
    detail::check_transform_input<T>("SimpleImputer.transform", fitted_, n_features_, X,
                                     /*allow_nan=*/true);
    Matrix<T> out =
        onelearn::detail::uninitialized_matrix<T>(X.rows(), static_cast<index_t>(kept_.size()));
    for (index_t i = 0; i < X.rows(); ++i) {
      for (std::size_t k = 0; k < kept_.size(); ++k) {
        const T x = X(i, kept_[k]);
        out(i, static_cast<index_t>(k)) = std::isnan(x) ? statistics_(kept_[k]) : x;
      }
    }
    return out;
  }

  Matrix<T> fit_transform(const MatrixRef<T>& X) { return fit(X).transform(X); }

  /// The value each column's NaN are replaced with (scikit-learn's statistics_); NaN for a
  /// column transform drops.
  [[nodiscard]] const Vector<T>& statistics() const {
    return validation::fitted_attribute("SimpleImputer.statistics", fitted_, statistics_);
  }
  [[nodiscard]] index_t n_features_in() const {
    return validation::fitted_attribute("SimpleImputer.n_features_in", fitted_, n_features_);
  }
  /// Columns of transform's output: n_features_in() minus the dropped all-missing columns.
  [[nodiscard]] index_t n_features_out() const {
    validation::check_fitted("SimpleImputer.n_features_out", fitted_);
    return static_cast<index_t>(kept_.size());
  }
  [[nodiscard]] bool is_fitted() const noexcept { return fitted_; }
  [[nodiscard]] const Exec& execution_policy() const noexcept { return exec_; }

 private:
  Exec exec_;
  Vector<T> statistics_;
  std::vector<index_t> kept_;  // the input columns transform outputs, in order
  index_t n_features_ = 0;
  bool fitted_ = false;
};

}  // namespace onelearn::preprocessing
