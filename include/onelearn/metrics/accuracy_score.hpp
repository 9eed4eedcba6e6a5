#pragma once
/**
 * \file
 * \brief accuracy_score: the fraction of correctly predicted labels.
 * \ingroup metrics
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/metrics/accuracy_score.hpp>
 *
 * onelearn::Labels truth(4), predicted(4);
 * truth << 0, 1, 2, 2;
 * predicted << 0, 2, 2, 2;
 * double acc = onelearn::metrics::accuracy_score(truth, predicted);  // 0.75
 *
 * // Collective: each rank passes its own samples, every rank gets the global accuracy.
 * double global = onelearn::metrics::accuracy_score(my_truth, my_predicted,
 *                                                   onelearn::exec::mpi{comm});
 * \endcode
 *
 * metrics::accuracy_score: the fraction of samples whose predicted label equals the true one,
 * as scikit-learn's accuracy_score (normalize=True, no sample weights).
 *
 * \par Parameters
 * - `y_true`, `y_pred` (Labels, same length): true and predicted class labels.
 * - `exec` (default exec::local{}): with a distributed policy the counts are all-reduced, so
 *   the score is over the samples of every rank (all ranks must call it).
 *
 * \par Returns
 * The accuracy in [0, 1], as a double.
 *
 * Errors: shape_error when the lengths differ (on every rank under exec::mpi);
 * invalid_argument when there are no samples at all.
 */

#include "onelearn/base/score.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/exec/local.hpp"

namespace onelearn::metrics {

template <exec::ExecutionPolicy Exec = exec::local>
double accuracy_score(const LabelsRef& y_true, const LabelsRef& y_pred, const Exec& exec = {}) {
  return detail::collective_accuracy(y_true, y_pred, exec);
}

}  // namespace onelearn::metrics
