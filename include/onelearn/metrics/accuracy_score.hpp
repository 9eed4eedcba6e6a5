#pragma once
/**
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

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"

namespace onelearn::metrics {

template <class Exec = exec::local>
double accuracy_score(const LabelsRef& y_true, const LabelsRef& y_pred, const Exec& exec = {}) {
  exec.propagate_errors([&] {
    validation::check_same_length("accuracy_score", "y_pred", y_true.size(), y_pred.size());
  });
  std::array<std::int64_t, 2> counts{
      static_cast<std::int64_t>(y_true.size()),
      static_cast<std::int64_t>((y_true.array() == y_pred.array()).count())};
  exec.allreduce(std::span(counts), exec::reduce_op::sum);
  if (counts[0] == 0) {
    throw invalid_argument("accuracy_score: expected at least 1 sample, found 0");
  }
  return static_cast<double>(counts[1]) / static_cast<double>(counts[0]);
}

}  // namespace onelearn::metrics
