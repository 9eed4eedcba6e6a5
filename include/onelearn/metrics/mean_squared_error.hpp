#pragma once
/**
 * \file
 * \brief mean_squared_error: the mean of the squared errors (or its root).
 * \ingroup metrics
 *
 * \code
 * #include <onelearn/metrics/mean_squared_error.hpp>
 *
 * double mse = onelearn::metrics::mean_squared_error<double>(y_true, y_pred);
 * double rmse = onelearn::metrics::mean_squared_error<double>(y_true, y_pred, {.squared = false});
 * double weighted = onelearn::metrics::mean_squared_error<double>(y_true, y_pred, weights);
 *
 * // Collective: each rank passes its own samples, every rank gets the global error.
 * double global = onelearn::metrics::mean_squared_error<double>(my_true, my_pred, {},
 *                                                               onelearn::exec::mpi{comm});
 * \endcode
 *
 * metrics::mean_squared_error: Σ_i w_i (y_i - ŷ_i)² / Σ_i w_i (w_i = 1 without weights), or its
 * square root with squared = false, as scikit-learn's mean_squared_error (1.2.1, one output).
 *
 * Method: one all-reduce of [Σ w (y - ŷ)², Σ w, n], accumulated in double.
 *
 * \par Parameters
 * - `y_true`, `y_pred` (Vector<T>, same length), finite.
 * - `sample_weight` (Vector<T>, optional, non-negative).
 * - `options.squared` (bool, default true): false returns the root mean squared error.
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

/// Keyword arguments of mean_squared_error (scikit-learn's names).
struct MeanSquaredErrorOptions {
  bool squared = true;  ///< false: the root of the mean squared error
};

namespace detail {

template <class T, exec::ExecutionPolicy Exec>
T mean_squared_error_impl(const VectorRef<T>& y_true, const VectorRef<T>& y_pred,
                          const std::optional<VectorRef<T>>& weights,
                          const MeanSquaredErrorOptions& options, const Exec& exec) {
  const double mse = weighted_mean_error<T>("mean_squared_error", y_true, y_pred, weights, exec,
                                            [](double d) { return d * d; });
  return static_cast<T>(options.squared ? mse : std::sqrt(mse));
}

}  // namespace detail

template <class T, exec::ExecutionPolicy Exec = exec::local>
T mean_squared_error(const VectorRef<T>& y_true, const VectorRef<T>& y_pred,
                     const MeanSquaredErrorOptions& options = {}, const Exec& exec = {}) {
  return detail::mean_squared_error_impl<T>(y_true, y_pred, std::nullopt, options, exec);
}

template <class T, exec::ExecutionPolicy Exec = exec::local>
T mean_squared_error(const VectorRef<T>& y_true, const VectorRef<T>& y_pred,
                     const VectorRef<T>& sample_weight, const MeanSquaredErrorOptions& options = {},
                     const Exec& exec = {}) {
  return detail::mean_squared_error_impl<T>(y_true, y_pred, sample_weight, options, exec);
}

}  // namespace onelearn::metrics
