#pragma once
// Operators that only move elements, whatever their type: Transpose, Concat, Slice, Split,
// Expand, Tile, Gather, GatherElements, GatherND, Where, Trilu, DepthToSpace, SpaceToDepth,
// Compress, ReverseSequence. They work on the tensors' bytes (Tensor::bytes), so one compiled
// body serves every element type. Each output's size is checked (element_count, in the
// Tensor(DataType, Shape) constructor) before it is allocated; every index read from a tensor is
// range-checked before it is used.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "onelearn/onnx/ops/common.hpp"

namespace onelearn::onnx::ops {

namespace detail {

/// A new tensor of `out_shape` whose element [i0, i1, ...] is src's element
/// offset + sum_k i_k * strides[k] (in elements; a stride may be 0 or negative). The caller
/// guarantees that every such element is inside src.
inline Tensor strided_copy(const Tensor& src, const Shape& out_shape, const Shape& strides,
                           std::int64_t offset) {
  Tensor out(src.dtype(), out_shape);
  const std::size_t n = out.size();
  if (n == 0) return out;
  const auto es = static_cast<std::int64_t>(src.element_bytes());
  const std::byte* in = src.bytes();
  std::byte* o = out.mutable_bytes();
  const std::size_t r = out_shape.size();
  if (r == 0) {
    std::memcpy(o, in + offset * es, static_cast<std::size_t>(es));
    return out;
  }
  const std::int64_t inner = out_shape[r - 1];
  const std::int64_t is = strides[r - 1];
  std::vector<std::int64_t> index(r, 0);
  std::int64_t pos = offset;
  for (std::size_t k = 0; k < n; k += static_cast<std::size_t>(inner)) {
    std::byte* dst = o + static_cast<std::int64_t>(k) * es;
    if (is == 1) {
      std::memcpy(dst, in + pos * es, static_cast<std::size_t>(inner * es));
    } else {
      for (std::int64_t j = 0; j < inner; ++j) {
        std::memcpy(dst + j * es, in + (pos + j * is) * es, static_cast<std::size_t>(es));
      }
    }
    for (std::size_t d = r - 1; d-- > 0;) {
      ++index[d];
      pos += strides[d];
      if (index[d] < out_shape[d]) break;
      pos -= strides[d] * index[d];
      index[d] = 0;
    }
  }
  return out;
}

/// src read as a broadcast operand of `out_shape` (numpy rules, already checked).
inline Tensor broadcast_to(const Tensor& src, const Shape& out_shape) {
  if (src.shape() == out_shape) return src;
  return strided_copy(src, out_shape, broadcast_strides(src.shape(), out_shape), 0);
}

/// An index read from a tensor, checked against [-n, n) and made non-negative.
inline std::int64_t checked_index(const NodeContext& ctx, std::int64_t i, std::int64_t n) {
  if (i < -n || i >= n) {
    ctx.fail_shape("index " + std::to_string(i) + " is out of range for a dimension of " +
                   std::to_string(n));
  }
  return i < 0 ? i + n : i;
}

/// Concatenates `parts` (same type, same shape but along `axis`) along `axis` into `out`.
inline Tensor concat_bytes(const std::vector<const Tensor*>& parts, const Shape& out,
                           std::size_t axis) {
  Tensor y(parts.front()->dtype(), out);
  if (y.size() == 0) return y;
  const std::size_t es = y.element_bytes();
  const auto outer = static_cast<std::size_t>(product(out, 0, axis));
  std::byte* dst = y.mutable_bytes();
  for (std::size_t o = 0; o < outer; ++o) {
    for (const Tensor* t : parts) {
      const auto chunk = static_cast<std::size_t>(product(t->shape(), axis, t->rank())) * es;
      if (chunk == 0) continue;
      std::memcpy(dst, t->bytes() + o * chunk, chunk);
      dst += chunk;
    }
  }
  return y;
}

}  // namespace detail

inline std::vector<Tensor> transpose(const NodeContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const Tensor& x = ctx.input(0);
  const std::size_t r = x.rank();
  std::vector<std::int64_t> perm(r);
  for (std::size_t i = 0; i < r; ++i) perm[i] = static_cast<std::int64_t>(r - 1 - i);
  if (const auto p = ctx.get_ints("perm")) perm = *p;
  std::vector<bool> seen(r, false);
  bool valid = perm.size() == r;
  for (std::size_t i = 0; valid && i < r; ++i) {
    valid = perm[i] >= 0 && perm[i] < static_cast<std::int64_t>(r) &&
            !seen[static_cast<std::size_t>(perm[i])];
    if (valid) seen[static_cast<std::size_t>(perm[i])] = true;
  }
  if (!valid) ctx.fail("perm is not a permutation of the " + std::to_string(r) + " axes");
  Shape out(r), strides(r);
  const Shape in_strides = strides_of(x.shape());
  for (std::size_t i = 0; i < r; ++i) {
    out[i] = x.shape()[static_cast<std::size_t>(perm[i])];
    strides[i] = in_strides[static_cast<std::size_t>(perm[i])];
  }
  return single_output(detail::strided_copy(x, out, strides, 0));
}

inline std::vector<Tensor> concat(const NodeContext& ctx) {
  if (ctx.input_count() == 0) ctx.fail("needs at least one input");
  const Tensor& first = ctx.input(0);
  const std::size_t r = first.rank();
  if (r == 0) ctx.fail_shape("cannot concatenate scalars");
  const std::size_t axis = ctx.axis(ctx.require_int("axis"), r);
  Shape out = first.shape();
  out[axis] = 0;
  std::vector<const Tensor*> parts;
  for (std::size_t i = 0; i < ctx.input_count(); ++i) {
    const Tensor& t = ctx.input(i);
    expect_same_type(ctx, first, t);
    bool same = t.rank() == r;
    for (std::size_t d = 0; same && d < r; ++d) same = d == axis || t.shape()[d] == first.shape()[d];
    if (!same) {
      ctx.fail_shape("input " + std::to_string(i) + " of shape " + shape_string(t.shape()) +
                     " does not concatenate with " + shape_string(first.shape()) +
                     " along axis " + std::to_string(axis));
    }
    out[axis] += t.shape()[axis];
    parts.push_back(&t);
  }
  return single_output(detail::concat_bytes(parts, out, axis));
}

/// Slice: starts, ends (clamped as numpy does), axes, steps; attributes before opset 10,
/// inputs from 10 on.
inline std::vector<Tensor> slice(const NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::size_t r = x.rank();
  std::vector<std::int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    expect_inputs(ctx, 1, 1);
    starts = ctx.get_ints("starts").value_or(std::vector<std::int64_t>{});
    ends = ctx.get_ints("ends").value_or(std::vector<std::int64_t>{});
    axes = ctx.get_ints("axes").value_or(std::vector<std::int64_t>{});
  } else {
    expect_inputs(ctx, 3, 5);
    starts = int_values(ctx, ctx.input(1), "starts");
    ends = int_values(ctx, ctx.input(2), "ends");
    if (ctx.has_input(3)) axes = int_values(ctx, ctx.input(3), "axes");
    if (ctx.has_input(4)) steps = int_values(ctx, ctx.input(4), "steps");
  }
  if (starts.size() != ends.size()) ctx.fail("starts and ends must have one length");
  if (axes.empty()) {
    for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) {
    ctx.fail("starts, ends, axes and steps must have one length");
  }
  Shape out = x.shape();
  const Shape in_strides = strides_of(x.shape());
  Shape strides = in_strides;
  std::int64_t offset = 0;
  std::vector<bool> seen(r, false);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const std::size_t a = ctx.axis(axes[i], r);
    if (seen[a]) ctx.fail("axis " + std::to_string(axes[i]) + " repeated");
    seen[a] = true;
    const std::int64_t dim = x.shape()[a];
    const std::int64_t step = steps[i];
    if (step == 0) ctx.fail("steps must not be 0");
    const auto clamp = [&](std::int64_t v, std::int64_t lo, std::int64_t hi) {
      if (v < 0) v = v < -dim ? lo : v + dim;  // -dim - 1 and below clamp to lo
      return std::clamp(v, lo, hi);
    };
    std::int64_t start = 0, end = 0, count = 0;
    if (step > 0) {
      start = clamp(starts[i], 0, dim);
      end = clamp(ends[i], 0, dim);
      count = end > start ? (end - start + step - 1) / step : 0;
    } else {
      start = clamp(starts[i], -1, dim - 1);
      end = clamp(ends[i], -1, dim - 1);
      count = start > end ? (start - end + (-step) - 1) / (-step) : 0;
    }
    out[a] = count;
    strides[a] = in_strides[a] * step;
    if (count > 0) offset += start * in_strides[a];
  }
  return single_output(detail::strided_copy(x, out, strides, offset));
}

/// Split: into equal parts (one per output), or by `split` (an attribute before opset 13, an
/// input from 13 on).
inline std::vector<Tensor> split(const NodeContext& ctx) {
  expect_inputs(ctx, 1, 2);
  const Tensor& x = ctx.input(0);
  if (x.rank() == 0) ctx.fail_shape("cannot split a scalar");
  const std::size_t axis = ctx.axis(ctx.get_int("axis", 0), x.rank());
  const auto outputs = static_cast<std::size_t>(ctx.node().output_size());
  std::vector<std::int64_t> sizes;
  if (ctx.opset() < 13) {
    sizes = ctx.get_ints("split").value_or(std::vector<std::int64_t>{});
    if (ctx.opset() < 2 && ctx.has_input(1)) sizes = int_values(ctx, ctx.input(1), "split");
  } else if (ctx.has_input(1)) {
    sizes = int_values(ctx, ctx.input(1), "split");
  }
  const std::int64_t dim = x.shape()[axis];
  if (sizes.empty()) {
    if (outputs == 0 || dim % static_cast<std::int64_t>(outputs) != 0) {
      ctx.fail_shape("cannot split a dimension of " + std::to_string(dim) + " into " +
                     std::to_string(outputs) + " equal parts");
    }
    sizes.assign(outputs, dim / static_cast<std::int64_t>(outputs));
  }
  if (sizes.size() != outputs) {
    ctx.fail("split has " + std::to_string(sizes.size()) + " sizes for " +
             std::to_string(outputs) + " outputs");
  }
  std::int64_t total = 0;
  for (const std::int64_t s : sizes) {
    if (s < 0) ctx.fail_shape("negative split size " + std::to_string(s));
    total += s;
  }
  if (total != dim) {
    ctx.fail_shape("split sizes add up to " + std::to_string(total) + ", the axis has " +
                   std::to_string(dim));
  }
  const Shape strides = strides_of(x.shape());
  std::vector<Tensor> out;
  std::int64_t start = 0;
  for (const std::int64_t s : sizes) {
    Shape part = x.shape();
    part[axis] = s;
    out.push_back(detail::strided_copy(x, part, strides, s > 0 ? start * strides[axis] : 0));
    start += s;
  }
  return out;
}

/// Expand: numpy broadcasting of the input and the shape input (either may be larger).
inline std::vector<Tensor> expand(const NodeContext& ctx) {
  expect_inputs(ctx, 2, 2);
  const Tensor& x = ctx.input(0);
  const Shape target = int_values(ctx, ctx.input(1), "shape");
  const Shape out = broadcast_shape(ctx, x.shape(), target);
  return single_output(detail::broadcast_to(x, out));
}

/// Tile: the input repeated repeats[d] times along each dimension d.
inline std::vector<Tensor> tile(const NodeContext& ctx) {
  expect_inputs(ctx, 2, 2);
  const Tensor& x = ctx.input(0);
  const std::vector<std::int64_t> repeats = int_values(ctx, ctx.input(1), "repeats");
  if (repeats.size() != x.rank()) {
    ctx.fail_shape("repeats has " + std::to_string(repeats.size()) + " values for an input of rank " +
                   std::to_string(x.rank()));
  }
  // A view of shape (r0, d0, r1, d1, ...) with stride 0 along each repeat, then a reshape.
  Shape view, strides, out;
  const Shape in_strides = strides_of(x.shape());
  for (std::size_t d = 0; d < x.rank(); ++d) {
    if (repeats[d] < 0) ctx.fail_shape("negative repeat " + std::to_string(repeats[d]));
    view.insert(view.end(), {repeats[d], x.shape()[d]});
    strides.insert(strides.end(), {0, in_strides[d]});
    std::int64_t o = 0;
    if (__builtin_mul_overflow(repeats[d], x.shape()[d], &o)) ctx.fail_shape("output too large");
    out.push_back(o);
  }
  element_count(out);
  return single_output(detail::strided_copy(x, view, strides, 0).reshaped(out));
}

/// Gather: data[..., indices[...], ...] along `axis`.
inline std::vector<Tensor> gather(const NodeContext& ctx) {
  expect_inputs(ctx, 2, 2);
  const Tensor& x = ctx.input(0);
  if (x.rank() == 0) ctx.fail_shape("data must have at least one dimension");
  const std::size_t axis = ctx.axis(ctx.get_int("axis", 0), x.rank());
  const Tensor& idx = ctx.input(1);
  const std::vector<std::int64_t> indices = int_values(ctx, idx, "indices");
  const std::int64_t dim = x.shape()[axis];
  for (const std::int64_t i : indices) detail::checked_index(ctx, i, dim);
  Shape out(x.shape().begin(), x.shape().begin() + static_cast<std::ptrdiff_t>(axis));
  out.insert(out.end(), idx.shape().begin(), idx.shape().end());
  out.insert(out.end(), x.shape().begin() + static_cast<std::ptrdiff_t>(axis) + 1, x.shape().end());
  Tensor y(x.dtype(), out);
  if (y.size() == 0) return single_output(std::move(y));
  const std::size_t es = x.element_bytes();
  const auto outer = static_cast<std::size_t>(product(x.shape(), 0, axis));
  const auto chunk = static_cast<std::size_t>(product(x.shape(), axis + 1, x.rank())) * es;
  const std::byte* in = x.bytes();
  std::byte* dst = y.mutable_bytes();
  for (std::size_t o = 0; o < outer; ++o) {
    for (const std::int64_t i : indices) {
      const auto k = static_cast<std::size_t>(i < 0 ? i + dim : i);
      std::memcpy(dst, in + (o * static_cast<std::size_t>(dim) + k) * chunk, chunk);
      dst += chunk;
    }
  }
  return single_output(std::move(y));
}

/// GatherElements: out[i...] = data[i with i[axis] replaced by indices[i...]].
inline std::vector<Tensor> gather_elements(const NodeContext& ctx) {
  expect_inputs(ctx, 2, 2);
  const Tensor& x = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  if (x.rank() == 0 || idx.rank() != x.rank()) {
    ctx.fail_shape("data and indices must have one rank (at least 1), found " +
                   shape_string(x.shape()) + " and " + shape_string(idx.shape()));
  }
  const std::size_t axis = ctx.axis(ctx.get_int("axis", 0), x.rank());
  for (std::size_t d = 0; d < x.rank(); ++d) {
    if (d != axis && idx.shape()[d] > x.shape()[d]) {
      ctx.fail_shape("indices " + shape_string(idx.shape()) + " exceed data " +
                     shape_string(x.shape()) + " outside the axis");
    }
  }
  const std::vector<std::int64_t> indices = int_values(ctx, idx, "indices");
  Tensor y(x.dtype(), idx.shape());
  const std::size_t es = x.element_bytes();
  const Shape xs = strides_of(x.shape());
  std::vector<std::int64_t> pos(x.rank(), 0);
  for (std::size_t k = 0; k < indices.size(); ++k) {
    std::int64_t src = 0;
    for (std::size_t d = 0; d < x.rank(); ++d) {
      const std::int64_t i = d == axis ? detail::checked_index(ctx, indices[k], x.shape()[d]) : pos[d];
      src += i * xs[d];
    }
    std::memcpy(y.mutable_bytes() + k * es, x.bytes() + static_cast<std::size_t>(src) * es, es);
    for (std::size_t d = x.rank(); d-- > 0;) {
      if (++pos[d] < idx.shape()[d]) break;
      pos[d] = 0;
    }
  }
  return single_output(std::move(y));
}

/// GatherND with batch_dims.
inline std::vector<Tensor> gather_nd(const NodeContext& ctx) {
  expect_inputs(ctx, 2, 2);
  const Tensor& x = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  const auto b = static_cast<std::size_t>(ctx.get_int("batch_dims", 0));
  if (idx.rank() < 1 || b >= std::min(x.rank(), idx.rank())) {
    ctx.fail_shape("batch_dims must be less than the ranks of data and indices");
  }
  const auto k = static_cast<std::size_t>(idx.shape().back());
  if (k < 1 || b + k > x.rank()) ctx.fail_shape("indices' last dimension is out of range");
  for (std::size_t d = 0; d < b; ++d) {
    if (x.shape()[d] != idx.shape()[d]) ctx.fail_shape("batch dimensions differ");
  }
  Shape out(idx.shape().begin(), idx.shape().end() - 1);
  out.insert(out.end(), x.shape().begin() + static_cast<std::ptrdiff_t>(b + k), x.shape().end());
  const std::vector<std::int64_t> indices = int_values(ctx, idx, "indices");
  Tensor y(x.dtype(), out);
  const std::size_t es = x.element_bytes();
  const auto chunk = static_cast<std::size_t>(product(x.shape(), b + k, x.rank())) * es;
  const auto batch = static_cast<std::size_t>(product(x.shape(), 0, b));
  const auto per_batch = static_cast<std::size_t>(product(idx.shape(), b, idx.rank() - 1));
  const Shape xs = strides_of(x.shape());
  std::byte* dst = y.mutable_bytes();
  for (std::size_t bi = 0; bi < batch; ++bi) {
    for (std::size_t j = 0; j < per_batch; ++j) {
      std::int64_t src = static_cast<std::int64_t>(bi) * (b > 0 ? xs[b - 1] : 0);
      for (std::size_t t = 0; t < k; ++t) {
        const std::int64_t i = indices[(bi * per_batch + j) * k + t];
        src += detail::checked_index(ctx, i, x.shape()[b + t]) * xs[b + t];
      }
      if (chunk > 0) std::memcpy(dst, x.bytes() + static_cast<std::size_t>(src) * es, chunk);
      dst += chunk;
    }
  }
  return single_output(std::move(y));
}

/// Where: condition ? X : Y, the three broadcast together.
inline std::vector<Tensor> where(const NodeContext& ctx) {
  expect_inputs(ctx, 3, 3);
  const Tensor& c = ctx.input(0);
  const Tensor& a = ctx.input(1);
  const Tensor& b = ctx.input(2);
  if (c.dtype() != DataType::boolean) ctx.unsupported_type(c.dtype(), "bool (the condition)");
  expect_same_type(ctx, a, b);
  const Shape out = broadcast_shape(ctx, broadcast_shape(ctx, c.shape(), a.shape()), b.shape());
  const Tensor cc = detail::broadcast_to(c, out);
  const Tensor ca = detail::broadcast_to(a, out);
  Tensor y = detail::broadcast_to(b, out);
  const std::size_t es = y.element_bytes();
  const auto cond = cc.data<boolean>();
  std::byte* dst = y.mutable_bytes();
  for (std::size_t i = 0; i < cond.size(); ++i) {
    if (cond[i]) std::memcpy(dst + i * es, ca.bytes() + i * es, es);
  }
  return single_output(std::move(y));
}

/// Trilu: keeps the lower (upper = 0) or upper triangle of the last two dimensions, shifted by
/// the optional diagonal k; the rest is zero.
inline std::vector<Tensor> trilu(const NodeContext& ctx) {
  expect_inputs(ctx, 1, 2);
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) ctx.fail_shape("input must have at least 2 dimensions");
  std::int64_t k = 0;
  if (ctx.has_input(1)) {
    const auto kv = int_values(ctx, ctx.input(1), "k");
    if (kv.size() != 1) ctx.fail_shape("k must be a scalar");
    k = kv[0];
  }
  const bool upper = ctx.get_int("upper", 1) != 0;
  Tensor y(x.dtype(), x.shape());
  const std::int64_t rows = x.shape()[x.rank() - 2], cols = x.shape()[x.rank() - 1];
  const std::size_t es = x.element_bytes();
  const std::size_t mats = rows * cols == 0 ? 0 : x.size() / static_cast<std::size_t>(rows * cols);
  for (std::size_t m = 0; m < mats; ++m) {
    for (std::int64_t i = 0; i < rows; ++i) {
      for (std::int64_t j = 0; j < cols; ++j) {
        const bool keep = upper ? j - i >= k : j - i <= k;
        if (!keep) continue;
        const std::size_t at = (m * static_cast<std::size_t>(rows) + static_cast<std::size_t>(i)) *
                                   static_cast<std::size_t>(cols) + static_cast<std::size_t>(j);
        std::memcpy(y.mutable_bytes() + at * es, x.bytes() + at * es, es);
      }
    }
  }
  return single_output(std::move(y));
}

/// DepthToSpace (DCR or CRD mode) and SpaceToDepth: a reshape, a transpose and a reshape.
inline std::vector<Tensor> depth_to_space(const NodeContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const Tensor& x = ctx.input(0);
  if (x.rank() != 4) ctx.fail_shape("input must be 4-d (N, C, H, W)");
  const std::int64_t bs = ctx.require_int("blocksize");
  const std::int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  if (bs <= 0 || c % (bs * bs) != 0) ctx.fail_shape("channels are not a multiple of blocksize^2");
  const std::int64_t oc = c / (bs * bs);
  const bool crd = ctx.get_string("mode", "DCR") == "CRD";
  const Shape view = crd ? Shape{n, oc, bs, bs, h, w} : Shape{n, bs, bs, oc, h, w};
  const Shape vs = strides_of(view);
  // Output order (n, oc, h, b1, w, b2).
  const Shape perm = crd ? Shape{0, 1, 4, 2, 5, 3} : Shape{0, 3, 4, 1, 5, 2};
  Shape shape(6), strides(6);
  for (std::size_t i = 0; i < 6; ++i) {
    shape[i] = view[static_cast<std::size_t>(perm[i])];
    strides[i] = vs[static_cast<std::size_t>(perm[i])];
  }
  return single_output(detail::strided_copy(x, shape, strides, 0).reshaped({n, oc, h * bs, w * bs}));
}

inline std::vector<Tensor> space_to_depth(const NodeContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const Tensor& x = ctx.input(0);
  if (x.rank() != 4) ctx.fail_shape("input must be 4-d (N, C, H, W)");
  const std::int64_t bs = ctx.require_int("blocksize");
  const std::int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
  if (bs <= 0 || h % bs != 0 || w % bs != 0) ctx.fail_shape("H and W are not multiples of blocksize");
  const Shape view{n, c, h / bs, bs, w / bs, bs};
  const Shape vs = strides_of(view);
  const Shape perm{0, 3, 5, 1, 2, 4};
  Shape shape(6), strides(6);
  for (std::size_t i = 0; i < 6; ++i) {
    shape[i] = view[static_cast<std::size_t>(perm[i])];
    strides[i] = vs[static_cast<std::size_t>(perm[i])];
  }
  return single_output(detail::strided_copy(x, shape, strides, 0).reshaped({n, c * bs * bs, h / bs, w / bs}));
}

/// Compress: the slices along `axis` (or of the flattened input) whose condition is true.
inline std::vector<Tensor> compress(const NodeContext& ctx) {
  expect_inputs(ctx, 2, 2);
  Tensor x = ctx.input(0);
  const Tensor& c = ctx.input(1);
  if (c.dtype() != DataType::boolean) ctx.unsupported_type(c.dtype(), "bool (the condition)");
  std::size_t axis = 0;
  if (ctx.has("axis")) {
    if (x.rank() == 0) ctx.fail_shape("cannot compress a scalar along an axis");
    axis = ctx.axis(ctx.get_int("axis", 0), x.rank());
  } else {
    x = std::move(x).reshaped({static_cast<std::int64_t>(x.size())});
  }
  const auto cond = c.data<boolean>();
  if (c.rank() != 1 || static_cast<std::int64_t>(cond.size()) > x.shape()[axis]) {
    ctx.fail_shape("condition must be 1-d and no longer than the axis");
  }
  std::vector<std::int64_t> keep;
  for (std::size_t i = 0; i < cond.size(); ++i)
    if (cond[i]) keep.push_back(static_cast<std::int64_t>(i));
  Shape out = x.shape();
  out[axis] = static_cast<std::int64_t>(keep.size());
  Tensor y(x.dtype(), out);
  const std::size_t es = x.element_bytes();
  const auto outer = static_cast<std::size_t>(product(x.shape(), 0, axis));
  const auto chunk = static_cast<std::size_t>(product(x.shape(), axis + 1, x.rank())) * es;
  const auto dim = static_cast<std::size_t>(x.shape()[axis]);
  std::byte* dst = y.mutable_bytes();
  for (std::size_t o = 0; o < outer && chunk > 0; ++o) {
    for (const std::int64_t i : keep) {
      std::memcpy(dst, x.bytes() + (o * dim + static_cast<std::size_t>(i)) * chunk, chunk);
      dst += chunk;
    }
  }
  return single_output(std::move(y));
}

/// ReverseSequence: reverses the first sequence_lens[b] steps of each batch entry.
inline std::vector<Tensor> reverse_sequence(const NodeContext& ctx) {
  expect_inputs(ctx, 2, 2);
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) ctx.fail_shape("input must have at least 2 dimensions");
  const auto lens = int_values(ctx, ctx.input(1), "sequence_lens");
  const std::size_t baxis = ctx.axis(ctx.get_int("batch_axis", 1), x.rank());
  const std::size_t taxis = ctx.axis(ctx.get_int("time_axis", 0), x.rank());
  if (baxis == taxis) ctx.fail("batch_axis and time_axis must differ");
  if (static_cast<std::int64_t>(lens.size()) != x.shape()[baxis]) {
    ctx.fail_shape("sequence_lens must have one value per batch entry");
  }
  for (const std::int64_t l : lens) {
    if (l < 0 || l > x.shape()[taxis]) ctx.fail_shape("sequence length out of range");
  }
  Tensor y = x;
  const std::size_t es = x.element_bytes();
  const Shape s = strides_of(x.shape());
  std::vector<std::int64_t> pos(x.rank(), 0);
  for (std::size_t k = 0; k < x.size(); ++k) {
    const std::int64_t t = pos[taxis], len = lens[static_cast<std::size_t>(pos[baxis])];
    if (t < len) {
      const std::int64_t src = static_cast<std::int64_t>(k) + (len - 1 - 2 * t) * s[taxis];
      std::memcpy(y.mutable_bytes() + k * es, x.bytes() + static_cast<std::size_t>(src) * es, es);
    }
    for (std::size_t d = x.rank(); d-- > 0;) {
      if (++pos[d] < x.shape()[d]) break;
      pos[d] = 0;
    }
  }
  return single_output(std::move(y));
}

}  // namespace onelearn::onnx::ops
