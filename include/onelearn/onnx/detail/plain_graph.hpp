#pragma once
// PlainGraph: what the readers of onelearn's plain-operator export layouts need to recognise a
// graph by its data flow from the features: the constants, the one graph input and its
// declared width, the producer of a value, and the nodes of one op.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/onnx/detail/attributes.hpp"
#include "onelearn/onnx/detail/chain_reader.hpp"
#include "onelearn/onnx/errors.hpp"
#include "onelearn/onnx/tensor.hpp"

namespace onelearn::onnx::detail {

/// Whether a tensor holds float32 or float64 values (the two precisions of an export).
inline bool is_real(const Tensor& t) { return t.holds<float>() || t.holds<double>(); }

/// A float32 or float64 tensor's values in double.
inline std::vector<double> real_values(const Tensor& t) {
  if (t.holds<double>()) return t.to_vector<double>();
  const std::vector<float> v = t.to_vector<float>();
  return {v.begin(), v.end()};
}

/// A model's graph as the readers of plain-operator layouts see it (transform_reader.hpp,
/// k_means_reader.hpp): its constants (ChainReader), its one input (the features), that
/// input's declared width, and who produces each value.
class PlainGraph {
 public:
  PlainGraph(const ::onnx::ModelProto& model, std::string_view target)
      : constants_(model),
        graph_(model.graph()),
        where_("onnx: onnx::to_estimator<" + std::string(target) + ">: ") {
    std::set<std::string> initializers;
    for (const auto& init : graph_.initializer()) initializers.insert(init.name());
    int inputs = 0;
    for (const auto& in : graph_.input()) {
      if (initializers.count(in.name()) != 0) continue;
      ++inputs;
      input_ = in.name();
      if (in.type().has_tensor_type() && in.type().tensor_type().has_shape()) {
        const auto& shape = in.type().tensor_type().shape();
        if (shape.dim_size() == 2 && shape.dim(1).has_dim_value())
          width_ = shape.dim(1).dim_value();
      }
    }
    if (inputs != 1) {
      fail("expected one graph input (the features), found " + std::to_string(inputs));
    }
  }

  [[noreturn]] void fail(const std::string& problem) const { throw graph_error(where_ + problem); }

  /// The features' declared width (the second dimension of the graph input), required.
  [[nodiscard]] std::int64_t width() const {
    if (width_ < 1) fail("the graph input '" + input_ + "' does not declare its width (N x p)");
    return width_;
  }
  [[nodiscard]] std::int64_t declared_width() const noexcept { return width_; }

  /// The nodes of op `op` in `domain` ("" is the default domain, also written "ai.onnx").
  [[nodiscard]] std::vector<const ::onnx::NodeProto*> nodes(std::string_view op,
                                                            std::string_view domain = "") const {
    std::vector<const ::onnx::NodeProto*> out;
    for (const auto& n : graph_.node()) {
      const bool in_domain =
          domain.empty() ? (n.domain().empty() || n.domain() == "ai.onnx") : n.domain() == domain;
      if (in_domain && n.op_type() == op) out.push_back(&n);
    }
    return out;
  }

  /// Whether `value` is the graph input, possibly through Identity and Cast to float32 or
  /// float64 nodes (as a converter may put in front of a model).
  [[nodiscard]] bool is_features(std::string value) const {
    for (int hops = 0; hops <= graph_.node_size(); ++hops) {
      if (value == input_) return true;
      const int p = constants_.producer(value);
      if (p < 0) return false;
      const ::onnx::NodeProto& n = graph_.node(p);
      const NodeAttributes attrs(n);
      const bool passes =
          n.op_type() == "Identity" ||
          (n.op_type() == "Cast" && (attrs.get_int("to", 0) == ::onnx::TensorProto::FLOAT ||
                                     attrs.get_int("to", 0) == ::onnx::TensorProto::DOUBLE));
      if (!passes || n.input_size() != 1) return false;
      value = n.input(0);
    }
    return false;
  }

  /// The node that produces `value`, or null.
  [[nodiscard]] const ::onnx::NodeProto* producer(const std::string& value) const {
    const int p = constants_.producer(value);
    return p < 0 ? nullptr : &graph_.node(p);
  }

  /// A node of op `op` that reads `value`, or null.
  [[nodiscard]] const ::onnx::NodeProto* consumer(const std::string& value,
                                                  std::string_view op) const {
    for (const int n : constants_.consumers(value)) {
      if (graph_.node(n).op_type() == op) return &graph_.node(n);
    }
    return nullptr;
  }

  /// A Sub of the features, unsqueezed to N x 1 x p, by k x p rows (input 1), and the Mul
  /// that squares the differences (null when they are not multiplied by themselves): how
  /// onnx/export/core.hpp's export_squared_differences starts KMeans' and GaussianNB's graphs.
  struct Differences {
    const ::onnx::NodeProto* sub;
    const ::onnx::NodeProto* square;
  };
  [[nodiscard]] std::vector<Differences> differences_of_features() const {
    std::vector<Differences> out;
    for (const auto* sub : nodes("Sub")) {
      const ::onnx::NodeProto* unsqueeze = sub->input_size() == 2 ? producer(sub->input(0)) : nullptr;
      if (unsqueeze == nullptr || unsqueeze->op_type() != "Unsqueeze" ||
          unsqueeze->input_size() < 1 || !is_features(unsqueeze->input(0))) {
        continue;
      }
      const ::onnx::NodeProto* square = consumer(sub->output(0), "Mul");
      const bool squared = square != nullptr && square->input_size() == 2 &&
                           square->input(0) == sub->output(0) &&
                           square->input(1) == sub->output(0);
      out.push_back({sub, squared ? square : nullptr});
    }
    return out;
  }

  /// The constants, producers and consumers of the whole graph.
  [[nodiscard]] const ChainReader& chain() const noexcept { return constants_; }

  /// The axes of a Reduce* node: its "axes" attribute (opsets before 13 for ReduceSum, 18 for
  /// the others) or its second input; nullopt when neither is a constant.
  [[nodiscard]] std::optional<std::vector<std::int64_t>> reduce_axes(
      const ::onnx::NodeProto& n) const {
    std::optional<std::vector<std::int64_t>> axes = NodeAttributes(n).get_ints("axes");
    if (!axes && n.input_size() > 1) axes = int64s(n.input(1));
    return axes;
  }

  /// The constant `name`, or null.
  [[nodiscard]] const Tensor* constant(const std::string& name) const {
    return constants_.find_constant(name);
  }

  /// A constant's values as double when it holds float32 or float64 (the export's two
  /// precisions); `expected_size` (-1: any) is checked. Null: not such a constant.
  [[nodiscard]] std::optional<std::vector<double>> reals(const std::string& name,
                                                         std::int64_t expected_size = -1) const {
    const Tensor* t = constants_.find_constant(name);
    if (t == nullptr || !is_real(*t)) return std::nullopt;
    if (expected_size >= 0 && static_cast<std::int64_t>(t->size()) != expected_size) {
      return std::nullopt;
    }
    return real_values(*t);
  }

  /// A constant's int64 values, or null.
  [[nodiscard]] std::optional<std::vector<std::int64_t>> int64s(const std::string& name) const {
    const Tensor* t = constants_.find_constant(name);
    if (t == nullptr || !t->holds<std::int64_t>()) return std::nullopt;
    return t->to_vector<std::int64_t>();
  }

  /// Whether node `n` works along axis 1 (its "axis" attribute, -1 counting as 1 on N x p).
  static bool along_columns(const ::onnx::NodeProto& n, std::int64_t fallback) {
    const std::int64_t axis = NodeAttributes(n).get_int("axis", fallback);
    return axis == 1 || axis == -1;
  }

 private:
  ChainReader constants_;
  const ::onnx::GraphProto& graph_;
  std::string where_;
  std::string input_;
  std::int64_t width_ = -1;
};

}  // namespace onelearn::onnx::detail
