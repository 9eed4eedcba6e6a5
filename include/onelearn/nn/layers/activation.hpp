#pragma once
/**
 * \file
 * \brief The activation layers: ReLU, LeakyReLU, ELU, GELU, Sigmoid, Tanh, Softmax, LogSoftmax.
 * \ingroup layers
 *
 * \code
 * #include <onelearn/nn/layers/activation.hpp>
 *
 * onelearn::nn::Sequential<float> model{onelearn::nn::Dense(64), onelearn::nn::LeakyReLU{0.1},
 *                                       onelearn::nn::Dense(10), onelearn::nn::Softmax{}};
 * \endcode
 *
 * The activation layers, as Keras's: ReLU, LeakyReLU(alpha = 0.3), ELU(alpha = 1),
 * GELU (exact: x Φ(x) with erf, PyTorch's default; Keras's gelu(approximate=False)),
 * Sigmoid, Tanh, Softmax and LogSoftmax (over the last axis). Each keeps its output and input
 * gradient buffers; backward uses the output where the derivative is a function of it
 * (sigmoid, tanh, softmax, log-softmax, ELU) and the input otherwise (ReLU, LeakyReLU, GELU).
 *
 * Accessors: activation() (which one, a detail::Activation), alpha() (LeakyReLU's and ELU's).
 *
 * Differences from Keras: Keras has no Sigmoid/Tanh/GELU/LogSoftmax layers (it uses
 * Activation("sigmoid") etc.); these are PyTorch's names. ReLU has no max_value/threshold.
 */

#include <memory>
#include <string_view>

#include "onelearn/nn/detail/activation_kernels.hpp"
#include "onelearn/nn/layer.hpp"
#include "onelearn/nn/network_kernels.hpp"

namespace onelearn::nn {

template <class T>
class ActivationLayer final : public Layer<T> {
 public:
  ActivationLayer(detail::Activation kind, double alpha, std::string_view name)
      : kind_(kind), alpha_(static_cast<T>(alpha)), name_(name) {}

  [[nodiscard]] std::string_view class_name() const override { return name_; }

  [[nodiscard]] Shape output_shape(const Shape& input) const override { return input; }

  /// Which activation this layer computes.
  [[nodiscard]] detail::Activation activation() const noexcept { return kind_; }
  /// LeakyReLU's and ELU's alpha, in the layer's precision (0 for the others).
  [[nodiscard]] T alpha() const noexcept { return alpha_; }

  void use_kernels(const NetworkKernels<T>& kernels) override { kernels_ = &kernels; }
  /// The kernels the layer runs: the host's, or its Sequential's compute space's.
  [[nodiscard]] const NetworkKernels<T>& kernels() const noexcept { return *kernels_; }

  TensorView<const T> forward(TensorView<const T> x, bool /*training*/) override {
    x_ = x;
    y_.reshape(x.shape);
    kernels_->activation_forward(kind_, alpha_, x, y_.view());
    return y_.view();
  }

  TensorView<const T> backward(TensorView<const T> grad_output, bool need_input_grad) override {
    if (!need_input_grad) return {};
    dx_.reshape(grad_output.shape);
    kernels_->activation_backward(kind_, alpha_, x_, y_.view(), grad_output, dx_.view());
    return dx_.view();
  }

 private:
  detail::Activation kind_;
  T alpha_;
  std::string_view name_;  // a string literal
  TensorView<const T> x_;
  Tensor<T> y_, dx_;
  const NetworkKernels<T>* kernels_ = &host_network_kernels<T>();
};

namespace detail {
template <Activation Kind>
struct SimpleActivationSpec {
  static constexpr std::string_view class_names[] = {
      "Linear", "ReLU", "LeakyReLU", "ELU", "GELU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax"};
  template <class T>
  [[nodiscard]] std::unique_ptr<Layer<T>> make() const {
    return std::make_unique<ActivationLayer<T>>(Kind, 0.0, class_names[static_cast<int>(Kind)]);
  }
};
}  // namespace detail

struct ReLU : detail::SimpleActivationSpec<detail::Activation::relu> {};
struct GELU : detail::SimpleActivationSpec<detail::Activation::gelu> {};
struct Sigmoid : detail::SimpleActivationSpec<detail::Activation::sigmoid> {};
struct Tanh : detail::SimpleActivationSpec<detail::Activation::tanh> {};
/// Softmax over the last axis.
struct Softmax : detail::SimpleActivationSpec<detail::Activation::softmax> {};
/// log(softmax(x)) over the last axis, computed as x - logsumexp(x).
struct LogSoftmax : detail::SimpleActivationSpec<detail::Activation::log_softmax> {};

/// x for x > 0, alpha x otherwise (Keras's default alpha 0.3; PyTorch's is 0.01).
struct LeakyReLU {
  double alpha = 0.3;
  template <class T>
  [[nodiscard]] std::unique_ptr<Layer<T>> make() const {
    return std::make_unique<ActivationLayer<T>>(detail::Activation::leaky_relu, alpha, "LeakyReLU");
  }
};

/// x for x > 0, alpha (exp(x) - 1) otherwise.
struct ELU {
  double alpha = 1.0;
  template <class T>
  [[nodiscard]] std::unique_ptr<Layer<T>> make() const {
    return std::make_unique<ActivationLayer<T>>(detail::Activation::elu, alpha, "ELU");
  }
};

}  // namespace onelearn::nn
