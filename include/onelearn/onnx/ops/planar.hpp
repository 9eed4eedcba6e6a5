#pragma once
// Conv, MaxPool and AveragePool over two spatial dimensions (images: N, C, H, W), run on the
// kernels nn::Conv2D and the pooling layers train with (nn/detail/direct_conv.hpp, im2col.hpp,
// gemm.hpp, pool.hpp), with the samples (or planes) of a batch cut over OpenMP threads.
//
// Why: the executor's N-dimensional forms (conv.hpp, pool.hpp) walk every window through index
// vectors and multiply one sample at a time with a fresh Eigen product; on bench/'s cnn network
// (batch 64, this repository's 2-core machine) they took 29 ms a batch, onnxruntime 1-2.6 ms.
// Images are nearly every Conv and pool a real model has, so they take this path; windows over
// one or three dimensions, and the cases the 2-D kernels do not cover (said at each entry
// point), keep the N-D forms, which the backend tests check as before. Results equal the N-D
// forms' up to the order of the sums in the products (tests/unit_onnx/test_onnx.cpp compares
// the two on random geometries).

#include <algorithm>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include "onelearn/core/detail/parallel.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/nn/detail/direct_conv.hpp"
#include "onelearn/nn/detail/filter_vector_conv.hpp"
#include "onelearn/nn/detail/gemm.hpp"
#include "onelearn/nn/detail/im2col.hpp"
#include "onelearn/nn/detail/pool.hpp"
#include "onelearn/onnx/ops/window.hpp"

namespace onelearn::onnx::ops::planar {

using nn::detail::WindowGeometry;

/// The 2-D geometry of `win` over images of `channels` channels, when it is 2-D.
inline std::optional<WindowGeometry> geometry(const Window& win, std::int64_t channels) {
  if (win.in.size() != 2) return std::nullopt;
  WindowGeometry g;
  g.channels = channels;
  g.height = win.in[0];
  g.width = win.in[1];
  g.kh = win.kernel[0];
  g.kw = win.kernel[1];
  g.sh = win.strides[0];
  g.sw = win.strides[1];
  g.dh = win.dilations[0];
  g.dw = win.dilations[1];
  g.pad_top = win.pad_begin[0];
  g.pad_left = win.pad_begin[1];
  g.pad_bottom = win.pad_end[0];
  g.pad_right = win.pad_end[1];
  g.out_h = win.out[0];
  g.out_w = win.out[1];
  return g;
}

/// Every window holds at least one image position (a window wholly in the padding, which
/// ceil_mode or a dilation can make, has no maximum for the 2-D pool kernels), and dilation 1
/// (the pool kernels have none).
inline bool windows_touch_image(const WindowGeometry& g) {
  const auto touches = [](index_t pad, index_t kernel, index_t stride, index_t out, index_t in) {
    return pad < kernel && (out - 1) * stride - pad < in;
  };
  return g.dh == 1 && g.dw == 1 && touches(g.pad_top, g.kh, g.sh, g.out_h, g.height) &&
         touches(g.pad_left, g.kw, g.sw, g.out_w, g.width);
}

/// Threads get whole samples (or planes): `n` items cut into one chunk per thread.
inline index_t grain_for(index_t n) {
  return std::max<index_t>(1, (n + onelearn::detail::parallel_width() - 1) /
                                  onelearn::detail::parallel_width());
}

/// The direct kernels' case (nn/detail/direct_conv.hpp), as nn::Conv2D takes it: one group,
/// stride 1, and an output of the input's size (padding kh - 1 and kw - 1 in all, dilation
/// included: the "same" 3x3 / pad 1 convolution).
inline bool direct_applies(const WindowGeometry& g, index_t group) {
  return group == 1 && !g.is_identity() && g.sh == 1 && g.sw == 1 &&
         g.pad_top + g.pad_bottom == (g.kh - 1) * g.dh &&
         g.pad_left + g.pad_right == (g.kw - 1) * g.dw;
}

/// Max over each window of `planes` images (the first maximum on ties, NaN where a window's
/// first value is NaN, as the N-D form). Needs windows_touch_image(g).
template <class T>
std::vector<T> max_pool(const WindowGeometry& g, index_t planes, const T* x) {
  std::vector<T> y(static_cast<std::size_t>(planes * g.out_size()));
  onelearn::detail::for_each_chunk(planes, grain_for(planes), [&](index_t, index_t begin, index_t end) {
    nn::detail::max_pool_values(g, end - begin, x + begin * g.in_size(), y.data() + begin * g.out_size());
  });
  return y;
}

/// One sample's output rows from the correlation's (filters x H rows of `width`, `positions`
/// per filter): y[f, h, :W] = src + bias[f], relu'd when `relu`. Whole packets per row: a row's
/// last packet runs past W into the next row, which is written after it; the sample's last
/// rows, whose packets would pass its end, are scalar. (The compiler's own loops over
/// 14- or 28-wide rows were mostly scalar: a quarter of bench/'s cnn run at batch 64.) The
/// source must hold a packet more than the rows.
template <class T>
void copy_out_rows(const T* src, index_t positions, index_t width, index_t filters, index_t H,
                   index_t W, const T* bias, bool relu, T* y) {
  using namespace Eigen::internal;
  using Packet = typename nn::detail::DirectConv<T>::Packet;
  constexpr index_t L = nn::detail::DirectConv<T>::lanes;
  const index_t span = (W + L - 1) / L * L;
  const T* const end = y + filters * H * W;
  const Packet zero = pset1<Packet>(T(0));
  for (index_t f = 0; f < filters; ++f) {
    const T shift = bias != nullptr ? bias[f] : T(0);
    const Packet shift_packet = pset1<Packet>(shift);
    for (index_t h = 0; h < H; ++h) {
      const T* row = src + f * positions + h * width;
      T* dst = y + (f * H + h) * W;
      if (dst + span <= end) {
        for (index_t k = 0; k < span; k += L) {
          Packet v = padd(ploadu<Packet>(row + k), shift_packet);
          // relu_value's rule, lane by lane: 0 < v ? v : 0 (NaN gives 0).
          if (relu) v = pselect(pcmp_lt(zero, v), v, zero);
          pstoreu(dst + k, v);
        }
      } else if (relu) {
        for (index_t k = 0; k < W; ++k) dst[k] = relu_value(row[k] + shift);
      } else {
        for (index_t k = 0; k < W; ++k) dst[k] = row[k] + shift;
      }
    }
  }
}

/// copy_out_rows followed by a 2x2 / stride 2 max pool (a MaxPool the graph fused into the
/// Conv): y[f, i, j] = the pool of rows 2i and 2i+1 of src + bias[f] (relu'd when `relu`),
/// (H / 2) x (W / 2) per filter, so the full-size output is never written. The bias and the
/// Relu are applied to the values the pool loads (src_end: the end of src): the values are
/// those of the separate Conv, Relu and MaxPool. (Biasing each pair of rows into a buffer
/// first and pooling from it stalled on the loads of what had just been stored: 20% of the
/// cnn run.)
template <class T>
void copy_out_pooled(const T* src, const T* src_end, index_t positions, index_t width,
                     index_t filters, index_t H, index_t W, const T* bias, bool relu, T* y) {
  using PV = nn::detail::PoolVector<T>;
  const index_t OH = H / 2, OW = W / 2;
  const T* const end = y + filters * OH * OW;
  for (index_t f = 0; f < filters; ++f) {
    const T shift = bias != nullptr ? bias[f] : T(0);
    const auto prepare = [shift, relu](auto value) {
      const auto biased = value + shift;
      if (!relu) return biased;
      if constexpr (std::is_same_v<std::remove_const_t<decltype(biased)>, T>) return relu_value(biased);
      else return PV::greater_or_kept(biased, typename PV::type{});
    };
    for (index_t i = 0; i < OH; ++i) {
      const T* top = src + f * positions + 2 * i * width;
      nn::detail::max_pool_2x2_row(top, top + width, OW, src_end, y + (f * OH + i) * OW, end,
                                   prepare);
    }
  }
}

/// conv for direct_applies(g, 1), as nn::Conv2D's forward: each sample's channels copied into
/// zero-bordered planes where every kernel tap is a shifted contiguous run, the filters
/// correlated over them in registers (no im2col matrix, no GEMM packing), with the bias (and
/// what the graph fused into the Conv: Fusion). A whole number of packets of filters goes
/// through filter_vector_conv.hpp (vectors across filters: only the image's positions
/// computed, the bias, Relu and pool in registers; bench/'s cnn at batch 64 on one thread
/// went from 1.05-1.09 to 0.86-0.92 ms a batch, the same bits); other filter counts through
/// correlate (vectors across positions) and a copy of its rows.
template <class T>
std::vector<T> conv_direct(const WindowGeometry& g, index_t n, index_t filters, const T* x,
                           const T* w, const T* bias, Fusion fusion) {
  using DC = nn::detail::DirectConv<T>;
  const index_t C = g.channels, H = g.height, W = g.width;
  const index_t width = DC::plane_width(W, g.kw, g.dw);
  const index_t plane = DC::plane_size(H, W, g.kh, g.kw, g.dh, g.dw);
  const index_t positions = DC::positions(H, width);
  std::vector<index_t> offsets;
  for (index_t c = 0; c < C; ++c) {
    for (index_t i = 0; i < g.kh; ++i) {
      for (index_t j = 0; j < g.kw; ++j) offsets.push_back(c * plane + i * g.dh * width + j * g.dw);
    }
  }
  const bool by_filters = nn::detail::FilterVectorConv<T>::applies(filters);
  std::vector<T> packed;
  if (by_filters) {
    nn::detail::pack_filter_major(w, filters, C * g.window_size(), packed);
  } else {
    nn::detail::pack_correlate_weights(w, filters, C * g.window_size(), packed);
  }
  const index_t rows = static_cast<index_t>(packed.size()) / (C * g.window_size());
  const index_t out_h = fusion.max_pool_2x2 ? H / 2 : H, out_w = fusion.max_pool_2x2 ? W / 2 : W;
  const index_t sample_out = filters * out_h * out_w;
  // filter_vector_conv adds the bias packet by packet: zeros when the node has none.
  const std::vector<T> zeros(by_filters && bias == nullptr ? static_cast<std::size_t>(filters) : 0);
  std::vector<T> y(static_cast<std::size_t>(n * sample_out));
  const index_t grain = grain_for(n);
  const auto chunks = static_cast<std::size_t>(onelearn::detail::chunk_count(n, grain));
  // Per chunk, allocated before the parallel loop (which must not throw): the padded planes,
  // zero where no image is ever copied, and correlate's rows.
  std::vector<std::vector<T>> padded(chunks, std::vector<T>(static_cast<std::size_t>(C * plane), T(0)));
  // filter_vector_conv's tile (an output position's filters together), or correlate's rows
  // (with one packet more: copy_out_rows reads whole packets).
  std::vector<std::vector<T>> scratch(
      chunks, std::vector<T>(static_cast<std::size_t>(by_filters ? sample_out : rows * positions + DC::lanes)));
  onelearn::detail::for_each_chunk(n, grain, [&](index_t chunk, index_t begin, index_t end) {
    T* xp = padded[static_cast<std::size_t>(chunk)].data();
    T* rows_out = scratch[static_cast<std::size_t>(chunk)].data();
    for (index_t b = begin; b < end; ++b) {
      nn::detail::pad_planes(x + b * C * H * W, C, H, W, g.pad_top, g.pad_left, width, plane, xp);
      T* yb = y.data() + b * sample_out;
      if (by_filters) {
        const nn::detail::FilterVectorOutput<T> out{bias != nullptr ? bias : zeros.data(),
                                                    fusion.relu, fusion.max_pool_2x2, filters,
                                                    out_h, out_w, rows_out, yb};
        nn::detail::filter_vector_conv(xp, width, offsets, packed, H, W, out);
        continue;
      }
      nn::detail::correlate(xp, offsets, packed, positions, rows_out, positions);
      if (fusion.max_pool_2x2) {
        copy_out_pooled(rows_out, rows_out + scratch[static_cast<std::size_t>(chunk)].size(),
                        positions, width, filters, H, W, bias, fusion.relu, yb);
      } else {
        copy_out_rows(rows_out, positions, width, filters, H, W, bias, fusion.relu, yb);
      }
    }
  });
  return y;
}

/// y = conv(x, w) + bias for n images (any group count): the direct kernels where they apply
/// (measured on bench/'s cnn, batch 64, one thread, -O3: 60 runs in 361-460 ms against
/// 595-697 ms with im2col; at -O2 they lose, 9.5 against 7.7 ms a batch: build Release), else
/// per sample and group an im2col into a per-chunk buffer (nothing when the window is 1x1 /
/// stride 1 / unpadded) and one GEMM that adds onto the output, which holds the bias first.
/// `bias` may be null. `fusion` (ctx.fusion()): relu(y), applied while each sample's output
/// is still in cache, and y max-pooled 2x2 / stride 2 (the direct kernels pool each sample's
/// rows as they are copied out; the GEMM path pools the whole output afterwards).
template <class T>
std::vector<T> conv(const WindowGeometry& g, index_t n, index_t group, index_t filters,
                    const T* x, const T* w, const T* bias, Fusion fusion) {
  if (direct_applies(g, group)) return conv_direct(g, n, filters, x, w, bias, fusion);
  const bool relu = fusion.relu;
  const index_t cg = g.channels / group, mg = filters / group;
  const index_t depth = cg * g.window_size(), positions = g.out_size();
  std::vector<T> y(static_cast<std::size_t>(n * filters * positions));
  const index_t grain = grain_for(n);
  const bool identity = g.is_identity();
  // Allocated here, not in the parallel loop, which must not throw.
  std::vector<std::vector<T>> columns(
      static_cast<std::size_t>(onelearn::detail::chunk_count(n, grain)),
      std::vector<T>(identity ? 0 : static_cast<std::size_t>(depth * positions)));
  onelearn::detail::for_each_chunk(n, grain, [&](index_t chunk, index_t begin, index_t end) {
    T* col = columns[static_cast<std::size_t>(chunk)].data();
    for (index_t b = begin; b < end; ++b) {
      T* yb = y.data() + b * filters * positions;
      if (bias != nullptr) {
        for (index_t f = 0; f < filters; ++f) std::fill_n(yb + f * positions, positions, bias[f]);
      }
      for (index_t k = 0; k < group; ++k) {
        const T* image = x + (b * g.channels + k * cg) * g.in_size();
        if (!identity) nn::detail::im2col(g, cg, image, col, positions);
        nn::detail::gemm_accumulate<T>({w + k * mg * depth, mg, depth},
                                       {identity ? image : col, depth, positions},
                                       yb + k * mg * positions, positions);
      }
      if (relu) {
        for (index_t i = 0; i < filters * positions; ++i) yb[i] = relu_value(yb[i]);
      }
    }
  });
  if (fusion.max_pool_2x2) {
    WindowGeometry pool;
    pool.channels = filters;
    pool.height = g.out_h;
    pool.width = g.out_w;
    pool.kh = pool.kw = pool.sh = pool.sw = 2;
    pool.out_h = g.out_h / 2;
    pool.out_w = g.out_w / 2;
    return max_pool(pool, n * filters, y.data());
  }
  return y;
}

/// Mean over each window of `planes` images, dividing by the window's cells inside the image
/// or (count_include_pad) by the window's size. Needs windows_touch_image(g) and, with
/// count_include_pad, windows inside the padded image (no ceil_mode overhang: ONNX then counts
/// only the padded cells, the 2-D kernel the whole window).
template <class T>
std::vector<T> average_pool(const WindowGeometry& g, bool count_include_pad, index_t planes,
                            const T* x) {
  std::vector<T> y(static_cast<std::size_t>(planes * g.out_size()));
  onelearn::detail::for_each_chunk(planes, grain_for(planes), [&](index_t, index_t begin, index_t end) {
    nn::detail::average_pool_forward(g, count_include_pad, end - begin, x + begin * g.in_size(),
                                     y.data() + begin * g.out_size());
  });
  return y;
}

/// No window reaches past the padded image (ceil_mode can make the last one overhang).
inline bool windows_inside_padding(const WindowGeometry& g) {
  return (g.out_h - 1) * g.sh + g.kh <= g.height + g.pad_top + g.pad_bottom &&
         (g.out_w - 1) * g.sw + g.kw <= g.width + g.pad_left + g.pad_right;
}

}  // namespace onelearn::onnx::ops::planar
