#pragma once
/**
 * \class onelearn::nn::AveragePool2D
 * \brief The mean over each window of each channel, as Keras's AveragePooling2D.
 * \ingroup layers
 *
 * \code
 * #include <onelearn/nn/layers/average_pool2d.hpp>
 *
 * namespace nn = onelearn::nn;
 * nn::Sequential<float> model{nn::Input({3, 32, 32}), nn::Conv2D(16, 3, {.padding = "same"}),
 *                             nn::AveragePool2D(2),                              // 16 x 16 x 16
 *                             nn::AveragePool2D(3, {.strides = 1, .padding = 1}),
 *                             nn::Flatten{}, nn::Dense(10)};
 * \endcode
 *
 * nn::AveragePool2D: the mean over each window of each channel, as Keras's AveragePooling2D
 * and PyTorch's AvgPool2d, on (N, C, H, W) batches (channels first, as PyTorch and ONNX;
 * Keras's default is channels-last). Backward spreads each output's gradient evenly over the
 * image positions of its window. See nn/detail/pool.hpp.
 *
 * \par Parameters (AveragePool2D(pool_size, PoolOptions))
 * - `pool_size`, `strides` (default pool_size), `padding`: as MaxPool2D.
 * - `count_include_pad` (default false): whether padded positions count in the divisor.
 *   The default is false, Keras's rule (TensorFlow's avg_pool with padding="same" divides by
 *   the number of image positions in the window) and ONNX AveragePool's default, so that an
 *   image border is not darkened by the zeros around it; PyTorch's AvgPool2d default is true
 *   (every window divides by kh·kw). Without padding the two agree.
 *
 * \par Accessors
 * As MaxPool2D's (pool_size(), strides(), padding(), geometry(input)), and count_include_pad().
 *
 * \par Differences from Keras / PyTorch
 * - Explicit padding sizes (Keras has only valid / same); no ceil_mode or divisor_override
 *   (PyTorch's).
 *
 * Errors: as MaxPool2D: `invalid_argument` at construction for pool_size or strides < 1, an
 * unknown padding, or explicit padding not smaller than the pool; `shape_error` for input that
 * is not (C, H, W) per sample, or smaller than the pool after padding.
 */

#include <memory>
#include <string_view>
#include <utility>

#include "onelearn/nn/detail/pool.hpp"
#include "onelearn/nn/layer.hpp"
#include "onelearn/nn/layers/max_pool2d.hpp"

namespace onelearn::nn {

template <class T>
class AveragePool2DLayer final : public Layer<T>, private detail::PoolBase {
 public:
  AveragePool2DLayer(Size2 pool_size, const PoolOptions& options)
      : detail::PoolBase("AveragePool2D", pool_size, options),
        count_include_pad_(options.count_include_pad) {}

  // The settings (Keras's config names) and the resolved window: see detail::PoolBase.
  using detail::PoolBase::geometry;
  using detail::PoolBase::padding;
  using detail::PoolBase::pool_size;
  using detail::PoolBase::strides;
  /// Whether padded positions count in the divisor (false: only the image positions do).
  [[nodiscard]] bool count_include_pad() const noexcept { return count_include_pad_; }

  [[nodiscard]] std::string_view class_name() const override { return "AveragePool2D"; }
  [[nodiscard]] Shape output_shape(const Shape& input) const override {
    return pooled_shape(input);
  }

  TensorView<const T> forward(TensorView<const T> x, bool /*training*/) override {
    const detail::WindowGeometry& g = batch_geometry(x.shape);
    x_shape_ = x.shape;
    y_.reshape(Shape{x.batch(), g.channels, g.out_h, g.out_w});
    detail::average_pool_forward(g, count_include_pad_, x.batch() * g.channels, x.data,
                                 y_.data());
    return y_.view();
  }

  TensorView<const T> backward(TensorView<const T> grad_output, bool need_input_grad) override {
    if (!need_input_grad) return {};
    dx_.reshape(x_shape_);
    detail::average_pool_backward(geom_, count_include_pad_, x_shape_[0] * geom_.channels,
                                  grad_output.data, dx_.data());
    return dx_.view();
  }

 private:
  bool count_include_pad_;
  Shape x_shape_;
  Tensor<T> y_, dx_;
};

/// The spec: nn::AveragePool2D(2), nn::AveragePool2D(3, {.strides = 1, .padding = "same"}).
struct AveragePool2D {
  Size2 pool_size{2};
  PoolOptions options{};

  AveragePool2D(Size2 pool_size_ = Size2{2}, PoolOptions options_ = {})  // NOLINT
      : pool_size(pool_size_), options(std::move(options_)) {}

  template <class T>
  [[nodiscard]] std::unique_ptr<Layer<T>> make() const {
    return std::make_unique<AveragePool2DLayer<T>>(pool_size, options);
  }
};

}  // namespace onelearn::nn
