#pragma once
// Linear quantization: QuantizeLinear (float to uint8/int8, per tensor or per axis),
// DequantizeLinear (int8/uint8/int32 to float32), DynamicQuantizeLinear (float32 to uint8 with
// its scale and zero point). Rounding halves to even, results saturate.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "onelearn/onnx/ops/common.hpp"
#include "onelearn/onnx/ops/reduce.hpp"

namespace onelearn::onnx::ops {

namespace detail {

/// For each element of x, the index into a per-tensor (size 1) or per-axis (1-d, along `axis`)
/// parameter such as a scale.
inline std::vector<std::size_t> parameter_index(const NodeContext& ctx, const Shape& x,
                                                const Tensor& p) {
  const std::size_t n = element_count(x);
  std::vector<std::size_t> at(n, 0);
  if (p.size() == 1) return at;
  if (p.rank() != 1 || x.empty()) ctx.fail_shape("scale and zero point must be scalars or 1-d");
  const std::size_t axis = ctx.axis(ctx.get_int("axis", 1), x.size());
  if (p.shape()[0] != x[axis]) ctx.fail_shape("a per-axis parameter must have the axis' length");
  const auto inner = static_cast<std::size_t>(product(x, axis + 1, x.size()));
  const auto dim = static_cast<std::size_t>(x[axis]);
  for (std::size_t k = 0; k < n; ++k) at[k] = (k / inner) % dim;
  return at;
}

}  // namespace detail

inline std::vector<Tensor> quantize_linear(const NodeContext& ctx) {
  expect_inputs(ctx, 2, 3);
  const Tensor& x = ctx.input(0);
  const std::vector<double> v = detail::as_doubles(ctx, x);
  const std::vector<double> scale = detail::as_doubles(ctx, ctx.input(1));
  const DataType out = ctx.has_input(2) ? ctx.input(2).dtype() : DataType::uint8;
  if (out != DataType::uint8 && out != DataType::int8) ctx.unsupported_type(out, "uint8, int8 (the zero point)");
  std::vector<double> zp(scale.size(), 0.0);
  if (ctx.has_input(2)) zp = detail::as_doubles(ctx, ctx.input(2));
  if (zp.size() != scale.size()) ctx.fail_shape("scale and zero point must have one shape");
  const auto at = detail::parameter_index(ctx, x.shape(), ctx.input(1));
  const double lo = out == DataType::uint8 ? 0 : -128, hi = out == DataType::uint8 ? 255 : 127;
  // x / scale in the input's precision, as the specification computes it (a float32 quotient
  // can round onto a half that the double one misses).
  const bool single = x.dtype() == DataType::float32;
  std::vector<double> q(v.size());
  for (std::size_t k = 0; k < v.size(); ++k) {
    const double ratio = single ? static_cast<double>(static_cast<float>(v[k]) / static_cast<float>(scale[at[k]]))
                                : v[k] / scale[at[k]];
    q[k] = std::clamp(std::nearbyint(ratio) + zp[at[k]], lo, hi);
  }
  return single_output(detail::from_doubles(out, x.shape(), q));
}

inline std::vector<Tensor> dequantize_linear(const NodeContext& ctx) {
  expect_inputs(ctx, 2, 3);
  const Tensor& x = ctx.input(0);
  const std::vector<double> v = detail::as_doubles(ctx, x);
  const std::vector<double> scale = detail::as_doubles(ctx, ctx.input(1));
  std::vector<double> zp(scale.size(), 0.0);
  if (ctx.has_input(2)) zp = detail::as_doubles(ctx, ctx.input(2));
  if (zp.size() != scale.size()) ctx.fail_shape("scale and zero point must have one shape");
  const auto at = detail::parameter_index(ctx, x.shape(), ctx.input(1));
  std::vector<double> y(v.size());
  for (std::size_t k = 0; k < v.size(); ++k) y[k] = (v[k] - zp[at[k]]) * scale[at[k]];
  return single_output(detail::from_doubles(ctx.input(1).dtype(), x.shape(), y));
}

inline std::vector<Tensor> dynamic_quantize_linear(const NodeContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const Tensor& x = ctx.input(0);
  const std::vector<double> v = detail::as_doubles(ctx, x);
  double lo = 0, hi = 0;
  for (const double e : v) {
    lo = std::min(lo, e);
    hi = std::max(hi, e);
  }
  // In float32, as the specification computes it.
  const float scale = static_cast<float>(hi - lo) / 255.f;
  const auto in_float = [&](double e) { return static_cast<double>(static_cast<float>(e) / scale); };
  const double zp = scale == 0 ? 0 : std::clamp(std::nearbyint(0 - in_float(lo)), 0.0, 255.0);
  std::vector<double> q(v.size());
  for (std::size_t k = 0; k < v.size(); ++k) {
    q[k] = scale == 0 ? zp : std::clamp(std::nearbyint(in_float(v[k])) + zp, 0.0, 255.0);
  }
  return {detail::from_doubles(DataType::uint8, x.shape(), q),
          Tensor(Shape{}, std::vector<float>{scale}),
          Tensor(Shape{}, std::vector<std::uint8_t>{static_cast<std::uint8_t>(zp)})};
}

}  // namespace onelearn::onnx::ops
