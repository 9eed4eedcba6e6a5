#pragma once
/**
 * \file
 * \brief MedianStoppingRule and ASHA: early stopping of poor trials.
 * \ingroup tuning
 *
 * \code
 * #include <onelearn/tune/schedulers.hpp>
 *
 * onelearn::tune::RunOptions options;
 * options.scheduler = onelearn::tune::MedianStoppingRule{.grace_period = 2, .min_samples_required = 3};
 * // or
 * options.scheduler = onelearn::tune::ASHA{.grace_period = 1, .reduction_factor = 3};
 * \endcode
 *
 * tune::MedianStoppingRule, tune::ASHA: early stopping of poor trials from the intermediate
 * scores their training functions report (Reporter::report). A scheduler decides at each report
 * from the trial's own reports and from the reports of the trials that came before it in the
 * search (the *history*: every trial of earlier batches, see RunOptions::batch_size). Deciding
 * only from finished batches, never from trials still running elsewhere, is what makes a search
 * give the same table on 1, 2 or 3 ranks. Scores are compared after the mode is applied (for
 * Mode::min the negated scores), so "better" below means larger for max, smaller for min.
 *
 * MedianStoppingRule (Golovin et al. 2017, Google Vizier; Ray Tune's MedianStoppingRule): at a
 * report at step s >= grace_period, the trial stops if its best score so far is strictly worse
 * than the median, over the completed (status ok) history trials that reported at a step <= s,
 * of their running means (the mean of their scores reported at steps <= s). Fewer than
 * `min_samples_required` such trials: it continues.
 *
 * ASHA (Li et al. 2020, asynchronous successive halving; Ray Tune's AsyncHyperBandScheduler with
 * one bracket): the rungs are at steps grace_period · reduction_factor^k, k = 0, 1, ... When a
 * report is the trial's first at or past a rung's step, its score is compared with the rung
 * scores of the history trials (each one's first score at or past that step); the trial stops
 * if it is strictly worse than their (1 - 1/reduction_factor) quantile (linear interpolation,
 * numpy's default), i.e. unless it is in the top 1/reduction_factor. No recorded rung scores:
 * it continues.
 *
 * \par Parameters
 * - MedianStoppingRule: `grace_period` (std::int64_t, default 1): no stopping before this
 *   step; `min_samples_required` (default 3): completed trials needed for a median.
 * - ASHA: `grace_period` (std::int64_t, default 1, >= 1): the first rung's step;
 *   `reduction_factor` (double, default 3, > 1): eta, the rung spacing and the kept fraction.
 *
 * \par Differences from Ray Tune
 * - Decisions use finished trials of earlier batches only (Ray's use whatever has been
 *   reported so far, which depends on timing), so they are reproducible.
 * - ASHA checks every rung a report newly reaches (Ray checks only the highest) and has no
 *   max_t: the training function decides how long a surviving trial runs.
 *
 * Errors (`validate`): `invalid_argument` for a negative grace_period (ASHA: < 1),
 * min_samples_required of 0 or reduction_factor <= 1 (or NaN).
 */

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/tune/results.hpp"
#include "onelearn/tune/trial.hpp"

namespace onelearn::tune {

struct MedianStoppingRule {
  std::int64_t grace_period = 1;          ///< no stopping before this step
  std::size_t min_samples_required = 3;   ///< completed history trials needed for a median
};

struct ASHA {
  std::int64_t grace_period = 1;   ///< step of the first rung, >= 1
  double reduction_factor = 3.0;   ///< eta: rungs at grace_period·eta^k; keeps the top 1/eta
};

/// No scheduler (std::monostate: every trial runs to its end), the median rule or ASHA.
using Scheduler = std::variant<std::monostate, MedianStoppingRule, ASHA>;

namespace detail {

inline double signed_score(double score, Mode mode) { return mode == Mode::max ? score : -score; }

/// numpy.quantile(values, q) with linear interpolation; values non-empty.
inline double quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return values[lo] + frac * (values[hi] - values[lo]);
}

inline bool median_rule_stops(const MedianStoppingRule& rule,
                              const std::vector<TrialResult>& history,
                              const std::vector<Report>& reports, Mode mode) {
  const std::int64_t step = reports.back().step;
  if (step < rule.grace_period) return false;
  double best = -std::numeric_limits<double>::infinity();
  for (const Report& r : reports) best = std::max(best, signed_score(r.score, mode));
  std::vector<double> means;
  for (const TrialResult& t : history) {
    if (t.status != Status::ok) continue;
    double sum = 0.0;
    std::size_t n = 0;
    for (const Report& r : t.reports) {
      if (r.step > step) break;
      sum += signed_score(r.score, mode);
      ++n;
    }
    if (n > 0) means.push_back(sum / static_cast<double>(n));
  }
  if (means.empty() || means.size() < rule.min_samples_required) return false;
  return best < quantile(std::move(means), 0.5);
}

inline bool asha_stops(const ASHA& asha, const std::vector<TrialResult>& history,
                       const std::vector<Report>& reports, Mode mode) {
  const auto step = static_cast<double>(reports.back().step);
  const double previous = reports.size() > 1 ? static_cast<double>(reports[reports.size() - 2].step)
                                             : -std::numeric_limits<double>::infinity();
  const double score = signed_score(reports.back().score, mode);
  for (double rung = static_cast<double>(asha.grace_period); rung <= step;
       rung *= asha.reduction_factor) {
    if (previous >= rung) continue;  // this rung was decided at an earlier report
    std::vector<double> recorded;
    for (const TrialResult& t : history) {
      for (const Report& r : t.reports) {
        if (static_cast<double>(r.step) >= rung) {
          recorded.push_back(signed_score(r.score, mode));
          break;
        }
      }
    }
    if (!recorded.empty() && score < quantile(std::move(recorded), 1.0 - 1.0 / asha.reduction_factor))
      return true;
  }
  return false;
}

}  // namespace detail

/// Whether `scheduler` stops a trial whose reports so far are `reports` (the last one just
/// made), given the finished trials `history`.
inline bool should_stop(const Scheduler& scheduler, const std::vector<TrialResult>& history,
                        const std::vector<Report>& reports, Mode mode) {
  if (reports.empty()) return false;
  if (const auto* rule = std::get_if<MedianStoppingRule>(&scheduler))
    return detail::median_rule_stops(*rule, history, reports, mode);
  if (const auto* asha = std::get_if<ASHA>(&scheduler))
    return detail::asha_stops(*asha, history, reports, mode);
  return false;
}

/// Throws invalid_argument, naming `where` and the parameter, for unusable settings.
inline void validate(std::string_view where, const Scheduler& scheduler) {
  const std::string at(where);
  if (const auto* rule = std::get_if<MedianStoppingRule>(&scheduler)) {
    if (rule->grace_period < 0) {
      throw invalid_argument(at + ": MedianStoppingRule.grace_period: expected >= 0, found " +
                             std::to_string(rule->grace_period));
    }
    if (rule->min_samples_required == 0) {
      throw invalid_argument(at + ": MedianStoppingRule.min_samples_required: expected >= 1, "
                                  "found 0");
    }
  } else if (const auto* asha = std::get_if<ASHA>(&scheduler)) {
    if (asha->grace_period < 1) {
      throw invalid_argument(at + ": ASHA.grace_period: expected >= 1, found " +
                             std::to_string(asha->grace_period));
    }
    if (!(asha->reduction_factor > 1.0) || !std::isfinite(asha->reduction_factor)) {
      throw invalid_argument(at + ": ASHA.reduction_factor: expected a finite value > 1, found " +
                             std::to_string(asha->reduction_factor));
    }
  }
}

}  // namespace onelearn::tune
