#pragma once
/**
 * \class onelearn::nn::MaxPool2D
 * \brief The maximum over each window of each channel, as Keras's MaxPooling2D.
 * \ingroup layers
 *
 * \code
 * #include <onelearn/nn/layers/max_pool2d.hpp>
 *
 * namespace nn = onelearn::nn;
 * nn::Sequential<float> model{nn::Input({1, 28, 28}), nn::Conv2D(16, 3, {.padding = "same"}),
 *                             nn::ReLU{}, nn::MaxPool2D(2),  // 16 x 14 x 14
 *                             nn::MaxPool2D(3, {.strides = 2, .padding = "same"}),
 *                             nn::Flatten{}, nn::Dense(10)};
 * \endcode
 *
 * nn::MaxPool2D: the maximum over each window of each channel, as Keras's MaxPooling2D and
 * PyTorch's MaxPool2d, on (N, C, H, W) batches (channels first, as PyTorch and ONNX; Keras's
 * default is channels-last).
 *
 * Method: a direct loop per output over the part of its window inside the image (padding is
 * never read, so it acts as -inf); the position of the first maximum in row-major window order
 * is recorded, and backward sends each output's gradient to it (ties go to the first maximum,
 * as PyTorch; Keras/TensorFlow do the same on CPU). See nn/detail/pool.hpp. Chunks of 64
 * planes (one channel of one sample each) run on OpenMP threads (core/detail/parallel.hpp).
 *
 * \par Parameters (MaxPool2D(pool_size, PoolOptions))
 * - `pool_size` (Size2: 2 or {2, 3}, default 2).
 * - `strides` (Size2): default pool_size (Keras's and PyTorch's default; the default value
 *   {0, 0} stands for it).
 * - `padding` (default "valid"): "valid", "same" (TensorFlow's rule, see Conv2D) or explicit
 *   sizes p, {ph, pw}, {top, bottom, left, right}, each smaller than the pool size (so every
 *   window holds an image position).
 *
 * \par Accessors
 * pool_size(), strides() (the pool size when not given), padding() (as given);
 * geometry(input): the window over a (C, H, W) input, padding sizes resolved.
 *
 * \par Differences from Keras / PyTorch
 * - Explicit padding sizes (Keras has only valid / same); no dilation and no ceil_mode
 *   (PyTorch's), no return_indices.
 *
 * Errors: `invalid_argument` at construction for pool_size or strides < 1, an unknown padding,
 * or explicit padding not smaller than the pool; `shape_error` for input that is not
 * (C, H, W) per sample, or smaller than the pool after padding.
 */

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/nn/detail/im2col.hpp"
#include "onelearn/nn/detail/pool.hpp"
#include "onelearn/nn/layer.hpp"

namespace onelearn::nn {

/// Options of MaxPool2D and AveragePool2D.
struct PoolOptions {
  Size2 strides{0, 0};  ///< {0, 0} (the default): the pool size
  Padding2D padding{};
  /// AveragePool2D only: divide by the whole window, padding included (PyTorch's default),
  /// instead of by the number of image positions in it (Keras's rule, the default here).
  bool count_include_pad = false;
};

namespace detail {

/// What the two pooling layers share: options, geometry and shape checks.
class PoolBase {
 public:
  PoolBase(std::string_view name, Size2 pool, const PoolOptions& options)
      : name_(name), pool_(pool), strides_(options.strides == Size2{0, 0} ? pool : options.strides),
        padding_(options.padding) {
    check_size2(name, "pool_size", pool_);
    check_size2(name, "strides", strides_);
    check_pool_padding(name, padding_, pool_);
  }

  [[nodiscard]] Size2 pool_size() const noexcept { return pool_; }
  /// The strides in use (the pool size when the options left the default).
  [[nodiscard]] Size2 strides() const noexcept { return strides_; }
  /// The padding as given ("valid", "same" or sizes); geometry(input) has the resolved sizes.
  [[nodiscard]] const Padding2D& padding() const noexcept { return padding_; }

  /// The window over a per-sample input shape (C, H, W): padding sizes resolved ("same"),
  /// output size; shape_error as output_shape.
  [[nodiscard]] WindowGeometry geometry(const Shape& input) const {
    return make_geometry(name_, input, pool_, strides_, Size2{1}, padding_);
  }

  [[nodiscard]] Shape pooled_shape(const Shape& input) const {
    const WindowGeometry g = geometry(input);
    return Shape{g.channels, g.out_h, g.out_w};
  }

  /// Resolves the geometry for a batch (cached: recomputed only when the shape changes).
  const WindowGeometry& batch_geometry(const Shape& batch_shape) {
    if (!(batch_shape.rank() == 4 && batch_shape.without_batch() == input_shape_)) {
      if (batch_shape.rank() != 4) {
        throw shape_error(std::string(name_) +
                          ".forward: expected a batch of shape (N, C, H, W), found " +
                          batch_shape.to_string());
      }
      input_shape_ = batch_shape.without_batch();
      geom_ = geometry(input_shape_);
    }
    return geom_;
  }

 protected:
  std::string_view name_;  // a string literal
  Size2 pool_, strides_;
  Padding2D padding_;
  Shape input_shape_;
  WindowGeometry geom_{};
};

}  // namespace detail

template <class T>
class MaxPool2DLayer final : public Layer<T>, private detail::PoolBase {
 public:
  MaxPool2DLayer(Size2 pool_size, const PoolOptions& options)
      : detail::PoolBase("MaxPool2D", pool_size, options) {}

  // The settings (Keras's config names) and the resolved window: see detail::PoolBase.
  using detail::PoolBase::geometry;
  using detail::PoolBase::padding;
  using detail::PoolBase::pool_size;
  using detail::PoolBase::strides;

  [[nodiscard]] std::string_view class_name() const override { return "MaxPool2D"; }
  [[nodiscard]] Shape output_shape(const Shape& input) const override {
    return pooled_shape(input);
  }

  TensorView<const T> forward(TensorView<const T> x, bool /*training*/) override {
    const detail::WindowGeometry& g = batch_geometry(x.shape);
    const index_t planes = x.batch() * g.channels;
    x_shape_ = x.shape;
    y_.reshape(Shape{x.batch(), g.channels, g.out_h, g.out_w});
    const auto n = static_cast<std::size_t>(y_.size());
    if (argmax_.size() < n) argmax_.resize(n);
    const index_t in = g.in_size(), out = g.out_size();
    // Planes are independent: chunks of them run on threads.
    onelearn::detail::for_each_chunk(planes, plane_grain, [&](index_t, index_t b, index_t e) {
      detail::max_pool_forward(g, e - b, x.data + b * in, y_.data() + b * out,
                               argmax_.data() + b * out);
    });
    return y_.view();
  }

  TensorView<const T> backward(TensorView<const T> grad_output, bool need_input_grad) override {
    if (!need_input_grad) return {};
    dx_.reshape(x_shape_);
    const index_t in = geom_.in_size(), out = geom_.out_size();
    onelearn::detail::for_each_chunk(
        x_shape_[0] * geom_.channels, plane_grain, [&](index_t, index_t b, index_t e) {
          detail::max_pool_backward(geom_, e - b, grad_output.data + b * out,
                                    argmax_.data() + b * out, dx_.data() + b * in);
        });
    return dx_.view();
  }

 private:
  static constexpr index_t plane_grain = 64;  // planes per chunk of the threaded loops
  Shape x_shape_;
  Tensor<T> y_, dx_;
  AlignedVector<index_t> argmax_;  // flat index in its plane of each output's maximum
};

/// The spec: nn::MaxPool2D(2), nn::MaxPool2D({3, 3}, {.strides = 2, .padding = "same"}).
struct MaxPool2D {
  Size2 pool_size{2};
  PoolOptions options{};

  MaxPool2D(Size2 pool_size_ = Size2{2}, PoolOptions options_ = {})  // NOLINT
      : pool_size(pool_size_), options(std::move(options_)) {}

  template <class T>
  [[nodiscard]] std::unique_ptr<Layer<T>> make() const {
    return std::make_unique<MaxPool2DLayer<T>>(pool_size, options);
  }
};

}  // namespace onelearn::nn
