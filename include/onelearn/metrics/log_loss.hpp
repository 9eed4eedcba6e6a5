#pragma once
/**
 * \file
 * \brief log_loss: the cross-entropy of predicted probabilities.
 * \ingroup metrics
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/metrics/log_loss.hpp>
 *
 * // y_true: Labels; proba: n x k, column j the probability of the j-th smallest label
 * // (what predict_proba returns, in the order of classes()).
 * // T (here double) is given explicitly, as for every metric that takes T-valued input.
 * double loss = onelearn::metrics::log_loss<double>(y_true, proba);
 * double total = onelearn::metrics::log_loss<double>(y_true, proba, {.normalize = false});
 * double weighted = onelearn::metrics::log_loss<double>(y_true, proba, weights);
 * // Binary: one column, the probability of the larger label.
 * double binary = onelearn::metrics::log_loss<double>(y_true, p_positive_as_n_by_1);
 *
 * // Collective: each rank passes its own samples, every rank gets the global loss.
 * double global =
 *     onelearn::metrics::log_loss<double>(my_true, my_proba, {}, onelearn::exec::mpi{comm});
 * \endcode
 *
 * metrics::log_loss: the cross-entropy -1/n Σ_i log p_i,y_i, as scikit-learn's log_loss (1.2.1,
 * eps="auto"). Exactly as scikit-learn:
 * 1. the classes are the sorted distinct labels of y_true (over every rank), or `labels`;
 *    there must be at least two;
 * 2. every probability is clipped to [eps, 1 - eps], eps = std::numeric_limits<T>::epsilon()
 *    (np.finfo(y_pred.dtype).eps), in T;
 * 3. a one-column y_pred is the probability of the larger class: it becomes [1 - p, p] (after
 *    clipping, as scikit-learn does);
 * 4. y_pred must then have one column per class; each row is divided by its sum;
 * 5. the loss is the (weighted) mean over the samples of -log p_i,y_i, or the (weighted) sum
 *    with normalize = false.
 *
 * Method: classes all-gathered (distinct labels only, unless `labels` is given), then one
 * all-reduce of [Σ w_i loss_i, Σ w_i, n].
 *
 * \par Parameters
 * - `y_true` (Labels, n): the true labels.
 * - `y_pred` (Matrix<T>, n x k or n x 1): probabilities, columns in sorted-label order.
 * - `sample_weight` (Vector<T>, n, optional, non-negative).
 * - `options.normalize` (bool, default true): mean (true) or sum (false) of the losses.
 * - `options.labels` (vector of int64, default empty = the labels of y_true): the classes.
 * - `exec` (default exec::local{}): with a distributed policy the sums are all-reduced (all ranks
 *   must call it).
 *
 * \par Returns
 * The loss, as T (computed in double from the clipped T probabilities).
 *
 * \par Differences from scikit-learn
 * - No `eps` argument: always "auto", 1.2.1's default.
 * - With `labels`, a y_true label that is not one of them is an error (scikit-learn gives that
 *   sample a loss of 0 but still counts it in the mean).
 * - float: the clipping is in float, as scikit-learn's; the renormalisation and the logarithms
 *   are in double (scikit-learn's in float32), so float results agree to about 1e-7 relative.
 *
 * Errors: shape_error when y_pred's rows or the weights differ in length from y_true, or y_pred
 * has neither 1 column nor one per class; invalid_argument for NaN/Inf in y_pred, bad weights,
 * no samples at all, fewer than two classes, a total weight of 0 with normalize, and a y_true
 * label not in `labels`. Under exec::mpi every error is raised on every rank.
 */

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/metrics/detail/labels.hpp"

namespace onelearn::metrics {

/// Keyword arguments of log_loss (scikit-learn's names).
struct LogLossOptions {
  bool normalize = true;               ///< mean (true) or sum (false) of the per-sample losses
  std::vector<std::int64_t> labels{};  ///< the classes; empty: the distinct labels of y_true
};

namespace detail {

template <class T, exec::ExecutionPolicy Exec>
T log_loss_impl(const LabelsRef& y_true, const MatrixRef<T>& y_pred,
                const std::optional<VectorRef<T>>& weights, const LogLossOptions& options,
                const Exec& exec) {
  constexpr std::string_view where = "log_loss";
  exec.propagate_errors([&] {
    check_inputs<T>(where, y_true.size(), y_pred.rows(), weights);
    validation::check_finite(where, "y_pred", y_pred);
  });
  Labels classes;
  if (options.labels.empty()) {
    classes = global_classes(exec, y_true);
  } else {
    std::vector<std::int64_t> given = options.labels;
    sort_unique(given);
    classes = Eigen::Map<const Labels>(given.data(), static_cast<index_t>(given.size()));
  }
  const index_t k = classes.size();
  // Every rank holds the same classes, so the checks on k fail alike everywhere; the ones on
  // this rank's rows go through propagate_errors.
  if (k < 2) {
    if (k == 0) check_n_samples(where, 0);  // no labels anywhere: no samples
    throw invalid_argument(
        std::string(where) + ": expected at least 2 classes" +
        (options.labels.empty() ? " in y_true (pass the others in options.labels)" : " in labels") +
        ", found 1 (" + std::to_string(classes(0)) + ")");
  }
  std::vector<index_t> column(static_cast<std::size_t>(y_true.size()));
  exec.propagate_errors([&] {
    if (y_pred.cols() != k && y_pred.cols() != 1) {
      throw shape_error(std::string(where) + ": expected y_pred with " + std::to_string(k) +
                        " columns (one per class) or 1 (binary), found " +
                        std::to_string(y_pred.cols()));
    }
    if (y_pred.cols() == 1 && k != 2) {
      throw shape_error(std::string(where) + ": expected y_pred with " + std::to_string(k) +
                        " columns (one per class), found 1 (only for 2 classes)");
    }
    for (index_t i = 0; i < y_true.size(); ++i) {
      const index_t c = class_index(classes, y_true(i));
      if (c < 0) {
        throw invalid_argument(std::string(where) + ": expected the labels of y_true among " +
                               "labels, found " + std::to_string(y_true(i)) + " at row " +
                               std::to_string(i));
      }
      column[static_cast<std::size_t>(i)] = c;
    }
  });

  constexpr T eps = std::numeric_limits<T>::epsilon();
  std::array<double, 3> sums{0.0, 0.0, static_cast<double>(y_true.size())};
  for (index_t i = 0; i < y_true.size(); ++i) {
    const index_t c = column[static_cast<std::size_t>(i)];
    double p_c = 0, row_sum = 0;
    if (y_pred.cols() == 1) {
      const T p = std::clamp(y_pred(i, 0), eps, T(1) - eps);
      const T q = T(1) - p;  // after clipping, as scikit-learn
      row_sum = static_cast<double>(q) + static_cast<double>(p);
      p_c = static_cast<double>(c == 1 ? p : q);
    } else {
      for (index_t j = 0; j < k; ++j) {
        const double p = static_cast<double>(std::clamp(y_pred(i, j), eps, T(1) - eps));
        row_sum += p;
        if (j == c) p_c = p;
      }
    }
    const double w = weight_of(weights, i);
    sums[0] -= w * std::log(p_c / row_sum);
    sums[1] += w;
  }
  exec.allreduce(std::span(sums), exec::reduce_op::sum);
  check_n_samples(where, sums[2]);
  if (!options.normalize) return static_cast<T>(sums[0]);
  if (!(sums[1] > 0)) {
    throw invalid_argument(std::string(where) + ": expected a positive total sample_weight, " +
                           "found 0");
  }
  return static_cast<T>(sums[0] / sums[1]);
}

}  // namespace detail

template <class T, exec::ExecutionPolicy Exec = exec::local>
T log_loss(const LabelsRef& y_true, const MatrixRef<T>& y_pred, const LogLossOptions& options = {},
           const Exec& exec = {}) {
  return detail::log_loss_impl<T>(y_true, y_pred, std::nullopt, options, exec);
}

template <class T, exec::ExecutionPolicy Exec = exec::local>
T log_loss(const LabelsRef& y_true, const MatrixRef<T>& y_pred, const VectorRef<T>& sample_weight,
           const LogLossOptions& options = {}, const Exec& exec = {}) {
  return detail::log_loss_impl<T>(y_true, y_pred, sample_weight, options, exec);
}

}  // namespace onelearn::metrics
