#pragma once
/**
 * \file
 * \brief r2_score: the coefficient of determination.
 * \ingroup metrics
 *
 * \code
 * #include <onelearn/metrics/r2_score.hpp>
 *
 * double r2 = onelearn::metrics::r2_score<double>(y_true, y_pred);
 *
 * // Collective: each rank passes its own samples, every rank gets the global score.
 * double global = onelearn::metrics::r2_score<double>(my_true, my_pred, onelearn::exec::mpi{comm});
 * \endcode
 *
 * metrics::r2_score: the coefficient of determination 1 - SS_res / SS_tot, as scikit-learn's
 * r2_score (one output, no sample weights, force_finite=True).
 *
 * Method: two all-reduces in double, the count and sum (the mean) and then the two sums of
 * squares about it (two passes: one-pass sums of squares cancel badly for a large mean).
 *
 * \par Parameters
 * - `y_true`, `y_pred` (Vector<T>, same length), finite.
 * - `exec` (default exec::local{}): with a distributed policy the sums are all-reduced (all ranks
 *   must call it).
 *
 * \par Returns
 * The score, as T: 1 for a perfect prediction; a constant y_true scores 1 when predicted exactly
 * and 0 otherwise (scikit-learn's force_finite=True).
 *
 * Errors: shape_error when the lengths differ; invalid_argument for NaN/Inf and fewer than 2
 * samples in all. Under exec::mpi every error is raised on every rank.
 */

#include <array>
#include <span>

#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/local.hpp"

namespace onelearn::metrics {

/// 1 - SS_res / SS_tot. Like scikit-learn (force_finite=True), a constant y_true scores 1 when
/// predicted exactly and 0 otherwise. The mean is taken first (two passes), because the
/// one-pass sum of squares cancels badly when the targets have a large mean.
template <class T, exec::ExecutionPolicy Exec = exec::local>
T r2_score(const VectorRef<T>& y_true, const VectorRef<T>& y_pred, const Exec& exec = {}) {
  exec.propagate_errors([&] {
    validation::check_same_length("r2_score", "y_pred", y_true.size(), y_pred.size());
    validation::check_finite("r2_score", "y_true", y_true);
    validation::check_finite("r2_score", "y_pred", y_pred);
  });
  std::array<double, 2> count_sum{static_cast<double>(y_true.size()),
                                  y_true.template cast<double>().sum()};
  exec.allreduce(std::span(count_sum), exec::reduce_op::sum);
  if (count_sum[0] < 2) {
    throw invalid_argument("r2_score: expected at least 2 samples, found " +
                           std::to_string(static_cast<long long>(count_sum[0])));
  }
  const double mean = count_sum[1] / count_sum[0];
  const auto truth = y_true.template cast<double>().array();
  std::array<double, 2> squares{(truth - y_pred.template cast<double>().array()).square().sum(),
                                (truth - mean).square().sum()};
  exec.allreduce(std::span(squares), exec::reduce_op::sum);
  const auto [ss_res, ss_tot] = squares;
  if (ss_tot == 0) return ss_res == 0 ? T(1) : T(0);
  return static_cast<T>(1.0 - ss_res / ss_tot);
}

}  // namespace onelearn::metrics
