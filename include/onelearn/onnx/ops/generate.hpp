#pragma once
// Operators that make tensors from shapes or element types: Shape, Size, ConstantOfShape,
// Range, EyeLike, NonZero, OneHot, Cast, CastLike.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "onelearn/onnx/ops/common.hpp"

namespace onelearn::onnx::ops {

/// Shape: the input's shape as a 1-d int64 tensor; start/end (opset 15) slice it.
inline std::vector<Tensor> shape(const NodeContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const Shape& s = ctx.input(0).shape();
  const auto r = static_cast<std::int64_t>(s.size());
  const auto clamp = [&](std::int64_t v) { return std::clamp(v < 0 ? v + r : v, std::int64_t{0}, r); };
  const std::int64_t start = clamp(ctx.get_int("start", 0));
  const std::int64_t end = ctx.has("end") ? clamp(ctx.get_int("end", r)) : r;
  std::vector<std::int64_t> v;
  for (std::int64_t i = start; i < end; ++i) v.push_back(s[static_cast<std::size_t>(i)]);
  const auto n = static_cast<std::int64_t>(v.size());
  return single_output(Tensor(Shape{n}, std::move(v)));
}

inline std::vector<Tensor> size(const NodeContext& ctx) {
  expect_inputs(ctx, 1, 1);
  return single_output(Tensor(Shape{}, std::vector<std::int64_t>{static_cast<std::int64_t>(ctx.input(0).size())}));
}

/// ConstantOfShape: a tensor of the shape input filled with `value` (a one-element tensor
/// attribute; float32 0 when absent).
inline std::vector<Tensor> constant_of_shape(const NodeContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const Shape shape = int_values(ctx, ctx.input(0), "shape");
  Tensor value(Shape{1}, std::vector<float>{0.f});
  if (const auto* a = ctx.attribute("value")) {
    value = tensor_from_proto(a->t(), ctx.where() + ": attribute 'value'");
    if (value.size() != 1) ctx.fail("value must hold one element");
  }
  Tensor y(value.dtype(), shape);  // checks the size before allocating
  const std::size_t es = y.element_bytes();
  for (std::size_t i = 0; i < y.size(); ++i) std::memcpy(y.mutable_bytes() + i * es, value.bytes(), es);
  return single_output(std::move(y));
}

/// Range: start, start + delta, ... below limit (above it for a negative delta).
inline std::vector<Tensor> range(const NodeContext& ctx) {
  expect_inputs(ctx, 3, 3);
  const Tensor& s = ctx.input(0);
  const Tensor& l = ctx.input(1);
  const Tensor& d = ctx.input(2);
  if (s.dtype() != l.dtype() || s.dtype() != d.dtype()) ctx.fail("inputs must have one element type");
  if (s.size() != 1 || l.size() != 1 || d.size() != 1) ctx.fail_shape("inputs must be scalars");
  constexpr TypeSet range_types = types::floats | TypeSet{DataType::int64, DataType::int32};
  return single_output(visit_types<range_types>(ctx, s, [&](auto vs) {
    using T = typename decltype(vs)::value_type;
    const T start = vs[0], limit = l.data<T>()[0], delta = d.data<T>()[0];
    if (delta == 0) ctx.fail("delta must not be 0");
    const double n = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) /
                               static_cast<double>(delta));
    const double count = std::max(n, 0.0);
    if (!(count < 1e12)) ctx.fail_shape("the range has too many elements");
    const auto c = static_cast<std::int64_t>(count);
    Tensor y(data_type_of<T>(), Shape{c});
    auto& out = y.values<T>();
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i] = static_cast<T>(start + static_cast<T>(i) * delta);
    }
    return y;
  }));
}

/// EyeLike: ones on diagonal k of a 2-d tensor of the input's shape, of `dtype` (the input's
/// type when absent).
inline std::vector<Tensor> eye_like(const NodeContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const Tensor& x = ctx.input(0);
  if (x.rank() != 2) ctx.fail_shape("input must be 2-d, found " + shape_string(x.shape()));
  const DataType type = ctx.has("dtype")
                            ? data_type_from_onnx(static_cast<std::int32_t>(ctx.get_int("dtype", 1)),
                                                  ctx.where() + ": dtype")
                            : x.dtype();
  const std::int64_t k = ctx.get_int("k", 0);
  Tensor y(type, x.shape());
  dispatch(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto& v = y.values<T>();
    for (std::int64_t i = 0; i < x.shape()[0]; ++i) {
      const std::int64_t j = i + k;
      if (j >= 0 && j < x.shape()[1]) v[static_cast<std::size_t>(i * x.shape()[1] + j)] = T(1);
    }
    return 0;
  });
  return single_output(std::move(y));
}

/// NonZero: the indices of the nonzero elements, one row per dimension (int64).
inline std::vector<Tensor> non_zero(const NodeContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const Tensor& x = ctx.input(0);
  std::vector<std::size_t> hits;
  visit_types<types::all>(ctx, x, [&](auto v) {
    for (std::size_t i = 0; i < v.size(); ++i)
      if (static_cast<bool>(v[i])) hits.push_back(i);
    return 0;
  });
  const std::size_t r = x.rank() == 0 ? 1 : x.rank();
  std::vector<std::int64_t> out(r * hits.size(), 0);
  const Shape s = strides_of(x.shape());
  for (std::size_t h = 0; h < hits.size(); ++h) {
    auto rest = static_cast<std::int64_t>(hits[h]);
    for (std::size_t d = 0; d < x.rank(); ++d) {
      out[d * hits.size() + h] = rest / s[d];
      rest %= s[d];
    }
  }
  return single_output(Tensor(Shape{static_cast<std::int64_t>(r), static_cast<std::int64_t>(hits.size())},
                 std::move(out)));
}

/// OneHot: along `axis`, values[1] where the index matches, values[0] elsewhere; negative
/// indices count from the depth's end.
inline std::vector<Tensor> one_hot(const NodeContext& ctx) {
  expect_inputs(ctx, 3, 3);
  const Tensor& idx = ctx.input(0);
  const Tensor& depth_t = ctx.input(1);
  const Tensor& values = ctx.input(2);
  if (depth_t.size() != 1 || values.size() != 2) {
    ctx.fail_shape("depth must be a scalar and values hold two elements");
  }
  const std::vector<double> indices = visit_numeric(ctx, idx, [](auto v) {
    return std::vector<double>(v.begin(), v.end());
  });
  const double depth_d = visit_numeric(ctx, depth_t, [](auto v) { return static_cast<double>(v[0]); });
  if (!(depth_d >= 1 && depth_d < 1e9)) ctx.fail_shape("depth out of range");
  const auto depth = static_cast<std::int64_t>(depth_d);
  const std::size_t r = idx.rank() + 1;
  const std::size_t axis = ctx.axis(ctx.get_int("axis", -1), r);
  Shape out = idx.shape();
  out.insert(out.begin() + static_cast<std::ptrdiff_t>(axis), depth);
  Tensor y(values.dtype(), out);
  const std::size_t es = y.element_bytes();
  const std::byte* off = values.bytes();
  const std::byte* on = values.bytes() + es;
  const auto outer = static_cast<std::size_t>(product(idx.shape(), 0, axis));
  const auto inner = static_cast<std::size_t>(product(idx.shape(), axis, idx.rank()));
  const auto ud = static_cast<std::size_t>(depth);
  std::byte* dst = y.mutable_bytes();
  for (std::size_t o = 0; o < outer; ++o) {
    for (std::size_t d = 0; d < ud; ++d) {
      for (std::size_t i = 0; i < inner; ++i) {
        auto k = static_cast<std::int64_t>(indices[o * inner + i]);
        if (k < 0) k += depth;
        std::memcpy(dst, k == static_cast<std::int64_t>(d) ? on : off, es);
        dst += es;
      }
    }
  }
  return single_output(std::move(y));
}

namespace detail {

inline Tensor cast_to(const NodeContext& ctx, const Tensor& x, DataType to) {
  if (x.dtype() == to) return x;
  return visit_types<types::all>(ctx, x, [&](auto v) {
    return dispatch(to, [&](auto tag) {
      using To = typename decltype(tag)::type;
      std::vector<To> out(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) out[i] = cast_value<To>(v[i]);
      return Tensor(x.shape(), std::move(out));
    });
  });
}

}  // namespace detail

/// Cast: to the element type `to` (an ONNX type code; opset 1 spells it as a string).
inline std::vector<Tensor> cast(const NodeContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const auto* a = ctx.attribute("to");
  if (a == nullptr) ctx.fail("attribute 'to' is required");
  DataType to = DataType::float32;
  if (a->type() == ::onnx::AttributeProto::STRING) {
    ::onnx::TensorProto::DataType code{};
    std::string name = a->s();
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (!::onnx::TensorProto::DataType_Parse(name, &code)) ctx.fail("unknown type '" + a->s() + "'");
    to = data_type_from_onnx(code, ctx.where());
  } else {
    to = data_type_from_onnx(static_cast<std::int32_t>(ctx.get_int("to", 1)), ctx.where());
  }
  return single_output(detail::cast_to(ctx, ctx.input(0), to));
}

/// CastLike: Cast to the second input's element type.
inline std::vector<Tensor> cast_like(const NodeContext& ctx) {
  expect_inputs(ctx, 2, 2);
  return single_output(detail::cast_to(ctx, ctx.input(0), ctx.input(1).dtype()));
}

}  // namespace onelearn::onnx::ops
