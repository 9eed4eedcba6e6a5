#pragma once
// Operators that change only the shape: Flatten, Reshape, Squeeze, Unsqueeze, Identity, Dropout
// (inference: the identity), Constant. Any element type. (Transpose, Concat and the other
// operators that move elements are in movement.hpp.)

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "onelearn/onnx/ops/common.hpp"

namespace onelearn::onnx::ops {

inline std::vector<Tensor> identity(const NodeContext& ctx) { return single_output(take_input(ctx, 0)); }

/// Dropout at inference is the identity, with an all-true mask (bool from opset 10; of the
/// input's type, all ones, before). Training mode (random) is supported only with ratio 0.
inline std::vector<Tensor> dropout(const NodeContext& ctx) {
  expect_inputs(ctx, 1, ctx.opset() >= 12 ? 3 : 1);
  const Tensor& x = ctx.input(0);
  bool training = ctx.opset() < 7 && ctx.get_int("is_test", 0) == 0;
  if (ctx.opset() >= 12 && ctx.has_input(2)) {
    const Tensor& t = ctx.input(2);
    if (t.dtype() != DataType::boolean || t.size() != 1) {
      ctx.fail("training_mode must be a bool scalar");
    }
    training = t.data<boolean>()[0];
  }
  if (training) {
    double ratio = ctx.get_float("ratio", 0.5f);
    if (ctx.opset() >= 12 && ctx.has_input(1)) {
      const Tensor& r = ctx.input(1);
      if (r.size() != 1) ctx.fail("ratio must be a scalar");
      ratio = visit_float(ctx, r, [](auto v) { return static_cast<double>(v[0]); });
    }
    if (ratio != 0) {
      throw unsupported_error(unsupported_kind::random, "Dropout in training mode",
                              ctx.where() + ": training mode with a ratio above 0 is random");
    }
  }
  if (!ctx.wants_output(1)) return single_output(x);
  if (ctx.opset() >= 10) return {x, Tensor::filled<boolean>(x.shape(), true)};
  return {x, visit_numeric(ctx, x, [&](auto v) {
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
  const Shape out{product(x.shape(), 0, a), product(x.shape(), a, x.rank())};
  return single_output(take_input(ctx, 0).reshaped(out));
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
  return single_output(take_input(ctx, 0).reshaped(target));
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
  return single_output(take_input(ctx, 0).reshaped(out));
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
  return single_output(take_input(ctx, 0).reshaped(out));
}

/// Constant: `value` (a tensor), or value_float(s) / value_int(s) (opset 12).
inline std::vector<Tensor> constant(const NodeContext& ctx) {
  if (const auto* a = ctx.attribute("value")) {
    return single_output(tensor_from_proto(a->t(), ctx.where() + ": attribute 'value'"));
  }
  if (const auto* a = ctx.attribute("value_float")) return single_output(Tensor(Shape{}, std::vector<float>{a->f()}));
  if (const auto* a = ctx.attribute("value_int")) {
    return single_output(Tensor(Shape{}, std::vector<std::int64_t>{a->i()}));
  }
  if (const auto* a = ctx.attribute("value_floats")) {
    std::vector<float> v(a->floats().begin(), a->floats().end());
    const auto n = static_cast<std::int64_t>(v.size());
    return single_output(Tensor(Shape{n}, std::move(v)));
  }
  if (const auto* a = ctx.attribute("value_ints")) {
    std::vector<std::int64_t> v(a->ints().begin(), a->ints().end());
    const auto n = static_cast<std::int64_t>(v.size());
    return single_output(Tensor(Shape{n}, std::move(v)));
  }
  if (ctx.has("sparse_value")) ctx.unsupported_attribute("sparse_value (sparse tensors)");
  if (ctx.has("value_string") || ctx.has("value_strings")) {
    throw unsupported_error(unsupported_kind::data_type, "string",
                            ctx.where() + ": unsupported data type string");
  }
  ctx.fail("has no value attribute");
}

}  // namespace onelearn::onnx::ops
