#pragma once
// Comparisons and logic, with numpy broadcasting; each result is a bool tensor: Equal, Less,
// Greater, LessOrEqual, GreaterOrEqual (any number type; Equal also bool), Not, And, Or, Xor
// (bool), IsNaN, IsInf (float).

#include <cmath>
#include <string>
#include <vector>

#include "onelearn/onnx/ops/common.hpp"

namespace onelearn::onnx::ops {

namespace detail {

template <TypeSet allowed, class F>
std::vector<Tensor> compare(const NodeContext& ctx, F f) {
  expect_inputs(ctx, 2, 2);
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  expect_same_type(ctx, a, b);
  const Shape out = broadcast_shape(ctx, a.shape(), b.shape());
  return single_output(visit_types<allowed>(ctx, a, [&](auto va) {
    using T = typename decltype(va)::value_type;
    return Tensor(out, broadcast_apply<boolean>(out, a.shape(), va, b.shape(), b.data<T>(),
                                                [&](T x, T y) { return boolean(f(x, y)); }));
  }));
}

}  // namespace detail

inline std::vector<Tensor> equal(const NodeContext& ctx) {
  return detail::compare<types::all>(ctx, [](auto x, auto y) { return x == y; });
}
inline std::vector<Tensor> less(const NodeContext& ctx) {
  return detail::compare<types::numbers>(ctx, [](auto x, auto y) { return x < y; });
}
inline std::vector<Tensor> greater(const NodeContext& ctx) {
  return detail::compare<types::numbers>(ctx, [](auto x, auto y) { return x > y; });
}
inline std::vector<Tensor> less_or_equal(const NodeContext& ctx) {
  return detail::compare<types::numbers>(ctx, [](auto x, auto y) { return x <= y; });
}
inline std::vector<Tensor> greater_or_equal(const NodeContext& ctx) {
  return detail::compare<types::numbers>(ctx, [](auto x, auto y) { return x >= y; });
}
inline std::vector<Tensor> logical_and(const NodeContext& ctx) {
  return detail::compare<types::bools>(ctx, [](bool x, bool y) { return x && y; });
}
inline std::vector<Tensor> logical_or(const NodeContext& ctx) {
  return detail::compare<types::bools>(ctx, [](bool x, bool y) { return x || y; });
}
inline std::vector<Tensor> logical_xor(const NodeContext& ctx) {
  return detail::compare<types::bools>(ctx, [](bool x, bool y) { return x != y; });
}

inline std::vector<Tensor> logical_not(const NodeContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const Tensor& x = ctx.input(0);
  return single_output(visit_types<types::bools>(ctx, x, [&](auto v) {
    return map_values<boolean>(x, v, [](boolean e) { return boolean(!e); });
  }));
}

inline std::vector<Tensor> is_nan(const NodeContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const Tensor& x = ctx.input(0);
  return single_output(visit_float(ctx, x, [&](auto v) {
    std::vector<boolean> out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) out[i] = std::isnan(v[i]);
    return Tensor(x.shape(), std::move(out));
  }));
}

/// IsInf: detect_positive / detect_negative choose which infinities count.
inline std::vector<Tensor> is_inf(const NodeContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const Tensor& x = ctx.input(0);
  const bool pos = ctx.get_int("detect_positive", 1) != 0;
  const bool neg = ctx.get_int("detect_negative", 1) != 0;
  return single_output(visit_float(ctx, x, [&](auto v) {
    std::vector<boolean> out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      out[i] = std::isinf(v[i]) && ((v[i] > 0 && pos) || (v[i] < 0 && neg));
    }
    return Tensor(x.shape(), std::move(out));
  }));
}

}  // namespace onelearn::onnx::ops
