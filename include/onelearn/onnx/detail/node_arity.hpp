#pragma once
// Every node's input and output counts within its operator's schema (ONNX's registry, at the
// model's opset for the node's domain), checked before onnx::to_estimator's readers, which take
// a node's inputs and outputs by position: a Sub with one input or a Constant without an
// output is a graph_error naming the node, not a read past the end. A node whose operator the
// registry does not know (or of a domain the model does not import) needs one output, and is
// left to the readers, which refuse it by name.

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <limits>
#include <map>
#include <string>

#include "onelearn/onnx/detail/attributes.hpp"
#include "onelearn/onnx/errors.hpp"

namespace onelearn::onnx::detail {

inline void check_node_arity(const ::onnx::ModelProto& model) {
  std::map<std::string, int> opsets;  // domain ("" for ai.onnx) -> version
  for (const auto& imp : model.opset_import()) {
    opsets[imp.domain() == "ai.onnx" ? "" : imp.domain()] = static_cast<int>(imp.version());
  }
  for (const auto& node : model.graph().node()) {
    const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
    const auto version = opsets.find(domain);
    const ::onnx::OpSchema* schema =
        version == opsets.end()
            ? nullptr
            : ::onnx::OpSchemaRegistry::Schema(node.op_type(), version->second, domain);
    if (schema == nullptr) {
      // No schema to hold it to (a domain the model does not import, an operator ONNX does not
      // know): at least the one output every operator the readers know has.
      if (node.output_size() < 1) {
        throw graph_error(NodeAttributes::describe(node) +
                          ": expected at least one output, found none");
      }
      continue;
    }
    const int inputs = node.input_size(), outputs = node.output_size();
    const auto range = [](int low, int high) {
      return high == std::numeric_limits<int>::max() ? std::to_string(low) + " or more"
                                                     : std::to_string(low) + ".." + std::to_string(high);
    };
    if (inputs < schema->min_input() || inputs > schema->max_input() ||
        outputs < schema->min_output() || outputs > schema->max_output()) {
      throw graph_error(NodeAttributes::describe(node) + ": expected " +
                        range(schema->min_input(), schema->max_input()) + " inputs and " +
                        range(schema->min_output(), schema->max_output()) + " outputs (opset " +
                        std::to_string(version->second) + "), found " + std::to_string(inputs) +
                        " and " + std::to_string(outputs));
    }
  }
}

}  // namespace onelearn::onnx::detail
