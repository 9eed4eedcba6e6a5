#pragma once
/**
 * \file
 * \brief precision_score, recall_score, f1_score, fbeta_score and precision_recall_fscore.
 * \ingroup metrics
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/metrics/precision_recall_f1.hpp>
 *
 * namespace metrics = onelearn::metrics;
 * double p = metrics::precision_score(y_true, y_pred);                  // binary, pos_label 1
 * double r = metrics::recall_score(y_true, y_pred, {.pos_label = -1});  // binary, class -1
 * double f = metrics::f1_score(y_true, y_pred, {.average = "macro"});
 * double f2 = metrics::fbeta_score(y_true, y_pred, 2.0, {.average = "weighted"});
 * double fw = metrics::f1_score<double>(y_true, y_pred, weights, {.average = "micro"});
 * auto all = metrics::precision_recall_fscore(y_true, y_pred, 1.0, {.average = "macro"});
 *
 * // Collective: each rank passes its own samples, every rank gets the global score.
 * double global = metrics::f1_score(my_true, my_pred, {.average = "macro"},
 *                                   onelearn::exec::mpi{comm});
 * \endcode
 *
 * metrics::precision_score, recall_score, f1_score, fbeta_score and precision_recall_fscore:
 * as scikit-learn's (1.2.1) functions of the same names for single-label classification.
 * For each class c, with tp_c the (weighted) number of samples of class c predicted as c,
 *
 *     precision_c = tp_c / #predicted c      recall_c = tp_c / #true c
 *     F_beta,c    = (1 + beta²) precision_c recall_c / (beta² precision_c + recall_c)
 *
 * and `average` combines the classes: "binary" reports the class `pos_label` only; "micro"
 * sums tp and the counts over the classes first (so micro precision = micro recall = accuracy);
 * "macro" is the unweighted mean over the classes; "weighted" the mean weighted by \#true c.
 * The classes are the sorted union of the labels in y_true and y_pred (over every rank).
 *
 * Zero division: a ratio whose denominator is 0 (a class never predicted, never true) is 0, and
 * so is an F-score whose precision and recall are both 0: scikit-learn's default
 * zero_division="warn", without the warning (onelearn has no warning channel). With "weighted"
 * and no true samples of any class, all three are 0 (recall and F too), as in scikit-learn.
 *
 * Method: the labels each rank holds are all-gathered (distinct values only), then one
 * all-reduce of 3 doubles per class plus the number of samples.
 *
 * \par Parameters
 * - `y_true`, `y_pred` (Labels, same length): true and predicted labels, any values.
 * - `sample_weight` (Vector<T>, optional, non-negative): weights of the samples; the overloads
 *   that take it are templated on T (write `f1_score<double>(...)`).
 * - `beta` (double >= 0, fbeta_score and precision_recall_fscore): weight of recall in the
 *   F-score; +infinity gives the recall.
 * - `options.average` (string, default "binary"): "binary", "micro", "macro" or "weighted".
 * - `options.pos_label` (int64, default 1): the class reported by "binary"; ignored otherwise.
 * - `exec` (default exec::local{}): with a distributed policy, each rank passes its own samples
 *   and every rank gets the score over all of them (all ranks must call it).
 *
 * \par Returns
 * A double in [0, 1] (precision_recall_fscore: the three of them).
 *
 * \par Differences from scikit-learn
 * - No `labels` argument, no average=None (per-class arrays) or "samples" (multilabel), no
 *   zero_division=1.0; these are single-label metrics only.
 * - No warnings on zero division (see above).
 *
 * Errors: shape_error when y_pred or sample_weight differ in length from y_true;
 * invalid_argument for negative or non-finite weights, no samples at all (over every rank), an
 * unknown `average`, beta < 0 or NaN, average="binary" with more than two distinct labels, or a
 * pos_label that is not one of two labels present. Under exec::mpi every error is raised on
 * every rank.
 */

#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/metrics/detail/labels.hpp"

namespace onelearn::metrics {

/// Keyword arguments of the precision, recall and F-score functions (scikit-learn's names).
struct PrecisionRecallOptions {
  std::string average = "binary";  ///< "binary", "micro", "macro" or "weighted"
  std::int64_t pos_label = 1;      ///< the class "binary" reports
};

/// What precision_recall_fscore returns.
struct PrecisionRecallFScore {
  double precision = 0;
  double recall = 0;
  double fscore = 0;
};

namespace detail {

/// numerator / denominator, or 0 when the denominator is 0 (scikit-learn's zero_division="warn").
inline double prf_divide(double numerator, double denominator) {
  return denominator == 0 ? 0.0 : numerator / denominator;
}

/// F_beta from precision and recall, written as scikit-learn writes it (same rounding).
inline double fbeta_from(double precision, double recall, double beta) {
  if (std::isinf(beta)) return recall;
  const double beta2 = beta * beta;
  double denominator = beta2 * precision + recall;
  if (denominator == 0.0) denominator = 1;
  return (1 + beta2) * precision * recall / denominator;
}

template <class T, exec::ExecutionPolicy Exec>
PrecisionRecallFScore precision_recall_fscore_impl(std::string_view where, const LabelsRef& y_true,
                                                   const LabelsRef& y_pred,
                                                   const std::optional<VectorRef<T>>& weights,
                                                   double beta,
                                                   const PrecisionRecallOptions& options,
                                                   const Exec& exec) {
  const std::string& average = options.average;
  exec.propagate_errors([&] {
    if (average != "binary" && average != "micro" && average != "macro" && average != "weighted") {
      throw invalid_argument(std::string(where) +
                             ": expected average to be one of \"binary\", \"micro\", \"macro\", "
                             "\"weighted\", found \"" +
                             average + "\"");
    }
    if (!(beta >= 0)) {
      std::ostringstream found;
      found << beta;
      throw invalid_argument(std::string(where) + ": expected beta >= 0, found " + found.str());
    }
    check_inputs<T>(where, y_true.size(), y_pred.size(), weights);
  });

  const Labels classes = global_classes(exec, y_true, LabelsRef(y_pred));
  const index_t k = classes.size();
  // [n samples | tp (k) | #predicted (k) | #true (k)], weighted, summed over every rank.
  std::vector<double> counts(static_cast<std::size_t>(1 + 3 * k), 0.0);
  counts[0] = static_cast<double>(y_true.size());
  double* tp = counts.data() + 1;
  double* predicted = tp + k;
  double* truth = predicted + k;
  for (index_t i = 0; i < y_true.size(); ++i) {
    const double w = weight_of(weights, i);
    const index_t t = class_index(classes, y_true(i));
    const index_t p = class_index(classes, y_pred(i));
    truth[t] += w;
    predicted[p] += w;
    if (t == p) tp[t] += w;
  }
  exec.allreduce(std::span(counts), exec::reduce_op::sum);
  // From here on every rank holds the same numbers, so errors are raised on every rank alike.
  check_n_samples(where, counts[0]);

  if (average == "binary") {
    if (k > 2) {
      throw invalid_argument(
          std::string(where) +
          ": expected at most 2 distinct labels with average=\"binary\", found " +
          std::to_string(k) + "; choose average \"micro\", \"macro\" or \"weighted\"");
    }
    const index_t c = class_index(classes, options.pos_label);
    if (c < 0 && k == 2) {
      throw invalid_argument(std::string(where) + ": expected pos_label to be one of the labels " +
                             std::to_string(classes(0)) + ", " + std::to_string(classes(1)) +
                             ", found " + std::to_string(options.pos_label));
    }
    // A pos_label absent from a one-label problem has no true, no predicted samples: all 0.
    const double tp_c = c < 0 ? 0.0 : tp[c];
    const double precision = prf_divide(tp_c, c < 0 ? 0.0 : predicted[c]);
    const double recall = prf_divide(tp_c, c < 0 ? 0.0 : truth[c]);
    return {precision, recall, fbeta_from(precision, recall, beta)};
  }
  if (average == "micro") {
    double tp_sum = 0, predicted_sum = 0, true_sum = 0;
    for (index_t c = 0; c < k; ++c) {
      tp_sum += tp[c];
      predicted_sum += predicted[c];
      true_sum += truth[c];
    }
    const double precision = prf_divide(tp_sum, predicted_sum);
    const double recall = prf_divide(tp_sum, true_sum);
    return {precision, recall, fbeta_from(precision, recall, beta)};
  }
  // "macro" and "weighted": per-class scores, then their (weighted) mean.
  const bool weighted = average == "weighted";
  double total_weight = 0;
  PrecisionRecallFScore sums;
  for (index_t c = 0; c < k; ++c) {
    const double precision = prf_divide(tp[c], predicted[c]);
    const double recall = prf_divide(tp[c], truth[c]);
    const double w = weighted ? truth[c] : 1.0;
    sums.precision += w * precision;
    sums.recall += w * recall;
    sums.fscore += w * fbeta_from(precision, recall, beta);
    total_weight += w;
  }
  // "weighted" with no true samples of any class (all weights 0): scikit-learn returns the
  // zero_division value, 0.
  if (total_weight == 0) return {};
  return {sums.precision / total_weight, sums.recall / total_weight, sums.fscore / total_weight};
}

}  // namespace detail

/// Precision, recall and F_beta together (scikit-learn's precision_recall_fscore_support with an
/// average, without the support).
template <exec::ExecutionPolicy Exec = exec::local>
PrecisionRecallFScore precision_recall_fscore(const LabelsRef& y_true, const LabelsRef& y_pred,
                                              double beta = 1.0,
                                              const PrecisionRecallOptions& options = {},
                                              const Exec& exec = {}) {
  return detail::precision_recall_fscore_impl<double>("precision_recall_fscore", y_true, y_pred,
                                                      std::nullopt, beta, options, exec);
}

template <class T, exec::ExecutionPolicy Exec = exec::local>
PrecisionRecallFScore precision_recall_fscore(const LabelsRef& y_true, const LabelsRef& y_pred,
                                              const VectorRef<T>& sample_weight, double beta = 1.0,
                                              const PrecisionRecallOptions& options = {},
                                              const Exec& exec = {}) {
  return detail::precision_recall_fscore_impl<T>("precision_recall_fscore", y_true, y_pred,
                                                 sample_weight, beta, options, exec);
}

/// tp / \#predicted: of the samples predicted as a class, the share that is of that class.
template <exec::ExecutionPolicy Exec = exec::local>
double precision_score(const LabelsRef& y_true, const LabelsRef& y_pred,
                       const PrecisionRecallOptions& options = {}, const Exec& exec = {}) {
  return detail::precision_recall_fscore_impl<double>("precision_score", y_true, y_pred,
                                                      std::nullopt, 1.0, options, exec)
      .precision;
}

template <class T, exec::ExecutionPolicy Exec = exec::local>
double precision_score(const LabelsRef& y_true, const LabelsRef& y_pred,
                       const VectorRef<T>& sample_weight,
                       const PrecisionRecallOptions& options = {}, const Exec& exec = {}) {
  return detail::precision_recall_fscore_impl<T>("precision_score", y_true, y_pred, sample_weight,
                                                 1.0, options, exec)
      .precision;
}

/// tp / \#true: of the samples of a class, the share predicted as that class.
template <exec::ExecutionPolicy Exec = exec::local>
double recall_score(const LabelsRef& y_true, const LabelsRef& y_pred,
                    const PrecisionRecallOptions& options = {}, const Exec& exec = {}) {
  return detail::precision_recall_fscore_impl<double>("recall_score", y_true, y_pred, std::nullopt,
                                                      1.0, options, exec)
      .recall;
}

template <class T, exec::ExecutionPolicy Exec = exec::local>
double recall_score(const LabelsRef& y_true, const LabelsRef& y_pred,
                    const VectorRef<T>& sample_weight, const PrecisionRecallOptions& options = {},
                    const Exec& exec = {}) {
  return detail::precision_recall_fscore_impl<T>("recall_score", y_true, y_pred, sample_weight, 1.0,
                                                 options, exec)
      .recall;
}

/// The harmonic mean of precision and recall (F_beta with beta = 1).
template <exec::ExecutionPolicy Exec = exec::local>
double f1_score(const LabelsRef& y_true, const LabelsRef& y_pred,
                const PrecisionRecallOptions& options = {}, const Exec& exec = {}) {
  return detail::precision_recall_fscore_impl<double>("f1_score", y_true, y_pred, std::nullopt, 1.0,
                                                      options, exec)
      .fscore;
}

template <class T, exec::ExecutionPolicy Exec = exec::local>
double f1_score(const LabelsRef& y_true, const LabelsRef& y_pred, const VectorRef<T>& sample_weight,
                const PrecisionRecallOptions& options = {}, const Exec& exec = {}) {
  return detail::precision_recall_fscore_impl<T>("f1_score", y_true, y_pred, sample_weight, 1.0,
                                                 options, exec)
      .fscore;
}

/// (1 + beta²) P R / (beta² P + R): recall counts beta times as much as precision.
template <exec::ExecutionPolicy Exec = exec::local>
double fbeta_score(const LabelsRef& y_true, const LabelsRef& y_pred, double beta,
                   const PrecisionRecallOptions& options = {}, const Exec& exec = {}) {
  return detail::precision_recall_fscore_impl<double>("fbeta_score", y_true, y_pred, std::nullopt,
                                                      beta, options, exec)
      .fscore;
}

template <class T, exec::ExecutionPolicy Exec = exec::local>
double fbeta_score(const LabelsRef& y_true, const LabelsRef& y_pred,
                   const VectorRef<T>& sample_weight, double beta,
                   const PrecisionRecallOptions& options = {}, const Exec& exec = {}) {
  return detail::precision_recall_fscore_impl<T>("fbeta_score", y_true, y_pred, sample_weight, beta,
                                                 options, exec)
      .fscore;
}

}  // namespace onelearn::metrics
