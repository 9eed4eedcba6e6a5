#pragma once
/**
 * \file
 * \ingroup core
 *
 * What every estimator's fit does first, written once:
 * \code{.unparsed}
 *   check_fit_input  validates X (and y, sample_weight) on each rank, raising any error on every
 *                    rank, and checks that all ranks have the same number of features;
 *   global_means     the weighted column means of X (and the mean of y) over all ranks, in one
 *                    all-reduce, failing on every rank alike when there is nothing to fit;
 *   global_means_from_sums  the same from column sums computed elsewhere (in a compute space).
 * \endcode
 */

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "onelearn/core/detail/moments.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/policy.hpp"

namespace onelearn::detail {

template <class T, exec::ExecutionPolicy Exec>
void check_fit_input(std::string_view where, const Exec& exec, const MatrixRef<T>& X,
                     const std::optional<VectorRef<T>>& y,
                     const std::optional<VectorRef<T>>& weights) {
  exec.propagate_errors([&] {
    if (y) validation::check_same_length(where, "y", X.rows(), y->size());
    validation::check_finite(where, "X", X);
    if (y) validation::check_finite(where, "y", *y);
    if (weights) {
      validation::check_same_length(where, "sample_weight", X.rows(), weights->size());
      validation::check_sample_weights<T>(where, *weights);
    }
  });
  const std::array<std::int64_t, 1> n_features{X.cols()};
  exec.check_same_shape("the number of features of X", n_features);
}

struct GlobalMeans {
  Vector<double> x;         ///< weighted mean of each column of X
  double y = 0;             ///< weighted mean of y (0 when no y was given)
  double total_weight = 0;  ///< sum of the weights (the number of samples without weights)
  std::int64_t n_samples = 0;
};

/// global_means from this rank's column sums of X, sum_i w_i x_i (computed where the rows are:
/// in a compute space, for an estimator fitted in one); `rows` is this rank's number of samples.
template <class T, exec::ExecutionPolicy Exec>
GlobalMeans global_means_from_sums(std::string_view where, const Exec& exec, index_t rows,
                                   const Vector<double>& x_sums,
                                   const std::optional<VectorRef<T>>& y,
                                   const std::optional<VectorRef<T>>& weights) {
  const index_t p = x_sums.size();
  // One buffer, one all-reduce: [total weight, n, sum w x (p entries), sum w y].
  Vector<double> totals(p + 3);
  totals(0) = weights ? weights->template cast<double>().sum() : static_cast<double>(rows);
  totals(1) = static_cast<double>(rows);
  totals.segment(2, p) = x_sums;
  totals(p + 2) = !y         ? 0.0
                  : weights ? weights->template cast<double>().dot(y->template cast<double>())
                            : y->template cast<double>().sum();
  exec.allreduce(std::span(totals.data(), static_cast<std::size_t>(totals.size())),
                 exec::reduce_op::sum);

  // Every rank sees the same totals, so these throw on every rank alike.
  if (totals(1) == 0 || p == 0) {
    throw invalid_argument(std::string(where) + ": expected at least one sample and one " +
                           "feature, found " + std::to_string(static_cast<long long>(totals(1))) +
                           " x " + std::to_string(p));
  }
  if (totals(0) <= 0) {
    throw invalid_argument(std::string(where) + ": expected a positive total sample_weight, " +
                           "found " + std::to_string(totals(0)));
  }
  return {totals.segment(2, p) / totals(0), totals(p + 2) / totals(0), totals(0),
          static_cast<std::int64_t>(totals(1))};
}

template <class T, exec::ExecutionPolicy Exec>
GlobalMeans global_means(std::string_view where, const Exec& exec, const MatrixRef<T>& X,
                         const std::optional<VectorRef<T>>& y,
                         const std::optional<VectorRef<T>>& weights) {
  return global_means_from_sums<T>(where, exec, X.rows(), column_sums<T>(X, weights), y, weights);
}

}  // namespace onelearn::detail
