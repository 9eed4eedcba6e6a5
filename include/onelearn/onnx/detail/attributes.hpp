#pragma once
// NodeAttributes: the one reader of an ONNX node's attributes (ints, floats, strings, lists of
// ints or floats), used by the operators of onelearn's executor (NodeContext, onnx/ops/common.hpp
// derives from it), by onnx::to_sequential's layer importers (onnx/layers/) and by
// onnx::to_estimator. An attribute that is absent gives the caller's fallback; one of another
// type is a graph_error naming the node ("onnx: node 'conv1' (Conv): attribute 'group' must be
// an int"). An attribute whose type is not set (UNDEFINED, as some hand-built graphs leave it)
// is read as the type asked for. get_reals reads a real list in double where the node holds it
// as "<name>_as_tensor" (ai.onnx.ml opset 3's double thresholds, leaf weights and base values).

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "onelearn/onnx/errors.hpp"

namespace onelearn::onnx {

class NodeAttributes {
 public:
  explicit NodeAttributes(const ::onnx::NodeProto& node) : node_(node) {}

  [[nodiscard]] const ::onnx::NodeProto& node() const noexcept { return node_; }

  /// "onnx: node 'conv1' (Conv)": how every message about a node starts (the node's first
  /// output stands for a node without a name).
  [[nodiscard]] std::string where() const { return describe(node_); }
  static std::string describe(const ::onnx::NodeProto& node) {
    return "onnx: node '" + (node.name().empty() ? first_output(node) : node.name()) + "' (" +
           node.op_type() + ")";
  }

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
  [[nodiscard]] std::vector<std::string> get_strings(const std::string& name) const {
    const auto* a = attribute(name);
    if (a == nullptr) return {};
    expect(*a, ::onnx::AttributeProto::STRINGS, "a list of strings");
    return std::vector<std::string>(a->strings().begin(), a->strings().end());
  }
  [[nodiscard]] std::vector<float> get_floats(const std::string& name) const {
    const auto* a = attribute(name);
    if (a == nullptr) return {};
    expect(*a, ::onnx::AttributeProto::FLOATS, "a list of floats");
    return std::vector<float>(a->floats().begin(), a->floats().end());
  }

  /// The values of a real-list attribute: "<name>_as_tensor" (a 1-d DOUBLE or FLOAT tensor,
  /// values listed or raw little-endian bytes) when the node has it, else the float list
  /// "<name>"; empty when neither is present.
  [[nodiscard]] std::vector<double> get_reals(const std::string& name) const {
    const auto* a = attribute(name + "_as_tensor");
    if (a == nullptr) {
      const std::vector<float> values = get_floats(name);
      return {values.begin(), values.end()};
    }
    expect(*a, ::onnx::AttributeProto::TENSOR, "a tensor");
    const ::onnx::TensorProto& t = a->t();
    const bool is_double = t.data_type() == ::onnx::TensorProto::DOUBLE;
    if (!is_double && t.data_type() != ::onnx::TensorProto::FLOAT) {
      fail("attribute '" + a->name() + "' must hold float or double values, found element type " +
           std::to_string(t.data_type()));
    }
    if (t.has_raw_data()) {
      const std::string& bytes = t.raw_data();
      const std::size_t width = is_double ? sizeof(double) : sizeof(float);
      if (bytes.size() % width != 0) {
        fail("attribute '" + a->name() + "' has " + std::to_string(bytes.size()) +
             " raw bytes, not a whole number of " + std::to_string(width) + "-byte values");
      }
      std::vector<double> values(bytes.size() / width);
      for (std::size_t i = 0; i < values.size(); ++i) {
        if (is_double) {
          std::memcpy(&values[i], bytes.data() + i * width, width);
        } else {
          float f = 0;
          std::memcpy(&f, bytes.data() + i * width, width);
          values[i] = f;
        }
      }
      return values;
    }
    if (is_double) return {t.double_data().begin(), t.double_data().end()};
    return {t.float_data().begin(), t.float_data().end()};
  }

  /// A graph_error "<where>: <problem>".
  [[noreturn]] void fail(const std::string& problem) const {
    throw graph_error(where() + ": " + problem);
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
};

}  // namespace onelearn::onnx
