#pragma once
// Pad: constant, reflect or edge padding; pads as an attribute before opset 11 ("paddings" in
// opset 1), an input from 11 on (negative pads crop). Any element type, moved as bytes.

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "onelearn/onnx/ops/common.hpp"
#include "onelearn/onnx/ops/generate.hpp"

namespace onelearn::onnx::ops {

inline std::vector<Tensor> pad(const NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::size_t r = x.rank();
  std::vector<std::int64_t> pads;
  Tensor value(Shape{}, std::vector<double>{0.0});
  if (ctx.opset() < 11) {
    expect_inputs(ctx, 1, 1);
    pads = ctx.get_ints(ctx.opset() < 2 ? "paddings" : "pads").value_or(std::vector<std::int64_t>{});
    value = Tensor(Shape{}, std::vector<double>{ctx.get_float("value", 0.f)});
  } else {
    expect_inputs(ctx, 2, 3);
    pads = int_values(ctx, ctx.input(1), "pads");
    if (ctx.has_input(2)) {
      value = ctx.input(2);
      if (value.size() != 1) ctx.fail_shape("constant_value must be a scalar");
    }
  }
  if (pads.size() != 2 * r) {
    ctx.fail_shape("pads has " + std::to_string(pads.size()) + " values for an input of rank " +
                   std::to_string(r) + " (needs " + std::to_string(2 * r) + ")");
  }
  const std::string mode = ctx.get_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") ctx.fail("unknown mode '" + mode + "'");
  Shape out(r);
  for (std::size_t d = 0; d < r; ++d) {
    out[d] = x.shape()[d] + pads[d] + pads[d + r];
    if (out[d] < 0) ctx.fail_shape("pads crop axis " + std::to_string(d) + " below size 0");
    if (mode != "constant" && x.shape()[d] == 0 && out[d] > 0) {
      ctx.fail_shape(mode + " padding of an empty axis");
    }
  }
  // For each axis, the input index each output index reads (-1: the constant).
  std::vector<std::vector<std::int64_t>> source(r);
  for (std::size_t d = 0; d < r; ++d) {
    const std::int64_t n = x.shape()[d];
    for (std::int64_t o = 0; o < out[d]; ++o) {
      std::int64_t j = o - pads[d];
      if (j < 0 || j >= n) {
        if (mode == "constant") {
          j = -1;
        } else if (mode == "edge") {
          j = j < 0 ? 0 : n - 1;
        } else if (n == 1) {
          j = 0;
        } else {
          const std::int64_t period = 2 * (n - 1);
          j %= period;
          if (j < 0) j += period;
          if (j >= n) j = period - j;
        }
      }
      source[d].push_back(j);
    }
  }
  Tensor y(x.dtype(), out);
  const std::size_t es = y.element_bytes();
  const Tensor fill = detail::cast_to(ctx, value, x.dtype());
  const Shape xs = strides_of(x.shape());
  std::vector<std::int64_t> pos(r, 0);
  std::byte* dst = y.mutable_bytes();
  for (std::size_t k = 0; k < y.size(); ++k) {
    std::int64_t src = 0;
    bool inside = true;
    for (std::size_t d = 0; d < r && inside; ++d) {
      const std::int64_t j = source[d][static_cast<std::size_t>(pos[d])];
      inside = j >= 0;
      src += j * xs[d];
    }
    std::memcpy(dst + k * es, inside ? x.bytes() + static_cast<std::size_t>(src) * es : fill.bytes(), es);
    for (std::size_t d = r; d-- > 0;) {
      if (++pos[d] < out[d]) break;
      pos[d] = 0;
    }
  }
  return single_output(std::move(y));
}

}  // namespace onelearn::onnx::ops
