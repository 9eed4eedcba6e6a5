#pragma once
// What every operator implementation sees: the node (attributes, read through NodeAttributes of
// onnx/detail/attributes.hpp, the one attribute reader), the opset of its domain, its input
// tensors, and helpers that raise errors naming the node and the op.
// Also the element-type dispatch and numpy broadcasting that several op families share.

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "onelearn/onnx/detail/attributes.hpp"
#include "onelearn/onnx/errors.hpp"
#include "onelearn/onnx/load.hpp"
#include "onelearn/onnx/tensor.hpp"

namespace onelearn::onnx {

/// What Graph's fusion pass folded into a node (graph.hpp, fuse_conv_followers): the nodes
/// that alone read its output, which then hand their input on. Only Conv takes any.
struct Fusion {
  bool relu = false;          ///< a Relu: the node writes relu(y)
  bool max_pool_2x2 = false;  ///< then a 2x2 / stride 2 MaxPool without padding: pooled y
};

/// A node being run: its attributes (NodeAttributes: node(), where(), get_int, ...), the opset
/// of its domain and its input tensors.
class NodeContext : public NodeAttributes {
 public:
  NodeContext(const ::onnx::NodeProto& node, std::int64_t opset, std::vector<const Tensor*> inputs,
              std::vector<Tensor*> expiring = {}, Fusion fusion = {})
      : NodeAttributes(node), opset_(opset), inputs_(std::move(inputs)),
        expiring_(std::move(expiring)), fusion_(fusion) {}

  [[nodiscard]] std::int64_t opset() const noexcept { return opset_; }
  [[nodiscard]] const std::string& op() const noexcept { return node().op_type(); }

  // --- inputs -----------------------------------------------------------------------------
  [[nodiscard]] std::size_t input_count() const noexcept { return inputs_.size(); }
  /// Whether optional input `i` is given (present and not the empty name).
  [[nodiscard]] bool has_input(std::size_t i) const noexcept {
    return i < inputs_.size() && inputs_[i] != nullptr;
  }
  [[nodiscard]] const Tensor& input(std::size_t i) const {
    if (!has_input(i)) fail("input " + std::to_string(i) + " is required but not given");
    return *inputs_[i];
  }
  /// Input `i` when nothing reads it after this node (a node output, not a graph input, an
  /// initializer or a graph output, given once to this node): the operator may take its
  /// storage for its output (an elementwise map in place) instead of allocating. Else null.
  [[nodiscard]] Tensor* expiring_input(std::size_t i) const noexcept {
    return i < expiring_.size() ? expiring_[i] : nullptr;
  }

  /// The nodes after this one that the graph folded into it (Fusion): the operator computes
  /// their result too, and they pass their input on.
  [[nodiscard]] const Fusion& fusion() const noexcept { return fusion_; }

  /// Whether output `i` is wanted by the graph (present and not the empty name).
  [[nodiscard]] bool wants_output(std::size_t i) const noexcept {
    return static_cast<int>(i) < node().output_size() &&
           !node().output(static_cast<int>(i)).empty();
  }

  // --- errors (fail, a graph_error, comes from NodeAttributes) -----------------------------
  [[noreturn]] void fail_shape(const std::string& problem) const {
    throw shape_error(where() + ": " + problem);
  }
  [[noreturn]] void unsupported_type(DataType t, const std::string& supported) const {
    throw unsupported_error(unsupported_kind::data_type, to_string(t),
                            where() + ": unsupported data type " + to_string(t) +
                                " (supported here: " + supported + ")");
  }
  [[noreturn]] void unsupported_attribute(const std::string& what) const {
    throw unsupported_error(unsupported_kind::attribute, what, where() + ": unsupported " + what);
  }

  /// Normalizes an axis in [-rank, rank) to [0, rank).
  [[nodiscard]] std::size_t axis(std::int64_t a, std::size_t rank) const {
    const auto r = static_cast<std::int64_t>(rank);
    if (a < -r || a >= r) {
      fail("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    }
    return static_cast<std::size_t>(a < 0 ? a + r : a);
  }

 private:
  std::int64_t opset_;
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor*> expiring_;
  Fusion fusion_;
};

namespace ops {

/// Relu of one value (NaN gives 0): the Relu operator's and a fused Relu's (Conv), so that the
/// fusion changes no bit.
template <class T>
constexpr T relu_value(T x) noexcept {
  return x > 0 ? x : T{0};
}

/// An operator's one output. Not `return {t}`: a braced list copies its elements (they are
/// const in the initializer_list), which for a CNN's activations was a sixth of inference.
inline std::vector<Tensor> single_output(Tensor t) {
  std::vector<Tensor> out;
  out.push_back(std::move(t));
  return out;
}

/// Calls f(std::span<const T>) with t's elements when t's element type is in `allowed`; any
/// other type is an unsupported_error naming the node. f is instantiated for the types in
/// `allowed` only, so an operator pays in compile time for the types it takes, no more. f
/// returns the same type for every T.
template <TypeSet allowed, class F>
auto visit_types(const NodeContext& ctx, const Tensor& t, F&& f) {
  static_assert(!allowed.empty());
  using R = decltype(f(std::span<const type_of<allowed.first()>>{}));
  return dispatch(t.dtype(), [&](auto tag) -> R {
    using T = typename decltype(tag)::type;
    if constexpr (allowed.contains(data_type_of<T>())) {
      return f(t.data<T>());
    } else {
      ctx.unsupported_type(t.dtype(), allowed.names());
    }
  });
}

/// visit_types for float32 and float64.
template <class F>
auto visit_float(const NodeContext& ctx, const Tensor& t, F&& f) {
  return visit_types<types::floats>(ctx, t, std::forward<F>(f));
}

/// visit_types for every number type (not bool).
template <class F>
auto visit_numeric(const NodeContext& ctx, const Tensor& t, F&& f) {
  return visit_types<types::numbers>(ctx, t, std::forward<F>(f));
}

/// Fails unless the node has between `min` and `max` inputs (counting the optional ones given
/// as empty names): a wrong input count is a graph_error naming the node, never a crash.
inline void expect_inputs(const NodeContext& ctx, std::size_t min, std::size_t max) {
  const std::size_t n = ctx.input_count();
  if (n < min || n > max) {
    ctx.fail("expects " + (min == max ? std::to_string(min)
                                      : std::to_string(min) + " to " + std::to_string(max)) +
             " inputs, found " + std::to_string(n));
  }
}

/// Fails unless a and b have one element type.
inline void expect_same_type(const NodeContext& ctx, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) {
    ctx.fail(std::string("operands must have one element type, found ") + to_string(a.dtype()) +
             " and " + to_string(b.dtype()));
  }
}

/// The values of an integer tensor input (axes, shapes, indices, repeats) as int64; `what`
/// names it in errors. Any other element type is a graph_error naming the node.
inline std::vector<std::int64_t> int_values(const NodeContext& ctx, const Tensor& t,
                                            const char* what) {
  if (t.dtype() != DataType::int64 && t.dtype() != DataType::int32) {
    ctx.fail(std::string(what) + " must be an int64 or int32 tensor, found " +
             to_string(t.dtype()));
  }
  return t.to_vector<std::int64_t>();
}

/// numpy's broadcast of two shapes.
inline Shape broadcast_shape(const NodeContext& ctx, const Shape& a, const Shape& b) {
  const std::size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (std::size_t i = 0; i < r; ++i) {
    const std::int64_t da = i + a.size() >= r ? a[i + a.size() - r] : 1;
    const std::int64_t db = i + b.size() >= r ? b[i + b.size() - r] : 1;
    if (da != db && da != 1 && db != 1) {
      ctx.fail_shape("shapes " + shape_string(a) + " and " + shape_string(b) +
                     " do not broadcast");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

/// Strides of `shape` read as a broadcast operand of `out` (0 along broadcast dimensions).
inline Shape broadcast_strides(const Shape& shape, const Shape& out) {
  Shape s(out.size(), 0);
  const Shape own = strides_of(shape);
  const std::size_t offset = out.size() - shape.size();
  for (std::size_t i = 0; i < shape.size(); ++i) s[i + offset] = shape[i] == 1 ? 0 : own[i];
  return s;
}

/// out[k] = f(a[..], b[..]) over the broadcast shape `out_shape`. The innermost dimension runs
/// as a plain loop; the outer ones with an odometer.
template <class R, class A, class B, class F>
std::vector<R> broadcast_apply(const Shape& out_shape, const Shape& a_shape,
                               std::span<const A> a, const Shape& b_shape, std::span<const B> b,
                               F f) {
  const std::size_t n = element_count(out_shape);
  std::vector<R> out(n);
  if (n == 0) return out;
  if (a_shape == out_shape && b_shape == out_shape) {
    for (std::size_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
    return out;
  }
  if (out_shape.empty()) {
    out[0] = f(a[0], b[0]);
    return out;
  }
  const Shape sa = broadcast_strides(a_shape, out_shape);
  const Shape sb = broadcast_strides(b_shape, out_shape);
  const std::size_t r = out_shape.size();
  const auto inner = static_cast<std::size_t>(out_shape[r - 1]);
  const std::int64_t ia = sa[r - 1], ib = sb[r - 1];
  std::vector<std::int64_t> index(r, 0);
  std::int64_t pa = 0, pb = 0;
  for (std::size_t k = 0; k < n; k += inner) {
    for (std::size_t j = 0; j < inner; ++j) {
      const auto ja = static_cast<std::int64_t>(j);
      out[k + j] = f(a[static_cast<std::size_t>(pa + ja * ia)],
                     b[static_cast<std::size_t>(pb + ja * ib)]);
    }
    // Advance the odometer over the dimensions before the innermost one.
    for (std::size_t d = r - 1; d-- > 0;) {
      ++index[d];
      pa += sa[d];
      pb += sb[d];
      if (index[d] < out_shape[d]) break;
      pa -= sa[d] * index[d];
      pb -= sb[d] * index[d];
      index[d] = 0;
    }
  }
  return out;
}

/// Elementwise map preserving shape and type.
template <class T, class F>
Tensor map_values(const Tensor& x, std::span<const T> v, F f) {
  std::vector<T> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = f(v[i]);
  return Tensor(x.shape(), std::move(out));
}

/// Input `i` as a value: its storage taken when nothing reads it after this node
/// (NodeContext::expiring_input), else a copy.
inline Tensor take_input(const NodeContext& ctx, std::size_t i) {
  if (Tensor* own = ctx.expiring_input(i)) return std::move(*own);
  return ctx.input(i);
}

/// map_values of input `i`, in place when nothing reads that input after this node
/// (NodeContext::expiring_input): a chain of elementwise nodes then reuses one buffer.
template <class T, class F>
Tensor map_input_values(const NodeContext& ctx, std::size_t i, std::span<const T> v, F f) {
  if (Tensor* own = ctx.expiring_input(i); own != nullptr && own->holds<T>()) {
    for (T& e : own->values<T>()) e = f(e);
    return std::move(*own);
  }
  return map_values<T>(ctx.input(i), v, f);
}

/// The product of shape[begin, end).
inline std::int64_t product(const Shape& shape, std::size_t begin, std::size_t end) {
  std::int64_t p = 1;
  for (std::size_t i = begin; i < end; ++i) p *= shape[i];
  return p;
}

namespace detail {

/// One element converted as Cast does: to bool, nonzero is true; a float to an integer
/// truncates toward zero (NaN gives 0 and values out of range saturate, where C++ leaves the
/// conversion undefined); between integers, two's complement wrap-around.
template <class To, class From>
To cast_value(From x) {
  if constexpr (std::is_same_v<To, boolean>) {
    return x != From{};
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (std::isnan(x)) return To{0};
    if (x <= static_cast<From>(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
    if (x >= static_cast<From>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(x);
  } else {
    return static_cast<To>(x);
  }
}

}  // namespace detail

}  // namespace ops
}  // namespace onelearn::onnx
