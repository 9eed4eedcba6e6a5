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
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
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

#if defined(__AVX__)
inline constexpr int max_pool_vector_bytes = 32;
#else
inline constexpr int max_pool_vector_bytes = 16;
#endif

/// The vectors of max_pool_2x2_row (GCC's and Clang's vector extensions): 16 or 32 bytes of T
/// (float or double), and lane masks of the same width.
template <class T>
struct PoolVector {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "float or double");
  static constexpr index_t lanes = max_pool_vector_bytes / static_cast<index_t>(sizeof(T));
  using Lane = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
  typedef T type __attribute__((vector_size(max_pool_vector_bytes)));
  typedef Lane mask __attribute__((vector_size(max_pool_vector_bytes)));

  /// candidate > kept ? candidate : kept, lane by lane (kept where either is NaN).
  static type greater_or_kept(type candidate, type kept) {
    const mask take = candidate > kept;
    return (type)(((mask)candidate & take) | ((mask)kept & ~take));
  }
};

/// The elements max_pool_2x2_row reads from `top` and from `bottom` for a row of `OW`
/// outputs when it uses vectors (whole vectors of outputs, two inputs each).
template <class T>
constexpr index_t max_pool_2x2_row_reach(index_t OW) {
  constexpr index_t L = PoolVector<T>::lanes;
  return 2 * ((OW + L - 1) / L * L);
}

/// One output row of a 2x2 / stride 2 max pool, values only: out[j] is the first maximum of
/// v(top[2j]), v(top[2j+1]), v(bottom[2j]), v(bottom[2j+1]), with the selects, in the order,
/// of max_pool_forward (so NaN and signed zeros come out the same); `v` is applied to each
/// value (or to a vector of them) first: the identity, or a fused Conv's bias and Relu. In
/// vectors (the even and odd columns are two shuffles of two loads), the last one running past
/// the row's end into the next row, which is written after it; scalar where a vector would
/// read past `x_end` or write past `y_end`. Why: the compiler's own vectorisation of the
/// stride-2 loop over 14- or 7-wide rows was mostly its scalar epilogue (measured, 64 x 16 x
/// 28 x 28 floats, -O3 -march=native: 150 us against 70 us here; -O2 without -march: 177
/// against 87).
template <class T, class Prepare>
void max_pool_2x2_row(const T* top, const T* bottom, index_t OW, const T* x_end, T* out,
                      const T* y_end, Prepare v) {
  using PV = PoolVector<T>;
  using Vec = typename PV::type;
  constexpr index_t L = PV::lanes;
  const index_t span = (OW + L - 1) / L * L;
  if (bottom + 2 * span > x_end || out + span > y_end) {
    for (index_t j = 0; j < OW; ++j) {
      const T a = v(top[2 * j]), b = v(top[2 * j + 1]), d = v(bottom[2 * j]),
              e = v(bottom[2 * j + 1]);
      const T m1 = b > a ? b : a;
      const T m2 = d > m1 ? d : m1;
      out[j] = e > m2 ? e : m2;
    }
    return;
  }
  const auto load = [](const T* p) {
    Vec x;
    std::memcpy(&x, p, sizeof x);
    return x;
  };
  const auto even = [](Vec a, Vec b) {
    if constexpr (L == 8) return __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14);
    else if constexpr (L == 4) return __builtin_shufflevector(a, b, 0, 2, 4, 6);
    else return __builtin_shufflevector(a, b, 0, 2);
  };
  const auto odd = [](Vec a, Vec b) {
    if constexpr (L == 8) return __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15);
    else if constexpr (L == 4) return __builtin_shufflevector(a, b, 1, 3, 5, 7);
    else return __builtin_shufflevector(a, b, 1, 3);
  };
  for (index_t k = 0; k < span; k += L) {
    const Vec t0 = load(top + 2 * k), t1 = load(top + 2 * k + L);
    const Vec b0 = load(bottom + 2 * k), b1 = load(bottom + 2 * k + L);
    Vec m = PV::greater_or_kept(v(odd(t0, t1)), v(even(t0, t1)));
    m = PV::greater_or_kept(v(even(b0, b1)), m);
    m = PV::greater_or_kept(v(odd(b0, b1)), m);
    std::memcpy(out + k, &m, sizeof m);
  }
}

/// max_pool_forward and max_pool_values in one: with kRecord, argmax gets the flat index of
/// each maximum in its plane; without it, argmax is not touched (may be null).
template <bool kRecord, class T>
void max_pool_planes(const WindowGeometry& g, index_t planes, const T* x, T* y, index_t* argmax) {
  const index_t H = g.height, W = g.width, OH = g.out_h, OW = g.out_w;
  if (g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.pad_top == 0 && g.pad_left == 0 &&
      g.pad_bottom == 0 && g.pad_right == 0) {
    // The common 2x2 / stride 2 pool without padding: every window is inside the image (the
    // output size rounds down), so no clipping; the same first-maximum rule, taps in row-major
    // order. (Measured: most of the generic loop's time went to the clipping.)
    for (index_t p = 0; p < planes; ++p) {
      const T* plane = x + p * H * W;
      T* out = y + p * OH * OW;
      for (index_t oh = 0; oh < OH; ++oh) {
        const index_t r0 = 2 * oh * W, r1 = r0 + W;
        if constexpr (!kRecord) {
          max_pool_2x2_row(plane + r0, plane + r1, OW, x + planes * H * W, out + oh * OW,
                           y + planes * OH * OW, [](auto value) { return value; });
        } else {
          index_t* arg = argmax + p * OH * OW;
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
        if constexpr (kRecord) argmax[(p * OH + oh) * OW + ow] = best;
      }
    }
  }
}

template <class T>
void max_pool_forward(const WindowGeometry& g, index_t planes, const T* x, T* y, index_t* argmax) {
  max_pool_planes<true>(g, planes, x, y, argmax);
}

/// The maxima alone, for inference (the ONNX executor): the values max_pool_forward gives.
template <class T>
void max_pool_values(const WindowGeometry& g, index_t planes, const T* x, T* y) {
  max_pool_planes<false>(g, planes, x, y, static_cast<index_t*>(nullptr));
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
