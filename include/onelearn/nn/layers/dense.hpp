#pragma once
/**
 * \class onelearn::nn::Dense
 * \brief A fully connected layer, as Keras's Dense.
 * \ingroup layers
 *
 * \code
 * #include <onelearn/nn/layers/dense.hpp>
 *
 * onelearn::nn::Sequential<float> model{
 *     onelearn::nn::Input({64}),
 *     onelearn::nn::Dense(128, {.activation = "relu", .kernel_initializer = "he_uniform"}),
 *     onelearn::nn::Dense(10, {.kernel_l2 = 1e-4})};
 * \endcode
 *
 * nn::Dense: a fully connected layer, y = activation(x W + b), as Keras's Dense. W is
 * (input width x units), Keras's kernel layout; on N-d input it acts on the last axis (Keras).
 *
 * Method: the batch is one (rows x input width) row-major matrix, so forward is one GEMM
 * into the layer's own output buffer, which holds the broadcast bias first (the GEMM adds onto
 * it: no separate pass); backward is dW = xᵀ dz (+ 2 l2 W, written first likewise),
 * db = column sums of dz, dx = dz Wᵀ (skipped for the first layer of a network). The GEMMs run
 * on Eigen's kernel with persistent packing buffers (nn/detail/gemm.hpp). W and b live in one
 * contiguous buffer, and so do their gradients (one all-reduce bucket per layer). The products
 * and the activation run through the layer's NetworkKernels (nn/network_kernels.hpp): the host's,
 * or the compute space's that Sequential<T, Exec, Space> hands it.
 *
 * \par Parameters (DenseOptions)
 * - `activation` (string, default "" = linear): linear, relu, leaky_relu (slope 0.2, as
 *   keras.activations.leaky_relu), elu (alpha 1), gelu (exact erf), sigmoid, tanh, softmax,
 *   log_softmax. Fused into the layer: no separate buffer pass through another layer.
 * - `use_bias` (default true).
 * - `kernel_initializer` (default "glorot_uniform"): glorot_uniform, glorot_normal, he_uniform,
 *   he_normal (Keras's formulas, normal ones truncated at 2 sigma), zeros. The bias starts at 0.
 * - `kernel_l2` (default 0): Keras's kernel_regularizer=L2(kernel_l2): adds
 *   kernel_l2 · Σ W² to the loss and 2 kernel_l2 W to the kernel's gradient.
 * - `seed` (optional): seed of the kernel's initial values; without it the layer's seed is
 *   derived from the fit seed and the layer's position.
 *
 * \par Accessors
 * units(), activation() (the fused one), alpha() (its slope), use_bias(); parameters() const:
 * read-only [kernel, bias].
 *
 * \par Differences from Keras
 * - No bias_initializer, bias/activity regularisers or constraints.
 *
 * Errors: `invalid_argument` for units < 1, an unknown activation or initializer, kernel_l2 < 0
 * (at construction); `shape_error` for input of rank 0.
 */

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/nn/detail/activation_kernels.hpp"
#include "onelearn/nn/detail/random.hpp"
#include "onelearn/nn/layer.hpp"
#include "onelearn/nn/network_kernels.hpp"

namespace onelearn::nn {

template <class T>
class DenseLayer;

struct DenseOptions {
  std::string activation{};  ///< "" or "linear": none
  bool use_bias = true;
  std::string kernel_initializer = "glorot_uniform";
  double kernel_l2 = 0;                 ///< L2 regularisation factor of the kernel
  std::optional<std::uint64_t> seed{};  ///< kernel initialisation seed
};

/// The spec of a Dense layer: nn::Dense(64, {.activation = "relu"}) or nn::Dense(64, "relu").
struct Dense {
  index_t units = 1;
  DenseOptions options{};

  explicit Dense(index_t units_, DenseOptions options_ = {})
      : units(units_), options(std::move(options_)) {}
  /// A C string, not std::string, so that Dense(3, {.use_bias = false}) is not ambiguous.
  Dense(index_t units_, const char* activation) : units(units_) { options.activation = activation; }

  template <class T>
  [[nodiscard]] std::unique_ptr<Layer<T>> make() const {
    return std::make_unique<DenseLayer<T>>(*this);
  }
};

template <class T>
class DenseLayer final : public Layer<T> {
 public:
  explicit DenseLayer(const Dense& spec)
      : units_(spec.units),
        use_bias_(spec.options.use_bias),
        l2_(static_cast<T>(spec.options.kernel_l2)),
        l2_double_(spec.options.kernel_l2),
        seed_(spec.options.seed),
        initializer_(detail::parse_initializer("Dense", spec.options.kernel_initializer)),
        activation_(detail::parse_activation("Dense", spec.options.activation)) {
    if (units_ < 1) {
      throw invalid_argument("Dense: expected units >= 1, found " + std::to_string(units_));
    }
    if (!(spec.options.kernel_l2 >= 0)) {
      throw invalid_argument("Dense: expected kernel_l2 >= 0, found " +
                             std::to_string(spec.options.kernel_l2));
    }
    if (activation_ == detail::Activation::leaky_relu) alpha_ = T(0.2);
    if (activation_ == detail::Activation::elu) alpha_ = T(1);
  }

  [[nodiscard]] std::string_view class_name() const override { return "Dense"; }

  [[nodiscard]] Shape output_shape(const Shape& input) const override {
    if (input.rank() < 1) {
      throw shape_error("Dense: expected input with at least one dimension per sample, found " +
                        input.to_string());
    }
    Shape out = input;
    out[out.rank() - 1] = units_;
    return out;
  }

  [[nodiscard]] index_t parameter_count(const Shape& input) const override {
    return input.rank() < 1 ? 0 : input.back() * units_ + (use_bias_ ? units_ : 0);
  }

  void build(const Shape& input, std::uint64_t seed) override {
    (void)output_shape(input);
    in_ = input.back();
    const auto n = static_cast<std::size_t>(in_ * units_ + (use_bias_ ? units_ : 0));
    params_.assign(n, T(0));
    grads_.assign(n, T(0));
    detail::initialize<T>(initializer_, in_, units_, seed_.value_or(seed),
                          std::span<T>(params_.data(), static_cast<std::size_t>(in_ * units_)));
  }

  TensorView<const T> forward(TensorView<const T> x, bool /*training*/) override {
    x_ = x;
    Shape out_shape = x.shape;
    out_shape[out_shape.rank() - 1] = units_;
    z_.reshape(out_shape);
    kernels_->dense_forward(x.data, params_.data(), use_bias_ ? bias_data() : nullptr, z_.data(),
                            sizes(x.size()));
    if (activation_ == detail::Activation::linear) return z_.view();
    y_.reshape(out_shape);
    kernels_->activation_forward(activation_, alpha_, z_.view(), y_.view());
    return y_.view();
  }

  TensorView<const T> backward(TensorView<const T> grad_output, bool need_input_grad) override {
    TensorView<const T> dz = grad_output;
    if (activation_ != detail::Activation::linear) {
      dz_.reshape(grad_output.shape);
      kernels_->activation_backward(activation_, alpha_, z_.view(), y_.view(), grad_output,
                                    dz_.view());
      dz = dz_.view();
    }
    const DenseSizes n = sizes(x_.size());
    const T two_l2 = l2_double_ > 0 ? T(2) * l2_ : T(0);
    kernels_->dense_parameter_gradients(x_.data, dz.data, params_.data(), two_l2, grads_.data(),
                                        use_bias_ ? grads_.data() + in_ * units_ : nullptr, n);
    if (!need_input_grad) return {};
    dx_.reshape(x_.shape);
    kernels_->dense_input_gradient(dz.data, params_.data(), dx_.data(), n);
    return dx_.view();
  }

  void use_kernels(const NetworkKernels<T>& kernels) override { kernels_ = &kernels; }
  /// The kernels the layer runs: the host's, or its Sequential's compute space's.
  [[nodiscard]] const NetworkKernels<T>& kernels() const noexcept { return *kernels_; }

  [[nodiscard]] std::vector<std::span<T>> parameters() override { return split<T>(params_); }
  [[nodiscard]] std::vector<std::span<T>> gradients() override { return split<T>(grads_); }

  [[nodiscard]] double regularization_loss() const override {
    if (l2_double_ == 0 || params_.empty()) return 0;
    return l2_double_ * kernel().template cast<double>().squaredNorm();
  }

  /// Read-only parameters(): [kernel (input width x units, row-major), bias] (empty before
  /// build), for code that holds a const layer (ONNX export).
  [[nodiscard]] std::vector<std::span<const T>> parameters() const {
    return split<const T>(params_);
  }

  // The settings, under Keras's config names.
  [[nodiscard]] index_t units() const noexcept { return units_; }
  /// The fused activation (linear when none).
  [[nodiscard]] detail::Activation activation() const noexcept { return activation_; }
  /// The fused activation's slope: 0.2 for leaky_relu, 1 for elu, 0 (unused) otherwise.
  [[nodiscard]] T alpha() const noexcept { return alpha_; }
  [[nodiscard]] bool use_bias() const noexcept { return use_bias_; }

 private:
  [[nodiscard]] Eigen::Map<const Matrix<T>> kernel() const { return {params_.data(), in_, units_}; }
  [[nodiscard]] const T* bias_data() const { return params_.data() + in_ * units_; }
  /// The products' sizes for an input of `size` values (N-d input: rows along the last axis).
  [[nodiscard]] DenseSizes sizes(index_t size) const { return {in_ == 0 ? 0 : size / in_, in_, units_}; }

  /// [kernel, bias] views of one contiguous buffer (U: T, or const T for read-only views).
  template <class U>
  std::vector<std::span<U>> split(std::span<U> buffer) const {
    if (buffer.empty()) return {};
    const auto k = static_cast<std::size_t>(in_ * units_);
    std::vector<std::span<U>> out{buffer.first(k)};
    if (use_bias_) out.push_back(buffer.subspan(k, static_cast<std::size_t>(units_)));
    return out;
  }

  index_t units_;
  bool use_bias_;
  T l2_;
  double l2_double_;
  std::optional<std::uint64_t> seed_;
  detail::Initializer initializer_;
  detail::Activation activation_;
  T alpha_ = T(0);
  index_t in_ = 0;
  AlignedVector<T> params_, grads_;  // [kernel | bias], one block each
  TensorView<const T> x_;
  Tensor<T> z_, y_, dz_, dx_;
  const NetworkKernels<T>* kernels_ = &host_network_kernels<T>();
};

}  // namespace onelearn::nn
