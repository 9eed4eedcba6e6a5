#pragma once
// What every operator implementation sees: the node (attributes, names), the opset of its
// domain, its input tensors, and helpers that raise errors naming the node and the op.
// Also the element-type dispatch and numpy broadcasting that several op families share.

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "onelearn/onnx/errors.hpp"
#include "onelearn/onnx/load.hpp"
#include "onelearn/onnx/tensor.hpp"

namespace onelearn::onnx {

class NodeContext {
 public:
  NodeContext(const ::onnx::NodeProto& node, std::int64_t opset, std::vector<const Tensor*> inputs)
      : node_(node), opset_(opset), inputs_(std::move(inputs)) {}

  [[nodiscard]] const ::onnx::NodeProto& node() const noexcept { return node_; }
  [[nodiscard]] std::int64_t opset() const noexcept { return opset_; }
  [[nodiscard]] const std::string& op() const noexcept { return node_.op_type(); }

  /// "node 'conv1' (Conv)": how every message starts.
  [[nodiscard]] std::string where() const { return describe(node_); }
  static std::string describe(const ::onnx::NodeProto& node) {
    return "onnx: node '" + (node.name().empty() ? first_output(node) : node.name()) + "' (" +
           node.op_type() + ")";
  }

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
  /// Whether output `i` is wanted by the graph (present and not the empty name).
  [[nodiscard]] bool wants_output(std::size_t i) const noexcept {
    return static_cast<int>(i) < node_.output_size() && !node_.output(static_cast<int>(i)).empty();
  }

  // --- attributes -------------------------------------------------------------------------
  [[nodiscard]] const ::onnx::AttributeProto* attribute(const std::string& name) const {
    for (const auto& a : node_.attribute())
      if (a.name() == name) return &a;
    return nullptr;
  }
  [[nodiscard]] bool has(const std::string& name) const { return attribute(name) != nullptr; }
  [[nodiscard]] std::int64_t get_int(const std::string& name, std::int64_t fallback) const {
    const auto* a = attribute(name);
    if (a == nullptr) return fallback;
    expect(*a, ::onnx::AttributeProto::INT, "an int");
    return a->i();
  }
  [[nodiscard]] std::int64_t require_int(const std::string& name) const {
    if (!has(name)) fail("attribute '" + name + "' is required");
    return get_int(name, 0);
  }
  [[nodiscard]] float get_float(const std::string& name, float fallback) const {
    const auto* a = attribute(name);
    if (a == nullptr) return fallback;
    expect(*a, ::onnx::AttributeProto::FLOAT, "a float");
    return a->f();
  }
  [[nodiscard]] std::string get_string(const std::string& name, std::string fallback) const {
    const auto* a = attribute(name);
    if (a == nullptr) return fallback;
    expect(*a, ::onnx::AttributeProto::STRING, "a string");
    return a->s();
  }
  [[nodiscard]] std::optional<std::vector<std::int64_t>> get_ints(const std::string& name) const {
    const auto* a = attribute(name);
    if (a == nullptr) return std::nullopt;
    expect(*a, ::onnx::AttributeProto::INTS, "a list of ints");
    return std::vector<std::int64_t>(a->ints().begin(), a->ints().end());
  }
  [[nodiscard]] std::vector<float> get_floats(const std::string& name) const {
    const auto* a = attribute(name);
    if (a == nullptr) return {};
    expect(*a, ::onnx::AttributeProto::FLOATS, "a list of floats");
    return std::vector<float>(a->floats().begin(), a->floats().end());
  }

  // --- errors -----------------------------------------------------------------------------
  [[noreturn]] void fail(const std::string& problem) const {
    throw graph_error(where() + ": " + problem);
  }
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
  static std::string first_output(const ::onnx::NodeProto& node) {
    return node.output_size() > 0 ? node.output(0) : std::string("?");
  }
  void expect(const ::onnx::AttributeProto& a, ::onnx::AttributeProto::AttributeType type,
              const char* what) const {
    if (a.type() != type && a.type() != ::onnx::AttributeProto::UNDEFINED) {
      fail("attribute '" + a.name() + "' must be " + what);
    }
  }

  const ::onnx::NodeProto& node_;
  std::int64_t opset_;
  std::vector<const Tensor*> inputs_;
};

namespace ops {

/// Calls f(std::span<const T>) with the tensor's elements, T float or double; any other type is
/// an unsupported_error naming the node.
template <class F>
decltype(auto) visit_float(const NodeContext& ctx, const Tensor& t, F&& f) {
  switch (t.dtype()) {
    case DataType::float32: return f(t.data<float>());
    case DataType::float64: return f(t.data<double>());
    default: ctx.unsupported_type(t.dtype(), "float32, float64");
  }
}

/// Same for float, double and int64.
template <class F>
decltype(auto) visit_numeric(const Tensor& t, F&& f) {
  switch (t.dtype()) {
    case DataType::float32: return f(t.data<float>());
    case DataType::float64: return f(t.data<double>());
    case DataType::int64: break;
  }
  return f(t.data<std::int64_t>());
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

/// The product of shape[begin, end).
inline std::int64_t product(const Shape& shape, std::size_t begin, std::size_t end) {
  std::int64_t p = 1;
  for (std::size_t i = begin; i < end; ++i) p *= shape[i];
  return p;
}

}  // namespace ops
}  // namespace onelearn::onnx
