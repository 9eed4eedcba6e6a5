#pragma once
/**
 * \class onelearn::nn::Conv2D
 * \brief A 2-D convolution, as Keras's Conv2D on channels-first batches.
 * \ingroup layers
 *
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
 * Method: two paths, both one sample at a time, chunks of samples on OpenMP threads.
 * - Direct (nn/detail/direct_conv.hpp), for stride 1 without groups when the output has the
 *   input's size (padding kh - 1 and kw - 1 in all, dilation included: "same" 3x3 / pad 1, the
 *   usual case). Each input channel is copied once into a zero-bordered plane of width
 *   W + kw - 1, where every kernel tap is a shifted contiguous run, and vector blocks of
 *   outputs accumulate over the taps in registers: no im2col matrix, no GEMM packing. The input
 *   gradient is the same correlation over the padded output gradient with the kernel flipped
 *   (no col2im), and the weight gradient a vector dot product of the padded output gradient
 *   with the shifted input planes, summed over a chunk of samples before one horizontal
 *   reduction. A fused ReLU is applied on the copies these passes make anyway (z is never
 *   stored; y > 0 is z > 0).
 * - im2col + GEMM otherwise. For each sample and group the input windows are copied into a
 *   (C/groups·kh·kw) x (OH·OW) matrix (nn/detail/im2col.hpp), and one GEMM (nn/detail/gemm.hpp,
 *   Eigen's kernel with persistent packing buffers) multiplies the group's (filters/groups) x
 *   (C/groups·kh·kw) kernel by it, writing straight into the sample's output, which holds the
 *   broadcast bias first. Backward: dW += dY_n colsᵀ (GEMM), db = sums of dY, and for the input
 *   gradient dcols = Wᵀ dY_n (GEMM) followed by col2im. The columns of the forward pass are
 *   kept for the weight gradient (no second im2col). A 1x1 kernel with stride 1 and no padding
 *   uses the input itself as its columns.
 *
 * Measured on bench/README.md's cnn workload (float, batch 64, -O3 -march=native, a two-core AVX-512
 * machine; per-layer times of one batch, one thread): the direct path took conv 2's forward
 * from 1,500 to 740 µs and its backward (with col2im) from 3,250 to 1,950 µs, conv 1's
 * forward from 300 to 210 µs. Training the workload (its network and data, two epochs, the
 * better one; medians of 5 runs alternating with the previous code on an idle machine) went
 * from 8,900 to 13,400 samples/s on one thread and from 8,900 to 26,300 on two (the previous
 * code left the second core idle); `onelearn-bench cnn` (bench/) printed 9,100 before, 26,600
 * after.
 * Per-sample GEMMs had been measured against one batched GEMM over every sample's columns (a
 * (C/groups·kh·kw) x (N·OH·OW) matrix, whose product must then be transposed back to N, C, H, W):
 * the per-sample form trained about 20% faster (9,100 against 7,400 samples per CPU second),
 * as each sample's output is written in place and its columns stay in cache.
 *
 * Threads: the samples of a batch are cut into at most 16 chunks (their number depends on the
 * batch size only) that run on OpenMP threads (core/detail/parallel.hpp); the weight and bias
 * gradients are summed per chunk and the chunks' sums added in chunk order, so a step gives the
 * same bits on any number of threads. Two threads pay off only on idle cores: a fork-join per
 * layer waits for the slowest thread, so when another process held a core (a compiler), two
 * threads trained at 1,200-3,000 samples/s against one thread's 9,000-13,000: use
 * OMP_NUM_THREADS=1 on a shared machine. Buffers only grow: no allocation per batch in steady
 * state.
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

#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/nn/detail/activation_kernels.hpp"
#include "onelearn/nn/detail/direct_conv.hpp"
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
    setup_direct();
    detail::initialize<T>(initializer_, depth_, filters_ * geom_.window_size(),
                          seed_.value_or(seed),
                          std::span<T>(params_.data(), static_cast<std::size_t>(kernel_count)));
  }

  TensorView<const T> forward(TensorView<const T> x, bool /*training*/) override {
    check_input(x);
    x_ = x;
    const index_t N = x.batch(), P = geom_.out_size();
    const Shape out_shape{N, filters_, geom_.out_h, geom_.out_w};
    const bool linear = activation_ == detail::Activation::linear;
    const bool fused = fused_relu();  // writes y only
    if (!fused) z_.reshape(out_shape);
    if (!linear) y_.reshape(out_shape);
    if (direct_) {
      detail::padded_buffer(xp_, N * geom_.channels, plane_);
      detail::pack_correlate_weights(kernel_data(), filters_, depth_, packed_);
    } else if (!geom_.is_identity()) {
      cols_.reshape(Shape{N, groups_, depth_, P});
    }
    // Samples are independent: chunks of them run on threads, each sample's activation right
    // after its own GEMM (while its output is still in cache).
    onelearn::detail::for_each_chunk(N, sample_grain(N), [&](index_t, index_t begin, index_t end) {
      for (index_t n = begin; n < end; ++n) {
        if (direct_) {
          forward_direct(n);
        } else {
          forward_sample(n);
        }
        if (linear || fused) continue;
        const Shape one{1, filters_, geom_.out_h, geom_.out_w};
        const index_t offset = n * filters_ * P;
        detail::activation_forward<T>(activation_, alpha_, {z_.data() + offset, one},
                                      {y_.data() + offset, one});
      }
    });
    return linear ? z_.view() : y_.view();
  }

  TensorView<const T> backward(TensorView<const T> grad_output, bool need_input_grad) override {
    // "linear": dZ is the output gradient; fused ReLU: backward_direct applies it.
    const bool linear = activation_ == detail::Activation::linear || fused_relu();
    if (!linear) dz_.reshape(grad_output.shape);
    const index_t N = x_.batch(), P = geom_.out_size();
    const index_t kernel_count = filters_ * depth_;
    if (need_input_grad) dx_.reshape(x_.shape);
    // Each chunk of samples adds its Σ_n dY_n colsᵀ and Σ_n dY_n into its own partial, and the
    // partials are added in chunk order: the chunks depend on the batch size only, so the
    // gradient has the same bits on any number of threads.
    const index_t grain = sample_grain(N), chunks = onelearn::detail::chunk_count(N, grain);
    const index_t stride = kernel_count + filters_;
    partials_.resize(static_cast<std::size_t>(chunks * stride));
    if (direct_) {
      detail::padded_buffer(dyp_, N * filters_, plane_);
      if (need_input_grad) pack_flipped_kernel();
    }
    onelearn::detail::for_each_chunk(N, grain, [&](index_t chunk, index_t begin, index_t end) {
      T* partial = partials_.data() + chunk * stride;
      std::fill(partial, partial + stride, T(0));
      for (index_t n = begin; n < end; ++n) {
        const index_t offset = n * filters_ * P;
        const T* dzn = grad_output.data + offset;
        if (!linear) {
          const Shape one{1, filters_, geom_.out_h, geom_.out_w};
          detail::activation_backward<T>(activation_, alpha_, {z_.data() + offset, one},
                                         {y_.data() + offset, one}, {dzn, one},
                                         {dz_.data() + offset, one});
          dzn = dz_.data() + offset;
        }
        if (direct_) {
          backward_direct(n, dzn, partial + kernel_count, need_input_grad);
        } else {
          backward_sample(n, dzn, partial, partial + kernel_count, need_input_grad);
        }
      }
      if (direct_) weight_gradient_direct(begin, end, partial);
    });
    // [dW | db] = [2 l2 W (or 0) | 0] + the chunks' sums.
    using Flat = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
    using ConstFlat = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
    const index_t count = use_bias_ ? stride : kernel_count;
    Flat all(grads_.data(), count);
    all.setZero();
    if (l2_double_ > 0) {
      all.head(kernel_count) = (T(2) * l2_) * ConstFlat(kernel_data(), kernel_count);
    }
    for (index_t c = 0; c < chunks; ++c) all += ConstFlat(partials_.data() + c * stride, count);
    return need_input_grad ? dx_.view() : TensorView<const T>{};
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

  /// Samples per chunk of the threaded loops: at most 16 chunks, whatever the thread count (the
  /// chunks are the unit of the gradient's partial sums, see backward). Measured on the cnn
  /// workload: 16 chunks (4 samples each at batch 64) trained 3-5% faster than 8, the direct
  /// weight gradient's operands for a chunk then staying closer to L1.
  static index_t sample_grain(index_t n) { return onelearn::detail::fixed_chunks(n, 1, 16); }

  /// The direct kernels (nn/detail/direct_conv.hpp) take a stride-1 window whose output has the
  /// input's size (padding kh - 1 and kw - 1 in all, dilation included), without groups.
  void setup_direct() {
    const detail::WindowGeometry& g = geom_;
    direct_ = groups_ == 1 && !g.is_identity() && g.sh == 1 && g.sw == 1 &&
              g.pad_top + g.pad_bottom == (g.kh - 1) * g.dh &&
              g.pad_left + g.pad_right == (g.kw - 1) * g.dw;
    // A new geometry moves the image positions: the padded buffers start again from zeros.
    xp_.clear();
    dyp_.clear();
    if (!direct_) return;
    using DC = detail::DirectConv<T>;
    width_ = DC::plane_width(g.width, g.kw, g.dw);
    plane_ = DC::plane_size(g.height, g.width, g.kh, g.kw, g.dh, g.dw);
    positions_ = DC::positions(g.height, width_);
    // Tap (c, i, j) of the input planes; tap (f, i, j) of the output gradient's planes.
    auto offsets = [&](index_t channels) {
      std::vector<index_t> out;
      for (index_t c = 0; c < channels; ++c) {
        for (index_t i = 0; i < g.kh; ++i) {
          for (index_t j = 0; j < g.kw; ++j) {
            out.push_back(c * plane_ + i * g.dh * width_ + j * g.dw);
          }
        }
      }
      return out;
    };
    x_offsets_ = offsets(g.channels);
    dy_offsets_ = offsets(filters_);
  }

  /// Scratch for one sample's outputs at every padded position, per thread.
  T* direct_scratch() const {
    thread_local AlignedVector<T> buffer;
    const index_t rows = std::max(filters_, geom_.channels) + detail::DirectConv<T>::out_block;
    const auto size = static_cast<std::size_t>(rows * positions_);
    if (buffer.size() < size) buffer.resize(size);
    return buffer.data();
  }

  /// z_n = bias + W ⋆ x_n on the padded copy of x_n (kept for the weight gradient).
  void forward_direct(index_t n) {
    const detail::WindowGeometry& g = geom_;
    const index_t C = g.channels, H = g.height, W = g.width;
    T* xp = xp_.data() + n * C * plane_;
    detail::pad_planes(x_.data + n * C * g.in_size(), C, H, W, g.pad_top, g.pad_left, width_,
                       plane_, xp);
    T* out = direct_scratch();
    detail::correlate(xp, x_offsets_, packed_, positions_, out, positions_);
    // The bias, and a fused ReLU, on the way out of the scratch rows.
    const bool relu = fused_relu();
    T* zn = (relu ? y_.data() : z_.data()) + n * filters_ * g.out_size();
    for (index_t f = 0; f < filters_; ++f) {
      const T b = use_bias_ ? bias()[f] : T(0);
      for (index_t h = 0; h < H; ++h) {
        const T* src = out + f * positions_ + h * width_;
        T* dst = zn + (f * H + h) * W;
        if (relu) {
          for (index_t w = 0; w < W; ++w) dst[w] = std::max(src[w] + b, T(0));
        } else {
          for (index_t w = 0; w < W; ++w) dst[w] = src[w] + b;
        }
      }
    }
  }

  /// ReLU on the direct path is applied where its values pass anyway (forward_direct's output
  /// copy, backward_direct's padding copy, the mask from y > 0, which is z > 0): z is never
  /// written, and dz never stored unpadded. Saves two passes over the layer's output per step.
  [[nodiscard]] bool fused_relu() const noexcept {
    return direct_ && activation_ == detail::Activation::relu;
  }

  /// The kernel for the input gradient's correlation: W'[c, f, i, j] = W[f, c, kh-1-i, kw-1-j],
  /// packed.
  void pack_flipped_kernel() {
    const index_t C = geom_.channels, kh = geom_.kh, kw = geom_.kw, taps = kh * kw;
    flipped_.resize(static_cast<std::size_t>(C * filters_ * taps));
    const T* w = kernel_data();
    for (index_t f = 0; f < filters_; ++f) {
      for (index_t c = 0; c < C; ++c) {
        for (index_t t = 0; t < taps; ++t) {
          flipped_[static_cast<std::size_t>((c * filters_ + f) * taps + taps - 1 - t)] =
              w[(f * C + c) * taps + t];
        }
      }
    }
    detail::pack_correlate_weights(flipped_.data(), C, filters_ * taps, packed_flipped_);
  }

  /// Pads dZ_n (the weight gradient reads it there, after the chunk), db += Σ dZ_n, and
  /// (need_input_grad) dx_n = W' ⋆ padded dZ_n, the "full" correlation.
  void backward_direct(index_t n, const T* dzn, T* db, bool need_input_grad) {
    const detail::WindowGeometry& g = geom_;
    const index_t H = g.height, W = g.width, P = g.out_size();
    // Padded so that output gradient (h, w) sits at row h + pad_bottom, column w + pad_right.
    T* dyp = dyp_.data() + n * filters_ * plane_;
    if (fused_relu()) {
      // dZ_n = (y_n > 0) dY_n (y > 0 is z > 0) into per-thread scratch: it stays in cache
      // until padded, never written to a batch-sized buffer.
      thread_local AlignedVector<T> scratch;
      if (scratch.size() < static_cast<std::size_t>(filters_ * P)) {
        scratch.resize(static_cast<std::size_t>(filters_ * P));
      }
      using Flat = Eigen::Array<T, Eigen::Dynamic, 1>;
      const Eigen::Map<const Flat> y(y_.data() + n * filters_ * P, filters_ * P);
      Eigen::Map<Flat>(scratch.data(), filters_ * P) =
          (y > T(0)).select(Eigen::Map<const Flat>(dzn, filters_ * P), T(0));
      dzn = scratch.data();
    }
    detail::pad_planes(dzn, filters_, H, W, g.pad_bottom, g.pad_right, width_, plane_, dyp);
    if (use_bias_) {  // the padded planes hold dZ_n and zeros
      const Eigen::Map<const Matrix<T>> dZn(dyp, filters_, plane_);
      Eigen::Map<Vector<T>>(db, filters_) += dZn.rowwise().sum();
    }
    if (!need_input_grad) return;
    T* out = direct_scratch();
    detail::correlate(dyp, dy_offsets_, packed_flipped_, positions_, out, positions_);
    T* dxn = dx_.data() + n * g.channels * g.in_size();
    for (index_t c = 0; c < g.channels; ++c) {
      for (index_t h = 0; h < H; ++h) {
        using Row = Eigen::Array<T, Eigen::Dynamic, 1>;  // inline, not a memmove per row
        Eigen::Map<Row>(dxn + (c * H + h) * W, W) =
            Eigen::Map<const Row>(out + c * positions_ + h * width_, W);
      }
    }
  }

  /// dW = Σ_{n in [begin, end)} dZ_n ⋆ x_n, written into the chunk's partial.
  void weight_gradient_direct(index_t begin, index_t end, T* dW) const {
    const index_t C = geom_.channels;
    const index_t shift = geom_.pad_bottom * width_ + geom_.pad_right;  // where dZ_n[f] starts
    detail::weight_gradient(dyp_.data() + begin * filters_ * plane_, filters_, plane_, shift,
                            filters_ * plane_, xp_.data() + begin * C * plane_, C * plane_,
                            x_offsets_, end - begin, positions_, dW);
  }

  /// z_n = bias + W cols_n (per group).
  void forward_sample(index_t n) {
    const index_t P = geom_.out_size(), in_size = geom_.channels * geom_.in_size();
    const bool identity = geom_.is_identity();
    const T* xn = x_.data + n * in_size;
    T* zn = z_.data() + n * filters_ * P;
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

  /// dW += dZ_n cols_nᵀ, db += Σ dZ_n, and (need_input_grad) dx_n = col2im(Wᵀ dZ_n).
  void backward_sample(index_t n, const T* dzn, T* dW, T* db, bool need_input_grad) {
    const index_t P = geom_.out_size(), in_size = geom_.channels * geom_.in_size();
    const bool identity = geom_.is_identity();
    for (index_t g = 0; g < groups_; ++g) {
      const T* col = identity ? x_.data + n * in_size + g * cg_ * P
                              : cols_.data() + (n * groups_ + g) * depth_ * P;
      detail::gemm_accumulate<T>({dzn + g * fg_ * P, fg_, P, false}, {col, depth_, P, true},
                                 dW + g * fg_ * depth_, depth_);
    }
    if (use_bias_) {
      const Eigen::Map<const Matrix<T>> dZn(dzn, filters_, P);
      Eigen::Map<Vector<T>>(db, filters_) += dZn.rowwise().sum();
    }
    if (!need_input_grad) return;
    T* dxn = dx_.data() + n * in_size;
    if (!identity) std::fill(dxn, dxn + in_size, T(0));
    // Scratch for one sample's dcols, per thread (a chunk runs on one thread).
    thread_local AlignedVector<T> dcol_buffer;
    if (!identity && dcol_buffer.size() < static_cast<std::size_t>(depth_ * P)) {
      dcol_buffer.resize(static_cast<std::size_t>(depth_ * P));
    }
    for (index_t g = 0; g < groups_; ++g) {
      // dcols = W_gᵀ dY_ng, then col2im (for a 1x1 identity geometry, dcols is dx itself).
      T* dcol = identity ? dxn + g * cg_ * P : dcol_buffer.data();
      std::fill(dcol, dcol + depth_ * P, T(0));
      detail::gemm_accumulate<T>({kernel_data() + g * fg_ * depth_, fg_, depth_, true},
                                 {dzn + g * fg_ * P, fg_, P, false}, dcol, P);
      if (!identity) detail::col2im(geom_, cg_, dcol, P, dxn + g * cg_ * geom_.in_size());
    }
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
  Tensor<T> cols_, z_, y_, dz_, dx_;
  // The direct path (setup_direct): padded planes of width width_ and length plane_, positions_
  // computed per plane; the inputs' and the output gradients' padded planes; the tap offsets in
  // them; the packed kernels of forward and of the input gradient.
  bool direct_ = false;
  index_t width_ = 0, plane_ = 0, positions_ = 0;
  AlignedVector<T> xp_, dyp_;  // zero but at image positions: see detail::padded_buffer
  std::vector<index_t> x_offsets_, dy_offsets_;
  std::vector<T> packed_, packed_flipped_, flipped_;
  AlignedVector<T> partials_;  // per chunk of samples: [dW | db] (backward)
};

}  // namespace onelearn::nn
