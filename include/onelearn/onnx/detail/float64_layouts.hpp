#pragma once
// The float64 forms of onelearn's exported scalers and linear models, folded back into the
// ai.onnx.ml nodes of their float32 forms so that onnx::to_estimator reads both with one chain
// import. ONNX-ML's Scaler, LinearRegressor and LinearClassifier compute in float32 only, so a
// float64 export writes them in plain operators (onnx/export/preprocessing.hpp, linear.hpp,
// scores.hpp):
//   Scaler            Sub(x, offset) -> Mul(., scale)
//   LinearRegressor   MatMul(x, W^T) -> Add(., b)
//   LinearClassifier  MatMul(x, W^T) -> Add(., b) = d, with ArgMax(d) -> Gather(classes, .) the
//                     label, and the scores d itself, Sigmoid(d) or Softmax(d)
//                     (post_transform NONE, LOGISTIC, SOFTMAX)
// scikit-learn's converter writes its float64 linear models the same way (MatMul, Add). The
// folded node keeps the values in double as "<attribute>_as_tensor" TENSOR attributes (the
// convention of ai.onnx.ml opset 3's TreeEnsemble), which the chain readers prefer to the float
// lists (NodeAttributes::get_reals). Patterns are matched on constants and data flow only: a
// Sub whose constant is not one value per feature (KMeans' and GaussianNB's centres are k x p)
// is left alone.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "onelearn/onnx/detail/attribute_writers.hpp"
#include "onelearn/onnx/detail/attributes.hpp"
#include "onelearn/onnx/detail/chain_reader.hpp"
#include "onelearn/onnx/detail/plain_graph.hpp"
#include "onelearn/onnx/tensor.hpp"

namespace onelearn::onnx::detail {

/// `model` with the float64 layouts above folded into ai.onnx.ml nodes (a copy; unchanged
/// when it has none).
inline ::onnx::ModelProto fold_float64_layouts(const ::onnx::ModelProto& model) {
  const ChainReader graph(model);
  const ::onnx::GraphProto& g = model.graph();
  // A real constant's values in double, with its shape; nullopt otherwise (float32 files are
  // folded too: the folded node is the same whichever precision the file holds).
  const auto reals = [&](const std::string& name,
                         std::size_t rank) -> std::optional<std::pair<Shape, std::vector<double>>> {
    const Tensor* t = graph.find_constant(name);
    if (t == nullptr || t->rank() != rank || !is_real(*t)) return std::nullopt;
    return std::make_pair(t->shape(), real_values(*t));
  };
  // A node of op `op` with two inputs (one for ArgMax, Sigmoid and Softmax) and an output,
  // as every node the layouts are made of.
  const auto well_formed = [&](int n, const std::string& op) {
    const int inputs = op == "ArgMax" || op == "Sigmoid" || op == "Softmax" ? 1 : 2;
    return g.node(n).op_type() == op && g.node(n).input_size() == inputs &&
           g.node(n).output_size() >= 1;
  };
  // The one node that reads `value` (and is of op `op`), or -1.
  const auto only_consumer = [&](const std::string& value, const std::string& op) {
    const std::vector<int> readers = graph.consumers(value);
    return readers.size() == 1 && well_formed(readers[0], op) ? readers[0] : -1;
  };
  const auto consumer_of = [&](const std::string& value, const std::string& op) {
    for (const int n : graph.consumers(value))
      if (well_formed(n, op)) return n;
    return -1;
  };

  std::set<int> removed;
  std::vector<std::pair<int, ::onnx::NodeProto>> folded;  // (position, node)
  for (int i = 0; i < g.node_size(); ++i) {
    const ::onnx::NodeProto& n = g.node(i);
    if (removed.count(i) != 0 || n.input_size() != 2 || n.output_size() < 1 ||
        !(n.domain().empty() || n.domain() == "ai.onnx")) {
      continue;
    }
    if (n.op_type() == "Sub") {
      const auto offset = reals(n.input(1), 1);
      const int mul = only_consumer(n.output(0), "Mul");
      if (!offset || mul < 0) continue;
      const ::onnx::NodeProto& m = g.node(mul);
      const auto scale = reals(m.input(1), 1);
      if (m.input(0) != n.output(0) || !scale || scale->second.size() != offset->second.size()) {
        continue;
      }
      ::onnx::NodeProto scaler;
      scaler.set_op_type("Scaler");
      scaler.set_domain("ai.onnx.ml");
      scaler.set_name(n.name().empty() ? m.output(0) : n.name());
      scaler.add_input(n.input(0));
      scaler.add_output(m.output(0));
      set_double_values(scaler, "offset", offset->second);
      set_double_values(scaler, "scale", scale->second);
      removed.insert({i, mul});
      folded.emplace_back(i, std::move(scaler));
    } else if (n.op_type() == "MatMul") {
      const auto wt = reals(n.input(1), 2);  // p x k
      const int add = only_consumer(n.output(0), "Add");
      if (!wt || add < 0) continue;
      const ::onnx::NodeProto& a = g.node(add);
      const auto b = reals(a.input(1), 1);
      const std::int64_t p = wt->first[0], k = wt->first[1];
      if (a.input(0) != n.output(0) || !b || static_cast<std::int64_t>(b->second.size()) != k) {
        continue;
      }
      std::vector<double> coefficients(wt->second.size());  // k x p, row-major
      for (std::int64_t r = 0; r < k; ++r)
        for (std::int64_t c = 0; c < p; ++c)
          coefficients[static_cast<std::size_t>(r * p + c)] =
              wt->second[static_cast<std::size_t>(c * k + r)];
      const std::string& decision = a.output(0);
      ::onnx::NodeProto linear;
      linear.set_domain("ai.onnx.ml");
      linear.set_name(n.name().empty() ? decision : n.name());
      linear.add_input(n.input(0));
      const int argmax = consumer_of(decision, "ArgMax");
      const int gather = argmax < 0 ? -1 : only_consumer(g.node(argmax).output(0), "Gather");
      const Tensor* classes = gather < 0 ? nullptr : graph.find_constant(g.node(gather).input(0));
      if (classes != nullptr && classes->holds<std::int64_t>() &&
          static_cast<std::int64_t>(classes->size()) == k &&
          g.node(gather).input(1) == g.node(argmax).output(0)) {
        linear.set_op_type("LinearClassifier");
        std::string post = "NONE", scores = decision;
        for (const char* op : {"Sigmoid", "Softmax"}) {
          const int s = consumer_of(decision, op);
          if (s < 0) continue;
          post = std::string(op) == "Sigmoid" ? "LOGISTIC" : "SOFTMAX";
          scores = g.node(s).output(0);
          removed.insert(s);
        }
        linear.add_output(g.node(gather).output(0));
        linear.add_output(scores);
        set_attribute(linear, "classlabels_ints", classes->to_vector<std::int64_t>());
        set_attribute(linear, "post_transform", post);
        removed.insert({argmax, gather});
      } else {
        linear.set_op_type("LinearRegressor");
        linear.add_output(decision);
        set_attribute(linear, "targets", k);
      }
      set_double_values(linear, "coefficients", coefficients);
      set_double_values(linear, "intercepts", b->second);
      removed.insert({i, add});
      folded.emplace_back(i, std::move(linear));
    }
  }
  if (folded.empty()) return model;
  ::onnx::ModelProto out = model;
  auto* nodes = out.mutable_graph()->mutable_node();
  nodes->Clear();
  std::size_t next = 0;
  for (int i = 0; i < g.node_size(); ++i) {
    if (next < folded.size() && folded[next].first == i) *nodes->Add() = folded[next++].second;
    if (removed.count(i) == 0) *nodes->Add() = g.node(i);
  }
  return out;
}

}  // namespace onelearn::onnx::detail
