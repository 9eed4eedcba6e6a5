#pragma once
// Reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
// ReduceLogSum, ReduceLogSumExp, ReduceSumSquare (axes as an attribute, or for ReduceSum from
// opset 13 as an input; keepdims, noop_with_empty_axes); ArgMax, ArgMin (keepdims,
// select_last_index); CumSum; TopK; Hardmax.
//
// The Reduce* operators group the elements of each output position and reduce them in double
// precision, converting back to the input's type: one compiled loop whatever the type (integers
// are exact below 2^53).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <span>
#include <vector>

#include "onelearn/onnx/ops/common.hpp"

namespace onelearn::onnx::ops {

namespace detail {

/// Which axes to reduce (true) for a tensor of rank r, from the `axes` attribute or input.
inline std::vector<bool> reduced_axes(const NodeContext& ctx, std::size_t r, bool axes_input) {
  std::vector<std::int64_t> axes;
  bool given = false;
  if (axes_input) {
    expect_inputs(ctx, 1, 2);
    if (ctx.has_input(1)) {
      axes = int_values(ctx, ctx.input(1), "axes");
      given = true;
    }
  } else {
    expect_inputs(ctx, 1, 1);
    if (const auto a = ctx.get_ints("axes")) {
      axes = *a;
      given = true;
    }
  }
  std::vector<bool> reduce(r, false);
  if (!given || axes.empty()) {
    const bool noop = ctx.get_int("noop_with_empty_axes", 0) != 0;
    if (!noop) reduce.assign(r, true);
    return reduce;
  }
  for (const std::int64_t a : axes) reduce[ctx.axis(a, r)] = true;
  return reduce;
}

/// The elements of a number tensor as doubles.
inline std::vector<double> as_doubles(const NodeContext& ctx, const Tensor& x) {
  return visit_numeric(ctx, x, [](auto s) {
    std::vector<double> d(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) d[i] = static_cast<double>(s[i]);
    return d;
  });
}

/// A tensor of `type` holding `values` converted as Cast converts (NaN and out-of-range values
/// to an integer type are defined, not undefined behaviour).
inline Tensor from_doubles(DataType type, const Shape& shape, const std::vector<double>& values) {
  return dispatch(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<T> y(values.size());
    for (std::size_t o = 0; o < values.size(); ++o) y[o] = cast_value<T>(values[o]);
    return Tensor(shape, std::move(y));
  });
}

/// One output value from the values of one output position.
using Reducer = double (*)(std::span<const double>);

/// Reduces x over the axes marked in `reduce`.
inline Tensor reduce_with(const NodeContext& ctx, const Tensor& x, const std::vector<bool>& reduce,
                          bool keepdims, Reducer f) {
  Shape out, kept;
  for (std::size_t d = 0; d < x.rank(); ++d) {
    kept.push_back(reduce[d] ? 1 : x.shape()[d]);
    if (!reduce[d]) out.push_back(x.shape()[d]);
    else if (keepdims) out.push_back(1);
  }
  const std::size_t n_out = element_count(kept);
  const std::vector<double> v = as_doubles(ctx, x);
  // Bucket the elements by output position (a counting sort, in input order).
  const Shape ks = strides_of(kept);
  std::vector<std::size_t> target(v.size());
  std::vector<std::size_t> count(n_out + 1, 0);
  std::vector<std::int64_t> pos(x.rank(), 0);
  for (std::size_t k = 0; k < v.size(); ++k) {
    std::int64_t t = 0;
    for (std::size_t d = 0; d < x.rank(); ++d) t += reduce[d] ? 0 : pos[d] * ks[d];
    target[k] = static_cast<std::size_t>(t);
    ++count[target[k] + 1];
    for (std::size_t d = x.rank(); d-- > 0;) {
      if (++pos[d] < x.shape()[d]) break;
      pos[d] = 0;
    }
  }
  std::partial_sum(count.begin(), count.end(), count.begin());
  std::vector<double> grouped(v.size());
  std::vector<std::size_t> fill(count.begin(), count.end() - 1);
  for (std::size_t k = 0; k < v.size(); ++k) grouped[fill[target[k]]++] = v[k];
  std::vector<double> result(n_out);
  for (std::size_t o = 0; o < n_out; ++o) {
    result[o] = f(std::span<const double>(grouped.data() + count[o], count[o + 1] - count[o]));
  }
  return from_doubles(x.dtype(), out, result);
}

inline std::vector<Tensor> reduce_op(const NodeContext& ctx, std::int64_t axes_input_from,
                                     Reducer f) {
  const Tensor& x = ctx.input(0);
  const auto reduce = reduced_axes(ctx, x.rank(), ctx.opset() >= axes_input_from);
  if (x.size() == 0) ctx.fail_shape("cannot reduce an empty tensor");
  return single_output(reduce_with(ctx, x, reduce, ctx.get_int("keepdims", 1) != 0, f));
}

inline double sum_of(std::span<const double> v) { return std::accumulate(v.begin(), v.end(), 0.0); }

}  // namespace detail

// ReduceSum takes its axes as an input from opset 13, the others from opset 18 (beyond 17).
inline std::vector<Tensor> reduce_sum(const NodeContext& ctx) {
  return detail::reduce_op(ctx, 13, detail::sum_of);
}
inline std::vector<Tensor> reduce_mean(const NodeContext& ctx) {
  return detail::reduce_op(ctx, 18, [](std::span<const double> v) { return detail::sum_of(v) / static_cast<double>(v.size()); });
}
inline std::vector<Tensor> reduce_max(const NodeContext& ctx) {
  return detail::reduce_op(ctx, 18, [](std::span<const double> v) { return *std::max_element(v.begin(), v.end()); });
}
inline std::vector<Tensor> reduce_min(const NodeContext& ctx) {
  return detail::reduce_op(ctx, 18, [](std::span<const double> v) { return *std::min_element(v.begin(), v.end()); });
}
inline std::vector<Tensor> reduce_prod(const NodeContext& ctx) {
  return detail::reduce_op(ctx, 18, [](std::span<const double> v) {
    return std::accumulate(v.begin(), v.end(), 1.0, std::multiplies<>{});
  });
}
inline std::vector<Tensor> reduce_l1(const NodeContext& ctx) {
  return detail::reduce_op(ctx, 18, [](std::span<const double> v) {
    double s = 0;
    for (const double e : v) s += std::abs(e);
    return s;
  });
}
inline std::vector<Tensor> reduce_sum_square(const NodeContext& ctx) {
  return detail::reduce_op(ctx, 18, [](std::span<const double> v) {
    double s = 0;
    for (const double e : v) s += e * e;
    return s;
  });
}
inline std::vector<Tensor> reduce_l2(const NodeContext& ctx) {
  return detail::reduce_op(ctx, 18, [](std::span<const double> v) {
    double s = 0;
    for (const double e : v) s += e * e;
    return std::sqrt(s);
  });
}
inline std::vector<Tensor> reduce_log_sum(const NodeContext& ctx) {
  return detail::reduce_op(ctx, 18, [](std::span<const double> v) { return std::log(detail::sum_of(v)); });
}
inline std::vector<Tensor> reduce_log_sum_exp(const NodeContext& ctx) {
  return detail::reduce_op(ctx, 18, [](std::span<const double> v) {
    const double m = *std::max_element(v.begin(), v.end());
    if (std::isinf(m)) return m;
    double s = 0;
    for (const double e : v) s += std::exp(e - m);
    return m + std::log(s);
  });
}

namespace detail {

inline std::vector<Tensor> arg_extreme(const NodeContext& ctx, bool want_max) {
  expect_inputs(ctx, 1, 1);
  const Tensor& x = ctx.input(0);
  if (x.rank() == 0) ctx.fail_shape("input must have at least one dimension");
  const std::size_t axis = ctx.axis(ctx.get_int("axis", 0), x.rank());
  const bool keepdims = ctx.get_int("keepdims", 1) != 0;
  const bool last = ctx.get_int("select_last_index", 0) != 0;
  const auto outer = static_cast<std::size_t>(product(x.shape(), 0, axis));
  const auto n = static_cast<std::size_t>(x.shape()[axis]);
  const auto inner = static_cast<std::size_t>(product(x.shape(), axis + 1, x.rank()));
  if (n == 0) ctx.fail_shape("cannot take the index of an extreme along an empty axis");
  Shape out = x.shape();
  if (keepdims) out[axis] = 1;
  else out.erase(out.begin() + static_cast<std::ptrdiff_t>(axis));
  std::vector<std::int64_t> y(outer * inner);
  visit_numeric(ctx, x, [&](auto v) {
    for (std::size_t o = 0; o < outer; ++o) {
      for (std::size_t i = 0; i < inner; ++i) {
        const std::size_t base = o * n * inner + i;
        std::size_t best = 0;
        for (std::size_t k = 1; k < n; ++k) {
          const auto value = v[base + k * inner], top = v[base + best * inner];
          const bool better = want_max ? value > top : value < top;
          if (better || (last && value == top)) best = k;
        }
        y[o * inner + i] = static_cast<std::int64_t>(best);
      }
    }
    return 0;
  });
  return single_output(Tensor(out, std::move(y)));
}

}  // namespace detail

inline std::vector<Tensor> argmax(const NodeContext& ctx) { return detail::arg_extreme(ctx, true); }
inline std::vector<Tensor> argmin(const NodeContext& ctx) { return detail::arg_extreme(ctx, false); }

/// CumSum along the axis input; exclusive and reverse attributes.
inline std::vector<Tensor> cumsum(const NodeContext& ctx) {
  expect_inputs(ctx, 2, 2);
  const Tensor& x = ctx.input(0);
  const auto a = int_values(ctx, ctx.input(1), "axis");
  if (a.size() != 1) ctx.fail_shape("axis must be a scalar");
  if (x.rank() == 0) ctx.fail_shape("input must have at least one dimension");
  const std::size_t axis = ctx.axis(a[0], x.rank());
  const bool exclusive = ctx.get_int("exclusive", 0) != 0;
  const bool reverse = ctx.get_int("reverse", 0) != 0;
  const auto outer = static_cast<std::size_t>(product(x.shape(), 0, axis));
  const auto n = static_cast<std::size_t>(x.shape()[axis]);
  const auto inner = static_cast<std::size_t>(product(x.shape(), axis + 1, x.rank()));
  constexpr TypeSet cumsum_types = types::floats | TypeSet{DataType::int64, DataType::int32};
  return single_output(visit_types<cumsum_types>(ctx, x, [&](auto v) {
    using T = typename decltype(v)::value_type;
    std::vector<T> y(v.size());
    for (std::size_t o = 0; o < outer; ++o) {
      for (std::size_t i = 0; i < inner; ++i) {
        T acc{0};
        for (std::size_t s = 0; s < n; ++s) {
          const std::size_t k = reverse ? n - 1 - s : s;
          const std::size_t at = (o * n + k) * inner + i;
          if (exclusive) {
            y[at] = acc;
            acc = static_cast<T>(acc + v[at]);
          } else {
            acc = static_cast<T>(acc + v[at]);
            y[at] = acc;
          }
        }
      }
    }
    return Tensor(x.shape(), std::move(y));
  }));
}

/// TopK: the k largest (or smallest) along `axis`, sorted, with their int64 indices; ties go
/// to the lower index.
inline std::vector<Tensor> top_k(const NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::int64_t k = 0;
  if (ctx.opset() < 10) {
    expect_inputs(ctx, 1, 1);
    k = ctx.require_int("k");
  } else {
    expect_inputs(ctx, 2, 2);
    const auto kv = int_values(ctx, ctx.input(1), "K");
    if (kv.size() != 1) ctx.fail_shape("K must hold one value");
    k = kv[0];
  }
  if (x.rank() == 0) ctx.fail_shape("input must have at least one dimension");
  const std::size_t axis = ctx.axis(ctx.get_int("axis", -1), x.rank());
  const bool largest = ctx.get_int("largest", 1) != 0;
  const std::int64_t dim = x.shape()[axis];
  if (k < 0 || k > dim) ctx.fail_shape("K = " + std::to_string(k) + " is out of range for an axis of " + std::to_string(dim));
  const std::vector<double> v = detail::as_doubles(ctx, x);
  const auto outer = static_cast<std::size_t>(product(x.shape(), 0, axis));
  const auto n = static_cast<std::size_t>(dim);
  const auto inner = static_cast<std::size_t>(product(x.shape(), axis + 1, x.rank()));
  const auto uk = static_cast<std::size_t>(k);
  Shape out = x.shape();
  out[axis] = k;
  Tensor values(x.dtype(), out);
  std::vector<std::int64_t> indices(outer * uk * inner);
  const std::size_t es = x.element_bytes();
  std::vector<std::size_t> order(n);
  for (std::size_t o = 0; o < outer; ++o) {
    for (std::size_t i = 0; i < inner; ++i) {
      const auto at = [&](std::size_t j) { return (o * n + j) * inner + i; };
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::stable_sort(order.begin(), order.end(), [&](std::size_t p, std::size_t q) {
        return largest ? v[at(p)] > v[at(q)] : v[at(p)] < v[at(q)];
      });
      for (std::size_t j = 0; j < uk; ++j) {
        const std::size_t dst = (o * uk + j) * inner + i;
        indices[dst] = static_cast<std::int64_t>(order[j]);
        std::memcpy(values.mutable_bytes() + dst * es, x.bytes() + at(order[j]) * es, es);
      }
    }
  }
  return {values, Tensor(out, std::move(indices))};
}

/// Hardmax: 1 at the first maximum along `axis` (from opset 13; before, of the input coerced
/// to 2-d at `axis`), 0 elsewhere.
inline std::vector<Tensor> hardmax(const NodeContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const Tensor& x = ctx.input(0);
  if (x.rank() == 0) ctx.fail_shape("input must have at least one dimension");
  const std::size_t axis = ctx.axis(ctx.get_int("axis", ctx.opset() < 13 ? 1 : -1), x.rank());
  const auto outer = static_cast<std::size_t>(product(x.shape(), 0, axis));
  const auto n = ctx.opset() < 13 ? static_cast<std::size_t>(product(x.shape(), axis, x.rank()))
                                  : static_cast<std::size_t>(x.shape()[axis]);
  const auto inner = ctx.opset() < 13 ? std::size_t{1}
                                      : static_cast<std::size_t>(product(x.shape(), axis + 1, x.rank()));
  return single_output(visit_float(ctx, x, [&](auto v) {
    using T = typename decltype(v)::value_type;
    std::vector<T> y(v.size(), T{0});
    for (std::size_t o = 0; o < outer && n > 0; ++o) {
      for (std::size_t i = 0; i < inner; ++i) {
        std::size_t best = 0;
        for (std::size_t k = 1; k < n; ++k)
          if (v[(o * n + k) * inner + i] > v[(o * n + best) * inner + i]) best = k;
        y[(o * n + best) * inner + i] = T{1};
      }
    }
    return Tensor(x.shape(), std::move(y));
  }));
}

}  // namespace onelearn::onnx::ops
