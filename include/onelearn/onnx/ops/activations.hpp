#pragma once
// Activations: Relu, LeakyRelu, PRelu, Elu, Selu, Sigmoid, HardSigmoid, Tanh, Softplus, Softsign,
// ThresholdedRelu, Celu, HardSwish, Shrink, Softmax, LogSoftmax. Float32 and float64 (Relu and
// Shrink also the integer types).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "onelearn/onnx/ops/common.hpp"
#include "onelearn/onnx/ops/elementwise.hpp"

namespace onelearn::onnx::ops {

inline std::vector<Tensor> relu(const NodeContext& ctx) {
  return detail::numeric_unary(ctx, [](auto x) { return relu_value(x); });
}

inline std::vector<Tensor> leaky_relu(const NodeContext& ctx) {
  const double alpha = ctx.get_float("alpha", 0.01f);
  return detail::float_unary(ctx, [&](auto x) {
    using T = decltype(x);
    return x >= 0 ? x : static_cast<T>(alpha) * x;
  });
}

/// PRelu: the slope broadcasts to X (unidirectionally: the output has X's shape).
inline std::vector<Tensor> prelu(const NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor slope = ctx.input(1);
  if (slope.dtype() != x.dtype()) ctx.fail("slope must have the input's element type");
  if (ctx.opset() < 7 && slope.rank() == 1 && x.rank() >= 2 && slope.size() > 1 &&
      static_cast<std::int64_t>(slope.size()) == x.shape()[1]) {
    // Before opset 7 (no numpy broadcasting) a 1-d slope holds one value per channel (axis 1).
    Shape per_channel(x.rank() - 1, 1);
    per_channel[0] = x.shape()[1];
    slope = std::move(slope).reshaped(per_channel);
  }
  const Shape out = broadcast_shape(ctx, x.shape(), slope.shape());
  if (out != x.shape()) {
    ctx.fail_shape("slope of shape " + shape_string(slope.shape()) +
                   " does not broadcast to the input's shape " + shape_string(x.shape()));
  }
  return single_output(visit_float(ctx, x, [&](auto v) {
    using T = typename decltype(v)::value_type;
    return Tensor(out, broadcast_apply<T>(out, x.shape(), v, slope.shape(), slope.data<T>(),
                                          [](T e, T s) { return e >= 0 ? e : s * e; }));
  }));
}

inline std::vector<Tensor> elu(const NodeContext& ctx) {
  const double alpha = ctx.get_float("alpha", 1.f);
  return detail::float_unary(ctx, [&](auto x) {
    using T = decltype(x);
    return x >= 0 ? x : static_cast<T>(alpha) * std::expm1(x);
  });
}

inline std::vector<Tensor> selu(const NodeContext& ctx) {
  const double alpha = ctx.get_float("alpha", 1.67326319217681884765625f);
  const double gamma = ctx.get_float("gamma", 1.05070102214813232421875f);
  return detail::float_unary(ctx, [&](auto x) {
    using T = decltype(x);
    return static_cast<T>(gamma) * (x > 0 ? x : static_cast<T>(alpha) * std::expm1(x));
  });
}

inline std::vector<Tensor> sigmoid(const NodeContext& ctx) {
  return detail::float_unary(ctx, [](auto x) {
    using T = decltype(x);
    // Written so that exp never overflows.
    if (x >= 0) return T{1} / (T{1} + std::exp(-x));
    const T e = std::exp(x);
    return e / (T{1} + e);
  });
}

inline std::vector<Tensor> hard_sigmoid(const NodeContext& ctx) {
  const double alpha = ctx.get_float("alpha", 0.2f);
  const double beta = ctx.get_float("beta", 0.5f);
  return detail::float_unary(ctx, [&](auto x) {
    using T = decltype(x);
    return std::clamp(static_cast<T>(alpha) * x + static_cast<T>(beta), T{0}, T{1});
  });
}

inline std::vector<Tensor> tanh(const NodeContext& ctx) {
  return detail::float_unary(ctx, [](auto x) { return std::tanh(x); });
}

inline std::vector<Tensor> softplus(const NodeContext& ctx) {
  return detail::float_unary(ctx, [](auto x) {
    // log(1 + exp(x)) without overflow for large x.
    return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  });
}

inline std::vector<Tensor> softsign(const NodeContext& ctx) {
  return detail::float_unary(ctx, [](auto x) {
    using T = decltype(x);
    return x / (T{1} + std::abs(x));
  });
}

inline std::vector<Tensor> thresholded_relu(const NodeContext& ctx) {
  const double alpha = ctx.get_float("alpha", 1.f);
  return detail::float_unary(ctx, [&](auto x) {
    using T = decltype(x);
    return x > static_cast<T>(alpha) ? x : T{0};
  });
}

inline std::vector<Tensor> celu(const NodeContext& ctx) {
  const double alpha = ctx.get_float("alpha", 1.f);
  return detail::float_unary(ctx, [&](auto x) {
    using T = decltype(x);
    const auto a = static_cast<T>(alpha);
    return std::max(T{0}, x) + std::min(T{0}, a * std::expm1(x / a));
  });
}

inline std::vector<Tensor> hard_swish(const NodeContext& ctx) {
  return detail::float_unary(ctx, [](auto x) {
    using T = decltype(x);
    return x * std::clamp(x / T{6} + T{0.5}, T{0}, T{1});
  });
}

/// Shrink: x + bias below -lambd, x - bias above lambd, 0 between (numbers).
inline std::vector<Tensor> shrink(const NodeContext& ctx) {
  const double lambd = ctx.get_float("lambd", 0.5f);
  const double bias = ctx.get_float("bias", 0.f);
  return detail::numeric_unary(ctx, [&](auto x) {
    const auto d = static_cast<double>(x);
    return d < -lambd ? d + bias : d > lambd ? d - bias : 0.0;
  });
}

namespace detail {

/// Softmax or LogSoftmax. From opset 13 along one axis (default -1); before 13 the input is
/// read as a 2-d matrix [prod(shape[:axis]), prod(shape[axis:])] (default axis 1) and each row
/// is normalized.
inline std::vector<Tensor> softmax_impl(const NodeContext& ctx, bool log) {
  const Tensor& x = ctx.input(0);
  const bool modern = ctx.opset() >= 13;
  const std::size_t rank = x.rank();
  if (rank == 0) ctx.fail_shape("input must have at least one dimension");
  const std::size_t axis = ctx.axis(ctx.get_int("axis", modern ? -1 : 1), rank);
  const auto outer = static_cast<std::size_t>(product(x.shape(), 0, axis));
  const auto n = static_cast<std::size_t>(modern ? x.shape()[axis] : product(x.shape(), axis, rank));
  const auto inner = static_cast<std::size_t>(modern ? product(x.shape(), axis + 1, rank) : 1);
  return single_output(visit_float(ctx, x, [&](auto v) {
    using T = typename decltype(v)::value_type;
    std::vector<T> out(v.size());
    for (std::size_t o = 0; o < outer; ++o) {
      for (std::size_t i = 0; i < inner; ++i) {
        const std::size_t base = o * n * inner + i;
        T top = -std::numeric_limits<T>::infinity();
        for (std::size_t k = 0; k < n; ++k) top = std::max(top, v[base + k * inner]);
        T sum = 0;
        for (std::size_t k = 0; k < n; ++k) sum += std::exp(v[base + k * inner] - top);
        const T log_sum = std::log(sum);
        for (std::size_t k = 0; k < n; ++k) {
          const T shifted = v[base + k * inner] - top;
          out[base + k * inner] = log ? shifted - log_sum : std::exp(shifted) / sum;
        }
      }
    }
    return Tensor(x.shape(), std::move(out));
  }));
}

}  // namespace detail

inline std::vector<Tensor> softmax(const NodeContext& ctx) {
  return detail::softmax_impl(ctx, false);
}
inline std::vector<Tensor> log_softmax(const NodeContext& ctx) {
  return detail::softmax_impl(ctx, true);
}

}  // namespace onelearn::onnx::ops
