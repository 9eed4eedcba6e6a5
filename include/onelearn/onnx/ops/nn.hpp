#pragma once
// Normalizations and losses: LayerNormalization, InstanceNormalization,
// MeanVarianceNormalization, LRN, NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss. Float32
// and float64; the statistics are computed in double precision.

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "onelearn/onnx/ops/common.hpp"
#include "onelearn/onnx/ops/movement.hpp"
#include "onelearn/onnx/ops/reduce.hpp"

namespace onelearn::onnx::ops {

namespace detail {

/// Groups of elements: for each element of `shape`, the index of its group when the axes
/// marked in `reduce` are collapsed.
struct Groups {
  std::vector<std::size_t> of;  // group of each element
  std::size_t count = 0;
};

inline Groups group_elements(const Shape& shape, const std::vector<bool>& reduce) {
  Shape kept;
  for (std::size_t d = 0; d < shape.size(); ++d) kept.push_back(reduce[d] ? 1 : shape[d]);
  Groups g;
  g.count = element_count(kept);
  const Shape ks = strides_of(kept);
  g.of.resize(element_count(shape));
  std::vector<std::int64_t> pos(shape.size(), 0);
  for (std::size_t k = 0; k < g.of.size(); ++k) {
    std::int64_t t = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) t += reduce[d] ? 0 : pos[d] * ks[d];
    g.of[k] = static_cast<std::size_t>(t);
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++pos[d] < shape[d]) break;
      pos[d] = 0;
    }
  }
  return g;
}

/// Per-group mean and (population) variance of v.
inline void group_moments(const std::vector<double>& v, const Groups& g, std::vector<double>& mean,
                          std::vector<double>& var) {
  std::vector<double> n(g.count, 0.0);
  mean.assign(g.count, 0.0);
  var.assign(g.count, 0.0);
  for (std::size_t k = 0; k < v.size(); ++k) {
    mean[g.of[k]] += v[k];
    n[g.of[k]] += 1;
  }
  for (std::size_t i = 0; i < g.count; ++i) mean[i] /= n[i];
  for (std::size_t k = 0; k < v.size(); ++k) {
    const double d = v[k] - mean[g.of[k]];
    var[g.of[k]] += d * d;
  }
  for (std::size_t i = 0; i < g.count; ++i) var[i] /= n[i];
}

/// t broadcast (unidirectionally) to `shape`, as doubles.
inline std::vector<double> doubles_broadcast(const NodeContext& ctx, const Tensor& t,
                                             const Shape& shape) {
  const Shape b = broadcast_shape(ctx, t.shape(), shape);
  if (b != shape) {
    ctx.fail_shape("shape " + shape_string(t.shape()) + " does not broadcast to " +
                   shape_string(shape));
  }
  return as_doubles(ctx, broadcast_to(t, shape));
}

}  // namespace detail

/// LayerNormalization (opset 17): normalizes over the axes from `axis` on; outputs Y and the
/// optional Mean and InvStdDev (shape X[:axis] followed by ones).
inline std::vector<Tensor> layer_normalization(const NodeContext& ctx) {
  expect_inputs(ctx, 2, 3);
  const Tensor& x = ctx.input(0);
  if (x.rank() == 0) ctx.fail_shape("input must have at least one dimension");
  visit_float(ctx, x, [](auto) { return 0; });
  const std::size_t axis = ctx.axis(ctx.get_int("axis", -1), x.rank());
  const double eps = ctx.get_float("epsilon", 1e-5f);
  std::vector<bool> reduce(x.rank(), false);
  for (std::size_t d = axis; d < x.rank(); ++d) reduce[d] = true;
  const std::vector<double> v = detail::as_doubles(ctx, x);
  const detail::Groups g = detail::group_elements(x.shape(), reduce);
  std::vector<double> mean, var;
  detail::group_moments(v, g, mean, var);
  const std::vector<double> scale = detail::doubles_broadcast(ctx, ctx.input(1), x.shape());
  std::vector<double> bias(v.size(), 0.0);
  if (ctx.has_input(2)) bias = detail::doubles_broadcast(ctx, ctx.input(2), x.shape());
  std::vector<double> y(v.size()), inv(g.count);
  for (std::size_t i = 0; i < g.count; ++i) inv[i] = 1.0 / std::sqrt(var[i] + eps);
  for (std::size_t k = 0; k < v.size(); ++k) {
    y[k] = (v[k] - mean[g.of[k]]) * inv[g.of[k]] * scale[k] + bias[k];
  }
  Shape stat = x.shape();
  for (std::size_t d = axis; d < x.rank(); ++d) stat[d] = 1;
  // Mean and InvStdDev have the stash type (float32 by default).
  const DataType stash = ctx.get_int("stash_type", 1) == 1 ? DataType::float32 : x.dtype();
  return {detail::from_doubles(x.dtype(), x.shape(), y), detail::from_doubles(stash, stat, mean),
          detail::from_doubles(stash, stat, inv)};
}

/// InstanceNormalization: per sample and channel over the spatial axes, then scale and B (C).
inline std::vector<Tensor> instance_normalization(const NodeContext& ctx) {
  expect_inputs(ctx, 3, 3);
  const Tensor& x = ctx.input(0);
  if (x.rank() < 3) ctx.fail_shape("input must be (N, C, D1, ...)");
  visit_float(ctx, x, [](auto) { return 0; });
  const double eps = ctx.get_float("epsilon", 1e-5f);
  std::vector<bool> reduce(x.rank(), true);
  reduce[0] = reduce[1] = false;
  const std::vector<double> v = detail::as_doubles(ctx, x);
  const detail::Groups g = detail::group_elements(x.shape(), reduce);
  std::vector<double> mean, var;
  detail::group_moments(v, g, mean, var);
  Shape per_channel(x.rank(), 1);
  per_channel[1] = x.shape()[1];
  const auto channel = [&](const Tensor& t) {
    if (t.rank() != 1 || t.shape()[0] != x.shape()[1]) ctx.fail_shape("scale and B must have shape (C,)");
    return detail::doubles_broadcast(ctx, t.reshaped(per_channel), x.shape());
  };
  const std::vector<double> scale = channel(ctx.input(1)), bias = channel(ctx.input(2));
  std::vector<double> y(v.size());
  for (std::size_t k = 0; k < v.size(); ++k) {
    y[k] = (v[k] - mean[g.of[k]]) / std::sqrt(var[g.of[k]] + eps) * scale[k] + bias[k];
  }
  return single_output(detail::from_doubles(x.dtype(), x.shape(), y));
}

/// MeanVarianceNormalization: (X - mean) / (std + 1e-9) over `axes` (default 0, 2, 3).
inline std::vector<Tensor> mean_variance_normalization(const NodeContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const Tensor& x = ctx.input(0);
  visit_float(ctx, x, [](auto) { return 0; });
  const auto axes = ctx.get_ints("axes").value_or(std::vector<std::int64_t>{0, 2, 3});
  std::vector<bool> reduce(x.rank(), false);
  for (const std::int64_t a : axes) reduce[ctx.axis(a, x.rank())] = true;
  const std::vector<double> v = detail::as_doubles(ctx, x);
  const detail::Groups g = detail::group_elements(x.shape(), reduce);
  std::vector<double> mean, var;
  detail::group_moments(v, g, mean, var);
  std::vector<double> y(v.size());
  for (std::size_t k = 0; k < v.size(); ++k) {
    y[k] = (v[k] - mean[g.of[k]]) / (std::sqrt(var[g.of[k]]) + 1e-9);
  }
  return single_output(detail::from_doubles(x.dtype(), x.shape(), y));
}

/// LRN: x / (bias + alpha / size * sum of squares over `size` neighbouring channels)^beta.
inline std::vector<Tensor> lrn(const NodeContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const Tensor& x = ctx.input(0);
  if (x.rank() < 3) ctx.fail_shape("input must be (N, C, D1, ...)");
  visit_float(ctx, x, [](auto) { return 0; });
  const std::int64_t size = ctx.require_int("size");
  if (size < 1) ctx.fail("size must be positive");
  const double alpha = ctx.get_float("alpha", 1e-4f), beta = ctx.get_float("beta", 0.75f),
               bias = ctx.get_float("bias", 1.f);
  const std::vector<double> v = detail::as_doubles(ctx, x);
  const std::int64_t c = x.shape()[1];
  const auto inner = static_cast<std::size_t>(product(x.shape(), 2, x.rank()));
  const auto n = static_cast<std::size_t>(x.shape()[0]);
  std::vector<double> y(v.size());
  const std::int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
  for (std::size_t b = 0; b < n; ++b) {
    for (std::int64_t ch = 0; ch < c; ++ch) {
      for (std::size_t i = 0; i < inner; ++i) {
        double s = 0;
        for (std::int64_t j = std::max<std::int64_t>(0, ch - lo); j <= std::min(c - 1, ch + hi); ++j) {
          const double e = v[(b * static_cast<std::size_t>(c) + static_cast<std::size_t>(j)) * inner + i];
          s += e * e;
        }
        const std::size_t at = (b * static_cast<std::size_t>(c) + static_cast<std::size_t>(ch)) * inner + i;
        y[at] = v[at] / std::pow(bias + alpha / static_cast<double>(size) * s, beta);
      }
    }
  }
  return single_output(detail::from_doubles(x.dtype(), x.shape(), y));
}

namespace detail {

/// The negative log-likelihood of log-probabilities lp (N, C, d...) at `target` (N, d...),
/// weighted, with ignore_index and reduction (none, sum, mean).
inline Tensor nll(const NodeContext& ctx, const Shape& shape, DataType type,
                  const std::vector<double>& lp, const Tensor& target, const Tensor* weight) {
  if (shape.size() < 2) ctx.fail_shape("input must be (N, C, d1, ...)");
  const std::int64_t c = shape[1];
  Shape tshape = shape;
  tshape.erase(tshape.begin() + 1);
  if (target.shape() != tshape) {
    ctx.fail_shape("target of shape " + shape_string(target.shape()) + " does not fit input " +
                   shape_string(shape) + " (expected " + shape_string(tshape) + ")");
  }
  const std::vector<std::int64_t> t = int_values(ctx, target, "target");
  std::vector<double> w(static_cast<std::size_t>(c), 1.0);
  if (weight != nullptr) {
    if (weight->rank() != 1 || weight->shape()[0] != c) ctx.fail_shape("weight must have shape (C,)");
    w = as_doubles(ctx, *weight);
  }
  const bool has_ignore = ctx.has("ignore_index");
  const std::int64_t ignore = ctx.get_int("ignore_index", 0);
  const auto n = static_cast<std::size_t>(shape[0]);
  const auto inner = static_cast<std::size_t>(product(shape, 2, shape.size()));
  std::vector<double> loss(n * inner, 0.0);
  double weight_sum = 0;
  for (std::size_t b = 0; b < n; ++b) {
    for (std::size_t i = 0; i < inner; ++i) {
      const std::int64_t k = t[b * inner + i];
      if (has_ignore && k == ignore) continue;
      if (k < 0 || k >= c) ctx.fail_shape("target " + std::to_string(k) + " is not a class in [0, " + std::to_string(c) + ")");
      const double wk = w[static_cast<std::size_t>(k)];
      loss[b * inner + i] = -lp[(b * static_cast<std::size_t>(c) + static_cast<std::size_t>(k)) * inner + i] * wk;
      weight_sum += wk;
    }
  }
  const std::string reduction = ctx.get_string("reduction", "mean");
  if (reduction == "none") return from_doubles(type, tshape, loss);
  double total = 0;
  for (const double l : loss) total += l;
  if (reduction == "sum") return from_doubles(type, Shape{}, {total});
  if (reduction != "mean") ctx.fail("unknown reduction '" + reduction + "'");
  return from_doubles(type, Shape{}, {total / weight_sum});
}

}  // namespace detail

inline std::vector<Tensor> nll_loss(const NodeContext& ctx) {
  expect_inputs(ctx, 2, 3);
  const Tensor& x = ctx.input(0);
  visit_float(ctx, x, [](auto) { return 0; });
  return single_output(detail::nll(ctx, x.shape(), x.dtype(), detail::as_doubles(ctx, x), ctx.input(1),
                      ctx.has_input(2) ? &ctx.input(2) : nullptr));
}

/// SoftmaxCrossEntropyLoss: NLL of the log-softmax over axis 1; the log-probabilities are the
/// optional second output.
inline std::vector<Tensor> softmax_cross_entropy_loss(const NodeContext& ctx) {
  expect_inputs(ctx, 2, 3);
  const Tensor& x = ctx.input(0);
  visit_float(ctx, x, [](auto) { return 0; });
  if (x.rank() < 2) ctx.fail_shape("scores must be (N, C, d1, ...)");
  std::vector<double> v = detail::as_doubles(ctx, x);
  const auto n = static_cast<std::size_t>(x.shape()[0]);
  const auto c = static_cast<std::size_t>(x.shape()[1]);
  const auto inner = static_cast<std::size_t>(product(x.shape(), 2, x.rank()));
  for (std::size_t b = 0; b < n; ++b) {
    for (std::size_t i = 0; i < inner; ++i) {
      double top = -INFINITY;
      for (std::size_t k = 0; k < c; ++k) top = std::max(top, v[(b * c + k) * inner + i]);
      double s = 0;
      for (std::size_t k = 0; k < c; ++k) s += std::exp(v[(b * c + k) * inner + i] - top);
      const double ls = std::log(s) + top;
      for (std::size_t k = 0; k < c; ++k) v[(b * c + k) * inner + i] -= ls;
    }
  }
  Tensor loss = detail::nll(ctx, x.shape(), x.dtype(), v, ctx.input(1),
                            ctx.has_input(2) ? &ctx.input(2) : nullptr);
  return {loss, detail::from_doubles(x.dtype(), x.shape(), v)};
}

}  // namespace onelearn::onnx::ops
