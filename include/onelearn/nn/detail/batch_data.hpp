#pragma once
// The data side of nn::Sequential's training and evaluation: fit's targets converted once
// (TargetData, make_targets), the batch buffers a step's rows are gathered into (BatchBuffers:
// they only grow, so steady-state training allocates nothing; without shuffling a batch is a
// view of X itself), and the "accuracy" metric's count of correct predictions.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/nn/losses.hpp"
#include "onelearn/nn/tensor.hpp"

namespace onelearn::nn::detail {

/// fit's targets, converted once: labels, or real values (rows x per-sample output size).
template <class T>
struct TargetData {
  Labels labels;
  Matrix<T> values;
  bool is_labels = false;
};

/// y as `loss` takes it for a model of `output_shape`: integer labels in 0..k-1 for a loss
/// that takes labels, else values, k per row. Throws shape_error / invalid_argument.
template <class T, class Derived>
TargetData<T> make_targets(std::string_view where, const Eigen::MatrixBase<Derived>& y,
                           const Loss<T>& loss, const Shape& output_shape) {
  using Y = typename Derived::Scalar;
  TargetData<T> out;
  const index_t k = output_shape.size();
  if constexpr (std::is_integral_v<Y>) {
    if (y.cols() != 1) {
      throw shape_error(std::string(where) + ": expected integer labels as one column, found " +
                        std::to_string(y.cols()) + " columns");
    }
    out.labels = y.col(0).template cast<std::int64_t>();
    if (loss.takes_labels()) {
      out.is_labels = true;
      for (index_t i = 0; i < out.labels.size(); ++i) {
        if (out.labels(i) < 0 || out.labels(i) >= k) {
          throw invalid_argument(std::string(where) + ": expected labels in 0.." +
                                 std::to_string(k - 1) + " for the " + std::to_string(k) +
                                 " outputs of the last layer, found " +
                                 std::to_string(out.labels(i)) + " at row " + std::to_string(i));
        }
      }
      return out;
    }
    out.values = out.labels.template cast<T>();
  } else {
    static_assert(std::is_floating_point_v<Y>, "nn::Sequential: y must hold integers or reals");
    if (loss.takes_labels()) {
      throw invalid_argument(std::string(where) + ": expected integer labels for " +
                             std::string(loss.name()) + ", found real targets");
    }
    out.values = y.template cast<T>();
    validation::check_finite(where, "y", out.values);
  }
  if (out.values.cols() != k) {
    throw shape_error(std::string(where) + ": expected y with " + std::to_string(k) +
                      " value(s) per row, the model's output shape " + output_shape.to_string() +
                      ", found " + std::to_string(out.values.cols()));
  }
  return out;
}

/// The buffers of one batch: its input rows (when they cannot be read in place) and targets.
template <class T>
class BatchBuffers {
 public:
  /// The batch of rows `rows` of X as the network's input (per-sample shape `input`), with
  /// its targets in targets(). When `contiguous` (no shuffle) the rows are consecutive and X is
  /// read in place.
  TensorView<const T> gather(const MatrixRef<T>& X, const TargetData<T>& data,
                             std::span<const index_t> rows, bool contiguous, const Shape& input) {
    const auto m = static_cast<index_t>(rows.size());
    if (data.is_labels) {
      labels_.resize(rows.size());
      for (std::size_t r = 0; r < rows.size(); ++r) labels_[r] = data.labels(rows[r]);
    } else {
      values_.reshape(Shape{m, data.values.cols()});
      auto V = values_.matrix();
      for (index_t r = 0; r < m; ++r) V.row(r) = data.values.row(rows[static_cast<std::size_t>(r)]);
    }
    if (contiguous) return input_view(X, rows.front(), m, input);
    x_.reshape(input.with_batch(m));
    auto B = x_.matrix();
    for (index_t r = 0; r < m; ++r) B.row(r) = X.row(rows[static_cast<std::size_t>(r)]);
    return x_.view();
  }

  /// Rows [start, start + m) of X as the network's input: in place when X's rows are packed.
  TensorView<const T> input_view(const MatrixRef<T>& X, index_t start, index_t m,
                                 const Shape& input) {
    if (X.outerStride() == X.cols()) return {X.data() + start * X.cols(), input.with_batch(m)};
    x_.reshape(input.with_batch(m));
    x_.matrix() = X.middleRows(start, m);
    return x_.view();
  }

  /// Targets of the batch last gathered from `data`.
  [[nodiscard]] Targets<T> targets(const TargetData<T>& data) const {
    if (data.is_labels) return {labels_.data(), nullptr, 0};
    return {nullptr, values_.data(), data.values.cols()};
  }

 private:
  Tensor<T> x_, values_;
  std::vector<std::int64_t> labels_;
};

/// The number of correct predictions in the batch for the "accuracy" metric of `kind` (a row
/// of several binary outputs counts the share of them that are right, as Keras's
/// binary_accuracy).
template <class T>
double count_correct(AccuracyKind kind, TensorView<const T> out, const Targets<T>& y) {
  const auto O = out.matrix();
  double correct = 0;
  switch (kind) {
    case AccuracyKind::sparse_categorical:
      for (index_t r = 0; r < O.rows(); ++r) {
        index_t best = 0;
        O.row(r).maxCoeff(&best);
        correct += best == y.labels[r] ? 1 : 0;
      }
      break;
    case AccuracyKind::binary_probability:
    case AccuracyKind::binary_logit: {
      // Keras's binary_accuracy: every entry thresholded; a row's share of correct entries.
      const T threshold = kind == AccuracyKind::binary_logit ? T(0) : T(0.5);
      index_t hits = 0;
      for (index_t i = 0; i < out.size(); ++i) {
        hits += ((out.data[i] > threshold) == (y.values[i] > T(0.5))) ? 1 : 0;
      }
      return static_cast<double>(hits) / static_cast<double>(O.cols());
    }
    case AccuracyKind::none:
      break;
  }
  return correct;
}

}  // namespace onelearn::nn::detail
