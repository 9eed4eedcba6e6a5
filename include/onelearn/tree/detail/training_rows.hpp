#pragma once
// A tree's training rows from every rank. An exact tree needs every row's value of every
// feature at every node (the best threshold lies between two of them), so under a distributed
// policy the rows are all-gathered: each rank then holds the concatenated rows, in rank order,
// and grows the same tree as one process on them (a forest then spreads its trees over the
// ranks instead). This costs n x p float32 of memory on each rank; histogram gradient boosting
// is the estimator that scales to rows that do not fit on one rank.
//
// Checks, raised on every rank: X finite after rounding to float32 (scikit-learn's trees work
// in float32: 1e39 is too large), y the length of X, sample weights finite, non-negative and
// not all zero, at least one row over all ranks.

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/tree/detail/training_data.hpp"

namespace onelearn::tree::detail {

/// X rounded to float32, finite, else an error naming the first bad row and column.
template <class T>
std::vector<float> float32_rows(std::string_view where, const MatrixRef<T>& X) {
  std::vector<float> out(static_cast<std::size_t>(X.rows() * X.cols()));
  for (index_t i = 0; i < X.rows(); ++i) {
    for (index_t j = 0; j < X.cols(); ++j) {
      const auto v = static_cast<float>(X(i, j));
      if (!std::isfinite(v)) {
        throw invalid_argument(std::string(where) + ": expected finite values of X that fit in " +
                               "float32, found " + std::to_string(static_cast<double>(X(i, j))) +
                               " at row " + std::to_string(i) + ", column " + std::to_string(j));
      }
      out[static_cast<std::size_t>(i * X.cols() + j)] = v;
    }
  }
  return out;
}

/// The training data of every rank, concatenated in rank order. `class_of` (classification:
/// each local row's class index) or `y` (regression) gives the targets.
template <class T, exec::ExecutionPolicy Exec>
TrainingData gather_training_rows(std::string_view where, const Exec& exec, const MatrixRef<T>& X,
                                  const std::vector<index_t>* class_of, index_t n_classes,
                                  const std::optional<VectorRef<T>>& y,
                                  const std::optional<VectorRef<T>>& weights) {
  std::vector<float> local;
  exec.propagate_errors([&] {
    if (y) validation::check_same_length(where, "y", X.rows(), y->size());
    if (y) validation::check_finite(where, "y", *y);
    if (weights) {
      validation::check_same_length(where, "sample_weight", X.rows(), weights->size());
      validation::check_sample_weights<T>(where, *weights);
    }
    local = float32_rows<T>(where, X);
  });
  const std::array<std::int64_t, 1> n_features{X.cols()};
  exec.check_same_shape("the number of features of X", n_features);

  TrainingData data;
  data.n_features = X.cols();
  data.n_classes = n_classes;
  const std::vector<float> rows = exec.allgatherv(std::span<const float>(local));
  data.n_rows = data.n_features == 0 ? 0 : static_cast<index_t>(rows.size()) / data.n_features;
  data.x.resize(rows.size());
  for (index_t i = 0; i < data.n_rows; ++i) {
    for (index_t f = 0; f < data.n_features; ++f) {
      data.x[static_cast<std::size_t>(f * data.n_rows + i)] =
          rows[static_cast<std::size_t>(i * data.n_features + f)];
    }
  }
  if (class_of) {
    const std::vector<std::int64_t> mine(class_of->begin(), class_of->end());
    const std::vector<std::int64_t> all = exec.allgatherv(std::span<const std::int64_t>(mine));
    data.class_of.assign(all.begin(), all.end());
  } else {
    const std::vector<double> mine(y->begin(), y->end());
    data.y = exec.allgatherv(std::span<const double>(mine));
  }
  if (weights) {
    const std::vector<double> mine(weights->begin(), weights->end());
    data.weight = exec.allgatherv(std::span<const double>(mine));
  } else {
    data.weight.assign(static_cast<std::size_t>(data.n_rows), 1.0);
  }
  const double total = data.total_weight();
  if (data.n_rows == 0 || data.n_features == 0) {
    throw invalid_argument(std::string(where) + ": expected at least one sample and one " +
                           "feature, found " + std::to_string(data.n_rows) + " x " +
                           std::to_string(data.n_features));
  }
  if (!(total > 0)) {
    throw invalid_argument(std::string(where) + ": expected a positive total sample_weight, " +
                           "found " + std::to_string(total));
  }
  return data;
}

}  // namespace onelearn::tree::detail
