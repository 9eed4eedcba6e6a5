#pragma once
// Reads back what onnx/export/neighbors.hpp writes for KNeighborsClassifier and
// KNeighborsRegressor, float32 or float64: the training rows (the Sub of the distance
// computation), n_neighbors (the TopK's K), the weights (the TopK's distances are read only for
// "distance" weights), and each row's class or target (the Gather on the TopK's indices). The
// graph is plain ONNX, so it is recognised by that data flow, not by value names: a graph that
// does not have it is a graph_error naming what is missing. skl2onnx writes k-NN models with a
// Scan loop or com.microsoft's CDist, which this does not read.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/onnx/detail/attributes.hpp"
#include "onelearn/onnx/detail/chain_reader.hpp"
#include "onelearn/onnx/detail/plain_graph.hpp"
#include "onelearn/onnx/errors.hpp"
#include "onelearn/onnx/tensor.hpp"

namespace onelearn::onnx::detail {

struct ReadNeighbours {
  std::vector<double> rows;  ///< n_rows x n_features, row-major (float32 or float64 in the file)
  std::int64_t n_rows = 0, n_features = 0;
  std::int64_t n_neighbors = 0;
  bool by_distance = false;          ///< weights "distance"
  std::vector<std::int64_t> labels;  ///< classifier: each row's label
  std::vector<double> targets;       ///< regressor: each row's target
};

inline ReadNeighbours read_neighbours(const ::onnx::ModelProto& model, bool classifier,
                                      std::string_view target) {
  const PlainGraph features(model, target);  // the graph input, and what comes from it
  const ChainReader& graph = features.chain();
  const std::string where = "onnx: onnx::to_estimator<" + std::string(target) + ">: ";
  const auto fail = [&](const std::string& problem) -> void {
    throw graph_error(where + problem + " (expected the layout onelearn's export writes: " +
                      "onnx/export/neighbors.hpp)");
  };
  const ::onnx::GraphProto& g = graph.graph();

  const ::onnx::NodeProto* top = nullptr;
  for (const auto& n : g.node()) {
    if (n.op_type() != "TopK") continue;
    if (top != nullptr) fail("more than one TopK node");
    top = &n;
  }
  if (top == nullptr) {
    fail("no TopK node (the neighbour search)");
    return {};
  }
  const NodeAttributes attrs(*top);
  const std::int64_t axis = attrs.get_int("axis", -1);
  if (attrs.get_int("largest", 1) != 0 || (axis != 1 && axis != -1) || top->output_size() != 2) {
    fail(ChainReader::describe(*top) + " is not the k smallest along axis 1");
  }
  ReadNeighbours out;
  const Tensor& k = graph.constant_input(*top, 1, "K");
  if (k.size() != 1 || !k.holds<std::int64_t>()) {
    fail(ChainReader::describe(*top) + ": K is not one int64");
  }
  out.n_neighbors = k.to_vector<std::int64_t>()[0];

  // The training rows: the Sub that the squared distances start from, reached through the
  // first inputs of Squeeze, MatMul (with ones) and Mul.
  std::string value = top->input(0);
  const Tensor* rows = nullptr;
  for (int depth = 0; depth < 8 && rows == nullptr; ++depth) {
    const int p = graph.producer(value);
    if (p < 0) break;
    const ::onnx::NodeProto& n = g.node(p);
    if (n.op_type() == "Sub" && n.input_size() == 2) {
      // From the features themselves (Unsqueeze of the graph input): a Sub of anything else
      // is not this model's (in a pipeline, a previous step's nodes left in front of it).
      const ::onnx::NodeProto* unsqueeze = features.producer(n.input(0));
      if (unsqueeze == nullptr || unsqueeze->op_type() != "Unsqueeze" ||
          unsqueeze->input_size() < 1 || !features.is_features(unsqueeze->input(0))) {
        fail(ChainReader::describe(n) +
             ": the training rows are not subtracted from the features (Unsqueeze of the graph "
             "input)");
      }
      rows = graph.find_constant(n.input(1));
      break;
    }
    if (n.input_size() == 0) break;
    value = n.input(0);
  }
  if (rows == nullptr || rows->rank() != 2 || !is_real(*rows)) {
    fail("no real training rows (an n x p constant subtracted from the input) before the TopK");
    return {};
  }
  out.n_rows = rows->shape()[0];
  out.n_features = rows->shape()[1];
  if (features.declared_width() > 0 && features.declared_width() != out.n_features) {
    throw shape_error("onnx: onnx::to_estimator<" + std::string(target) + ">: training rows of " +
                      std::to_string(out.n_features) + " features, the graph input has " +
                      std::to_string(features.declared_width()));
  }
  out.rows = real_values(*rows);
  if (out.n_neighbors < 1 || out.n_neighbors > out.n_rows) {
    fail("K = " + std::to_string(out.n_neighbors) + " outside 1.." + std::to_string(out.n_rows) +
         " (the training rows)");
  }
  out.by_distance = !graph.consumers(top->output(0)).empty();

  // Each row's class index or target: the Gather whose indices are the TopK's.
  const Tensor* per_row = nullptr;
  for (const int c : graph.consumers(top->output(1))) {
    const ::onnx::NodeProto& n = g.node(c);
    if (n.op_type() == "Gather" && n.input_size() == 2 && n.input(1) == top->output(1)) {
      per_row = graph.find_constant(n.input(0));
    }
  }
  if (per_row == nullptr || per_row->rank() != 1 ||
      (classifier ? !per_row->holds<std::int64_t>() : !is_real(*per_row)) ||
      per_row->shape()[0] != out.n_rows) {
    fail(std::string("no Gather of the neighbours' ") +
         (classifier ? "class indices (int64" : "targets (real") + ", one per training row)");
    return {};
  }
  if (!classifier) {
    out.targets = real_values(*per_row);
    return out;
  }
  // The classes: the constant the "label" output is gathered from.
  const Tensor* classes = nullptr;
  for (const auto& n : g.node()) {
    if (n.op_type() == "Gather" && n.output_size() == 1 && n.output(0) == "label" &&
        n.input_size() == 2) {
      classes = graph.find_constant(n.input(0));
    }
  }
  if (classes == nullptr || classes->rank() != 1 || !classes->holds<std::int64_t>()) {
    fail("no int64 classes gathered into the output \"label\"");
    return {};
  }
  const std::vector<std::int64_t> class_values = classes->to_vector<std::int64_t>();
  const auto n_classes = static_cast<std::int64_t>(class_values.size());
  for (const std::int64_t c : per_row->to_vector<std::int64_t>()) {
    if (c < 0 || c >= n_classes) {
      fail("a row's class index " + std::to_string(c) + " outside 0.." +
           std::to_string(n_classes - 1));
    }
    out.labels.push_back(class_values[static_cast<std::size_t>(c)]);
  }
  return out;
}

}  // namespace onelearn::onnx::detail
