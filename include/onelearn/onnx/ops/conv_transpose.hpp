#pragma once
// ConvTranspose (1-d to 3-d and beyond): strides, dilations, group, pads, output_padding,
// output_shape and auto_pad (SAME_UPPER, SAME_LOWER, VALID); optional bias. Float32 and
// float64, accumulated in double precision.

#include <cstdint>
#include <string>
#include <vector>

#include "onelearn/onnx/ops/common.hpp"
#include "onelearn/onnx/ops/reduce.hpp"

namespace onelearn::onnx::ops {

inline std::vector<Tensor> conv_transpose(const NodeContext& ctx) {
  expect_inputs(ctx, 2, 3);
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  visit_float(ctx, x, [](auto) { return 0; });
  expect_same_type(ctx, x, w);
  if (x.rank() < 3 || w.rank() != x.rank()) {
    ctx.fail_shape("X must be (N, C, D1, ...) and W (C, M/group, k1, ...) of the same rank, found " +
                   shape_string(x.shape()) + " and " + shape_string(w.shape()));
  }
  const std::size_t sp = x.rank() - 2;
  const std::int64_t group = ctx.get_int("group", 1);
  const std::int64_t n = x.shape()[0], c = x.shape()[1];
  if (group < 1 || c % group != 0 || w.shape()[0] != c) {
    ctx.fail_shape("W's first dimension must be X's channels, divisible by group");
  }
  const std::int64_t m_per_group = w.shape()[1], m = m_per_group * group;
  Shape kernel(w.shape().begin() + 2, w.shape().end());
  const auto list = [&](const char* name, std::int64_t fallback, std::size_t size) {
    std::vector<std::int64_t> v = ctx.get_ints(name).value_or(std::vector<std::int64_t>(size, fallback));
    if (v.size() != size) ctx.fail(std::string("attribute '") + name + "' has the wrong length");
    return v;
  };
  if (const auto ks = ctx.get_ints("kernel_shape"); ks && *ks != kernel) {
    ctx.fail_shape("kernel_shape disagrees with W's shape");
  }
  const auto strides = list("strides", 1, sp), dilations = list("dilations", 1, sp);
  const auto out_pad = list("output_padding", 0, sp);
  std::vector<std::int64_t> pads = list("pads", 0, 2 * sp);
  const std::string auto_pad = ctx.get_string("auto_pad", "NOTSET");
  Shape out(sp);
  const auto output_shape = ctx.get_ints("output_shape");
  for (std::size_t i = 0; i < sp; ++i) {
    if (strides[i] < 1 || dilations[i] < 1) ctx.fail("strides and dilations must be positive");
    const std::int64_t full = strides[i] * (x.shape()[i + 2] - 1) + out_pad[i] + (kernel[i] - 1) * dilations[i] + 1;
    std::int64_t target = -1;
    if (output_shape) {
      if (output_shape->size() != sp && output_shape->size() != x.rank()) ctx.fail("output_shape has the wrong length");
      target = (*output_shape)[output_shape->size() - sp + i];
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      target = x.shape()[i + 2] * strides[i];
    }
    if (target >= 0) {
      // A negative total (output_shape beyond the full result) extends the end with zeros
      // (and the bias), as output_padding would.
      const std::int64_t total = full - target;
      const bool upper = auto_pad != "SAME_LOWER";
      pads[i] = upper ? total / 2 : total - total / 2;
      pads[i + sp] = total - pads[i];
    } else if (auto_pad == "VALID") {
      pads[i] = pads[i + sp] = 0;
    }
    out[i] = full - pads[i] - pads[i + sp];
    if (out[i] < 0) ctx.fail_shape("pads leave a negative output size");
  }
  Shape y_shape{n, m};
  y_shape.insert(y_shape.end(), out.begin(), out.end());
  const std::size_t total_out = element_count(y_shape);
  const std::vector<double> xv = detail::as_doubles(ctx, x), wv = detail::as_doubles(ctx, w);
  std::vector<double> bias(static_cast<std::size_t>(m), 0.0);
  if (ctx.has_input(2)) {
    if (ctx.input(2).size() != static_cast<std::size_t>(m)) ctx.fail_shape("B must have M values");
    bias = detail::as_doubles(ctx, ctx.input(2));
  }
  std::vector<double> y(total_out);
  const auto in_sp = static_cast<std::size_t>(product(x.shape(), 2, x.rank()));
  const auto k_sp = static_cast<std::size_t>(product(kernel, 0, sp));
  const auto out_sp = static_cast<std::size_t>(product(out, 0, sp));
  const Shape out_strides = strides_of(out);
  const std::int64_t cg = c / group;
  for (std::int64_t b = 0; b < n; ++b) {
    for (std::int64_t oc = 0; oc < m; ++oc) {
      double* dst = y.data() + static_cast<std::size_t>(b * m + oc) * out_sp;
      for (std::size_t p = 0; p < out_sp; ++p) dst[p] = bias[static_cast<std::size_t>(oc)];
    }
    for (std::int64_t ic = 0; ic < c; ++ic) {
      const std::int64_t g = ic / cg;
      for (std::size_t ip = 0; ip < in_sp; ++ip) {
        // The input position's coordinates.
        std::vector<std::int64_t> xi(sp);
        std::size_t rest = ip;
        for (std::size_t i = sp; i-- > 0;) {
          const auto d = static_cast<std::size_t>(x.shape()[i + 2]);
          xi[i] = static_cast<std::int64_t>(rest % d);
          rest /= d;
        }
        const double xval = xv[static_cast<std::size_t>(b * c + ic) * in_sp + ip];
        for (std::size_t kp = 0; kp < k_sp; ++kp) {
          std::size_t krest = kp;
          std::int64_t offset = 0;
          bool inside = true;
          for (std::size_t i = sp; i-- > 0;) {
            const auto kd = static_cast<std::size_t>(kernel[i]);
            const auto ki = static_cast<std::int64_t>(krest % kd);
            krest /= kd;
            const std::int64_t o = xi[i] * strides[i] + ki * dilations[i] - pads[i];
            if (o < 0 || o >= out[i]) inside = false;
            offset += o * out_strides[i];
          }
          if (!inside) continue;
          for (std::int64_t mo = 0; mo < m_per_group; ++mo) {
            const std::int64_t oc = g * m_per_group + mo;
            const double wval = wv[static_cast<std::size_t>(ic * m_per_group + mo) * k_sp + kp];
            y[static_cast<std::size_t>(b * m + oc) * out_sp + static_cast<std::size_t>(offset)] += xval * wval;
          }
        }
      }
    }
  }
  return single_output(detail::from_doubles(x.dtype(), y_shape, y));
}

}  // namespace onelearn::onnx::ops
