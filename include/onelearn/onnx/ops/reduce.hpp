#pragma once
// Reductions: ArgMax (int64 indices; keepdims, select_last_index).

#include <cstdint>
#include <vector>

#include "onelearn/onnx/ops/common.hpp"

namespace onelearn::onnx::ops {

inline std::vector<Tensor> argmax(const NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() == 0) ctx.fail_shape("input must have at least one dimension");
  const std::size_t axis = ctx.axis(ctx.get_int("axis", 0), x.rank());
  const bool keepdims = ctx.get_int("keepdims", 1) != 0;
  const bool last = ctx.get_int("select_last_index", 0) != 0;
  const auto outer = static_cast<std::size_t>(product(x.shape(), 0, axis));
  const auto n = static_cast<std::size_t>(x.shape()[axis]);
  const auto inner = static_cast<std::size_t>(product(x.shape(), axis + 1, x.rank()));
  if (n == 0) ctx.fail_shape("cannot take the argmax along an empty axis");
  Shape out = x.shape();
  if (keepdims) out[axis] = 1;
  else out.erase(out.begin() + static_cast<std::ptrdiff_t>(axis));
  std::vector<std::int64_t> y(outer * inner);
  visit_numeric(x, [&](auto v) {
    for (std::size_t o = 0; o < outer; ++o) {
      for (std::size_t i = 0; i < inner; ++i) {
        const std::size_t base = o * n * inner + i;
        std::size_t best = 0;
        for (std::size_t k = 1; k < n; ++k) {
          const auto value = v[base + k * inner], top = v[base + best * inner];
          if (value > top || (last && value == top)) best = k;
        }
        y[o * inner + i] = static_cast<std::int64_t>(best);
      }
    }
    return 0;
  });
  return {Tensor(out, std::move(y))};
}

}  // namespace onelearn::onnx::ops
