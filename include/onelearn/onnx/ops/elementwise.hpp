#pragma once
// Elementwise operators: Add, Sub, Mul, Div, Pow, Mod with numpy broadcasting; Min, Max, Sum,
// Mean (variadic); Exp, Log, Sqrt, Neg, Abs, Sign, Ceil, Floor, Round, Reciprocal, Erf and the
// trigonometric and hyperbolic functions; Clip (min/max as attributes before opset 11, as
// optional inputs from 11 on).

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
  expect_inputs(ctx, 2, 2);
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.dtype() != b.dtype()) {
    ctx.fail(std::string("operands must have one element type, found ") + to_string(a.dtype()) +
             " and " + to_string(b.dtype()));
  }
  const Shape out = broadcast_shape(ctx, a.shape(), b.shape());
  return single_output(visit_numeric(ctx, a, [&](auto va) {
    using T = typename decltype(va)::value_type;
    return Tensor(out, broadcast_apply<T>(out, a.shape(), va, b.shape(), b.data<T>(),
                                          [&](T x, T y) { return f(x, y); }));
  }));
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
  expect_inputs(ctx, 2, 2);
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const Shape out = broadcast_shape(ctx, a.shape(), b.shape());
  constexpr TypeSet pow_types = types::floats | TypeSet{DataType::int64, DataType::int32};
  return single_output(visit_types<pow_types>(ctx, a, [&](auto va) {
    using T = typename decltype(va)::value_type;
    return visit_types<pow_types>(ctx, b, [&](auto vb) {
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
  }));
}

namespace detail {

template <class F>
std::vector<Tensor> float_unary(const NodeContext& ctx, F f) {
  expect_inputs(ctx, 1, 1);
  const Tensor& x = ctx.input(0);
  return single_output(visit_float(ctx, x, [&](auto v) {
    using T = typename decltype(v)::value_type;
    return map_input_values<T>(ctx, 0, v, [&](T e) { return static_cast<T>(f(e)); });
  }));
}

template <class F>
std::vector<Tensor> numeric_unary(const NodeContext& ctx, F f) {
  expect_inputs(ctx, 1, 1);
  const Tensor& x = ctx.input(0);
  return single_output(visit_numeric(ctx, x, [&](auto v) {
    using T = typename decltype(v)::value_type;
    return map_input_values<T>(ctx, 0, v, [&](T e) { return static_cast<T>(f(e)); });
  }));
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
  return detail::numeric_unary(ctx, [](auto x) {
    if constexpr (std::is_unsigned_v<decltype(x)>) return x;
    else return x < 0 ? -x : x;
  });
}

/// Clip: min(max(x, lo), hi). Before opset 11 the bounds are float attributes; from 11 on they
/// are optional scalar inputs of x's type.
inline std::vector<Tensor> clip(const NodeContext& ctx) {
  expect_inputs(ctx, 1, ctx.opset() < 11 ? 1 : 3);
  const Tensor& x = ctx.input(0);
  return single_output(visit_numeric(ctx, x, [&](auto v) {
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
  }));
}

/// Min, Max, Sum, Mean: the inputs (one or more, one element type) broadcast together and
/// folded pairwise. Min and Max take any number type; Sum and Mean floats.
namespace detail {

template <TypeSet allowed, class F>
Tensor variadic(const NodeContext& ctx, F f) {
  if (ctx.input_count() == 0) ctx.fail("expects at least one input");
  Tensor acc = ctx.input(0);
  for (std::size_t i = 1; i < ctx.input_count(); ++i) {
    const Tensor& b = ctx.input(i);
    expect_same_type(ctx, acc, b);
    const Shape out = broadcast_shape(ctx, acc.shape(), b.shape());
    acc = visit_types<allowed>(ctx, acc, [&](auto va) {
      using T = typename decltype(va)::value_type;
      return Tensor(out, broadcast_apply<T>(out, acc.shape(), va, b.shape(), b.data<T>(),
                                            [&](T x, T y) { return static_cast<T>(f(x, y)); }));
    });
  }
  // One input: still check its type.
  visit_types<allowed>(ctx, acc, [](auto) { return 0; });
  return acc;
}

template <class T>
T nan_aware_min(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<T>::quiet_NaN();
  }
  return y < x ? y : x;
}
template <class T>
T nan_aware_max(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<T>::quiet_NaN();
  }
  return y > x ? y : x;
}

}  // namespace detail

inline std::vector<Tensor> min(const NodeContext& ctx) {
  return single_output(detail::variadic<types::numbers>(ctx, [](auto x, auto y) { return detail::nan_aware_min(x, y); }));
}
inline std::vector<Tensor> max(const NodeContext& ctx) {
  return single_output(detail::variadic<types::numbers>(ctx, [](auto x, auto y) { return detail::nan_aware_max(x, y); }));
}
inline std::vector<Tensor> sum(const NodeContext& ctx) {
  return single_output(detail::variadic<types::floats>(ctx, [](auto x, auto y) { return x + y; }));
}
inline std::vector<Tensor> mean(const NodeContext& ctx) {
  Tensor total = detail::variadic<types::floats>(ctx, [](auto x, auto y) { return x + y; });
  const auto n = static_cast<double>(ctx.input_count());
  return single_output(visit_float(ctx, total, [&](auto v) {
    using T = typename decltype(v)::value_type;
    return map_values<T>(total, v, [&](T e) { return static_cast<T>(e / static_cast<T>(n)); });
  }));
}

/// Mod: integer remainder with the divisor's sign (fmod = 0), or C's fmod (fmod = 1, which
/// floats require).
inline std::vector<Tensor> mod(const NodeContext& ctx) {
  expect_inputs(ctx, 2, 2);
  const bool fmod = ctx.get_int("fmod", 0) != 0;
  if (!fmod && (ctx.input(0).dtype() == DataType::float32 || ctx.input(0).dtype() == DataType::float64)) {
    ctx.fail("fmod must be 1 for floating-point inputs");
  }
  return detail::same_type_binary(ctx, [&](auto x, auto y) {
    using T = decltype(x);
    if constexpr (std::is_floating_point_v<T>) {
      return std::fmod(x, y);
    } else {
      if (y == 0) ctx.fail("integer modulo by zero");
      if constexpr (std::is_unsigned_v<T>) {
        return static_cast<T>(x % y);
      } else {
        if (y == -1) return T{0};  // also the one case (min % -1) that overflows
        auto r = static_cast<T>(x % y);
        if (!fmod && r != 0 && ((r < 0) != (y < 0))) r = static_cast<T>(r + y);
        return r;
      }
    }
  });
}

inline std::vector<Tensor> ceil(const NodeContext& ctx) {
  return detail::float_unary(ctx, [](auto x) { return std::ceil(x); });
}
inline std::vector<Tensor> floor(const NodeContext& ctx) {
  return detail::float_unary(ctx, [](auto x) { return std::floor(x); });
}
/// Round: halves to even, as numpy and ONNX do (the default floating-point rounding mode).
inline std::vector<Tensor> round(const NodeContext& ctx) {
  return detail::float_unary(ctx, [](auto x) { return std::nearbyint(x); });
}
inline std::vector<Tensor> reciprocal(const NodeContext& ctx) {
  return detail::float_unary(ctx, [](auto x) { return decltype(x){1} / x; });
}
inline std::vector<Tensor> sign(const NodeContext& ctx) {
  return detail::numeric_unary(ctx, [](auto x) {
    using T = decltype(x);
    if constexpr (std::is_unsigned_v<T>) return static_cast<T>(x != 0);
    else return static_cast<T>((T{0} < x) - (x < T{0}));
  });
}
inline std::vector<Tensor> erf(const NodeContext& ctx) {
  return detail::float_unary(ctx, [](auto x) { return std::erf(x); });
}
inline std::vector<Tensor> sin(const NodeContext& ctx) {
  return detail::float_unary(ctx, [](auto x) { return std::sin(x); });
}
inline std::vector<Tensor> cos(const NodeContext& ctx) {
  return detail::float_unary(ctx, [](auto x) { return std::cos(x); });
}
inline std::vector<Tensor> tan(const NodeContext& ctx) {
  return detail::float_unary(ctx, [](auto x) { return std::tan(x); });
}
inline std::vector<Tensor> asin(const NodeContext& ctx) {
  return detail::float_unary(ctx, [](auto x) { return std::asin(x); });
}
inline std::vector<Tensor> acos(const NodeContext& ctx) {
  return detail::float_unary(ctx, [](auto x) { return std::acos(x); });
}
inline std::vector<Tensor> atan(const NodeContext& ctx) {
  return detail::float_unary(ctx, [](auto x) { return std::atan(x); });
}
inline std::vector<Tensor> sinh(const NodeContext& ctx) {
  return detail::float_unary(ctx, [](auto x) { return std::sinh(x); });
}
inline std::vector<Tensor> cosh(const NodeContext& ctx) {
  return detail::float_unary(ctx, [](auto x) { return std::cosh(x); });
}
inline std::vector<Tensor> asinh(const NodeContext& ctx) {
  return detail::float_unary(ctx, [](auto x) { return std::asinh(x); });
}
inline std::vector<Tensor> acosh(const NodeContext& ctx) {
  return detail::float_unary(ctx, [](auto x) { return std::acosh(x); });
}
inline std::vector<Tensor> atanh(const NodeContext& ctx) {
  return detail::float_unary(ctx, [](auto x) { return std::atanh(x); });
}

}  // namespace onelearn::onnx::ops
