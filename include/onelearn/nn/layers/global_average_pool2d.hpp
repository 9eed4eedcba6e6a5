#pragma once
/**
 * \class onelearn::nn::GlobalAveragePool2D
 * \brief The mean of each channel over all positions, as Keras's GlobalAveragePooling2D.
 * \ingroup layers
 *
 * \code
 * #include <onelearn/nn/layers/global_average_pool2d.hpp>
 *
 * namespace nn = onelearn::nn;
 * nn::Sequential<float> model{nn::Input({1, 8, 8}), nn::Conv2D(32, 3, {.activation = "relu"}),
 *                             nn::GlobalAveragePool2D{},  // (32, 6, 6) -> (32)
 *                             nn::Dense(10)};
 * \endcode
 *
 * nn::GlobalAveragePool2D: the mean of each channel over all its positions, (N, C, H, W) to
 * (N, C), as Keras's GlobalAveragePooling2D (keepdims=False) and ONNX's GlobalAveragePool
 * followed by a flatten. Channels first, as PyTorch and ONNX (Keras's default is channels-last).
 * Backward spreads each gradient evenly, dy / (H·W), over the channel's positions.
 *
 * Differences from Keras: no keepdims option (the output is always (N, C)).
 *
 * Errors: `shape_error` for input that is not (C, H, W) per sample.
 */

#include <memory>
#include <string>
#include <string_view>

#include "onelearn/core/errors.hpp"
#include "onelearn/nn/layer.hpp"

namespace onelearn::nn {

template <class T>
class GlobalAveragePool2DLayer final : public Layer<T> {
 public:
  [[nodiscard]] std::string_view class_name() const override { return "GlobalAveragePool2D"; }

  [[nodiscard]] Shape output_shape(const Shape& input) const override {
    check(input, "GlobalAveragePool2D");
    return Shape{input[0]};
  }

  TensorView<const T> forward(TensorView<const T> x, bool /*training*/) override {
    if (x.shape.rank() != 4) check(x.shape.without_batch(), "GlobalAveragePool2D.forward");
    x_shape_ = x.shape;
    const index_t planes = x.shape[0] * x.shape[1], area = x.shape[2] * x.shape[3];
    y_.reshape(Shape{x.shape[0], x.shape[1]});
    // Each plane is a column of this (area x planes) column-major view.
    const Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>> X(x.data, area,
                                                                                planes);
    Eigen::Map<Eigen::Matrix<T, 1, Eigen::Dynamic>>(y_.data(), planes) =
        X.colwise().sum() / static_cast<T>(area);
    return y_.view();
  }

  TensorView<const T> backward(TensorView<const T> grad_output, bool need_input_grad) override {
    if (!need_input_grad) return {};
    dx_.reshape(x_shape_);
    const index_t planes = x_shape_[0] * x_shape_[1], area = x_shape_[2] * x_shape_[3];
    Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>> dX(dx_.data(), area, planes);
    const Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>> dY(grad_output.data, planes);
    dX.rowwise() = dY / static_cast<T>(area);
    return dx_.view();
  }

 private:
  static void check(const Shape& input, std::string_view where) {
    if (input.rank() == 3 && input.size() > 0) return;
    throw shape_error(std::string(where) +
                      ": expected input of shape (channels, height, width) per sample "
                      "(N, C, H, W batches), found " +
                      input.to_string());
  }

  Shape x_shape_;
  Tensor<T> y_, dx_;
};

struct GlobalAveragePool2D {
  template <class T>
  [[nodiscard]] std::unique_ptr<Layer<T>> make() const {
    return std::make_unique<GlobalAveragePool2DLayer<T>>();
  }
};

}  // namespace onelearn::nn
