#pragma once
/**
 * \class onelearn::nn::BatchNormalization
 * \brief Batch normalization per channel, as Keras's BatchNormalization (optionally synchronised
 * across ranks).
 * \ingroup layers
 *
 * \code
 * #include <onelearn/nn/layers/batch_normalization.hpp>
 *
 * namespace nn = onelearn::nn;
 * nn::Sequential<float> model{nn::Input({1, 28, 28}), nn::Conv2D(16, 3, {.use_bias = false}),
 *                             nn::BatchNormalization{},  // per channel of (N, 16, 26, 26)
 *                             nn::ReLU{}, nn::Flatten{}, nn::Dense(64),
 *                             nn::BatchNormalization{{.momentum = 0.9}},  // per feature
 *                             nn::ReLU{}, nn::Dense(10)};
 * // The moving statistics (non-trainable): [moving_mean, moving_variance].
 * auto& bn = dynamic_cast<nn::BatchNormalizationLayer<float>&>(model.layer(1));
 * std::span<float> moving_mean = bn.state()[0];
 * // Data-parallel training with statistics over every rank's rows (SyncBatchNorm):
 * nn::Sequential<float, onelearn::exec::mpi> dp{onelearn::exec::mpi(comm), nn::Input({64}),
 *                                               nn::Dense(64, {.use_bias = false}),
 *                                               nn::BatchNormalization{{.synchronized = true}},
 *                                               nn::ReLU{}, nn::Dense(10)};
 * \endcode
 *
 * nn::BatchNormalization: y = gamma (x - mean) / sqrt(var + epsilon) + beta per channel, as
 * Keras's BatchNormalization (and PyTorch's BatchNorm1d/2d).
 *
 * Axis: the first per-sample dimension. For images (N, C, H, W) that is the channels, the
 * statistics being taken over N, H and W (Keras's axis=1 for channels-first data; Keras's
 * default axis=-1 is the channels of its default channels-last layout, the same thing); for
 * flat input (N, F) it is the features, over N; for (N, C, L), the C channels over N and L.
 *
 * Method: in training (forward(x, true)) the batch's mean and biased variance (divided by the
 * count, as Keras; not n - 1) normalise x, and the moving statistics are updated as
 * moving = momentum · moving + (1 - momentum) · batch, with the biased variance, as Keras;
 * backward then differentiates through the batch statistics:
 * dx = gamma / (M sqrt(var + eps)) · (M dy - Σdy - x̂ Σ(dy x̂)) over the M values of a channel.
 * At inference (forward(x, false)) the moving statistics are used, and backward is the
 * per-channel affine map's. Statistics are accumulated in double for float data.
 *
 * Data-parallel training (Sequential<T, exec::mpi>): by default each rank normalises its rows
 * with its own rows' statistics (as Keras's default and PyTorch's BatchNorm under DDP), so the
 * result differs from one process's fit at the global batch, and each rank's moving statistics
 * are its own. With `synchronized = true` (Keras 3's BatchNormalization(synchronized=True),
 * PyTorch's SyncBatchNorm) the statistics are those of the whole global batch: the forward pass
 * sums each channel's values over all ranks' rows (an all-reduce of C sums for the mean, then
 * one of C squared deviations for the variance: two passes, as one process), and the backward
 * pass sums Σdy and Σdy·x̂ over the ranks (one all-reduce of 2 C values, each rank's sums first
 * scaled by its share of the global batch, as its gradients are) before forming dx. The fit then
 * equals one process's at the global batch (up to rounding), moving statistics included, and
 * they are the same on every rank. A rank without rows in a step joins the reductions with
 * zeros (Layer::shadow_forward/shadow_backward). With one process the option changes nothing.
 * A bias just before the layer (Dense's) gets a zero gradient up to rounding; with Adam its
 * value then follows the rounding noise, which differs with the number of processes (harmless
 * for the outputs, which do not depend on it, but it spoils weight comparisons): give that
 * layer `use_bias = false`, as Keras advises.
 *
 * \par Parameters (BatchNormalizationOptions)
 * - `momentum` (default 0.99, Keras's; PyTorch's momentum=0.1 is Keras's 0.9),
 *   `epsilon` (default 1e-3, Keras's; PyTorch's is 1e-5).
 * - `synchronized` (default false, as Keras 3): batch statistics over all ranks' rows under
 *   data-parallel training (above); ignored by one process.
 *
 * \par Attributes
 * - parameters(): [gamma, beta] (trainable, one contiguous buffer; gamma starts at 1, beta at
 *   0); gradients() matches.
 * - `state()` (Layer::state()): [moving_mean, moving_variance] as spans of one contiguous
 *   buffer (starting at 0 and 1): the non-trainable state that training updates and inference
 *   reads. It is not in parameters(), so an optimizer never touches it; save_weights /
 *   load_weights and checkpoints store it after the parameters, summary() counts it as
 *   non-trainable, and ONNX export (BatchNormalization's input_mean / input_var) reads it
 *   here. Keras's get_weights order is [gamma, beta, moving_mean, moving_variance], i.e.
 *   parameters() followed by state().
 * - `momentum()`, `epsilon()`, `synchronized()`: the options. parameters() and state() of a
 *   const layer: the same spans, read-only.
 *
 * \par Differences from Keras
 * - No center/scale switches, initialisers, regularisers or renorm; axis fixed as above.
 * - Under data-parallel training the batch statistics are each rank's own unless
 *   `synchronized` (as Keras's default; Keras's synchronized=True is PyTorch's SyncBatchNorm).
 *
 * Errors: `invalid_argument` at construction for momentum outside [0, 1] or epsilon <= 0;
 * `shape_error` for input of rank 0 per sample, or a batch whose shape differs from the built
 * one.
 */

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/nn/layer.hpp"

namespace onelearn::nn {

struct BatchNormalizationOptions {
  double momentum = 0.99;
  double epsilon = 1e-3;
  /// Statistics over the whole global batch under data-parallel training (SyncBatchNorm).
  bool synchronized = false;
};

template <class T>
class BatchNormalizationLayer final : public Layer<T> {
 public:
  explicit BatchNormalizationLayer(const BatchNormalizationOptions& options)
      : momentum_(options.momentum),
        epsilon_(options.epsilon),
        synchronized_(options.synchronized) {
    if (!(momentum_ >= 0 && momentum_ <= 1)) {
      throw invalid_argument("BatchNormalization: expected momentum in [0, 1], found " +
                             std::to_string(momentum_));
    }
    if (!(epsilon_ > 0)) {
      throw invalid_argument("BatchNormalization: expected epsilon > 0, found " +
                             std::to_string(epsilon_));
    }
  }

  [[nodiscard]] std::string_view class_name() const override { return "BatchNormalization"; }

  [[nodiscard]] Shape output_shape(const Shape& input) const override {
    if (input.rank() < 1 || input.size() < 1) {
      throw shape_error(
          "BatchNormalization: expected a non-empty input with at least one dimension per "
          "sample (the first is the normalised axis), found " +
          input.to_string());
    }
    return input;
  }

  [[nodiscard]] index_t parameter_count(const Shape& input) const override {
    return input.rank() < 1 ? 0 : 2 * input[0];
  }

  void build(const Shape& input, std::uint64_t /*seed*/) override {
    (void)output_shape(input);
    input_shape_ = input;
    channels_ = input[0];
    spatial_ = input.size() / channels_;
    const auto c = static_cast<std::size_t>(channels_);
    params_.assign(2 * c, T(0));
    std::fill(params_.begin(), params_.begin() + channels_, T(1));  // gamma = 1, beta = 0
    grads_.assign(2 * c, T(0));
    state_.assign(2 * c, T(0));
    std::fill(state_.begin() + channels_, state_.end(), T(1));  // moving variance = 1
    mean_.assign(c, 0);
    inv_std_.assign(c, 0);
    sums_.assign(2 * c, 0);
  }

  /// Keeps the step's layout: only a synchronized layer uses it (to reduce over the ranks).
  void begin_batch(const BatchContext& context) override {
    context_ = context;
    has_context_ = true;
  }

  /// A step without rows on this rank: a synchronized layer still joins the forward pass's two
  /// reductions (with zeros) and updates its moving statistics from their results, so they stay
  /// equal on every rank.
  void shadow_forward() override {
    take_context(0);
    if (!reduces()) return;
    training_ = true;
    batch_statistics(nullptr, 0);
  }

  /// ... and the backward pass's reduction, when it makes one (need_input_grad).
  void shadow_backward(bool need_input_grad) override {
    if (!reduces() || !need_input_grad) return;
    std::fill(sums_.begin(), sums_.end(), 0.0);
    step_.allreduce_sum(std::span<double>(sums_));
  }

  TensorView<const T> forward(TensorView<const T> x, bool training) override {
    if (params_.empty()) {
      throw not_fitted_error(
          "BatchNormalization.forward: expected a built layer, found one not built");
    }
    if (x.shape.rank() < 2 || !(x.shape.without_batch() == input_shape_)) {
      throw shape_error("BatchNormalization.forward: expected a batch of shape " +
                        input_shape_.with_batch(x.batch()).to_string() + ", found " +
                        x.shape.to_string());
    }
    training_ = training;
    x_shape_ = x.shape;
    const index_t N = x.batch(), C = channels_, S = spatial_;
    xhat_.reshape(x.shape);
    y_.reshape(x.shape);
    const T* gamma = params_.data();
    const T* beta = params_.data() + C;
    const T* moving_mean = state_.data();
    const T* moving_var = state_.data() + C;
    if (training) {
      take_context(N);
      batch_statistics(x.data, N);
    } else {
      for (index_t c = 0; c < C; ++c) {
        const auto cc = static_cast<std::size_t>(c);
        mean_[cc] = static_cast<double>(moving_mean[c]);
        inv_std_[cc] = 1.0 / std::sqrt(static_cast<double>(moving_var[c]) + epsilon_);
      }
    }
    for (index_t n = 0; n < N; ++n) {
      for (index_t c = 0; c < C; ++c) {
        const auto cc = static_cast<std::size_t>(c);
        const T m = static_cast<T>(mean_[cc]), is = static_cast<T>(inv_std_[cc]);
        const index_t off = (n * C + c) * S;
        for (index_t s = 0; s < S; ++s) {
          const T h = (x.data[off + s] - m) * is;
          xhat_.data()[off + s] = h;
          y_.data()[off + s] = gamma[c] * h + beta[c];
        }
      }
    }
    return y_.view();
  }

  TensorView<const T> backward(TensorView<const T> grad_output, bool need_input_grad) override {
    const index_t N = x_shape_[0], C = channels_, S = spatial_;
    const T* dy = grad_output.data;
    const T* xh = xhat_.data();
    T* dgamma = grads_.data();
    T* dbeta = grads_.data() + C;
    for (index_t c = 0; c < C; ++c) {
      double sum_dy = 0, sum_dy_xhat = 0;
      for (index_t n = 0; n < N; ++n) {
        const index_t off = (n * C + c) * S;
        for (index_t s = 0; s < S; ++s) {
          sum_dy += static_cast<double>(dy[off + s]);
          sum_dy_xhat += static_cast<double>(dy[off + s]) * static_cast<double>(xh[off + s]);
        }
      }
      dgamma[c] = static_cast<T>(sum_dy_xhat);
      dbeta[c] = static_cast<T>(sum_dy);
    }
    if (!need_input_grad) return {};
    dx_.reshape(x_shape_);
    const T* gamma = params_.data();
    auto count = static_cast<double>(N * S);
    // Synchronized: Σdy and Σdy x̂ over the global batch. This rank's dy are global_rows / rows
    // times its share of the global batch's loss gradient (its loss averages over its own rows),
    // so its sums are scaled by rows / global_rows before the reduction and the result by the
    // inverse after it: dx stays in this rank's scale, which Sequential's gradient weight undoes
    // in the layers below.
    const bool sync = training_ && reduces();
    double unscale = 1;
    if (sync) {
      const double weight = step_.gradient_weight();
      for (index_t c = 0; c < C; ++c) {
        const auto cc = static_cast<std::size_t>(c);
        sums_[cc] = weight * static_cast<double>(dbeta[c]);
        sums_[static_cast<std::size_t>(C) + cc] = weight * static_cast<double>(dgamma[c]);
      }
      step_.allreduce_sum(std::span<double>(sums_));
      unscale = 1.0 / weight;
      count = static_cast<double>(step_.global_rows * S);
    }
    for (index_t c = 0; c < C; ++c) {
      const auto cc = static_cast<std::size_t>(c);
      const T scale = static_cast<T>(static_cast<double>(gamma[c]) * inv_std_[cc]);
      // Training: dx = scale (dy - mean(dy) - x̂ mean(dy x̂)); inference: dx = scale dy.
      const double sum_dy = sync ? sums_[cc] * unscale : static_cast<double>(dbeta[c]);
      const double sum_dy_xhat = sync ? sums_[static_cast<std::size_t>(C) + cc] * unscale
                                      : static_cast<double>(dgamma[c]);
      const T mean_dy = training_ ? static_cast<T>(sum_dy / count) : T(0);
      const T mean_dy_xhat = training_ ? static_cast<T>(sum_dy_xhat / count) : T(0);
      for (index_t n = 0; n < N; ++n) {
        const index_t off = (n * C + c) * S;
        for (index_t s = 0; s < S; ++s) {
          dx_.data()[off + s] = scale * (dy[off + s] - mean_dy - xh[off + s] * mean_dy_xhat);
        }
      }
    }
    return dx_.view();
  }

  [[nodiscard]] std::vector<std::span<T>> parameters() override { return split<T>(params_); }
  [[nodiscard]] std::vector<std::span<T>> gradients() override { return split<T>(grads_); }

  /// The non-trainable state: [moving_mean, moving_variance] (empty before build).
  [[nodiscard]] std::vector<std::span<T>> state() override { return split<T>(state_); }
  /// Read-only parameters() and state(), for code that holds a const layer (ONNX export).
  [[nodiscard]] std::vector<std::span<const T>> parameters() const {
    return split<const T>(params_);
  }
  [[nodiscard]] std::vector<std::span<const T>> state() const {
    return split<const T>(state_);
  }

  [[nodiscard]] double momentum() const noexcept { return momentum_; }
  [[nodiscard]] double epsilon() const noexcept { return epsilon_; }
  [[nodiscard]] bool synchronized() const noexcept { return synchronized_; }

 private:
  /// The step's layout from begin_batch, or (called without it) one process's batch of `rows`.
  void take_context(index_t rows) {
    step_ = has_context_ ? context_ : BatchContext{.offset = 0, .rows = rows, .global_rows = rows};
    has_context_ = false;
  }

  /// Whether this step's statistics are reduced over the ranks.
  [[nodiscard]] bool reduces() const noexcept { return synchronized_ && step_.distributed(); }

  /// The batch mean and biased variance of every channel over this process's N rows of x (over
  /// the global batch when reduces(); N may then be 0), into mean_ and inv_std_, and the moving
  /// statistics' update. Every rank reaches the same decisions (the counts are global).
  void batch_statistics(const T* x, index_t N) {
    const index_t C = channels_, S = spatial_;
    const index_t rows = reduces() ? step_.global_rows : N;
    if (rows * S < 1) {
      throw shape_error("BatchNormalization.forward: expected at least one value per channel");
    }
    const auto count = static_cast<double>(rows * S);
    const auto sums = std::span<double>(sums_).first(static_cast<std::size_t>(C));
    for (index_t c = 0; c < C; ++c) {
      double sum = 0;
      for (index_t n = 0; n < N; ++n) {
        const T* p = x + (n * C + c) * S;
        for (index_t s = 0; s < S; ++s) sum += static_cast<double>(p[s]);
      }
      sums[static_cast<std::size_t>(c)] = sum;
    }
    if (reduces()) step_.allreduce_sum(sums);
    for (index_t c = 0; c < C; ++c) {
      const auto cc = static_cast<std::size_t>(c);
      const double mean = sums[cc] / count;
      mean_[cc] = mean;
      double sq = 0;  // two passes: no cancellation in the variance
      for (index_t n = 0; n < N; ++n) {
        const T* p = x + (n * C + c) * S;
        for (index_t s = 0; s < S; ++s) {
          const double d = static_cast<double>(p[s]) - mean;
          sq += d * d;
        }
      }
      sums[cc] = sq;
    }
    if (reduces()) step_.allreduce_sum(sums);
    T* moving_mean = state_.data();
    T* moving_var = state_.data() + C;
    for (index_t c = 0; c < C; ++c) {
      const auto cc = static_cast<std::size_t>(c);
      const double mean = mean_[cc];
      const double var = sums[cc] / count;  // biased, as Keras
      inv_std_[cc] = 1.0 / std::sqrt(var + epsilon_);
      moving_mean[c] = static_cast<T>(momentum_ * static_cast<double>(moving_mean[c]) +
                                      (1 - momentum_) * mean);
      moving_var[c] = static_cast<T>(momentum_ * static_cast<double>(moving_var[c]) +
                                     (1 - momentum_) * var);
    }
  }

  /// The two per-channel halves of a buffer (U: T, or const T for read-only views).
  template <class U>
  std::vector<std::span<U>> split(std::span<U> buffer) const {
    if (buffer.empty()) return {};
    const auto c = static_cast<std::size_t>(channels_);
    return {buffer.first(c), buffer.subspan(c, c)};
  }

  double momentum_, epsilon_;
  bool synchronized_;
  BatchContext context_{}, step_{};  // from begin_batch; the current step's
  bool has_context_ = false;
  std::vector<double> sums_;  // 2 C: the per-channel sums reduced over the ranks
  Shape input_shape_, x_shape_;
  index_t channels_ = 0, spatial_ = 1;
  bool training_ = false;
  AlignedVector<T> params_, grads_, state_;  // [gamma | beta], [moving_mean | moving_variance]
  std::vector<double> mean_, inv_std_;       // of the last forward
  Tensor<T> xhat_, y_, dx_;
};

struct BatchNormalization {
  BatchNormalizationOptions options{};

  template <class T>
  [[nodiscard]] std::unique_ptr<Layer<T>> make() const {
    return std::make_unique<BatchNormalizationLayer<T>>(options);
  }
};

}  // namespace onelearn::nn
