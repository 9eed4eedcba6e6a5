#pragma once
// Shape and data-movement operators: Flatten, Reshape, Transpose, Concat, Squeeze, Unsqueeze,
// Identity, Dropout (inference: the identity), Constant. Any element type.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "onelearn/onnx/ops/common.hpp"

namespace onelearn::onnx::ops {

inline std::vector<Tensor> identity(const NodeContext& ctx) { return {ctx.input(0)}; }

/// Dropout at inference is the identity. The mask output is boolean from opset 10 (a data type
/// the executor lacks); before, it has the input's type and is all ones.
inline std::vector<Tensor> dropout(const NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (ctx.opset() >= 12 && ctx.has_input(2)) {
    // training_mode is a bool tensor; a graph that feeds one is rejected for the data type.
    ctx.unsupported_attribute("training_mode input (Dropout in training mode)");
  }
  if (ctx.opset() < 7 && ctx.get_int("is_test", 0) == 0) {
    ctx.unsupported_attribute("is_test=0 (Dropout in training mode)");
  }
  if (!ctx.wants_output(1)) return {x};
  if (ctx.opset() >= 10) {
    throw unsupported_error(unsupported_kind::data_type, "bool",
                            ctx.where() + ": unsupported data type bool (the mask output)");
  }
  return {x, visit_numeric(x, [&](auto v) {
            using T = typename decltype(v)::value_type;
            return Tensor::filled<T>(x.shape(), T{1});
          })};
}

inline std::vector<Tensor> flatten(const NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const auto rank = static_cast<std::int64_t>(x.rank());
  std::int64_t axis = ctx.get_int("axis", 1);
  if (axis < -rank || axis > rank) {
    ctx.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  if (axis < 0) axis += rank;
  const auto a = static_cast<std::size_t>(axis);
  return {x.reshaped({product(x.shape(), 0, a), product(x.shape(), a, x.rank())})};
}

inline std::vector<Tensor> reshape(const NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<std::int64_t> target;
  if (ctx.opset() < 5) {
    target = ctx.get_ints("shape").value_or(std::vector<std::int64_t>{});
  } else {
    const Tensor& s = ctx.input(1);
    if (s.dtype() != DataType::int64 || s.rank() != 1) {
      ctx.fail("the shape input must be a 1-d int64 tensor");
    }
    const auto v = s.data<std::int64_t>();
    target.assign(v.begin(), v.end());
  }
  const bool allow_zero = ctx.get_int("allowzero", 0) != 0;
  std::int64_t known = 1;
  std::size_t infer = target.size();
  for (std::size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !allow_zero) {
      if (i >= x.rank()) ctx.fail_shape("shape[" + std::to_string(i) + "] = 0 copies a dimension "
                                        "the input of rank " + std::to_string(x.rank()) +
                                        " does not have");
      target[i] = x.shape()[i];
    }
    if (target[i] == -1) {
      if (infer != target.size()) ctx.fail_shape("more than one -1 in the target shape");
      infer = i;
    } else if (target[i] < 0) {
      ctx.fail_shape("negative dimension " + std::to_string(target[i]) + " in the target shape");
    } else if (__builtin_mul_overflow(known, target[i], &known)) {
      ctx.fail_shape("the target shape " + shape_string(target) + " has too many elements");
    }
  }
  const auto total = static_cast<std::int64_t>(x.size());
  if (infer != target.size()) {
    if (known == 0 || total % known != 0) {
      ctx.fail_shape("cannot reshape " + shape_string(x.shape()) + " to " +
                     shape_string(target));
    }
    target[infer] = total / known;
  }
  if (element_count(target) != x.size()) {
    ctx.fail_shape("cannot reshape " + shape_string(x.shape()) + " to " + shape_string(target));
  }
  return {x.reshaped(target)};
}

inline std::vector<Tensor> transpose(const NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::size_t r = x.rank();
  std::vector<std::int64_t> perm(r);
  for (std::size_t i = 0; i < r; ++i) perm[i] = static_cast<std::int64_t>(r - 1 - i);
  if (const auto p = ctx.get_ints("perm")) perm = *p;
  std::vector<std::int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (sorted.size() != r || sorted[i] != static_cast<std::int64_t>(i)) {
      ctx.fail("perm is not a permutation of the " + std::to_string(r) + " axes");
    }
  }
  Shape out(r);
  const Shape in_strides = strides_of(x.shape());
  Shape src_strides(r);
  for (std::size_t i = 0; i < r; ++i) {
    out[i] = x.shape()[static_cast<std::size_t>(perm[i])];
    src_strides[i] = in_strides[static_cast<std::size_t>(perm[i])];
  }
  return {visit_numeric(x, [&](auto v) {
    using T = typename decltype(v)::value_type;
    std::vector<T> y(v.size());
    std::vector<std::int64_t> index(r, 0);
    std::int64_t src = 0;
    for (std::size_t k = 0; k < y.size(); ++k) {
      y[k] = v[static_cast<std::size_t>(src)];
      for (std::size_t d = r; d-- > 0;) {
        ++index[d];
        src += src_strides[d];
        if (index[d] < out[d]) break;
        src -= src_strides[d] * index[d];
        index[d] = 0;
      }
    }
    return Tensor(out, std::move(y));
  })};
}

inline std::vector<Tensor> concat(const NodeContext& ctx) {
  if (ctx.input_count() == 0) ctx.fail("needs at least one input");
  const Tensor& first = ctx.input(0);
  const std::size_t r = first.rank();
  const std::size_t axis = ctx.axis(ctx.require_int("axis"), r);
  Shape out = first.shape();
  out[axis] = 0;
  for (std::size_t i = 0; i < ctx.input_count(); ++i) {
    const Tensor& t = ctx.input(i);
    if (t.dtype() != first.dtype()) ctx.fail("inputs must have one element type");
    bool same = t.rank() == r;
    for (std::size_t d = 0; same && d < r; ++d) same = d == axis || t.shape()[d] == first.shape()[d];
    if (!same) {
      ctx.fail_shape("input " + std::to_string(i) + " of shape " + shape_string(t.shape()) +
                     " does not concatenate with " + shape_string(first.shape()) +
                     " along axis " + std::to_string(axis));
    }
    out[axis] += t.shape()[axis];
  }
  const auto outer = static_cast<std::size_t>(product(out, 0, axis));
  return {visit_numeric(first, [&](auto v0) {
    using T = typename decltype(v0)::value_type;
    std::vector<T> y;
    y.reserve(element_count(out));
    for (std::size_t o = 0; o < outer; ++o) {
      for (std::size_t i = 0; i < ctx.input_count(); ++i) {
        const Tensor& t = ctx.input(i);
        const auto chunk = static_cast<std::size_t>(product(t.shape(), axis, r));
        const auto v = t.data<T>();
        y.insert(y.end(), v.begin() + static_cast<std::ptrdiff_t>(o * chunk),
                 v.begin() + static_cast<std::ptrdiff_t>((o + 1) * chunk));
      }
    }
    return Tensor(out, std::move(y));
  })};
}

namespace detail {

/// The axes of Squeeze/Unsqueeze: an attribute before opset 13, an int64 input from 13 on.
inline std::optional<std::vector<std::int64_t>> axes_argument(const NodeContext& ctx) {
  if (ctx.opset() < 13) return ctx.get_ints("axes");
  if (!ctx.has_input(1)) return std::nullopt;
  const Tensor& a = ctx.input(1);
  if (a.dtype() != DataType::int64) ctx.fail("axes must be an int64 tensor");
  const auto v = a.data<std::int64_t>();
  return std::vector<std::int64_t>(v.begin(), v.end());
}

}  // namespace detail

inline std::vector<Tensor> squeeze(const NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const auto axes = detail::axes_argument(ctx);
  std::set<std::size_t> drop;
  if (axes) {
    for (const std::int64_t a : *axes) {
      const std::size_t d = ctx.axis(a, x.rank());
      if (x.shape()[d] != 1) {
        ctx.fail_shape("cannot squeeze axis " + std::to_string(a) + " of size " +
                       std::to_string(x.shape()[d]));
      }
      drop.insert(d);
    }
  } else {
    for (std::size_t d = 0; d < x.rank(); ++d)
      if (x.shape()[d] == 1) drop.insert(d);
  }
  Shape out;
  for (std::size_t d = 0; d < x.rank(); ++d)
    if (drop.count(d) == 0) out.push_back(x.shape()[d]);
  return {x.reshaped(out)};
}

inline std::vector<Tensor> unsqueeze(const NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const auto axes = detail::axes_argument(ctx);
  if (!axes) ctx.fail("axes are required");
  const std::size_t r = x.rank() + axes->size();
  std::set<std::size_t> added;
  for (const std::int64_t a : *axes) {
    if (!added.insert(ctx.axis(a, r)).second) ctx.fail("axis " + std::to_string(a) + " repeated");
  }
  Shape out;
  std::size_t next = 0;
  for (std::size_t d = 0; d < r; ++d) out.push_back(added.count(d) != 0 ? 1 : x.shape()[next++]);
  return {x.reshaped(out)};
}

/// Constant: `value` (a tensor), or value_float(s) / value_int(s) (opset 12).
inline std::vector<Tensor> constant(const NodeContext& ctx) {
  if (const auto* a = ctx.attribute("value")) {
    return {tensor_from_proto(a->t(), ctx.where() + ": attribute 'value'")};
  }
  if (const auto* a = ctx.attribute("value_float")) return {Tensor(Shape{}, std::vector<float>{a->f()})};
  if (const auto* a = ctx.attribute("value_int")) {
    return {Tensor(Shape{}, std::vector<std::int64_t>{a->i()})};
  }
  if (const auto* a = ctx.attribute("value_floats")) {
    std::vector<float> v(a->floats().begin(), a->floats().end());
    const auto n = static_cast<std::int64_t>(v.size());
    return {Tensor(Shape{n}, std::move(v))};
  }
  if (const auto* a = ctx.attribute("value_ints")) {
    std::vector<std::int64_t> v(a->ints().begin(), a->ints().end());
    const auto n = static_cast<std::int64_t>(v.size());
    return {Tensor(Shape{n}, std::move(v))};
  }
  if (ctx.has("sparse_value")) ctx.unsupported_attribute("sparse_value (sparse tensors)");
  if (ctx.has("value_string") || ctx.has("value_strings")) {
    throw unsupported_error(unsupported_kind::data_type, "string",
                            ctx.where() + ": unsupported data type string");
  }
  ctx.fail("has no value attribute");
}

}  // namespace onelearn::onnx::ops
