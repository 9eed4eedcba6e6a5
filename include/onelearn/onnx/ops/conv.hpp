#pragma once
// Conv over 1, 2 or 3 (any number of) spatial dimensions: strides, pads, dilations, group,
// auto_pad. Images (two spatial dimensions) run on the networks' 2-D kernels (planar.hpp);
// otherwise each (image, group) is an im2col matrix multiplied by the group's filters (Eigen).
// Honours ctx.fusion(): a Relu and a 2x2 MaxPool that alone read the output are computed here
// (graph.hpp's fusion pass).

#include <Eigen/Core>
#include <cstdint>
#include <vector>

#include "onelearn/onnx/ops/common.hpp"
#include "onelearn/onnx/ops/gemm.hpp"
#include "onelearn/onnx/ops/planar.hpp"
#include "onelearn/onnx/ops/window.hpp"

namespace onelearn::onnx::ops {

inline std::vector<Tensor> conv(const NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  if (x.rank() < 3 || w.rank() != x.rank()) {
    ctx.fail_shape("X must be (N, C, D1, ...) and W (M, C/group, k1, ...) of the same rank, "
                   "found " + shape_string(x.shape()) + " and " + shape_string(w.shape()));
  }
  if (w.dtype() != x.dtype()) ctx.fail("W must have X's element type");
  const std::int64_t group = ctx.get_int("group", 1);
  const std::int64_t n = x.shape()[0], c = x.shape()[1], m = w.shape()[0];
  if (group <= 0 || c % group != 0 || m % group != 0 || w.shape()[1] != c / group) {
    ctx.fail_shape("X has " + std::to_string(c) + " channels, W of shape " +
                   shape_string(w.shape()) + " with group " + std::to_string(group) +
                   " needs " + std::to_string(w.shape()[1] * group));
  }
  const Shape in(x.shape().begin() + 2, x.shape().end());
  Shape kernel(w.shape().begin() + 2, w.shape().end());
  if (const auto ks = ctx.get_ints("kernel_shape"); ks && *ks != kernel) {
    ctx.fail_shape("kernel_shape " + shape_string(*ks) + " disagrees with W's " +
                   shape_string(kernel));
  }
  const Window win = window_geometry(ctx, in, kernel, false);
  const std::size_t d = in.size();
  const std::int64_t cg = c / group, mg = m / group;
  const std::int64_t ksize = product(kernel, 0, d), isize = product(in, 0, d);
  const std::int64_t osize = product(win.out, 0, d);
  Shape out_shape{n, m};
  out_shape.insert(out_shape.end(), win.out.begin(), win.out.end());
  const Fusion& fusion = ctx.fusion();
  if (fusion.max_pool_2x2) {
    // The fused MaxPool's checks, which it would make on this output.
    if (d != 2 || win.out[0] < 2 || win.out[1] < 2) {
      ctx.fail_shape("the MaxPool fused after it (2x2, stride 2) needs an output of two spatial "
                     "dimensions of at least 2, found " + shape_string(out_shape));
    }
    out_shape[2] /= 2;
    out_shape[3] /= 2;
  }
  if (ctx.has_input(2) && (ctx.input(2).size() != static_cast<std::size_t>(m) ||
                           ctx.input(2).dtype() != x.dtype())) {
    ctx.fail_shape("B must have " + std::to_string(m) + " values of X's element type");
  }
  // The column matrix (or the offset table below) holds a value per kernel cell and output
  // position: its size is checked before anything is allocated.
  std::int64_t table_size = 0, columns = 0;
  if (__builtin_mul_overflow(ksize, osize, &table_size) ||
      __builtin_mul_overflow(table_size, cg, &columns)) {
    ctx.fail_shape("kernel x output positions overflow: " + std::to_string(ksize) + " x " +
                   std::to_string(osize));
  }
  (void)element_count(out_shape);  // shape_error past 2^63 outputs, before any allocation
  if (const auto g2 = planar::geometry(win, c)) {
    return single_output(visit_float(ctx, x, [&](auto vx) {
      using T = typename decltype(vx)::value_type;
      const T* bias = ctx.has_input(2) ? ctx.input(2).data<T>().data() : nullptr;
      return Tensor(out_shape, planar::conv<T>(*g2, n, group, m, vx.data(), w.data<T>().data(),
                                               bias, fusion));
    }));
  }
  // For every (kernel offset, output position): the input offset, or -1 in the padding.
  std::vector<std::int64_t> source(static_cast<std::size_t>(table_size));
  {
    const Shape in_strides = strides_of(in);
    std::size_t k = 0;
    for_each_index(kernel, [&](const std::vector<std::int64_t>& kk) {
      for_each_index(win.out, [&](const std::vector<std::int64_t>& o) {
        std::int64_t offset = 0;
        for (std::size_t j = 0; j < d && offset >= 0; ++j) {
          const std::int64_t p = o[j] * win.strides[j] - win.pad_begin[j] + kk[j] * win.dilations[j];
          offset = p < 0 || p >= in[j] ? -1 : offset + p * in_strides[j];
        }
        source[k++] = offset;
      });
    });
  }
  return single_output(visit_float(ctx, x, [&](auto vx) {
    using T = typename decltype(vx)::value_type;
    const auto vw = w.data<T>();
    std::vector<T> y(element_count(out_shape));
    std::vector<T> col(static_cast<std::size_t>(cg * ksize * osize));
    for (std::int64_t b = 0; b < n; ++b) {
      for (std::int64_t g = 0; g < group; ++g) {
        for (std::int64_t ci = 0; ci < cg; ++ci) {
          const T* image = vx.data() + (b * c + g * cg + ci) * isize;
          T* rows = col.data() + ci * ksize * osize;
          for (std::size_t k = 0; k < source.size(); ++k) {
            rows[k] = source[k] < 0 ? T{0} : image[source[k]];
          }
        }
        detail::ConstMap<T> mw(vw.data() + g * mg * cg * ksize, mg, cg * ksize);
        detail::ConstMap<T> mc(col.data(), cg * ksize, osize);
        detail::MutMap<T> my(y.data() + (b * m + g * mg) * osize, mg, osize);
        my.noalias() = mw * mc;
      }
    }
    if (ctx.has_input(2)) {
      const auto bias = ctx.input(2).data<T>();
      for (std::int64_t b = 0; b < n; ++b)
        for (std::int64_t f = 0; f < m; ++f) {
          T* row = y.data() + (b * m + f) * osize;
          for (std::int64_t p = 0; p < osize; ++p) row[p] += bias[static_cast<std::size_t>(f)];
        }
    }
    if (fusion.relu) {
      for (T& e : y) e = relu_value(e);
    }
    return Tensor(out_shape, std::move(y));
  }));
}

}  // namespace onelearn::onnx::ops
