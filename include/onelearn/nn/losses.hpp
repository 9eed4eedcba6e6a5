#pragma once
/**
 * \file
 * \brief The losses, as Keras's: MeanSquaredError, MeanAbsoluteError, Huber, cross-entropies.
 * \ingroup nn
 *
 * <!-- example-context: nn -->
 * \code
 * #include <onelearn/nn/losses.hpp>
 *
 * model.compile(onelearn::nn::Adam{},
 *               onelearn::nn::SparseCategoricalCrossentropy{.from_logits = true}, {"accuracy"});
 * model.compile(onelearn::nn::SGD{}, onelearn::nn::Huber{.delta = 0.5});
 * \endcode
 *
 * The losses, as Keras's (reduction "sum_over_batch_size": the mean over the batch of each
 * sample's loss, and for the element-wise losses each sample's loss is the mean over its
 * entries, so the whole is the mean over all entries):
 * - MeanSquaredError: mean (ŷ - y)².
 * - MeanAbsoluteError: mean |ŷ - y| (gradient 0 where ŷ = y).
 * - Huber(delta = 1): ½ e² where |e| <= delta, delta (|e| - ½ delta) elsewhere.
 * - SparseCategoricalCrossentropy(from_logits = false): integer labels 0..k-1 against k outputs.
 *   From logits, log-softmax and the loss are fused: loss = logsumexp(z) - z_y, and the gradient
 *   is softmax(z) - onehot(y) (divided by the batch size), computed in one pass without forming
 *   log-probabilities. From probabilities, as Keras: p clipped to [1e-7, 1 - 1e-7] and
 *   renormalised, loss = -log(p_y / Σ p).
 * - BinaryCrossentropy(from_logits = false): targets in [0, 1] against as many outputs. From
 *   logits, the stable form max(z, 0) - z y + log(1 + exp(-|z|)) with gradient sigmoid(z) - y;
 *   from probabilities, p clipped to [1e-7, 1 - 1e-7] as Keras.
 *
 * Where probabilities are clipped the gradient is 0, as for the clip in Keras.
 *
 * Each loss evaluates in T and accumulates the batch's loss in double.
 *
 * Errors: `invalid_argument` for Huber delta <= 0.
 */

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/nn/tensor.hpp"

namespace onelearn::nn {

/// A batch of targets: integer labels (one per sample) or real values (batch x cols).
template <class T>
struct Targets {
  const std::int64_t* labels = nullptr;
  const T* values = nullptr;
  index_t cols = 0;
};

/// What the "accuracy" metric means for a loss.
enum class AccuracyKind { none, sparse_categorical, binary_probability, binary_logit };

template <class T>
class Loss {
 public:
  Loss() = default;
  Loss(const Loss&) = default;
  Loss& operator=(const Loss&) = default;
  virtual ~Loss() = default;

  [[nodiscard]] virtual std::string_view name() const = 0;
  /// True when the targets are integer class labels; false for real values.
  [[nodiscard]] virtual bool takes_labels() const { return false; }
  [[nodiscard]] virtual AccuracyKind accuracy_kind() const { return AccuracyKind::none; }
  /// True when the outputs are logits (the loss applies the softmax or sigmoid itself).
  [[nodiscard]] virtual bool from_logits() const { return false; }

  /// The batch's mean loss. When grad.data is not null, writes dLoss/doutput into it (same shape).
  virtual double compute(TensorView<const T> output, const Targets<T>& y,
                         TensorView<T> grad) const = 0;
};

namespace detail {

/// The element-wise losses: value(e, y_hat, y) and derivative in ŷ, averaged over all entries.
template <class T, class Derived>
class ElementwiseLoss : public Loss<T> {
 public:
  double compute(TensorView<const T> output, const Targets<T>& y,
                 TensorView<T> grad) const override {
    const index_t n = output.size();
    const T inv_n = T(1) / static_cast<T>(n);
    const T* o = output.data;
    const T* t = y.values;
    const auto& self = static_cast<const Derived&>(*this);
    double total = 0;
    for (index_t i = 0; i < n; ++i) {
      total += static_cast<double>(self.value(o[i], t[i]));
      if (grad.data != nullptr) grad.data[i] = self.derivative(o[i], t[i]) * inv_n;
    }
    return total / static_cast<double>(n);
  }
};

template <class T>
class MSELoss final : public ElementwiseLoss<T, MSELoss<T>> {
 public:
  [[nodiscard]] std::string_view name() const override { return "MeanSquaredError"; }
  T value(T p, T y) const { return (p - y) * (p - y); }
  T derivative(T p, T y) const { return T(2) * (p - y); }
};

template <class T>
class MAELoss final : public ElementwiseLoss<T, MAELoss<T>> {
 public:
  [[nodiscard]] std::string_view name() const override { return "MeanAbsoluteError"; }
  T value(T p, T y) const { return std::abs(p - y); }
  T derivative(T p, T y) const { return p > y ? T(1) : (p < y ? T(-1) : T(0)); }
};

template <class T>
class HuberLoss final : public ElementwiseLoss<T, HuberLoss<T>> {
 public:
  explicit HuberLoss(double delta) : delta_(static_cast<T>(delta)) {
    if (!(delta > 0)) {
      throw invalid_argument("Huber: expected delta > 0, found " + std::to_string(delta));
    }
  }
  [[nodiscard]] std::string_view name() const override { return "Huber"; }
  T value(T p, T y) const {
    const T e = std::abs(p - y);
    return e <= delta_ ? T(0.5) * e * e : delta_ * (e - T(0.5) * delta_);
  }
  T derivative(T p, T y) const { return std::clamp(p - y, -delta_, delta_); }

 private:
  T delta_;
};

constexpr double probability_epsilon = 1e-7;  // Keras's backend.epsilon()

template <class T>
class SparseCCELoss final : public Loss<T> {
 public:
  explicit SparseCCELoss(bool from_logits) : from_logits_(from_logits) {}
  [[nodiscard]] std::string_view name() const override { return "SparseCategoricalCrossentropy"; }
  [[nodiscard]] bool takes_labels() const override { return true; }
  [[nodiscard]] AccuracyKind accuracy_kind() const override {
    return AccuracyKind::sparse_categorical;
  }
  [[nodiscard]] bool from_logits() const override { return from_logits_; }

  double compute(TensorView<const T> output, const Targets<T>& y,
                 TensorView<T> grad) const override {
    const auto Z = output.last_axis_matrix();
    const index_t rows = Z.rows();
    const T inv_rows = T(1) / static_cast<T>(rows);
    double total = 0;
    for (index_t r = 0; r < rows; ++r) {
      const auto label = static_cast<index_t>(y.labels[r]);
      if (from_logits_) {
        const T top = Z.row(r).maxCoeff();
        const T sum = (Z.row(r).array() - top).exp().sum();
        const T log_norm = top + std::log(sum);
        total += static_cast<double>(log_norm - Z(r, label));
        if (grad.data != nullptr) {
          auto g = grad.last_axis_matrix().row(r).array();
          g = (Z.row(r).array() - log_norm).exp() * inv_rows;
          g(label) -= inv_rows;
        }
      } else {
        const T lo = T(probability_epsilon);
        const T hi = T(1) - lo;
        const T sum = Z.row(r).array().max(lo).min(hi).sum();
        const T py = std::clamp(Z(r, label), lo, hi);
        total += static_cast<double>(std::log(sum) - std::log(py));
        if (grad.data != nullptr) {
          auto g = grad.last_axis_matrix().row(r).array();
          for (index_t c = 0; c < Z.cols(); ++c) {
            g(c) = (Z(r, c) > lo && Z(r, c) < hi) ? inv_rows / sum : T(0);
          }
          if (Z(r, label) > lo && Z(r, label) < hi) g(label) -= inv_rows / py;
        }
      }
    }
    return total / static_cast<double>(rows);
  }

 private:
  bool from_logits_;
};

template <class T>
class BinaryCELoss final : public Loss<T> {
 public:
  explicit BinaryCELoss(bool from_logits) : from_logits_(from_logits) {}
  [[nodiscard]] std::string_view name() const override { return "BinaryCrossentropy"; }
  [[nodiscard]] AccuracyKind accuracy_kind() const override {
    return from_logits_ ? AccuracyKind::binary_logit : AccuracyKind::binary_probability;
  }
  [[nodiscard]] bool from_logits() const override { return from_logits_; }

  double compute(TensorView<const T> output, const Targets<T>& y,
                 TensorView<T> grad) const override {
    const index_t n = output.size();
    const T inv_n = T(1) / static_cast<T>(n);
    const T lo = T(probability_epsilon);
    const T hi = T(1) - lo;
    double total = 0;
    for (index_t i = 0; i < n; ++i) {
      const T z = output.data[i];
      const T t = y.values[i];
      if (from_logits_) {
        total +=
            static_cast<double>(std::max(z, T(0)) - z * t + std::log1p(std::exp(-std::abs(z))));
        if (grad.data != nullptr) grad.data[i] = (T(1) / (T(1) + std::exp(-z)) - t) * inv_n;
      } else {
        const T p = std::clamp(z, lo, hi);
        total -= static_cast<double>(t * std::log(p) + (T(1) - t) * std::log(T(1) - p));
        if (grad.data != nullptr) {
          grad.data[i] = (z > lo && z < hi) ? (-(t / p) + (T(1) - t) / (T(1) - p)) * inv_n : T(0);
        }
      }
    }
    return total / static_cast<double>(n);
  }

 private:
  bool from_logits_;
};

}  // namespace detail

// The specs users pass to compile (non-template: Sequential<T> makes the loss for its T).

struct MeanSquaredError {
  template <class T>
  [[nodiscard]] std::unique_ptr<Loss<T>> make() const {
    return std::make_unique<detail::MSELoss<T>>();
  }
};

struct MeanAbsoluteError {
  template <class T>
  [[nodiscard]] std::unique_ptr<Loss<T>> make() const {
    return std::make_unique<detail::MAELoss<T>>();
  }
};

struct Huber {
  double delta = 1.0;
  template <class T>
  [[nodiscard]] std::unique_ptr<Loss<T>> make() const {
    return std::make_unique<detail::HuberLoss<T>>(delta);
  }
};

struct SparseCategoricalCrossentropy {
  bool from_logits = false;
  template <class T>
  [[nodiscard]] std::unique_ptr<Loss<T>> make() const {
    return std::make_unique<detail::SparseCCELoss<T>>(from_logits);
  }
};

struct BinaryCrossentropy {
  bool from_logits = false;
  template <class T>
  [[nodiscard]] std::unique_ptr<Loss<T>> make() const {
    return std::make_unique<detail::BinaryCELoss<T>>(from_logits);
  }
};

template <class S, class T>
concept LossSpec = requires(const S& spec) {
  { spec.template make<T>() } -> std::convertible_to<std::unique_ptr<Loss<T>>>;
};

}  // namespace onelearn::nn
