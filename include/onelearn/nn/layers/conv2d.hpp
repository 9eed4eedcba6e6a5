#pragma once
/**
 * \code
 * #include <onelearn/nn/layers/conv2d.hpp>
 *
 * namespace nn = onelearn::nn;
 * nn::Sequential<float> model{nn::Input({1, 28, 28}),                   // N, C, H, W batches
 *                             nn::Conv2D(16, 3, {.padding = "same", .activation = "relu"}),
 *                             nn::MaxPool2D(2),
 *                             nn::Conv2D(32, {3, 3}, {.strides = 2, .padding = {1, 1}}),
 *                             nn::Flatten{}, nn::Dense(10)};
 * \endcode
 *
 * nn::Conv2D: a 2-D convolution (cross-correlation, as every framework),
 * y[n, f] = activation(b[f] + Σ_c Σ_ij W[f, c, i, j] x[n, g(f)·C/groups + c, oh·sh - pt + i·dh,
 * ow·sw - pl + j·dw]), as Keras's Conv2D and PyTorch's Conv2d.
 *
 * Layout: input (N, C, H, W), output (N, filters, OH, OW): channels first, as PyTorch and ONNX
 * (Keras's default is channels-last, data_format="channels_last"; this library's images are
 * always channels-first). The kernel is stored as PyTorch's and ONNX's weight,
 * (filters, C / groups, kh, kw) row-major, followed by the bias (filters): one contiguous
 * buffer, split into the two spans of parameters(). Keras's kernel is (kh, kw, C / groups,
 * filters): transpose to exchange weights with Keras.
 *
 * Method: im2col + GEMM. For each sample and group the input windows are copied into a
 * (C/groups·kh·kw) x (OH·OW) matrix (nn/detail/im2col.hpp), and one GEMM (nn/detail/gemm.hpp,
 * Eigen's kernel with persistent packing buffers) multiplies the group's (filters/groups) x
 * (C/groups·kh·kw) kernel by it, writing straight into the sample's output, which holds the
 * broadcast bias first. Backward: dW += dY_n colsᵀ (GEMM), db = sums of dY, and for the input
 * gradient dcols = Wᵀ dY_n (GEMM) followed by col2im. The columns of the forward pass are kept
 * for the weight gradient (no second im2col). Per-sample GEMMs were measured against one
 * batched GEMM over every sample's columns (a (C/groups·kh·kw) x (N·OH·OW) matrix, whose
 * product must then be transposed back to N, C, H, W, and the output gradient forward to it):
 * on the BENCH.md cnn workload (float, batch 64, one thread, -O3 -march=native) the per-sample
 * form trained about 20% faster (9,100 against 7,400 samples per CPU second), so it is the one
 * kept: each sample's output is written in place, and its columns (at most a few hundred KiB)
 * stay in cache between im2col and the GEMM. Buffers only grow: no allocation per batch in
 * steady state.
 * A 1x1 kernel with stride 1 and no padding uses the input itself as its columns.
 *
 * \par Parameters (Conv2D(filters, kernel_size, Conv2DOptions))
 * - `filters` (>= 1) and `kernel_size` (Size2: 3 or {3, 5}).
 * - `strides` (default 1), `dilation_rate` (default 1): Size2.
 * - `padding` (default "valid"): "valid", "same" (TensorFlow's rule: output ceil(in / stride),
 *   the odd padding at the bottom / right; PyTorch's "same" exists for stride 1 only and puts it
 *   there too), or explicit zero padding: p, {ph, pw} (symmetric, PyTorch's padding=(ph, pw)) or
 *   {top, bottom, left, right}.
 * - `groups` (default 1): channels and filters are split into `groups` independent
 *   convolutions (Keras's groups, PyTorch's groups); filters must be divisible by it, and so
 *   must the input channels.
 * - `activation` (default "" = linear), `use_bias` (default true), `kernel_initializer`
 *   (default "glorot_uniform"; glorot_normal, he_uniform, he_normal, zeros), `kernel_l2`
 *   (default 0; adds kernel_l2 · Σ W² to the loss), `seed`: as Dense. Fans are Keras's:
 *   fan_in = C/groups · kh · kw, fan_out = filters · kh · kw. The bias starts at 0.
 *
 * \par Accessors
 * filters(), kernel_size(), strides(), dilation_rate(), padding() (as given), groups(),
 * activation() (the fused one), alpha() (its slope), use_bias(); geometry(): the built layer's
 * resolved window (padding sizes after "same", output size); parameters() const: read-only
 * [kernel, bias].
 *
 * \par Differences from Keras
 * - Channels-first data (see Layout), kernel in PyTorch's layout.
 * - Explicit (and asymmetric) padding sizes, which Keras's Conv2D lacks (it needs a
 *   ZeroPadding2D layer).
 * - No bias_initializer, bias/activity regularisers or constraints.
 *
 * Errors: `invalid_argument` at construction for filters < 1, kernel_size, strides or
 * dilation_rate < 1, groups < 1, filters not divisible by groups, an unknown padding,
 * activation or initializer, negative padding or kernel_l2; `shape_error` (output_shape, build,
 * forward) for input that is not (C, H, W) per sample, channels not divisible by groups, an
 * image smaller than the dilated kernel after padding, or a batch of another shape than the
 * one the layer was built for.
 */

#include <algorithm>
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
#include "onelearn/nn/detail/gemm.hpp"
#include "onelearn/nn/detail/im2col.hpp"
#include "onelearn/nn/detail/random.hpp"
#include "onelearn/nn/layer.hpp"

namespace onelearn::nn {
template <class T>
class Conv2DLayer;

struct Conv2DOptions {
  Size2 strides{1};
  Padding2D padding{};
  Size2 dilation_rate{1};
  index_t groups = 1;
  std::string activation{};  ///< "" or "linear": none
  bool use_bias = true;
  std::string kernel_initializer = "glorot_uniform";
  double kernel_l2 = 0;                 ///< L2 regularisation factor of the kernel
  std::optional<std::uint64_t> seed{};  ///< kernel initialisation seed
};

/// The spec of a Conv2D layer: nn::Conv2D(16, 3, {.padding = "same", .activation = "relu"}).
struct Conv2D {
  index_t filters = 1;
  Size2 kernel_size{1};
  Conv2DOptions options{};

  Conv2D(index_t filters_, Size2 kernel_size_, Conv2DOptions options_ = {})
      : filters(filters_), kernel_size(kernel_size_), options(std::move(options_)) {}

  template <class T>
  [[nodiscard]] std::unique_ptr<Layer<T>> make() const {
    return std::make_unique<Conv2DLayer<T>>(*this);
  }
};

template <class T>
class Conv2DLayer final : public Layer<T> {
 public:
  explicit Conv2DLayer(const Conv2D& spec)
      : filters_(spec.filters),
        kernel_(spec.kernel_size),
        strides_(spec.options.strides),
        dilation_(spec.options.dilation_rate),
        padding_(spec.options.padding),
        groups_(spec.options.groups),
        use_bias_(spec.options.use_bias),
        l2_(static_cast<T>(spec.options.kernel_l2)),
        l2_double_(spec.options.kernel_l2),
        seed_(spec.options.seed),
        initializer_(detail::parse_initializer("Conv2D", spec.options.kernel_initializer)),
        activation_(detail::parse_activation("Conv2D", spec.options.activation)) {
    constexpr std::string_view where = "Conv2D";
    if (filters_ < 1) {
      throw invalid_argument("Conv2D: expected filters >= 1, found " + std::to_string(filters_));
    }
    detail::check_size2(where, "kernel_size", kernel_);
    detail::check_size2(where, "strides", strides_);
    detail::check_size2(where, "dilation_rate", dilation_);
    detail::check_padding(where, padding_);
    if (groups_ < 1 || filters_ % groups_ != 0) {
      throw invalid_argument("Conv2D: expected groups >= 1 dividing filters = " +
                             std::to_string(filters_) + ", found groups = " +
                             std::to_string(groups_));
    }
    if (!(spec.options.kernel_l2 >= 0)) {
      throw invalid_argument("Conv2D: expected kernel_l2 >= 0, found " +
                             std::to_string(spec.options.kernel_l2));
    }
    if (activation_ == detail::Activation::leaky_relu) alpha_ = T(0.2);
    if (activation_ == detail::Activation::elu) alpha_ = T(1);
  }

  [[nodiscard]] std::string_view class_name() const override { return "Conv2D"; }

  [[nodiscard]] Shape output_shape(const Shape& input) const override {
    const detail::WindowGeometry g = geometry(input);
    return Shape{filters_, g.out_h, g.out_w};
  }

  [[nodiscard]] index_t parameter_count(const Shape& input) const override {
    if (input.rank() != 3) return 0;
    return filters_ * (input[0] / groups_) * kernel_.h * kernel_.w + (use_bias_ ? filters_ : 0);
  }

  void build(const Shape& input, std::uint64_t seed) override {
    geom_ = geometry(input);
    input_shape_ = input;
    cg_ = geom_.channels / groups_;
    fg_ = filters_ / groups_;
    depth_ = cg_ * geom_.window_size();
    const index_t kernel_count = filters_ * depth_;
    const auto n = static_cast<std::size_t>(kernel_count + (use_bias_ ? filters_ : 0));
    params_.assign(n, T(0));
    grads_.assign(n, T(0));
    detail::initialize<T>(initializer_, depth_, filters_ * geom_.window_size(),
                          seed_.value_or(seed),
                          std::span<T>(params_.data(), static_cast<std::size_t>(kernel_count)));
  }

  TensorView<const T> forward(TensorView<const T> x, bool /*training*/) override {
    check_input(x);
    x_ = x;
    const index_t N = x.batch(), P = geom_.out_size(), in_size = geom_.channels * geom_.in_size();
    z_.reshape(Shape{N, filters_, geom_.out_h, geom_.out_w});
    const bool identity = geom_.is_identity();
    if (!identity) cols_.reshape(Shape{N, groups_, depth_, P});
    T* z = z_.data();
    for (index_t n = 0; n < N; ++n) {
      const T* xn = x.data + n * in_size;
      T* zn = z + n * filters_ * P;
      // The bias first: the GEMMs add onto it.
      if (use_bias_) {
        for (index_t f = 0; f < filters_; ++f) std::fill(zn + f * P, zn + (f + 1) * P, bias()[f]);
      } else {
        std::fill(zn, zn + filters_ * P, T(0));
      }
      for (index_t g = 0; g < groups_; ++g) {
        const T* col = xn + g * cg_ * P;  // a 1x1 identity geometry: the input is its columns
        if (!identity) {
          T* own = cols_.data() + (n * groups_ + g) * depth_ * P;
          detail::im2col(geom_, cg_, xn + g * cg_ * geom_.in_size(), own, P);
          col = own;
        }
        detail::gemm_accumulate<T>({kernel_data() + g * fg_ * depth_, fg_, depth_, false},
                                   {col, depth_, P, false}, zn + g * fg_ * P, P);
      }
    }
    if (activation_ == detail::Activation::linear) return z_.view();
    y_.reshape(z_.shape());
    detail::activation_forward<T>(activation_, alpha_, z_.view(), y_.view());
    return y_.view();
  }

  TensorView<const T> backward(TensorView<const T> grad_output, bool need_input_grad) override {
    TensorView<const T> dz = grad_output;
    if (activation_ != detail::Activation::linear) {
      dz_.reshape(grad_output.shape);
      detail::activation_backward<T>(activation_, alpha_, z_.view(), y_.view(), grad_output,
                                     dz_.view());
      dz = dz_.view();
    }
    const index_t N = x_.batch(), P = geom_.out_size(), in_size = geom_.channels * geom_.in_size();
    const bool identity = geom_.is_identity();
    const index_t kernel_count = filters_ * depth_;
    Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> dW(grads_.data(), kernel_count);
    // dW = 2 l2 W (or 0), then the GEMMs add Σ_n dY_n colsᵀ onto it.
    if (l2_double_ > 0) {
      dW = (T(2) * l2_) *
           Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>(kernel_data(), kernel_count);
    } else {
      dW.setZero();
    }
    T* db = grads_.data() + kernel_count;
    if (use_bias_) std::fill(db, db + filters_, T(0));
    for (index_t n = 0; n < N; ++n) {
      const T* dzn = dz.data + n * filters_ * P;
      for (index_t g = 0; g < groups_; ++g) {
        const T* col = identity ? x_.data + n * in_size + g * cg_ * P
                                : cols_.data() + (n * groups_ + g) * depth_ * P;
        detail::gemm_accumulate<T>({dzn + g * fg_ * P, fg_, P, false}, {col, depth_, P, true},
                                   grads_.data() + g * fg_ * depth_, depth_);
      }
      if (use_bias_) {
        const Eigen::Map<const Matrix<T>> dZn(dzn, filters_, P);
        Eigen::Map<Vector<T>>(db, filters_) += dZn.rowwise().sum();
      }
    }
    if (!need_input_grad) return {};
    dx_.reshape(x_.shape);
    std::fill(dx_.data(), dx_.data() + dx_.size(), T(0));
    if (!identity) dcol_.reshape(Shape{depth_, P});
    for (index_t n = 0; n < N; ++n) {
      const T* dzn = dz.data + n * filters_ * P;
      T* dxn = dx_.data() + n * in_size;
      for (index_t g = 0; g < groups_; ++g) {
        // dcols = W_gᵀ dY_ng, then col2im (for a 1x1 identity geometry, dcols is dx itself).
        T* dcol = identity ? dxn + g * cg_ * P : dcol_.data();
        if (!identity) std::fill(dcol, dcol + depth_ * P, T(0));
        detail::gemm_accumulate<T>({kernel_data() + g * fg_ * depth_, fg_, depth_, true},
                                   {dzn + g * fg_ * P, fg_, P, false}, dcol, P);
        if (!identity) detail::col2im(geom_, cg_, dcol, P, dxn + g * cg_ * geom_.in_size());
      }
    }
    return dx_.view();
  }

  [[nodiscard]] std::vector<std::span<T>> parameters() override { return split<T>(params_); }
  [[nodiscard]] std::vector<std::span<T>> gradients() override { return split<T>(grads_); }
  /// Read-only parameters(): [kernel (filters, C / groups, kh, kw), bias] (empty before build),
  /// for code that holds a const layer (ONNX export).
  [[nodiscard]] std::vector<std::span<const T>> parameters() const {
    return split<const T>(params_);
  }

  [[nodiscard]] double regularization_loss() const override {
    if (l2_double_ == 0 || params_.empty()) return 0;
    const index_t k = filters_ * depth_;
    return l2_double_ *
           Eigen::Map<const Vector<T>>(params_.data(), k).template cast<double>().squaredNorm();
  }

  // The settings, under Keras's config names.
  [[nodiscard]] index_t filters() const noexcept { return filters_; }
  [[nodiscard]] Size2 kernel_size() const noexcept { return kernel_; }
  [[nodiscard]] Size2 strides() const noexcept { return strides_; }
  [[nodiscard]] Size2 dilation_rate() const noexcept { return dilation_; }
  /// The padding as given ("valid", "same" or sizes); geometry() has the resolved sizes.
  [[nodiscard]] const Padding2D& padding() const noexcept { return padding_; }
  [[nodiscard]] index_t groups() const noexcept { return groups_; }
  /// The fused activation (linear when none).
  [[nodiscard]] detail::Activation activation() const noexcept { return activation_; }
  /// The fused activation's slope: 0.2 for leaky_relu, 1 for elu, 0 (unused) otherwise.
  [[nodiscard]] T alpha() const noexcept { return alpha_; }
  [[nodiscard]] bool use_bias() const noexcept { return use_bias_; }
  /// The resolved geometry (padding sizes after "same": pad_top, pad_bottom, pad_left,
  /// pad_right; output size) of the built layer.
  [[nodiscard]] const detail::WindowGeometry& geometry() const noexcept { return geom_; }

 private:
  [[nodiscard]] detail::WindowGeometry geometry(const Shape& input) const {
    detail::WindowGeometry g =
        detail::make_geometry("Conv2D", input, kernel_, strides_, dilation_, padding_);
    if (g.channels % groups_ != 0) {
      throw shape_error("Conv2D: expected input channels divisible by groups = " +
                        std::to_string(groups_) + ", found " + std::to_string(g.channels) +
                        " channels in input " + input.to_string());
    }
    return g;
  }

  void check_input(const TensorView<const T>& x) const {
    if (params_.empty()) {
      throw not_fitted_error("Conv2D.forward: expected a built layer, found one not built");
    }
    if (x.shape.rank() == 4 && x.shape.without_batch() == input_shape_) return;
    throw shape_error("Conv2D.forward: expected a batch of shape " +
                      input_shape_.with_batch(x.batch()).to_string() + ", found " +
                      x.shape.to_string());
  }

  [[nodiscard]] const T* kernel_data() const noexcept { return params_.data(); }
  [[nodiscard]] std::span<const T> bias() const noexcept {
    return {params_.data() + filters_ * depth_, static_cast<std::size_t>(filters_)};
  }

  /// [kernel, bias] views of one contiguous buffer (U: T, or const T for read-only views).
  template <class U>
  std::vector<std::span<U>> split(std::span<U> buffer) const {
    if (buffer.empty()) return {};
    const auto k = static_cast<std::size_t>(filters_ * depth_);
    std::vector<std::span<U>> out{buffer.first(k)};
    if (use_bias_) out.push_back(buffer.subspan(k, static_cast<std::size_t>(filters_)));
    return out;
  }

  index_t filters_;
  Size2 kernel_, strides_, dilation_;
  Padding2D padding_;
  index_t groups_;
  bool use_bias_;
  T l2_;
  double l2_double_;
  std::optional<std::uint64_t> seed_;
  detail::Initializer initializer_;
  detail::Activation activation_;
  T alpha_ = T(0);
  Shape input_shape_;
  detail::WindowGeometry geom_{};
  index_t cg_ = 0, fg_ = 0, depth_ = 0;  // channels, filters per group; rows of the columns
  AlignedVector<T> params_, grads_;      // [kernel | bias], one block each
  TensorView<const T> x_;
  Tensor<T> cols_, dcol_, z_, y_, dz_, dx_;
};

}  // namespace onelearn::nn
