#pragma once
/**
 * \class onelearn::nn::Dropout
 * \brief Inverted dropout, as Keras's Dropout.
 * \ingroup layers
 *
 * \code
 * #include <onelearn/nn/layers/dropout.hpp>
 *
 * onelearn::nn::Sequential<float> model{onelearn::nn::Dense(128, "relu"),
 *                                       onelearn::nn::Dropout{0.2},  // or {0.2, 42}: own seed
 *                                       onelearn::nn::Dense(10)};
 * \endcode
 *
 * nn::Dropout: during training each entry is zeroed with probability `rate` and the others are
 * scaled by 1 / (1 - rate) (inverted dropout, as Keras and PyTorch); at inference the layer is
 * the identity (it returns its input, no copy).
 *
 * Method: the mask of the n-th training call is counter-based: the entries of the row at
 * position p of the global batch are drawn from a splitmix64 stream keyed by (seed, n, p), one
 * 64-bit draw per entry compared with rate · 2^64. So a mask is reproducible from the seed, the
 * call count and the row's position alone (checkpoints replay the count), and under
 * data-parallel training each rank draws the masks of its own rows of the global batch
 * (Sequential passes the rows' offset through Layer::begin_batch): the ranks' masks differ from
 * one another (per-rank streams derived from the seed), and together they are the masks one
 * process draws for the whole global batch, so a data-parallel fit equals one process's fit.
 * Without begin_batch (a layer called by hand) the batch's rows are positions 0, 1, ... Without
 * an explicit seed, the layer's seed is derived from the fit seed and the layer's position;
 * data-parallel fit broadcasts rank 0's seed and count (rng_state()) with the weights.
 *
 * \par Differences from Keras
 * - Keras draws masks from a stateful generator per call; here they are keyed by the global
 *   row index, so masks do not depend on how the batch is split over processes.
 *
 * Errors: `invalid_argument` for rate outside [0, 1).
 */

#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "onelearn/core/errors.hpp"
#include "onelearn/nn/detail/random.hpp"
#include "onelearn/nn/layer.hpp"

namespace onelearn::nn {

struct Dropout;

template <class T>
class DropoutLayer final : public Layer<T> {
 public:
  DropoutLayer(double rate, std::optional<std::uint64_t> seed) : rate_(rate), seeded_(seed.has_value()) {
    if (!(rate >= 0 && rate < 1)) {
      throw invalid_argument("Dropout: expected rate in [0, 1), found " + std::to_string(rate));
    }
    if (seed) stream_[0] = static_cast<std::int64_t>(*seed);
  }

  [[nodiscard]] std::string_view class_name() const override { return "Dropout"; }
  [[nodiscard]] Shape output_shape(const Shape& input) const override { return input; }

  /// Takes the model's seed unless the layer has its own or was built before (a rebuild keeps
  /// the masks' seed, as checkpoints expect).
  void build(const Shape& /*input*/, std::uint64_t seed) override {
    if (seeded_) return;
    stream_[0] = static_cast<std::int64_t>(seed);
    seeded_ = true;
  }

  /// The next training call's rows start at row context.offset of the global batch.
  void begin_batch(const BatchContext& context) override { offset_ = context.offset; }

  /// A step without rows on this rank: the call count advances as on the other ranks.
  void shadow_forward() override {
    if (rate_ > 0) ++stream_[1];
    offset_ = 0;
  }

  TensorView<const T> forward(TensorView<const T> x, bool training) override {
    masked_ = training && rate_ > 0;
    if (!masked_) return x;
    // Entries whose 64-bit draw falls below rate · 2^64 are dropped.
    // rate < 1, so rate · 2^64 < 2^64 fits.
    const auto threshold = static_cast<std::uint64_t>(std::ldexp(rate_, 64));
    const T scale = static_cast<T>(1.0 / (1.0 - rate_));
    const std::uint64_t step = detail::derive_seed(seed(), calls());
    ++stream_[1];
    const auto first = static_cast<std::uint64_t>(offset_);
    offset_ = 0;  // begin_batch's offset is for this call only
    mask_.reshape(x.shape);
    y_.reshape(x.shape);
    T* m = mask_.data();
    const index_t rows = x.batch();
    const index_t width = rows > 0 ? x.size() / rows : 0;
    for (index_t r = 0; r < rows; ++r) {
      // The row's stream: keyed by its global position, so no rank depends on another's rows.
      detail::SplitMix gen(detail::derive_seed(step, first + static_cast<std::uint64_t>(r)));
      T* mr = m + r * width;
      for (index_t j = 0; j < width; ++j) mr[j] = gen.next() < threshold ? T(0) : scale;
    }
    y_.array() = x.array() * mask_.array();
    return y_.view();
  }

  TensorView<const T> backward(TensorView<const T> grad_output, bool need_input_grad) override {
    if (!need_input_grad) return {};
    if (!masked_) return grad_output;
    dx_.reshape(grad_output.shape);
    dx_.array() = grad_output.array() * mask_.array();
    return dx_.view();
  }

  /// [seed, training calls made so far]: what keys the masks (broadcast by data-parallel fit).
  [[nodiscard]] std::span<std::int64_t> rng_state() override { return stream_; }

  /// Training calls made so far (the mask stream's position).
  [[nodiscard]] std::uint64_t calls() const noexcept {
    return static_cast<std::uint64_t>(stream_[1]);
  }
  /// The seed the masks are keyed by (the explicit one, else build's).
  [[nodiscard]] std::uint64_t seed() const noexcept {
    return static_cast<std::uint64_t>(stream_[0]);
  }

 private:
  double rate_;
  bool seeded_;  // an explicit seed, or built once
  // [seed, calls] as int64 (bit patterns of the uint64 values), so that a collective can carry
  // them; calls counts training calls with rate > 0.
  std::array<std::int64_t, 2> stream_{0, 0};
  index_t offset_ = 0;
  bool masked_ = false;
  Tensor<T> mask_, y_, dx_;
};

struct Dropout {
  double rate = 0.5;
  std::optional<std::uint64_t> seed = std::nullopt;

  template <class T>
  [[nodiscard]] std::unique_ptr<Layer<T>> make() const {
    return std::make_unique<DropoutLayer<T>>(rate, seed);
  }
};

}  // namespace onelearn::nn
