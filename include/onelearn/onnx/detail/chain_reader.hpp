#pragma once
// ChainReader: what onnx::to_sequential and its layer importers (onnx/layers/) know about a
// graph besides the node being read: its constants (initializers, Constant nodes, and
// Transposes of constants folded once), the opset of the default domain, and which nodes read
// a value (to follow the chain and to check that nothing else does).

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "onelearn/onnx/detail/attributes.hpp"
#include "onelearn/onnx/errors.hpp"
#include "onelearn/onnx/load.hpp"
#include "onelearn/onnx/tensor.hpp"

namespace onelearn::onnx::detail {

class ChainReader {
 public:
  explicit ChainReader(const ::onnx::ModelProto& model) : graph_(model.graph()) {
    for (const auto& imp : model.opset_import()) {
      if (imp.domain().empty() || imp.domain() == "ai.onnx") opset_ = imp.version();
    }
    for (const auto& init : graph_.initializer()) {
      constants_.emplace(init.name(),
                         tensor_from_proto(init, "onnx: initializer '" + init.name() + "'"));
    }
    for (const auto& node : graph_.node()) {
      if (node.op_type() != "Constant") continue;
      if (node.output_size() != 1) {
        throw graph_error(describe(node) + ": expected one output (a Constant), found " +
                          std::to_string(node.output_size()));
      }
      for (const auto& a : node.attribute()) {
        if (a.name() == "value" && a.type() == ::onnx::AttributeProto::TENSOR) {
          constants_.emplace(node.output(0), tensor_from_proto(a.t(), describe(node)));
        } else if (a.name() == "value_ints") {
          std::vector<std::int64_t> v(a.ints().begin(), a.ints().end());
          const auto n = static_cast<std::int64_t>(v.size());
          constants_.emplace(node.output(0), Tensor({n}, std::move(v)));
        } else if (a.name() == "value_int") {
          constants_.emplace(node.output(0), Tensor({}, std::vector<std::int64_t>{a.i()}));
        } else if (a.name() == "value_floats") {
          std::vector<float> v(a.floats().begin(), a.floats().end());
          const auto n = static_cast<std::int64_t>(v.size());
          constants_.emplace(node.output(0), Tensor({n}, std::move(v)));
        } else if (a.name() == "value_float") {
          constants_.emplace(node.output(0), Tensor({}, std::vector<float>{a.f()}));
        } else {
          throw unsupported_error(unsupported_kind::attribute, a.name(),
                                  describe(node) + ": unsupported Constant attribute '" +
                                      a.name() + "'");
        }
      }
    }
    // Transposes of constants, folded (PyTorch 0.3 writes nn.Linear without bias as
    // Transpose(W) + MatMul).
    for (int n = 0; n < graph_.node_size(); ++n) {
      const auto& node = graph_.node(n);
      if (node.op_type() != "Transpose" || node.input_size() != 1 || node.output_size() != 1) {
        continue;
      }
      const auto it = constants_.find(node.input(0));
      if (it == constants_.end()) continue;
      const Tensor& t = it->second;
      const std::size_t rank = t.rank();
      std::vector<std::int64_t> perm(rank);
      for (std::size_t i = 0; i < rank; ++i) perm[i] = static_cast<std::int64_t>(rank - 1 - i);
      if (auto given = NodeAttributes(node).get_ints("perm")) perm = std::move(*given);
      std::vector<bool> seen(rank, false);
      bool valid = perm.size() == rank;
      for (std::size_t i = 0; valid && i < rank; ++i) {
        valid = perm[i] >= 0 && static_cast<std::size_t>(perm[i]) < rank &&
                !seen[static_cast<std::size_t>(perm[i])];
        if (valid) seen[static_cast<std::size_t>(perm[i])] = true;
      }
      if (!valid) throw graph_error(describe(node) + ": perm is not a permutation of the axes");
      Shape out_shape(rank);
      for (std::size_t i = 0; i < rank; ++i) {
        out_shape[i] = t.shape()[static_cast<std::size_t>(perm[i])];
      }
      const Shape in_strides = strides_of(t.shape());
      std::visit(
          [&](const auto& v) {
            using V = typename std::decay_t<decltype(v)>::value_type;
            std::vector<V> out(v.size());
            std::vector<std::int64_t> index(rank, 0);  // in the output
            for (std::size_t k = 0; k < out.size(); ++k) {
              std::int64_t source = 0;
              for (std::size_t i = 0; i < rank; ++i) {
                source += index[i] * in_strides[static_cast<std::size_t>(perm[i])];
              }
              out[k] = v[static_cast<std::size_t>(source)];
              for (std::size_t i = rank; i-- > 0;) {
                if (++index[i] < out_shape[i]) break;
                index[i] = 0;
              }
            }
            constants_.emplace(node.output(0), Tensor(out_shape, std::move(out)));
          },
          t.storage());
      folded_.push_back(n);
    }
  }

  /// Whether node n is computed here once (a Constant, or a Transpose of a constant) rather
  /// than being a layer.
  [[nodiscard]] bool is_folded(int n) const {
    return graph_.node(n).op_type() == "Constant" ||
           std::find(folded_.begin(), folded_.end(), n) != folded_.end();
  }

  static std::string describe(const ::onnx::NodeProto& node) {
    return NodeAttributes::describe(node);
  }

  [[nodiscard]] std::int64_t opset() const noexcept { return opset_; }
  [[nodiscard]] const ::onnx::GraphProto& graph() const noexcept { return graph_; }

  [[nodiscard]] bool is_constant(const std::string& name) const {
    return constants_.count(name) != 0;
  }

  /// Input `i` of `node`, which must be a constant; `what` names it in the error.
  [[nodiscard]] const Tensor& constant_input(const ::onnx::NodeProto& node, int i,
                                             const std::string& what) const {
    if (i >= node.input_size() || node.input(i).empty()) {
      throw graph_error(describe(node) + ": input " + std::to_string(i) + " (" + what +
                        ") is missing");
    }
    const auto it = constants_.find(node.input(i));
    if (it == constants_.end()) {
      throw graph_error(describe(node) + ": input '" + node.input(i) + "' (" + what +
                        ") is not a constant (an initializer or a Constant node); "
                        "to_sequential needs constant weights");
    }
    return it->second;
  }

  /// The constant `name`, or null when it is not one.
  [[nodiscard]] const Tensor* find_constant(const std::string& name) const {
    const auto it = constants_.find(name);
    return it == constants_.end() ? nullptr : &it->second;
  }

  /// The index of the node that produces `value`, or -1 (a graph input, an initializer).
  [[nodiscard]] int producer(const std::string& value) const {
    for (int n = 0; n < graph_.node_size(); ++n) {
      for (const auto& out : graph_.node(n).output())
        if (out == value) return n;
    }
    return -1;
  }

  [[nodiscard]] bool has_input(const ::onnx::NodeProto& node, int i) const {
    return i < node.input_size() && !node.input(i).empty();
  }

  /// The non-Constant nodes that read `value`.
  [[nodiscard]] std::vector<int> consumers(const std::string& value) const {
    std::vector<int> out;
    for (int n = 0; n < graph_.node_size(); ++n) {
      const auto& node = graph_.node(n);
      if (is_folded(n)) continue;
      for (const auto& in : node.input()) {
        if (in == value) {
          out.push_back(n);
          break;
        }
      }
    }
    return out;
  }

  [[nodiscard]] bool is_graph_output(const std::string& value) const {
    for (const auto& o : graph_.output())
      if (o.name() == value) return true;
    return false;
  }

 private:
  const ::onnx::GraphProto& graph_;
  std::int64_t opset_ = 1;
  std::map<std::string, Tensor> constants_;
  std::vector<int> folded_;
};

}  // namespace onelearn::onnx::detail
