#pragma once
/**
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
 * Method: the mask of the n-th training call is drawn from a splitmix64 stream keyed by
 * (seed, n), one 64-bit draw per entry compared with rate · 2^64, so it is reproducible from
 * the seed and the call count alone (checkpoints, ranks). Without an explicit seed, the layer's
 * seed is derived from the fit seed and the layer's position.
 *
 * Errors: `invalid_argument` for rate outside [0, 1).
 */

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
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
  DropoutLayer(double rate, std::optional<std::uint64_t> seed) : rate_(rate), seed_(seed) {
    if (!(rate >= 0 && rate < 1)) {
      throw invalid_argument("Dropout: expected rate in [0, 1), found " + std::to_string(rate));
    }
  }

  [[nodiscard]] std::string_view class_name() const override { return "Dropout"; }
  [[nodiscard]] Shape output_shape(const Shape& input) const override { return input; }

  void build(const Shape& /*input*/, std::uint64_t seed) override {
    if (!seed_) seed_ = seed;
  }

  TensorView<const T> forward(TensorView<const T> x, bool training) override {
    masked_ = training && rate_ > 0;
    if (!masked_) return x;
    // Entries whose 64-bit draw falls below rate · 2^64 are dropped.
    // rate < 1, so rate · 2^64 < 2^64 fits.
    const auto threshold = static_cast<std::uint64_t>(std::ldexp(rate_, 64));
    const T scale = static_cast<T>(1.0 / (1.0 - rate_));
    detail::SplitMix gen(detail::derive_seed(seed_.value_or(0), calls_++));
    mask_.reshape(x.shape);
    y_.reshape(x.shape);
    T* m = mask_.data();
    for (index_t i = 0; i < x.size(); ++i) m[i] = gen.next() < threshold ? T(0) : scale;
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

  /// Training calls made so far (the mask stream's position).
  [[nodiscard]] std::uint64_t calls() const noexcept { return calls_; }

 private:
  double rate_;
  std::optional<std::uint64_t> seed_;
  std::uint64_t calls_ = 0;
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
