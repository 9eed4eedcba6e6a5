#pragma once
/**
 * \class onelearn::nn::Reshape
 * \brief Gives each sample a new shape, as Keras's Reshape.
 * \ingroup layers
 *
 * \code
 * #include <onelearn/nn/layers/reshape.hpp>
 *
 * namespace nn = onelearn::nn;
 * // Rows of 64 pixel values, seen as 1 x 8 x 8 images by the convolution.
 * nn::Sequential<float> model{nn::Reshape({1, 8, 8}), nn::Conv2D(8, 3, {.activation = "relu"}),
 *                             nn::Flatten{}, nn::Dense(10)};
 * \endcode
 *
 * nn::Reshape: gives each sample a new shape with the same number of values, as Keras's
 * Reshape (target_shape without the batch dimension; one dimension may be -1, inferred).
 * Row-major data keeps its order, so forward and backward return views of the same buffers
 * with the other shape: no copy.
 *
 * With an Input of the image shape (nn::Input({1, 8, 8})) Sequential already passes flat rows
 * as images; Reshape is for models whose input shape is inferred from the data's width, or for
 * reshaping between layers.
 *
 * Errors: `invalid_argument` at construction for an empty target, a dimension < 1 other than
 * one -1; `shape_error` when the input's size does not match the target's.
 */

#include <memory>
#include <string>
#include <string_view>

#include "onelearn/core/errors.hpp"
#include "onelearn/nn/layer.hpp"

namespace onelearn::nn {

template <class T>
class ReshapeLayer final : public Layer<T> {
 public:
  explicit ReshapeLayer(const Shape& target) : target_(target) {
    int unknown = 0;
    for (int i = 0; i < target.rank(); ++i) {
      if (target[i] == -1) {
        ++unknown;
      } else if (target[i] < 1) {
        unknown = 2;
      }
    }
    if (target.rank() == 0 || unknown > 1) {
      throw invalid_argument(
          "Reshape: expected a target shape of positive dimensions with at most one -1, found " +
          target.to_string());
    }
  }

  [[nodiscard]] std::string_view class_name() const override { return "Reshape"; }

  [[nodiscard]] Shape output_shape(const Shape& input) const override {
    Shape out = target_;
    index_t known = 1;
    int unknown = -1;
    for (int i = 0; i < out.rank(); ++i) {
      if (out[i] == -1) {
        unknown = i;
      } else {
        known *= out[i];
      }
    }
    if (unknown >= 0 && input.size() % known == 0) out[unknown] = input.size() / known;
    if (out.size() != input.size() || (unknown >= 0 && out[unknown] < 1)) {
      throw shape_error("Reshape: expected an input of " + std::to_string(out.size()) +
                        " values per sample for the target shape " + target_.to_string() +
                        ", found " + input.to_string() + " (" + std::to_string(input.size()) +
                        " values)");
    }
    return out;
  }

  void build(const Shape& input, std::uint64_t /*seed*/) override { out_ = output_shape(input); }

  TensorView<const T> forward(TensorView<const T> x, bool /*training*/) override {
    const Shape sample = x.shape.without_batch();
    if (!(sample == in_)) {
      out_ = output_shape(sample);
      in_ = sample;
    }
    input_shape_ = x.shape;
    return {x.data, out_.with_batch(x.batch())};
  }

  TensorView<const T> backward(TensorView<const T> grad_output, bool need_input_grad) override {
    if (!need_input_grad) return {};
    return {grad_output.data, input_shape_};
  }

 private:
  Shape target_, in_, out_, input_shape_;
};

/// The spec: nn::Reshape({1, 8, 8}) (per-sample shape; one dimension may be -1).
struct Reshape {
  Shape target_shape{};

  explicit Reshape(Shape target) : target_shape(target) {}

  template <class T>
  [[nodiscard]] std::unique_ptr<Layer<T>> make() const {
    return std::make_unique<ReshapeLayer<T>>(target_shape);
  }
};

}  // namespace onelearn::nn
