#pragma once
// The body of mean_squared_error and mean_absolute_error (private: not included by users).

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/metrics/detail/labels.hpp"

namespace onelearn::metrics::detail {

/// Σ w_i f(y_i - ŷ_i) / Σ w_i over every rank, for f = square or abs: the body of
/// mean_squared_error and mean_absolute_error.
template <class T, exec::ExecutionPolicy Exec, class F>
double weighted_mean_error(std::string_view where, const VectorRef<T>& y_true,
                           const VectorRef<T>& y_pred, const std::optional<VectorRef<T>>& weights,
                           const Exec& exec, F&& f) {
  exec.propagate_errors([&] {
    check_inputs<T>(where, y_true.size(), y_pred.size(), weights);
    validation::check_finite(where, "y_true", y_true);
    validation::check_finite(where, "y_pred", y_pred);
  });
  std::array<double, 3> sums{0.0, 0.0, static_cast<double>(y_true.size())};
  for (index_t i = 0; i < y_true.size(); ++i) {
    const double w = weight_of(weights, i);
    sums[0] += w * f(static_cast<double>(y_true(i)) - static_cast<double>(y_pred(i)));
    sums[1] += w;
  }
  exec.allreduce(std::span(sums), exec::reduce_op::sum);
  check_n_samples(where, sums[2]);
  if (!(sums[1] > 0)) {
    throw invalid_argument(std::string(where) + ": expected a positive total sample_weight, " +
                           "found 0");
  }
  return sums[0] / sums[1];
}

}  // namespace onelearn::metrics::detail
