#pragma once
// Elementwise operators: Add, Sub, Mul, Div, Pow with numpy broadcasting; Exp, Log, Sqrt, Neg,
// Abs; Clip (min/max as attributes before opset 11, as optional inputs from 11 on).

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "onelearn/onnx/ops/common.hpp"

namespace onelearn::onnx::ops {

namespace detail {

/// A binary op whose operands and result share one element type (Add, Sub, Mul, Div).
template <class F>
std::vector<Tensor> same_type_binary(const NodeContext& ctx, F f) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.dtype() != b.dtype()) {
    ctx.fail(std::string("operands must have one element type, found ") + to_string(a.dtype()) +
             " and " + to_string(b.dtype()));
  }
  const Shape out = broadcast_shape(ctx, a.shape(), b.shape());
  return {visit_numeric(a, [&](auto va) {
    using T = typename decltype(va)::value_type;
    return Tensor(out, broadcast_apply<T>(out, a.shape(), va, b.shape(), b.data<T>(),
                                          [&](T x, T y) { return f(x, y); }));
  })};
}

/// `op(x, y)`; for integers in two's complement arithmetic that wraps around on overflow, as
/// numpy's and onnxruntime's int64 arithmetic does (a signed overflow in C++ is undefined).
template <class T, class Op>
T wrapping(T x, T y, Op op) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(op(static_cast<U>(x), static_cast<U>(y)));
  } else {
    return op(x, y);
  }
}

}  // namespace detail

inline std::vector<Tensor> add(const NodeContext& ctx) {
  return detail::same_type_binary(ctx, [](auto x, auto y) { return detail::wrapping(x, y, std::plus<>{}); });
}
inline std::vector<Tensor> sub(const NodeContext& ctx) {
  return detail::same_type_binary(ctx, [](auto x, auto y) { return detail::wrapping(x, y, std::minus<>{}); });
}
inline std::vector<Tensor> mul(const NodeContext& ctx) {
  return detail::same_type_binary(ctx, [](auto x, auto y) { return detail::wrapping(x, y, std::multiplies<>{}); });
}
inline std::vector<Tensor> div(const NodeContext& ctx) {
  return detail::same_type_binary(ctx, [&](auto x, auto y) {
    using T = decltype(x);
    if constexpr (std::is_integral_v<T>) {
      if (y == 0) ctx.fail("integer division by zero");
      // The one quotient that overflows wraps around, as in numpy.
      if (y == -1) return detail::wrapping(T(0), x, std::minus<>{});
    }
    return static_cast<T>(x / y);
  });
}

/// Pow: the exponent may have another element type than the base; the result has the base's.
inline std::vector<Tensor> pow(const NodeContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const Shape out = broadcast_shape(ctx, a.shape(), b.shape());
  return {visit_numeric(a, [&](auto va) {
    using T = typename decltype(va)::value_type;
    return visit_numeric(b, [&](auto vb) {
      using E = typename decltype(vb)::value_type;
      return Tensor(out, broadcast_apply<T>(out, a.shape(), va, b.shape(), vb, [&](T x, E y) {
                      if constexpr (std::is_same_v<T, float> && std::is_same_v<E, float>) {
                        return std::pow(x, y);  // in float, as numpy computes float32 ** float32
                      } else {
                        const double r = std::pow(static_cast<double>(x), static_cast<double>(y));
                        // An integer base keeps its type (ONNX's rule, truncating); a result
                        // outside int64 (0 ** -1 is inf) has no value to convert to.
                        if constexpr (std::is_integral_v<T>) {
                          if (!(r >= -0x1p63 && r < 0x1p63)) {
                            ctx.fail("integer result " + std::to_string(r) +
                                     " is out of the int64 range");
                          }
                        }
                        return static_cast<T>(r);
                      }
                    }));
    });
  })};
}

namespace detail {

template <class F>
std::vector<Tensor> float_unary(const NodeContext& ctx, F f) {
  const Tensor& x = ctx.input(0);
  return {visit_float(ctx, x, [&](auto v) {
    using T = typename decltype(v)::value_type;
    return map_values<T>(x, v, [&](T e) { return static_cast<T>(f(e)); });
  })};
}

template <class F>
std::vector<Tensor> numeric_unary(const NodeContext& ctx, F f) {
  const Tensor& x = ctx.input(0);
  return {visit_numeric(x, [&](auto v) {
    using T = typename decltype(v)::value_type;
    return map_values<T>(x, v, [&](T e) { return static_cast<T>(f(e)); });
  })};
}

}  // namespace detail

inline std::vector<Tensor> exp(const NodeContext& ctx) {
  return detail::float_unary(ctx, [](auto x) { return std::exp(x); });
}
inline std::vector<Tensor> log(const NodeContext& ctx) {
  return detail::float_unary(ctx, [](auto x) { return std::log(x); });
}
inline std::vector<Tensor> sqrt(const NodeContext& ctx) {
  return detail::float_unary(ctx, [](auto x) { return std::sqrt(x); });
}
inline std::vector<Tensor> neg(const NodeContext& ctx) {
  return detail::numeric_unary(ctx, [](auto x) { return -x; });
}
inline std::vector<Tensor> abs(const NodeContext& ctx) {
  return detail::numeric_unary(ctx, [](auto x) { return x < 0 ? -x : x; });
}

/// Clip: min(max(x, lo), hi). Before opset 11 the bounds are float attributes; from 11 on they
/// are optional scalar inputs of x's type.
inline std::vector<Tensor> clip(const NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  return {visit_numeric(x, [&](auto v) {
    using T = typename decltype(v)::value_type;
    T lo = std::numeric_limits<T>::lowest();
    T hi = std::numeric_limits<T>::max();
    if (ctx.opset() < 11) {
      // Clip-1 and Clip-6 take float tensors only (their bounds are float attributes).
      if constexpr (std::is_integral_v<T>) ctx.fail("before opset 11, Clip takes float tensors only");
      lo = static_cast<T>(ctx.get_float("min", static_cast<float>(lo)));
      hi = static_cast<T>(ctx.get_float("max", static_cast<float>(hi)));
    } else {
      const auto bound = [&](std::size_t i, T fallback) {
        if (!ctx.has_input(i)) return fallback;
        const Tensor& t = ctx.input(i);
        if (t.size() != 1) ctx.fail_shape("min and max must be scalars, found shape " +
                                          shape_string(t.shape()));
        if (t.dtype() != x.dtype()) ctx.fail("min and max must have the input's element type");
        return t.data<T>()[0];
      };
      lo = bound(1, lo);
      hi = bound(2, hi);
    }
    return map_values<T>(x, v, [&](T e) { return std::min(std::max(e, lo), hi); });
  })};
}

}  // namespace onelearn::onnx::ops
