#pragma once
// ScatterElements (and its old name Scatter) and ScatterND: a copy of data with the elements
// the indices name replaced by updates, or combined with them (reduction add or mul, opset 16).
// Indices are range-checked before anything is written.

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "onelearn/onnx/ops/common.hpp"

namespace onelearn::onnx::ops {

namespace detail {

/// Writes updates element u into y's element `at`, as `reduction` says.
inline void scatter_into(const NodeContext& ctx, Tensor& y, std::size_t at, const Tensor& updates,
                         std::size_t u, const std::string& reduction) {
  if (reduction == "none") {
    const std::size_t es = y.element_bytes();
    std::memcpy(y.mutable_bytes() + at * es, updates.bytes() + u * es, es);
    return;
  }
  const bool add = reduction == "add";
  if (!add && reduction != "mul") ctx.fail("unsupported reduction '" + reduction + "'");
  visit_numeric(ctx, updates, [&](auto v) {
    using T = typename decltype(v)::value_type;
    T& e = y.values<T>()[at];
    e = static_cast<T>(add ? e + v[u] : e * v[u]);
    return 0;
  });
}

}  // namespace detail

inline std::vector<Tensor> scatter_elements(const NodeContext& ctx) {
  expect_inputs(ctx, 3, 3);
  const Tensor& x = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  expect_same_type(ctx, x, updates);
  if (idx.shape() != updates.shape() || idx.rank() != x.rank() || x.rank() == 0) {
    ctx.fail_shape("indices and updates must have one shape of data's rank, found " +
                   shape_string(idx.shape()) + " and " + shape_string(updates.shape()));
  }
  const std::size_t axis = ctx.axis(ctx.get_int("axis", 0), x.rank());
  for (std::size_t d = 0; d < x.rank(); ++d) {
    if (d != axis && idx.shape()[d] > x.shape()[d]) ctx.fail_shape("indices exceed data outside the axis");
  }
  const std::vector<std::int64_t> indices = int_values(ctx, idx, "indices");
  const std::string reduction = ctx.get_string("reduction", "none");
  const Shape xs = strides_of(x.shape());
  std::vector<std::size_t> targets(indices.size());
  std::vector<std::int64_t> pos(x.rank(), 0);
  for (std::size_t k = 0; k < indices.size(); ++k) {
    std::int64_t at = 0;
    for (std::size_t d = 0; d < x.rank(); ++d) {
      std::int64_t i = pos[d];
      if (d == axis) {
        i = indices[k];
        const std::int64_t n = x.shape()[d];
        if (i < -n || i >= n) ctx.fail_shape("index " + std::to_string(i) + " is out of range for a dimension of " + std::to_string(n));
        if (i < 0) i += n;
      }
      at += i * xs[d];
    }
    targets[k] = static_cast<std::size_t>(at);
    for (std::size_t d = x.rank(); d-- > 0;) {
      if (++pos[d] < idx.shape()[d]) break;
      pos[d] = 0;
    }
  }
  Tensor y = x;
  for (std::size_t k = 0; k < targets.size(); ++k) detail::scatter_into(ctx, y, targets[k], updates, k, reduction);
  return single_output(std::move(y));
}

inline std::vector<Tensor> scatter_nd(const NodeContext& ctx) {
  expect_inputs(ctx, 3, 3);
  const Tensor& x = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  expect_same_type(ctx, x, updates);
  if (idx.rank() < 1) ctx.fail_shape("indices must have at least one dimension");
  const auto k = static_cast<std::size_t>(idx.shape().back());
  if (k < 1 || k > x.rank()) ctx.fail_shape("indices' last dimension is out of range");
  Shape expected(idx.shape().begin(), idx.shape().end() - 1);
  expected.insert(expected.end(), x.shape().begin() + static_cast<std::ptrdiff_t>(k), x.shape().end());
  if (updates.shape() != expected) {
    ctx.fail_shape("updates of shape " + shape_string(updates.shape()) + ", expected " + shape_string(expected));
  }
  const std::vector<std::int64_t> indices = int_values(ctx, idx, "indices");
  const std::string reduction = ctx.get_string("reduction", "none");
  const Shape xs = strides_of(x.shape());
  const auto chunk = static_cast<std::size_t>(product(x.shape(), k, x.rank()));
  const std::size_t n = indices.size() / k;
  Tensor y = x;
  for (std::size_t j = 0; j < n; ++j) {
    std::int64_t at = 0;
    for (std::size_t t = 0; t < k; ++t) {
      std::int64_t i = indices[j * k + t];
      const std::int64_t dim = x.shape()[t];
      if (i < -dim || i >= dim) ctx.fail_shape("index " + std::to_string(i) + " is out of range for a dimension of " + std::to_string(dim));
      if (i < 0) i += dim;
      at += i * xs[t];
    }
    for (std::size_t c = 0; c < chunk; ++c) {
      detail::scatter_into(ctx, y, static_cast<std::size_t>(at) + c, updates, j * chunk + c, reduction);
    }
  }
  return single_output(std::move(y));
}

}  // namespace onelearn::onnx::ops
