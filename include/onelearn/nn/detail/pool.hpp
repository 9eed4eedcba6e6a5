#pragma once
// The pooling kernels of MaxPool2D and AveragePool2D on (planes, H, W) data, where a plane is
// one channel of one sample (N·C planes in a batch), with the window geometry of
// nn/detail/im2col.hpp (dilation 1).
//
// Each output reads the part of its window that lies inside the image: the loops clip the
// window to the image once per output row and column instead of testing every tap, so padding
// costs nothing. Max pooling records, per output, the flat index of the first maximum in
// row-major window order (a later equal value does not replace it): backward sends the whole
// gradient there, as PyTorch does (ties: the first maximum).

#include <algorithm>
#include <string>
#include <string_view>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/nn/detail/im2col.hpp"

namespace onelearn::nn::detail {

/// Pools need every window to hold at least one image position: explicit padding must be
/// smaller than the window on each side (PyTorch asks for at most half the window).
inline void check_pool_padding(std::string_view where, const Padding2D& padding, Size2 pool) {
  check_padding(where, padding);
  if (padding.mode != Padding2D::Mode::explicit_sizes) return;
  const auto& p = padding.sizes;
  if (p[0] < pool.h && p[1] < pool.h && p[2] < pool.w && p[3] < pool.w) return;
  throw invalid_argument(std::string(where) +
                         ": expected explicit padding smaller than the pool size " +
                         pool.to_string() + " on every side, found " + padding.name);
}

/// [first, last) of the window taps k in [0, size) with origin + k inside [0, n).
inline void clip_window(index_t origin, index_t size, index_t n, index_t& first, index_t& last) {
  first = std::max<index_t>(0, -origin);
  last = std::min<index_t>(size, n - origin);
}

template <class T>
void max_pool_forward(const WindowGeometry& g, index_t planes, const T* x, T* y, index_t* argmax) {
  const index_t H = g.height, W = g.width, OH = g.out_h, OW = g.out_w;
  if (g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.pad_top == 0 && g.pad_left == 0 &&
      g.pad_bottom == 0 && g.pad_right == 0) {
    // The common 2x2 / stride 2 pool without padding: every window is inside the image (the
    // output size rounds down), so no clipping; the same first-maximum rule, taps in row-major
    // order. (Measured: most of the generic loop's time went to the clipping.)
    for (index_t p = 0; p < planes; ++p) {
      const T* plane = x + p * H * W;
      T* out = y + p * OH * OW;
      index_t* arg = argmax + p * OH * OW;
      for (index_t oh = 0; oh < OH; ++oh) {
        const index_t r0 = 2 * oh * W, r1 = r0 + W;
        for (index_t ow = 0; ow < OW; ++ow) {
          // Selects, not branches: on real data which tap wins is unpredictable, and the
          // mispredicted branches made this loop a fifth of the cnn benchmark's time.
          const index_t c = 2 * ow;
          const T a = plane[r0 + c], b = plane[r0 + c + 1], d = plane[r1 + c],
                  e = plane[r1 + c + 1];
          const auto take_b = static_cast<index_t>(b > a);
          const T m1 = b > a ? b : a;
          const index_t i1 = r0 + c + take_b;
          const auto take_d = static_cast<index_t>(d > m1);
          const T m2 = d > m1 ? d : m1;
          const index_t i2 = i1 + (r1 + c - i1) * take_d;
          const auto take_e = static_cast<index_t>(e > m2);
          out[oh * OW + ow] = e > m2 ? e : m2;
          arg[oh * OW + ow] = i2 + (r1 + c + 1 - i2) * take_e;
        }
      }
    }
    return;
  }
  for (index_t p = 0; p < planes; ++p) {
    const T* plane = x + p * H * W;
    for (index_t oh = 0; oh < OH; ++oh) {
      const index_t h0 = oh * g.sh - g.pad_top;
      index_t i0 = 0, i1 = 0;
      clip_window(h0, g.kh, H, i0, i1);
      for (index_t ow = 0; ow < OW; ++ow) {
        const index_t w0 = ow * g.sw - g.pad_left;
        index_t j0 = 0, j1 = 0;
        clip_window(w0, g.kw, W, j0, j1);
        index_t best = (h0 + i0) * W + w0 + j0;
        T best_value = plane[best];
        for (index_t i = i0; i < i1; ++i) {
          const index_t row = (h0 + i) * W + w0;
          for (index_t j = j0; j < j1; ++j) {
            // Strictly greater: the first maximum wins ties (PyTorch's rule).
            if (plane[row + j] > best_value) {
              best_value = plane[row + j];
              best = row + j;
            }
          }
        }
        y[(p * OH + oh) * OW + ow] = best_value;
        argmax[(p * OH + oh) * OW + ow] = best;
      }
    }
  }
}

/// dx (zeroed here) gets each output's gradient at its recorded maximum.
template <class T>
void max_pool_backward(const WindowGeometry& g, index_t planes, const T* dy, const index_t* argmax,
                       T* dx) {
  const index_t in = g.in_size(), out = g.out_size();
  std::fill(dx, dx + planes * in, T(0));
  for (index_t p = 0; p < planes; ++p) {
    T* plane = dx + p * in;
    for (index_t o = 0; o < out; ++o) plane[argmax[p * out + o]] += dy[p * out + o];
  }
}

/// The divisor of output (oh, ow): the window's size, or the number of its taps inside the
/// image when padding is not counted.
inline index_t pool_divisor(const WindowGeometry& g, bool count_include_pad, index_t oh,
                            index_t ow) {
  if (count_include_pad) return g.kh * g.kw;
  index_t i0 = 0, i1 = 0, j0 = 0, j1 = 0;
  clip_window(oh * g.sh - g.pad_top, g.kh, g.height, i0, i1);
  clip_window(ow * g.sw - g.pad_left, g.kw, g.width, j0, j1);
  return (i1 - i0) * (j1 - j0);
}

template <class T>
void average_pool_forward(const WindowGeometry& g, bool count_include_pad, index_t planes,
                          const T* x, T* y) {
  const index_t H = g.height, W = g.width, OH = g.out_h, OW = g.out_w;
  for (index_t p = 0; p < planes; ++p) {
    const T* plane = x + p * H * W;
    for (index_t oh = 0; oh < OH; ++oh) {
      const index_t h0 = oh * g.sh - g.pad_top;
      index_t i0 = 0, i1 = 0;
      clip_window(h0, g.kh, H, i0, i1);
      for (index_t ow = 0; ow < OW; ++ow) {
        const index_t w0 = ow * g.sw - g.pad_left;
        index_t j0 = 0, j1 = 0;
        clip_window(w0, g.kw, W, j0, j1);
        T sum = T(0);
        for (index_t i = i0; i < i1; ++i) {
          const T* row = plane + (h0 + i) * W + w0;
          for (index_t j = j0; j < j1; ++j) sum += row[j];
        }
        y[(p * OH + oh) * OW + ow] =
            sum / static_cast<T>(pool_divisor(g, count_include_pad, oh, ow));
      }
    }
  }
}

/// dx (zeroed here) gets dy / divisor on every image position of each output's window.
template <class T>
void average_pool_backward(const WindowGeometry& g, bool count_include_pad, index_t planes,
                           const T* dy, T* dx) {
  const index_t H = g.height, W = g.width, OH = g.out_h, OW = g.out_w;
  std::fill(dx, dx + planes * H * W, T(0));
  for (index_t p = 0; p < planes; ++p) {
    T* plane = dx + p * H * W;
    for (index_t oh = 0; oh < OH; ++oh) {
      const index_t h0 = oh * g.sh - g.pad_top;
      index_t i0 = 0, i1 = 0;
      clip_window(h0, g.kh, H, i0, i1);
      for (index_t ow = 0; ow < OW; ++ow) {
        const index_t w0 = ow * g.sw - g.pad_left;
        index_t j0 = 0, j1 = 0;
        clip_window(w0, g.kw, W, j0, j1);
        const T share = dy[(p * OH + oh) * OW + ow] /
                        static_cast<T>(pool_divisor(g, count_include_pad, oh, ow));
        for (index_t i = i0; i < i1; ++i) {
          T* row = plane + (h0 + i) * W + w0;
          for (index_t j = j0; j < j1; ++j) row[j] += share;
        }
      }
    }
  }
}

}  // namespace onelearn::nn::detail
