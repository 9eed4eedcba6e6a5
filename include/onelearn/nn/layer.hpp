#pragma once
/**
 * \class onelearn::nn::Layer
 * \brief The interface every layer implements; derive from it for a custom layer.
 * \ingroup layers
 *
 * <!-- example-context: scope -->
 * \code
 * #include <onelearn/nn/layer.hpp>
 *
 * // A custom layer: derive from nn::Layer<T> and pass it to Sequential like a built-in one.
 * template <class T>
 * class Scale : public onelearn::nn::Layer<T> {
 *  public:
 *   std::string_view class_name() const override { return "Scale"; }
 *   onelearn::nn::Shape output_shape(const onelearn::nn::Shape& in) const override { return in; }
 *   onelearn::nn::TensorView<const T> forward(onelearn::nn::TensorView<const T> x, bool) override {
 *     y_.reshape(x.shape); y_.array() = 2 * x.array(); return y_.view();
 *   }
 *   onelearn::nn::TensorView<const T> backward(onelearn::nn::TensorView<const T> dy,
 *                                              bool) override {
 *     dx_.reshape(dy.shape); dx_.array() = 2 * dy.array(); return dx_.view();
 *   }
 *  private:
 *   onelearn::nn::Tensor<T> y_, dx_;
 * };
 * \endcode
 *
 * nn::Layer<T>: the interface every layer of a Keras-style network implements.
 *
 * \par Design (the decisions later layers, checkpoints and data-parallel training build on)
 * - Data between layers is an nn::TensorView<T>: a row-major buffer plus an inline nn::Shape
 *   whose first dimension is the batch. Flat input (onelearn::Matrix<T>, samples are rows) is
 *   the rank-2 case and maps onto it without a copy; N-d input (xt::xtensor<T, N>, row-major:
 *   N, C, H, W for images) maps onto it the same way. Dense sees (batch x features) as an
 *   Eigen::Map, so its GEMMs run in Eigen on the layer's buffers directly. Not xt::xtensor<T, N>
 *   between layers: its rank is a template parameter, which a runtime-polymorphic layer
 *   interface cannot carry (every layer would need one virtual per rank), and xt::xarray's
 *   dynamic shape is a heap vector that would allocate in every batch. Shape is inline (at most
 *   Shape::max_rank dimensions), so copying it never allocates.
 * - Layers own their outputs and gradients (nn::Tensor buffers that only grow): after the first
 *   batch, training allocates nothing. forward returns a view of the layer's own output (or of
 *   its input, for layers that do not change the data: Flatten, Dropout at inference), valid
 *   until the layer's next forward; backward likewise returns a view of the input gradient.
 *   A layer keeps the view of its input from forward to use in backward, so the previous
 *   layer's output buffer must not change in between (Sequential guarantees this).
 * - Layers are runtime-polymorphic (Sequential holds std::unique_ptr<Layer<T>>), because Keras
 *   users build models at run time (from configuration, in loops). The virtual call costs
 *   nothing next to a batch's GEMMs. A layer is described by a small non-template spec
 *   (nn::Dense(64, {.activation = "relu"})) that Sequential<T> turns into the layer for its T
 *   (spec.make<T>()), so one model description serves float and double.
 * - state() lists the non-trainable buffers (moving statistics) the same way; save_weights
 *   and checkpoints store them after the parameters (nn/weights_io.hpp).
 * - parameters() and gradients() are lists of contiguous spans, in the same order. Dense keeps
 *   its kernel and bias in one buffer (and their gradients in another), so a layer's gradients
 *   are one contiguous block: the unit an optimizer updates and a data-parallel all-reduce bucket
 *   carries. backward overwrites the gradients (no accumulation, so no zero_grad step).
 * - Sequential's backward pass calls a "gradient ready" hook after each layer's backward: a
 *   no-op for exec::local, and the place where data-parallel training will start that layer's
 *   (bucket's) non-blocking all-reduce, overlapping communication with the backward pass of
 *   the layers below; the optimizer steps once every bucket has completed.
 * - Buffers are 64-byte aligned (nn::AlignedAllocator): Eigen's vectorised reductions round
 *   according to the address they start at, so aligned buffers make training bit-reproducible
 *   whatever addresses malloc returns (for a given build and thread count).
 * - Dense's GEMMs go through one seam, nn/detail/gemm.hpp (C += op(A) op(B) on Eigen's kernel
 *   with persistent packing buffers, where `C = A * B` would allocate and free them in every
 *   product): the place where a BLAS or a Thrust/CUDA backend plugs in, and what Conv2D (im2col)
 *   will call.
 * - Weights are drawn in build(input_shape, seed) from counter-based generators
 *   (nn/detail/random.hpp), so they are the same on every platform and standard library, and a
 *   rank or a checkpoint can reproduce them from the seed alone.
 * - The compute space (Sequential's third template argument) reaches the layers as
 *   use_kernels(kernels): an interface of the bulk kernels (nn/network_kernels.hpp) that Dense and
 *   the activation layers call; the host's by default.
 * - Regularisation (Dense's kernel L2) is part of the layer: regularization_loss() is what it
 *   adds to the loss, and backward adds its gradient.
 *
 * \par Contract of the virtual functions
 * - parameter_count(in): the number of parameters build(in) will create (0 by default).
 * - output_shape(in): the per-sample output shape (no batch dimension) for a per-sample input
 *   shape; throws shape_error when the layer cannot take that input.
 * - build(in, seed): allocates parameters for that input shape and draws their initial values
 *   (called once, before the first forward; again only to re-initialise).
 * - forward(x, training): x has shape (batch, in...). training selects dropout's mask etc.
 * - backward(dy, need_input_grad): dy has the shape of the last forward's output. Writes the
 *   parameter gradients and, when need_input_grad, returns dL/dx (otherwise an empty view:
 *   the first layer of a network skips its input-gradient GEMM, as PyTorch does).
 * - begin_batch(context): called by Sequential on every layer before each training step's
 *   forward(x, true), with where this process's rows sit in the step's global batch (see
 *   nn::BatchContext). Default: nothing. Layers called without it (by hand, or a checkpoint
 *   replaying Dropout's stream) see a single-process batch starting at row 0.
 * - shadow_forward() / shadow_backward(need_input_grad): data-parallel training on a rank with
 *   no rows in a step (its rows have run out, or its share of a small replicated batch is
 *   empty) calls these instead of forward and backward, so that a layer whose passes make
 *   collective calls (BatchNormalization with synchronized statistics) makes them here too,
 *   with zero contributions, in the same order as the ranks that have rows, and a layer that
 *   counts its steps (Dropout) keeps counting. Default: nothing.
 * - rng_state(): the counters that key the layer's random streams (Dropout's seed and step),
 *   which data-parallel fit broadcasts from rank 0 with the weights, so that every rank derives
 *   the same streams however its model was built. Empty by default.
 *
 * \par Per-batch context (nn::BatchContext): design
 * Data-parallel training needs two layers to know more than their own rows: Dropout must draw
 * the mask of the row at position p of the global batch whichever rank holds it (masks keyed by
 * the global row index, so every rank draws different masks and the union equals one process's
 * masks), and synchronised BatchNormalization must sum its statistics over all ranks' rows.
 * Layers are runtime-polymorphic and not templated on the execution policy, so Sequential<T,
 * Exec> hands them a small policy-free value: the rank's row offset in the global batch, its row
 * count, the global batch's rows, and a type-erased in-place sum over the ranks (a function
 * pointer and the policy's address: no allocation, no virtual policy interface, and the identity
 * for exec::local, so one code path serves one process and many). The new virtuals (begin_batch,
 * shadow_forward/shadow_backward, rng_state) default to no-ops, so every existing and
 * user-defined layer works unchanged. Collective calls made
 * through it are blocking, issued in the same order on every rank (forward: layer order;
 * backward: reverse layer order, between the gradient buckets' non-blocking reductions, which
 * MPI matches by order), which the shadow_* calls guarantee for ranks without rows.
 */

#include <concepts>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/core/types.hpp"
#include "onelearn/nn/tensor.hpp"

namespace onelearn::nn {

/// What Sequential tells each layer about a training step's batch (Layer::begin_batch): this
/// process's rows are rows [offset, offset + rows) of the step's global batch of global_rows
/// rows (one process: offset 0, rows == global_rows). Sequential's losses average over the
/// process's own rows, so the gradients a layer receives are global_rows / rows times its
/// share of the global batch's (Sequential scales them by gradient_weight() before summing
/// over the ranks); a layer that combines gradient sums across ranks must undo that factor.
struct BatchContext {
  index_t offset = 0;
  index_t rows = 0;
  index_t global_rows = 0;
  /// The type-erased sum over the ranks: reduce(reducer, values); null for one process.
  void* reducer = nullptr;
  void (*reduce)(void* reducer, std::span<double> values) = nullptr;

  /// Replaces `values` by their element-wise sum over the ranks (nothing for one process).
  /// Collective: every rank calls it with the same size at the same point of the step.
  void allreduce_sum(std::span<double> values) const {
    if (reduce != nullptr && !values.empty()) reduce(reducer, values);
  }
  /// True when the step spans several processes (allreduce_sum communicates).
  [[nodiscard]] bool distributed() const noexcept { return reduce != nullptr; }
  /// rows / global_rows: the factor Sequential scales this process's gradients by.
  [[nodiscard]] double gradient_weight() const noexcept {
    return global_rows > 0 ? static_cast<double>(rows) / static_cast<double>(global_rows) : 0.0;
  }
};

template <class T>
class NetworkKernels;  // nn/network_kernels.hpp

template <class T>
class Layer {
 public:
  using value_type = T;

  Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;
  Layer(Layer&&) = default;
  Layer& operator=(Layer&&) = default;
  virtual ~Layer() = default;

  /// The Keras class name: "Dense", "ReLU", ...
  [[nodiscard]] virtual std::string_view class_name() const = 0;

  /// Per-sample output shape for a per-sample input shape (both without the batch dimension).
  [[nodiscard]] virtual Shape output_shape(const Shape& input) const = 0;

  /// How many parameters build(input) creates: what summary() shows before the model is built.
  [[nodiscard]] virtual index_t parameter_count(const Shape& /*input*/) const { return 0; }

  /// Allocates and initialises the parameters for this per-sample input shape.
  virtual void build(const Shape& /*input*/, std::uint64_t /*seed*/) {}

  virtual TensorView<const T> forward(TensorView<const T> x, bool training) = 0;

  virtual TensorView<const T> backward(TensorView<const T> grad_output, bool need_input_grad) = 0;

  /// The trainable parameters, as contiguous spans (empty for layers without parameters).
  [[nodiscard]] virtual std::vector<std::span<T>> parameters() { return {}; }
  /// The gradients of the last backward, span i matching parameters()[i].
  [[nodiscard]] virtual std::vector<std::span<T>> gradients() { return {}; }

  /// Non-trainable buffers that are part of the model (BatchNormalization's moving mean and
  /// variance), as contiguous spans: not updated by the optimizer, but saved and restored by
  /// save_weights/load_weights and checkpoints (after the parameters, in this order). Empty by
  /// default, so layers without such state need not override it.
  [[nodiscard]] virtual std::vector<std::span<T>> state() { return {}; }

  /// What the layer's regularisers add to the loss (its gradient is added in backward).
  [[nodiscard]] virtual double regularization_loss() const { return 0; }

  /// The step's batch layout, before forward(x, true) (see BatchContext). Default: nothing.
  virtual void begin_batch(const BatchContext& /*context*/) {}
  /// A data-parallel step in which this rank has no rows: called in place of forward(x, true),
  /// so collective calls of the forward pass are still made (with zero contributions).
  virtual void shadow_forward() {}
  /// The same for backward (need_input_grad as backward's would have been).
  virtual void shadow_backward(bool /*need_input_grad*/) {}

  /// The compute space's kernels for the layer's bulk arithmetic (nn/network_kernels.hpp):
  /// Sequential<T, Exec, Space> hands its space's to every layer it holds, which keeps the
  /// reference. Layers that call none (the default) run their own host code.
  virtual void use_kernels(const NetworkKernels<T>& /*kernels*/) {}

  /// Counters keying the layer's random streams (Dropout: seed, step), broadcast from rank 0
  /// by data-parallel fit. Empty by default.
  [[nodiscard]] virtual std::span<std::int64_t> rng_state() { return {}; }

  [[nodiscard]] index_t count_params() {
    index_t n = 0;
    for (const auto& p : parameters()) n += static_cast<index_t>(p.size());
    return n;
  }

  /// The layer's name in summary(): "dense", "dense_1", ... (Sequential assigns it).
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

 private:
  std::string name_;
};

/// A layer description that makes the layer for a scalar type: nn::Dense(10).make<float>().
template <class S, class T>
concept LayerSpec = requires(const S& spec) {
  { spec.template make<T>() } -> std::convertible_to<std::unique_ptr<Layer<T>>>;
};

}  // namespace onelearn::nn
