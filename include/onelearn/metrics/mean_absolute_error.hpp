#pragma once
/**
 * \file
 * \brief mean_absolute_error: the mean of the absolute errors.
 * \ingroup metrics
 *
 * \code
 * #include <onelearn/metrics/mean_absolute_error.hpp>
 *
 * double mae = onelearn::metrics::mean_absolute_error<double>(y_true, y_pred);
 * double weighted = onelearn::metrics::mean_absolute_error<double>(y_true, y_pred, weights);
 *
 * // Collective: each rank passes its own samples, every rank gets the global error.
 * double global = onelearn::metrics::mean_absolute_error<double>(my_true, my_pred,
 *                                                                onelearn::exec::mpi{comm});
 * \endcode
 *
 * metrics::mean_absolute_error: Σ_i w_i |y_i - ŷ_i| / Σ_i w_i (w_i = 1 without weights), as
 * scikit-learn's mean_absolute_error (1.2.1, one output).
 *
 * Method: one all-reduce of [Σ w |y - ŷ|, Σ w, n], accumulated in double.
 *
 * \par Parameters
 * - `y_true`, `y_pred` (Vector<T>, same length), finite.
 * - `sample_weight` (Vector<T>, optional, non-negative).
 * - `exec` (default exec::local{}): with a distributed policy the sums are all-reduced (all ranks
 *   must call it).
 *
 * \par Returns
 * The error, as T.
 *
 * \par Differences from scikit-learn
 * - One output only (no `multioutput`).
 *
 * Errors: shape_error when y_pred or sample_weight differ in length from y_true;
 * invalid_argument for NaN/Inf, bad weights, no samples at all and a total weight of 0. Under
 * exec::mpi every error is raised on every rank.
 */

#include <cmath>
#include <optional>

#include "onelearn/core/types.hpp"
#include "onelearn/exec/local.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/metrics/detail/mean_error.hpp"

namespace onelearn::metrics {

template <class T, exec::ExecutionPolicy Exec = exec::local>
T mean_absolute_error(const VectorRef<T>& y_true, const VectorRef<T>& y_pred,
                      const Exec& exec = {}) {
  return static_cast<T>(detail::weighted_mean_error<T>("mean_absolute_error", y_true, y_pred,
                                                       std::nullopt, exec,
                                                       [](double d) { return std::abs(d); }));
}

template <class T, exec::ExecutionPolicy Exec = exec::local>
T mean_absolute_error(const VectorRef<T>& y_true, const VectorRef<T>& y_pred,
                      const VectorRef<T>& sample_weight, const Exec& exec = {}) {
  return static_cast<T>(detail::weighted_mean_error<T>("mean_absolute_error", y_true, y_pred,
                                                       sample_weight, exec,
                                                       [](double d) { return std::abs(d); }));
}

}  // namespace onelearn::metrics
