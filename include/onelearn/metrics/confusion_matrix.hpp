#pragma once
/**
 * \file
 * \brief confusion_matrix: counts of true against predicted labels.
 * \ingroup metrics
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/metrics/confusion_matrix.hpp>
 *
 * onelearn::Labels truth(5), predicted(5);
 * truth << 2, 0, 2, 2, 1;
 * predicted << 0, 0, 2, 1, 1;
 * // Rows: true label, columns: predicted label, both in the order 0, 1, 2.
 * onelearn::Matrix<std::int64_t> cm = onelearn::metrics::confusion_matrix(truth, predicted);
 * // Only labels 2 and 0, in that order; samples with another label are left out.
 * onelearn::Labels labels(2);
 * labels << 2, 0;
 * auto some = onelearn::metrics::confusion_matrix(truth, predicted, labels);
 *
 * // Collective: each rank passes its own samples, every rank gets the global matrix.
 * auto global = onelearn::metrics::confusion_matrix(my_truth, my_predicted,
 *                                                   onelearn::exec::mpi{comm});
 * \endcode
 *
 * metrics::confusion_matrix: C(i, j) is the number of samples whose true label is labels[i] and
 * whose predicted label is labels[j], as scikit-learn's confusion_matrix (1.2.1, no weights,
 * normalize=None). Without `labels`, the labels are the sorted union of those in y_true and
 * y_pred (over every rank); with them, their order is kept and samples whose true or predicted
 * label is not among them are not counted.
 *
 * Method: the distinct labels of every rank are all-gathered (without `labels`), then one
 * all-reduce of the k x k counts (int64).
 *
 * \par Parameters
 * - `y_true`, `y_pred` (Labels, same length): true and predicted labels, any values.
 * - `labels` (Labels, optional): the rows' and columns' labels, in that order.
 * - `exec` (default exec::local{}): with a distributed policy the counts are all-reduced (all
 *   ranks must call it, with the same `labels`).
 *
 * \par Returns
 * Matrix<std::int64_t>, k x k (row-major), k the number of labels.
 *
 * \par Differences from scikit-learn
 * - No `sample_weight` and no `normalize`: the matrix is of counts, int64.
 *
 * Errors: shape_error when the lengths differ; invalid_argument when there are no samples at
 * all (over every rank), when `labels` is empty, or when none of `labels` occurs in y_true (as
 * scikit-learn). Under exec::mpi every error is raised on every rank.
 */

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/metrics/detail/labels.hpp"

namespace onelearn::metrics {

namespace detail {

template <exec::ExecutionPolicy Exec>
Matrix<std::int64_t> confusion_matrix_impl(const LabelsRef& y_true, const LabelsRef& y_pred,
                                           const std::optional<LabelsRef>& given,
                                           const Exec& exec) {
  constexpr std::string_view where = "confusion_matrix";
  exec.propagate_errors([&] {
    check_inputs<double>(where, y_true.size(), y_pred.size(), std::nullopt);
    if (given && given->size() == 0) {
      throw invalid_argument(std::string(where) + ": expected at least one label in labels, " +
                             "found none");
    }
  });
  const Labels classes = global_classes(exec, y_true, LabelsRef(y_pred));
  // The order of the rows and columns: `labels` as given, or the sorted classes.
  const Labels order = given ? Labels(*given) : classes;
  const index_t k = order.size();
  // Where each class goes in `order` (-1: not counted).
  std::vector<index_t> position(static_cast<std::size_t>(classes.size()), -1);
  // Forwards, so a repeated label counts at its last position (scikit-learn's dict does that).
  for (index_t j = 0; j < k; ++j) {
    const index_t c = class_index(classes, order(j));
    if (c >= 0) position[static_cast<std::size_t>(c)] = j;
  }
  // [n samples | samples whose true label is in `order` | counts (k x k)], over every rank.
  std::vector<std::int64_t> counts(static_cast<std::size_t>(2 + k * k), 0);
  counts[0] = y_true.size();
  std::int64_t* cells = counts.data() + 2;
  for (index_t i = 0; i < y_true.size(); ++i) {
    const index_t t = position[static_cast<std::size_t>(class_index(classes, y_true(i)))];
    const index_t p = position[static_cast<std::size_t>(class_index(classes, y_pred(i)))];
    if (t >= 0) ++counts[1];
    if (t >= 0 && p >= 0) ++cells[t * k + p];
  }
  exec.allreduce(std::span(counts), exec::reduce_op::sum);
  check_n_samples(where, static_cast<double>(counts[0]));
  if (given && counts[1] == 0) {
    throw invalid_argument(std::string(where) +
                           ": expected at least one of labels to occur in y_true, found none");
  }
  return Eigen::Map<const Matrix<std::int64_t>>(cells, k, k);
}

}  // namespace detail

template <exec::ExecutionPolicy Exec = exec::local>
Matrix<std::int64_t> confusion_matrix(const LabelsRef& y_true, const LabelsRef& y_pred,
                                      const Exec& exec = {}) {
  return detail::confusion_matrix_impl(y_true, y_pred, std::nullopt, exec);
}

template <exec::ExecutionPolicy Exec = exec::local>
Matrix<std::int64_t> confusion_matrix(const LabelsRef& y_true, const LabelsRef& y_pred,
                                      const LabelsRef& labels, const Exec& exec = {}) {
  return detail::confusion_matrix_impl(y_true, y_pred, LabelsRef(labels), exec);
}

}  // namespace onelearn::metrics
