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
#include "onelearn/nn/network_kernels.hpp"
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

  /// The compute space's kernels (nn/network_kernels.hpp), which the built-in losses compute
  /// with: Sequential<T, Exec, Space> hands its space's; the host's by default.
  void use_kernels(const NetworkKernels<T>& kernels) noexcept { kernels_ = &kernels; }
  [[nodiscard]] const NetworkKernels<T>& kernels() const noexcept { return *kernels_; }

 private:
  const NetworkKernels<T>* kernels_ = &host_network_kernels<T>();
};

namespace detail {

/// The element-wise losses (network_kernels.hpp's terms), averaged over all entries.
template <class T, ElementwiseLoss Kind>
class ElementwiseLossOf : public Loss<T> {
 public:
  explicit ElementwiseLossOf(std::string_view name, double delta = 0)
      : name_(name), delta_(static_cast<T>(delta)) {}
  [[nodiscard]] std::string_view name() const override { return name_; }

  double compute(TensorView<const T> output, const Targets<T>& y,
                 TensorView<T> grad) const override {
    const index_t n = output.size();
    const double total = this->kernels().elementwise_loss(Kind, delta_, output.data, y.values,
                                                          grad.data, T(1) / static_cast<T>(n), n);
    return total / static_cast<double>(n);
  }

 private:
  std::string_view name_;  // a string literal
  T delta_;
};

template <class T>
using MSELoss = ElementwiseLossOf<T, ElementwiseLoss::squared>;
template <class T>
using MAELoss = ElementwiseLossOf<T, ElementwiseLoss::absolute>;
template <class T>
using HuberLoss = ElementwiseLossOf<T, ElementwiseLoss::huber>;

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
    const index_t classes = output.shape.rank() > 0 ? output.shape.back() : 1;
    const index_t rows = classes == 0 ? 0 : output.size() / classes;
    const double total = this->kernels().sparse_categorical_loss(
        from_logits_, output.data, y.labels, grad.data, T(1) / static_cast<T>(rows), rows,
        classes);
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
    const double total = this->kernels().binary_loss(from_logits_, output.data, y.values,
                                                     grad.data, T(1) / static_cast<T>(n), n);
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
    return std::make_unique<detail::MSELoss<T>>("MeanSquaredError");
  }
};

struct MeanAbsoluteError {
  template <class T>
  [[nodiscard]] std::unique_ptr<Loss<T>> make() const {
    return std::make_unique<detail::MAELoss<T>>("MeanAbsoluteError");
  }
};

struct Huber {
  double delta = 1.0;
  template <class T>
  [[nodiscard]] std::unique_ptr<Loss<T>> make() const {
    if (!(delta > 0)) {
      throw invalid_argument("Huber: expected delta > 0, found " + std::to_string(delta));
    }
    return std::make_unique<detail::HuberLoss<T>>("Huber", delta);
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
