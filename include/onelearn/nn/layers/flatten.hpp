#pragma once
/**
 * \class onelearn::nn::Flatten
 * \brief Flattens each sample to one axis, as Keras's Flatten.
 * \ingroup layers
 *
 * \code
 * #include <onelearn/nn/layers/flatten.hpp>
 *
 * onelearn::nn::Sequential<float> model{onelearn::nn::Input({1, 8, 8}), onelearn::nn::Flatten{},
 *                                       onelearn::nn::Dense(10)};
 * \endcode
 *
 * nn::Flatten: (batch, d1, d2, ...) to (batch, d1·d2·...), as Keras's Flatten. Row-major data
 * is already laid out that way, so forward and backward return views of the same buffers with
 * the other shape: no copy.
 */

#include <memory>
#include <string_view>

#include "onelearn/nn/layer.hpp"

namespace onelearn::nn {

template <class T>
class FlattenLayer final : public Layer<T> {
 public:
  [[nodiscard]] std::string_view class_name() const override { return "Flatten"; }

  [[nodiscard]] Shape output_shape(const Shape& input) const override {
    return Shape{input.size()};
  }

  TensorView<const T> forward(TensorView<const T> x, bool /*training*/) override {
    input_shape_ = x.shape;
    return {x.data, Shape{x.batch(), x.batch() == 0 ? 0 : x.size() / x.batch()}};
  }

  TensorView<const T> backward(TensorView<const T> grad_output, bool need_input_grad) override {
    if (!need_input_grad) return {};
    return {grad_output.data, input_shape_};
  }

 private:
  Shape input_shape_;
};

struct Flatten {
  template <class T>
  [[nodiscard]] std::unique_ptr<Layer<T>> make() const {
    return std::make_unique<FlattenLayer<T>>();
  }
};

}  // namespace onelearn::nn
