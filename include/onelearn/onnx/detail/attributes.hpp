#pragma once
// NodeAttributes: the one reader of an ONNX node's attributes (ints, floats, strings, lists of
// ints or floats), used by the operators of onelearn's executor (NodeContext, onnx/ops/common.hpp
// derives from it), by onnx::to_sequential's layer importers (onnx/layers/) and by
// onnx::to_estimator. An attribute that is absent gives the caller's fallback; one of another
// type is a graph_error naming the node ("onnx: node 'conv1' (Conv): attribute 'group' must be
// an int"). An attribute whose type is not set (UNDEFINED, as some hand-built graphs leave it)
// is read as the type asked for.

#include <onnx/onnx_pb.h>

#include <cstdint>
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
