#pragma once
// The sliding-window geometry shared by Conv2D and the pooling layers (window size, strides,
// padding "valid" / "same" / explicit, dilation), and im2col / col2im, the two copies that
// turn a convolution into one GEMM.
//
// Layout: images are N, C, H, W (channels first, row-major), as PyTorch and ONNX.
//
// im2col writes, for one sample and a run of Cg channels, the (Cg·kh·kw) x (OH·OW) matrix whose
// row (c, i, j) holds x[c, oh·sh - pad_top + i·dh, ow·sw - pad_left + j·dw] for every output
// position (zero where that falls in the padding). The rows have a stride `ld`, so the same
// function fills one sample's own contiguous block (ld = OH·OW) or its slice of a batched
// matrix holding every sample's columns side by side (ld = N·OH·OW). col2im is its adjoint: it
// adds each column entry back onto the input position it was read from (the input gradient).
//
// Both loops find, for each kernel column j, the range of output columns whose input column is
// inside the image once (no per-element bounds test), so the inner loop is a plain copy (stride
// 1) or a strided gather, with the zero padding written around it.

#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <string_view>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/nn/tensor.hpp"

namespace onelearn::nn {

/// A pair of sizes (height, width): Size2(3) is 3 x 3, Size2(3, 1) is 3 x 1. What Conv2D's
/// kernel_size, strides and dilation_rate and the pools' pool_size and strides take.
struct Size2 {
  index_t h = 1, w = 1;
  constexpr Size2() = default;
  constexpr Size2(index_t both) : h(both), w(both) {}  // NOLINT(google-explicit-constructor)
  constexpr Size2(index_t height, index_t width) : h(height), w(width) {}
  friend constexpr bool operator==(const Size2&, const Size2&) = default;
  [[nodiscard]] std::string to_string() const {
    return "(" + std::to_string(h) + ", " + std::to_string(w) + ")";
  }
};

/// Padding of a sliding window: "valid" (none, Keras's default), "same" (TensorFlow's rule:
/// output size ceil(input / stride), the total padding split with the odd one at the bottom /
/// right), or explicit sizes: Padding2D(p) on every side, Padding2D(ph, pw) symmetric
/// (PyTorch's padding=(ph, pw)), or Padding2D(top, bottom, left, right).
struct Padding2D {
  enum class Mode { valid, same, explicit_sizes, unknown };
  Mode mode = Mode::valid;
  std::array<index_t, 4> sizes{};  ///< top, bottom, left, right (explicit_sizes only)
  std::string name = "valid";      ///< what was given, for error messages

  Padding2D() = default;
  Padding2D(const char* padding)  // NOLINT(google-explicit-constructor)
      : name(padding) {
    const std::string_view p(padding);
    mode = p == "valid" ? Mode::valid : p == "same" ? Mode::same : Mode::unknown;
  }
  Padding2D(index_t all)  // NOLINT(google-explicit-constructor)
      : Padding2D(all, all, all, all) {}
  Padding2D(index_t ph, index_t pw) : Padding2D(ph, ph, pw, pw) {}
  Padding2D(index_t top, index_t bottom, index_t left, index_t right)
      : mode(Mode::explicit_sizes), sizes{top, bottom, left, right} {
    name = "(" + std::to_string(top) + ", " + std::to_string(bottom) + ", " +
           std::to_string(left) + ", " + std::to_string(right) + ")";
  }
};

namespace detail {

/// Checks a window parameter at construction: every size >= minimum.
inline void check_size2(std::string_view where, std::string_view what, const Size2& s,
                        index_t minimum = 1) {
  if (s.h >= minimum && s.w >= minimum) return;
  throw invalid_argument(std::string(where) + ": expected " + std::string(what) + " >= " +
                         std::to_string(minimum) + " in both dimensions, found " +
                         s.to_string());
}

inline void check_padding(std::string_view where, const Padding2D& p) {
  if (p.mode == Padding2D::Mode::unknown) {
    throw invalid_argument(std::string(where) +
                           ": expected padding \"valid\", \"same\" or explicit sizes, found \"" +
                           p.name + "\"");
  }
  if (p.mode == Padding2D::Mode::explicit_sizes &&
      *std::min_element(p.sizes.begin(), p.sizes.end()) < 0) {
    throw invalid_argument(std::string(where) + ": expected padding sizes >= 0, found " + p.name);
  }
}

/// One sliding window over a (C, H, W) image: everything im2col, col2im and the pools need.
struct WindowGeometry {
  index_t channels = 0, height = 0, width = 0;  ///< input per sample
  index_t kh = 1, kw = 1;                       ///< window
  index_t sh = 1, sw = 1;                       ///< strides
  index_t dh = 1, dw = 1;                       ///< dilation
  index_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  index_t out_h = 0, out_w = 0;

  [[nodiscard]] index_t out_size() const noexcept { return out_h * out_w; }
  [[nodiscard]] index_t in_size() const noexcept { return height * width; }
  /// Rows of im2col's matrix per channel.
  [[nodiscard]] index_t window_size() const noexcept { return kh * kw; }
  /// True when im2col would copy the image as it is (1x1 window, stride 1, no padding).
  [[nodiscard]] bool is_identity() const noexcept {
    return kh == 1 && kw == 1 && sh == 1 && sw == 1 && pad_top == 0 && pad_bottom == 0 &&
           pad_left == 0 && pad_right == 0;
  }
};

/// The geometry of a window over a per-sample input shape (C, H, W); shape_error when the
/// input is not of rank 3 or is smaller than the (dilated) window.
inline WindowGeometry make_geometry(std::string_view where, const Shape& input, Size2 kernel,
                                    Size2 strides, Size2 dilation, const Padding2D& padding) {
  if (input.rank() != 3) {
    throw shape_error(std::string(where) +
                      ": expected input of shape (channels, height, width) per sample "
                      "(N, C, H, W batches), found " +
                      input.to_string());
  }
  WindowGeometry g;
  g.channels = input[0];
  g.height = input[1];
  g.width = input[2];
  g.kh = kernel.h;
  g.kw = kernel.w;
  g.sh = strides.h;
  g.sw = strides.w;
  g.dh = dilation.h;
  g.dw = dilation.w;
  const index_t eff_h = g.dh * (g.kh - 1) + 1, eff_w = g.dw * (g.kw - 1) + 1;
  if (padding.mode == Padding2D::Mode::same) {
    // TensorFlow's rule: out = ceil(in / stride); the odd padding goes to the bottom / right.
    g.out_h = (g.height + g.sh - 1) / g.sh;
    g.out_w = (g.width + g.sw - 1) / g.sw;
    const index_t total_h = std::max<index_t>((g.out_h - 1) * g.sh + eff_h - g.height, 0);
    const index_t total_w = std::max<index_t>((g.out_w - 1) * g.sw + eff_w - g.width, 0);
    g.pad_top = total_h / 2;
    g.pad_bottom = total_h - g.pad_top;
    g.pad_left = total_w / 2;
    g.pad_right = total_w - g.pad_left;
  } else {
    if (padding.mode == Padding2D::Mode::explicit_sizes) {
      g.pad_top = padding.sizes[0];
      g.pad_bottom = padding.sizes[1];
      g.pad_left = padding.sizes[2];
      g.pad_right = padding.sizes[3];
    }
    const index_t span_h = g.height + g.pad_top + g.pad_bottom;
    const index_t span_w = g.width + g.pad_left + g.pad_right;
    if (span_h < eff_h || span_w < eff_w) {
      throw shape_error(std::string(where) + ": expected an input of at least " +
                        std::to_string(eff_h) + " x " + std::to_string(eff_w) +
                        " (the dilated window) after padding, found " + input.to_string() +
                        " padded to " + std::to_string(span_h) + " x " + std::to_string(span_w));
    }
    g.out_h = (span_h - eff_h) / g.sh + 1;
    g.out_w = (span_w - eff_w) / g.sw + 1;
  }
  if (g.channels < 1 || g.height < 1 || g.width < 1) {
    throw shape_error(std::string(where) + ": expected a non-empty image per sample, found " +
                      input.to_string());
  }
  return g;
}

/// First and one-past-last output index o in [0, n_out) for which o·stride + offset lies in
/// [0, n_in): the outputs whose input is inside the image (offset = kernel tap - padding).
inline void valid_range(index_t offset, index_t stride, index_t n_in, index_t n_out,
                        index_t& first, index_t& last) {
  // o·s + offset >= 0  <=>  o >= ceil(-offset / s);  o·s + offset <= n_in - 1.
  first = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  const index_t top = n_in - 1 - offset;
  last = top < 0 ? 0 : std::min(n_out, top / stride + 1);
  if (last < first) last = first;
  first = std::min(first, n_out);
  last = std::min(std::max(last, first), n_out);
}

/// Writes the columns of one sample: `channels` channels of x (channel stride H·W) into rows
/// of `col` with row stride ld (row (c, i, j), c < channels).
template <class T>
void im2col(const WindowGeometry& g, index_t channels, const T* x, T* col, index_t ld) {
  const index_t H = g.height, W = g.width, OH = g.out_h, OW = g.out_w;
  for (index_t c = 0; c < channels; ++c) {
    const T* plane = x + c * H * W;
    for (index_t i = 0; i < g.kh; ++i) {
      const index_t off_h = i * g.dh - g.pad_top;
      index_t oh0 = 0, oh1 = 0;
      valid_range(off_h, g.sh, H, OH, oh0, oh1);
      for (index_t j = 0; j < g.kw; ++j) {
        T* row = col + ((c * g.kh + i) * g.kw + j) * ld;
        const index_t off_w = j * g.dw - g.pad_left;
        index_t ow0 = 0, ow1 = 0;
        valid_range(off_w, g.sw, W, OW, ow0, ow1);
        std::fill(row, row + oh0 * OW, T(0));
        for (index_t oh = oh0; oh < oh1; ++oh) {
          T* out = row + oh * OW;
          const T* in = plane + (oh * g.sh + off_h) * W + off_w;
          std::fill(out, out + ow0, T(0));
          if (g.sw == 1) {
            // An Eigen copy, not std::copy: rows are short (14-28 values in a small CNN), and a
            // memmove call per row was a fifth of an ONNX CNN's inference (onnx/ops/planar.hpp).
            using Row = Eigen::Array<T, Eigen::Dynamic, 1>;
            Eigen::Map<Row>(out + ow0, ow1 - ow0) = Eigen::Map<const Row>(in + ow0, ow1 - ow0);
          } else {
            for (index_t ow = ow0; ow < ow1; ++ow) out[ow] = in[ow * g.sw];
          }
          std::fill(out + ow1, out + OW, T(0));
        }
        std::fill(row + oh1 * OW, row + OH * OW, T(0));
      }
    }
  }
}

/// The adjoint of im2col: adds every entry of `col` (row stride ld) onto the input position it
/// was read from, in dx (`channels` channels of H·W). dx must be initialised (zero) first.
template <class T>
void col2im(const WindowGeometry& g, index_t channels, const T* col, index_t ld, T* dx) {
  const index_t H = g.height, W = g.width, OH = g.out_h, OW = g.out_w;
  for (index_t c = 0; c < channels; ++c) {
    T* plane = dx + c * H * W;
    for (index_t i = 0; i < g.kh; ++i) {
      const index_t off_h = i * g.dh - g.pad_top;
      index_t oh0 = 0, oh1 = 0;
      valid_range(off_h, g.sh, H, OH, oh0, oh1);
      for (index_t j = 0; j < g.kw; ++j) {
        const T* row = col + ((c * g.kh + i) * g.kw + j) * ld;
        const index_t off_w = j * g.dw - g.pad_left;
        index_t ow0 = 0, ow1 = 0;
        valid_range(off_w, g.sw, W, OW, ow0, ow1);
        for (index_t oh = oh0; oh < oh1; ++oh) {
          const T* in = row + oh * OW;
          T* out = plane + (oh * g.sh + off_h) * W + off_w;
          if (g.sw == 1) {
            for (index_t ow = ow0; ow < ow1; ++ow) out[ow] += in[ow];
          } else {
            for (index_t ow = ow0; ow < ow1; ++ow) out[ow * g.sw] += in[ow];
          }
        }
      }
    }
  }
}

}  // namespace detail
}  // namespace onelearn::nn
