#pragma once
// Pooling: MaxPool (strides, pads, dilations, auto_pad, ceil_mode, optional int64 Indices output
// with storage_order), AveragePool (count_include_pad, ceil_mode, auto_pad), GlobalAveragePool,
// GlobalMaxPool. Any number of spatial dimensions; float32 and float64. Images (two spatial
// dimensions) run on the networks' 2-D pool kernels (planar.hpp) where those cover the window.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "onelearn/onnx/ops/common.hpp"
#include "onelearn/onnx/ops/planar.hpp"
#include "onelearn/onnx/ops/window.hpp"

namespace onelearn::onnx::ops {

namespace detail {

struct PoolSetup {
  Window win;
  std::int64_t planes = 0, isize = 0, osize = 0;
  Shape out_shape;
  /// The 2-D geometry when the window is one the 2-D kernels pool as ONNX does: two spatial
  /// dimensions, no dilation, every window on the image and inside the padded image.
  std::optional<planar::WindowGeometry> image;
};

inline PoolSetup pool_setup(const NodeContext& ctx, const Tensor& x) {
  if (x.rank() < 3) ctx.fail_shape("input must be (N, C, D1, ...), found " + shape_string(x.shape()));
  const auto kernel = ctx.get_ints("kernel_shape");
  if (!kernel) ctx.fail("attribute 'kernel_shape' is required");
  const Shape in(x.shape().begin() + 2, x.shape().end());
  PoolSetup s;
  s.win = window_geometry(ctx, in, *kernel, ctx.get_int("ceil_mode", 0) != 0);
  s.planes = x.shape()[0] * x.shape()[1];
  s.isize = product(in, 0, in.size());
  s.osize = product(s.win.out, 0, in.size());
  s.out_shape = {x.shape()[0], x.shape()[1]};
  s.out_shape.insert(s.out_shape.end(), s.win.out.begin(), s.win.out.end());
  (void)element_count(s.out_shape);  // shape_error past 2^63 outputs, before any allocation
  s.image = planar::geometry(s.win, x.shape()[1]);
  if (s.image && !(planar::windows_touch_image(*s.image) && planar::windows_inside_padding(*s.image))) {
    s.image.reset();
  }
  return s;
}

/// ceil(a / b) for b > 0 and any sign of a.
inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

/// Calls f(output position, list of (flat input offset) in the window, count of window cells
/// inside the padded input) for every output position.
template <class F>
void for_each_window(const Window& w, F f) {
  const std::size_t d = w.in.size();
  const Shape in_strides = strides_of(w.in);
  std::vector<std::int64_t> cells;
  std::int64_t o_flat = 0;
  for_each_index(w.out, [&](const std::vector<std::int64_t>& o) {
    cells.clear();
    std::int64_t padded = 1;
    // Per dimension, the window's coordinates inside the input and inside the padded input.
    std::vector<std::vector<std::int64_t>> coords(d);
    for (std::size_t j = 0; j < d; ++j) {
      // Window cell k sits at base + k * dilation. The cells inside [lo, hi) are a range of k
      // computed directly, so the cost follows the input, not kernel_shape (a kernel of 2^29
      // cells over a 5-pixel input is valid ONNX).
      const std::int64_t base = o[j] * w.strides[j] - w.pad_begin[j];
      const std::int64_t dilation = w.dilations[j];
      const auto cells_in = [&](std::int64_t lo, std::int64_t hi) {  // k range [first, last)
        const std::int64_t first = std::max<std::int64_t>(0, ceil_div(lo - base, dilation));
        const std::int64_t last = std::min<std::int64_t>(w.kernel[j], ceil_div(hi - base, dilation));
        return std::pair{first, std::max(first, last)};
      };
      const auto [pad_first, pad_last] = cells_in(-w.pad_begin[j], w.in[j] + w.pad_end[j]);
      padded *= pad_last - pad_first;
      const auto [first, last] = cells_in(0, w.in[j]);
      for (std::int64_t k = first; k < last; ++k) coords[j].push_back(base + k * dilation);
    }
    Shape counts(d);
    for (std::size_t j = 0; j < d; ++j) counts[j] = static_cast<std::int64_t>(coords[j].size());
    for_each_index(counts, [&](const std::vector<std::int64_t>& i) {
      std::int64_t offset = 0;
      for (std::size_t j = 0; j < d; ++j) {
        offset += coords[j][static_cast<std::size_t>(i[j])] * in_strides[j];
      }
      cells.push_back(offset);
    });
    f(o_flat++, static_cast<const std::vector<std::int64_t>&>(cells), padded);
  });
}

}  // namespace detail

inline std::vector<Tensor> max_pool(const NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const detail::PoolSetup s = detail::pool_setup(ctx, x);
  const bool column_major = ctx.get_int("storage_order", 0) != 0;
  const bool want_indices = ctx.wants_output(1);
  return visit_float(ctx, x, [&](auto v) {
    using T = typename decltype(v)::value_type;
    if (s.image && !want_indices) {
      return std::vector<Tensor>{Tensor(s.out_shape, planar::max_pool<T>(*s.image, s.planes, v.data()))};
    }
    const auto n = element_count(s.out_shape);
    std::vector<T> y(n, -std::numeric_limits<T>::infinity());
    std::vector<std::int64_t> argmax(want_indices ? n : 0, 0);
    // Indices in column-major order need the row-major offset turned around.
    const Shape in_strides = strides_of(s.win.in);
    const auto to_column_major = [&](std::int64_t offset) {
      std::int64_t out = 0, stride = 1;
      for (std::size_t j = 0; j < s.win.in.size(); ++j) {
        out += (offset / in_strides[j]) % s.win.in[j] * stride;
        stride *= s.win.in[j];
      }
      return out;
    };
    // A batch of 0 has nothing to pool, however many output positions the padding describes
    // (pads of 2^25 would otherwise loop 10^9 times over no data).
    if (s.planes > 0) detail::for_each_window(s.win, [&](std::int64_t o, const std::vector<std::int64_t>& cells,
                                       std::int64_t) {
      for (std::int64_t p = 0; p < s.planes; ++p) {
        const T* plane = v.data() + p * s.isize;
        const auto k = static_cast<std::size_t>(p * s.osize + o);
        std::int64_t best = -1;
        for (const std::int64_t c : cells) {
          if (best < 0 || plane[c] > plane[best]) best = c;
        }
        if (best >= 0) {
          y[k] = plane[best];
          if (want_indices) {
            argmax[k] = p * s.isize + (column_major ? to_column_major(best) : best);
          }
        }
      }
    });
    std::vector<Tensor> out{Tensor(s.out_shape, std::move(y))};
    if (want_indices) out.emplace_back(s.out_shape, std::move(argmax));
    return out;
  });
}

inline std::vector<Tensor> average_pool(const NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const detail::PoolSetup s = detail::pool_setup(ctx, x);
  const bool include_pad = ctx.get_int("count_include_pad", 0) != 0;
  return single_output(visit_float(ctx, x, [&](auto v) {
    using T = typename decltype(v)::value_type;
    if (s.image) {
      return Tensor(s.out_shape, planar::average_pool<T>(*s.image, include_pad, s.planes, v.data()));
    }
    std::vector<T> y(element_count(s.out_shape), T{0});
    if (s.planes > 0) detail::for_each_window(s.win, [&](std::int64_t o, const std::vector<std::int64_t>& cells,
                                       std::int64_t padded) {
      const auto count = static_cast<T>(include_pad ? padded : static_cast<std::int64_t>(cells.size()));
      for (std::int64_t p = 0; p < s.planes; ++p) {
        const T* plane = v.data() + p * s.isize;
        T sum = 0;
        for (const std::int64_t c : cells) sum += plane[c];
        y[static_cast<std::size_t>(p * s.osize + o)] = count > 0 ? sum / count : T{0};
      }
    });
    return Tensor(s.out_shape, std::move(y));
  }));
}

namespace detail {

template <class Reduce>
std::vector<Tensor> global_pool(const NodeContext& ctx, Reduce reduce) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 3) ctx.fail_shape("input must be (N, C, D1, ...), found " + shape_string(x.shape()));
  Shape out(x.rank(), 1);
  out[0] = x.shape()[0];
  out[1] = x.shape()[1];
  const auto planes = static_cast<std::size_t>(out[0] * out[1]);
  const auto size = static_cast<std::size_t>(product(x.shape(), 2, x.rank()));
  return single_output(visit_float(ctx, x, [&](auto v) {
    using T = typename decltype(v)::value_type;
    std::vector<T> y(planes);
    for (std::size_t p = 0; p < planes; ++p) y[p] = reduce(v.subspan(p * size, size));
    return Tensor(out, std::move(y));
  }));
}

}  // namespace detail

inline std::vector<Tensor> global_average_pool(const NodeContext& ctx) {
  return detail::global_pool(ctx, [](auto plane) {
    using T = typename decltype(plane)::value_type;
    T sum = 0;
    for (const T e : plane) sum += e;
    return plane.empty() ? T{0} : sum / static_cast<T>(plane.size());
  });
}

inline std::vector<Tensor> global_max_pool(const NodeContext& ctx) {
  return detail::global_pool(ctx, [](auto plane) {
    using T = typename decltype(plane)::value_type;
    T top = -std::numeric_limits<T>::infinity();
    for (const T e : plane) top = std::max(top, e);
    return top;
  });
}

}  // namespace onelearn::onnx::ops
