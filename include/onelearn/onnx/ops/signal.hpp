#pragma once
// Window functions (opset 17): HannWindow, HammingWindow, BlackmanWindow, of the size input,
// periodic (default) or symmetric, of output_datatype (float32 by default).

#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include "onelearn/onnx/ops/common.hpp"
#include "onelearn/onnx/ops/reduce.hpp"

namespace onelearn::onnx::ops {

namespace detail {

/// a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size (periodic) or size - 1 (symmetric).
inline std::vector<Tensor> cosine_window(const NodeContext& ctx, double a0, double a1, double a2) {
  expect_inputs(ctx, 1, 1);
  const auto sv = int_values(ctx, ctx.input(0), "size");
  if (sv.size() != 1 || sv[0] < 0 || sv[0] > (std::int64_t{1} << 32)) ctx.fail_shape("size must be a scalar in [0, 2^32]");
  const std::int64_t size = sv[0];
  const bool periodic = ctx.get_int("periodic", 1) != 0;
  const double n = static_cast<double>(periodic ? size : size - 1);
  const DataType type = data_type_from_onnx(static_cast<std::int32_t>(ctx.get_int("output_datatype", 1)),
                                            ctx.where() + ": output_datatype");
  std::vector<double> w(static_cast<std::size_t>(size));
  for (std::size_t i = 0; i < w.size(); ++i) {
    const double t = 2 * std::numbers::pi * static_cast<double>(i) / n;
    w[i] = a0 - a1 * std::cos(t) + a2 * std::cos(2 * t);
  }
  return single_output(from_doubles(type, Shape{size}, w));
}

}  // namespace detail

inline std::vector<Tensor> hann_window(const NodeContext& ctx) {
  return detail::cosine_window(ctx, 0.5, 0.5, 0.0);
}
inline std::vector<Tensor> hamming_window(const NodeContext& ctx) {
  return detail::cosine_window(ctx, 25.0 / 46.0, 21.0 / 46.0, 0.0);
}
inline std::vector<Tensor> blackman_window(const NodeContext& ctx) {
  return detail::cosine_window(ctx, 0.42, 0.5, 0.08);
}

}  // namespace onelearn::onnx::ops
