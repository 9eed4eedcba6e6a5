#pragma once
/**
 * \file
 * \brief roc_auc_score: the area under the ROC curve of a binary problem.
 * \ingroup metrics
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/metrics/roc_auc_score.hpp>
 *
 * // y_true: two distinct labels (the larger one is positive); scores: higher means more
 * // positive, e.g. the last column of predict_proba.
 * double auc = onelearn::metrics::roc_auc_score<double>(y_true, scores);
 * double weighted = onelearn::metrics::roc_auc_score<double>(y_true, scores, weights);
 * \endcode
 *
 * metrics::roc_auc_score: the area under the ROC curve of a binary problem, as scikit-learn's
 * roc_auc_score (1.2.1) with its defaults (average="macro" is moot for binary, max_fpr=None):
 * the samples are sorted by decreasing score; at each distinct score (threshold) the cumulative
 * (weighted) true and false positives give a point (fpr, tpr); intermediate collinear points are
 * dropped and (0, 0) prepended, as roc_curve(drop_intermediate=True) does; the area is the
 * trapezoid rule over those points. Tied scores therefore form one step, a diagonal segment,
 * which counts each positive-negative tie as half a correctly ordered pair (the Mann-Whitney U
 * statistic), exactly as scikit-learn.
 *
 * The positive class is the larger of the two labels of y_true (scikit-learn's
 * label_binarize(y_true, classes=np.unique(y_true))).
 *
 * \par Parameters
 * - `y_true` (Labels, n): exactly two distinct values.
 * - `y_score` (Vector<T>, n): the scores, finite.
 * - `sample_weight` (Vector<T>, n, optional, non-negative).
 *
 * \par Returns
 * The area in [0, 1], as T (computed in double).
 *
 * \par Differences from scikit-learn
 * - Binary only: no multiclass ("ovr"/"ovo") or multilabel, no max_fpr.
 * - Local only: there is no distributed form (the sort is global). Gather the scores first.
 * - A class whose samples all have weight 0 is an error (scikit-learn warns and returns NaN).
 *
 * Errors: shape_error when y_score or sample_weight differ in length from y_true;
 * invalid_argument for no samples, y_true with one class only or with more than two, NaN/Inf
 * scores, bad weights, and a class of zero total weight.
 */

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/metrics/detail/labels.hpp"

namespace onelearn::metrics {

namespace detail {

template <class T>
T roc_auc_score_impl(const LabelsRef& y_true, const VectorRef<T>& y_score,
                     const std::optional<VectorRef<T>>& weights) {
  constexpr std::string_view where = "roc_auc_score";
  validation::check_same_length(where, "y_score", y_true.size(), y_score.size());
  check_inputs<T>(where, y_true.size(), y_score.size(), weights);
  validation::check_finite(where, "y_score", y_score);
  check_n_samples(where, static_cast<double>(y_true.size()));
  const Labels classes = global_classes(exec::local{}, y_true);
  if (classes.size() != 2) {
    throw invalid_argument(std::string(where) + ": expected exactly 2 classes in y_true, found " +
                           std::to_string(classes.size()) +
                           (classes.size() == 1 ? " (" + std::to_string(classes(0)) +
                                                      "); ROC AUC is not defined with one class"
                                                : "; multiclass ROC AUC is not supported"));
  }
  const std::int64_t positive = classes(1);

  // Decreasing score; ties are grouped below, so their order does not matter.
  std::vector<index_t> order(static_cast<std::size_t>(y_true.size()));
  std::iota(order.begin(), order.end(), index_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](index_t a, index_t b) { return y_score(a) > y_score(b); });

  // One (fps, tps) point per distinct score, at the last sample with that score.
  std::vector<double> fps, tps;
  double tp = 0, fp = 0;
  for (std::size_t r = 0; r < order.size(); ++r) {
    const index_t i = order[r];
    const double w = weight_of(weights, i);
    (y_true(i) == positive ? tp : fp) += w;
    if (r + 1 == order.size() || y_score(order[r + 1]) != y_score(i)) {
      fps.push_back(fp);
      tps.push_back(tp);
    }
  }
  if (!(fp > 0) || !(tp > 0)) {
    throw invalid_argument(std::string(where) + ": expected a positive total sample_weight in " +
                           "both classes, found 0 for class " +
                           std::to_string(tp > 0 ? classes(0) : classes(1)));
  }
  // roc_curve(drop_intermediate=True): keep the ends and every point where either curve bends;
  // then prepend (0, 0).
  std::vector<double> fpr{0.0}, tpr{0.0};
  for (std::size_t j = 0; j < fps.size(); ++j) {
    const bool end = j == 0 || j + 1 == fps.size();
    // The second differences as np.diff(x, 2) rounds them.
    if (end || (fps[j + 1] - fps[j]) - (fps[j] - fps[j - 1]) != 0 ||
        (tps[j + 1] - tps[j]) - (tps[j] - tps[j - 1]) != 0) {
      fpr.push_back(fps[j] / fp);
      tpr.push_back(tps[j] / tp);
    }
  }
  double area = 0;  // np.trapz(tpr, fpr)
  for (std::size_t j = 1; j < fpr.size(); ++j) {
    area += (fpr[j] - fpr[j - 1]) * (tpr[j] + tpr[j - 1]) / 2.0;
  }
  return static_cast<T>(area);
}

}  // namespace detail

template <class T>
T roc_auc_score(const LabelsRef& y_true, const VectorRef<T>& y_score) {
  return detail::roc_auc_score_impl<T>(y_true, y_score, std::nullopt);
}

template <class T>
T roc_auc_score(const LabelsRef& y_true, const VectorRef<T>& y_score,
                const VectorRef<T>& sample_weight) {
  return detail::roc_auc_score_impl<T>(y_true, y_score, sample_weight);
}

}  // namespace onelearn::metrics
