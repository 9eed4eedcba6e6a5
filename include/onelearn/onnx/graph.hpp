#pragma once
/**
 * \class onelearn::onnx::Graph
 * \brief Runs an ONNX model, checked and ordered before it runs.
 * \ingroup onnx
 *
 * \code
 * #include <onelearn/onnx/graph.hpp>
 * onelearn::onnx::Graph g = onelearn::onnx::load("mlp.onnx");
 * onelearn::onnx::Tensor x({1, 4}, std::vector<float>{5.1f, 3.5f, 1.4f, 0.2f});
 * std::vector<onelearn::onnx::Tensor> y = g.run({x});   // in graph-output order
 * std::cout << g.inputs()[0].name << ' ' << onelearn::onnx::shape_string(y[0].shape()) << '\n';
 * \endcode
 *
 * onnx::Graph: runs an ONNX model. Built from a ModelProto, it checks everything it can before
 * running (operators, opsets, data types, that every input of every node is provided) and
 * orders the nodes topologically, so any DAG runs whatever order the file lists the nodes in.
 * Initializers, several graph inputs and outputs, Constant nodes are supported.
 *
 * From a graph to a trainable model: `onnx::to_sequential<T>(graph)` (onnx/to_sequential.hpp)
 * turns a chain of layers (PyTorch's MLPs and CNNs, onelearn's own exports) into a built
 * `nn::Sequential<T>`; `onnx::to_estimator<E>(model)` (onnx/to_estimator.hpp) turns an ONNX-ML
 * model (skl2onnx's or onelearn's) into the fitted estimator E.
 *
 * Operators: the table in `ops/registry.hpp` (default domain, opsets 1 to 17; ai.onnx.ml 1 to
 * 3), documented in `docs/onnx-operators.md`, which `onelearn-onnx ops --markdown` generates
 * from it. Element types: those of onnx/tensor.hpp (float32, float64, int64, int32, int8,
 * uint8, bool); each operator's first input is checked against the types it registers before
 * it runs.
 *
 * Fusion: a Conv whose output only a Relu reads, and a 2x2 / stride 2 MaxPool that alone reads
 * the result, run as one node (the Conv computes them; the same bits as run apart). Making the
 * intermediate value a graph output, or reading it elsewhere, keeps them apart.
 *
 * Errors (onnx/errors.hpp), each naming the node, the op and the problem:
 * - `unsupported_error`: an operator, opset, data type or attribute value outside that list;
 * - `graph_error`: a node input nothing provides (a missing initializer), a cycle, a graph
 *   output no node produces, a bad attribute, a wrong number of inputs to run;
 * - `shape_error`: an input whose shape or element type disagrees with the graph's
 *   declaration, operands whose shapes do not fit;
 * - `format_error`: (load) a truncated or malformed file.
 */

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "onelearn/onnx/errors.hpp"
#include "onelearn/onnx/load.hpp"
#include "onelearn/onnx/ops/common.hpp"
#include "onelearn/onnx/ops/registry.hpp"
#include "onelearn/onnx/tensor.hpp"

namespace onelearn::onnx {

inline constexpr std::string_view onnx_ml_domain = "ai.onnx.ml";

/// The operators (ops/registry.hpp) by key: "Op" for the default domain, "ai.onnx.ml:Op" for
/// ONNX-ML.
inline const std::unordered_map<std::string, const OperatorInfo*>& operator_table() {
  static const std::unordered_map<std::string, const OperatorInfo*> table = [] {
    std::unordered_map<std::string, const OperatorInfo*> t;
    for (const OperatorInfo& op : operators()) t.emplace(std::string(op.name), &op);
    return t;
  }();
  return table;
}

/// A graph input or output as the model declares it.
struct ValueInfo {
  std::string name;
  DataType dtype = DataType::float32;
  bool has_shape = false;
  Shape dims;                          ///< -1 where the dimension is symbolic or unknown
  std::vector<std::string> dim_names;  ///< the symbolic names ("N"), empty where fixed

  /// "float32 (N, 3, 224, 224)"
  [[nodiscard]] std::string describe() const {
    std::string s = std::string(to_string(dtype)) + " ";
    if (!has_shape) return s + "(shape unknown)";
    s += "(";
    for (std::size_t i = 0; i < dims.size(); ++i) {
      if (i > 0) s += ", ";
      s += dims[i] >= 0 ? std::to_string(dims[i]) : (dim_names[i].empty() ? "?" : dim_names[i]);
    }
    return s + (dims.size() == 1 ? ",)" : ")");
  }
};

class Graph {
 public:
  /// Checks and prepares `model`; `where` (a file name) prefixes the errors about the model
  /// as a whole.
  explicit Graph(::onnx::ModelProto model, const std::string& where = "onnx model")
      : model_(std::make_shared<const ::onnx::ModelProto>(std::move(model))) {
    prepare(where);
  }

  [[nodiscard]] const std::vector<ValueInfo>& inputs() const noexcept { return inputs_; }
  [[nodiscard]] const std::vector<ValueInfo>& outputs() const noexcept { return outputs_; }
  /// Opset version per domain ("" is the default domain ai.onnx).
  [[nodiscard]] const std::map<std::string, std::int64_t>& opsets() const noexcept {
    return opsets_;
  }
  [[nodiscard]] const ::onnx::ModelProto& proto() const noexcept { return *model_; }
  /// How many nodes of each operator the graph has ("ai.onnx.ml:Scaler" for ONNX-ML).
  [[nodiscard]] std::map<std::string, int> op_counts() const {
    std::map<std::string, int> counts;
    for (const auto& node : model_->graph().node()) ++counts[op_key(node)];
    return counts;
  }

  /// Runs the graph on `inputs` in the order of inputs() and returns the outputs in the order
  /// of outputs().
  [[nodiscard]] std::vector<Tensor> run(const std::vector<Tensor>& inputs) const {
    if (inputs.size() != inputs_.size()) {
      throw graph_error("onnx: the graph has " + std::to_string(inputs_.size()) +
                        " inputs, run was given " + std::to_string(inputs.size()));
    }
    std::vector<const Tensor*> slots(slot_count_, nullptr);
    for (std::size_t i = 0; i < initializers_.size(); ++i) {
      slots[initializer_slots_[i]] = &initializers_[i];
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      check_input(inputs_[i], inputs[i]);
      slots[input_slots_[i]] = &inputs[i];
    }
    std::vector<Tensor> produced(slot_count_);
    for (const Step& step : steps_) {
      const auto index = static_cast<std::size_t>(&step - steps_.data());
      std::vector<const Tensor*> args;
      args.reserve(step.inputs.size());
      for (const std::optional<std::size_t> s : step.inputs) args.push_back(s ? slots[*s] : nullptr);
      std::vector<Tensor*> expiring(step.inputs.size(), nullptr);
      for (const std::size_t s : release_after_[index]) {
        const auto readers = std::count(step.inputs.begin(), step.inputs.end(), std::optional{s});
        const auto at = std::find(step.inputs.begin(), step.inputs.end(), std::optional{s});
        if (readers == 1) expiring[static_cast<std::size_t>(at - step.inputs.begin())] = &produced[s];
      }
      const NodeContext ctx(*step.node, step.opset, std::move(args), std::move(expiring),
                            step.fusion);
      const TypeSet& types = step.op->types;
      if (!types.empty() && ctx.has_input(0) && !types.contains(ctx.input(0).dtype())) {
        ctx.unsupported_type(ctx.input(0).dtype(), types.names());
      }
      std::vector<Tensor> results;
      try {
        if (step.passes_input) results.push_back(ops::take_input(ctx, 0));
        else results = step.op->fn(ctx);
      } catch (const shape_error& e) {
        // Errors raised below the operator (element_count refusing a size, say) get the node.
        std::string_view what = e.what();
        if (what.rfind(ctx.where(), 0) == 0) throw;
        if (what.rfind("onnx: ", 0) == 0) what.remove_prefix(6);
        throw shape_error(ctx.where() + ": " + std::string(what));
      }
      for (std::size_t k = 0; k < step.outputs.size(); ++k) {
        if (!step.outputs[k]) continue;
        if (k >= results.size()) ctx.fail("output " + std::to_string(k) + " is not produced");
        produced[*step.outputs[k]] = std::move(results[k]);
        slots[*step.outputs[k]] = &produced[*step.outputs[k]];
      }
      for (const std::size_t s : release_after_[index]) {
        produced[s] = Tensor();
        slots[s] = nullptr;
      }
    }
    std::vector<Tensor> out;
    out.reserve(output_slots_.size());
    for (const std::size_t s : output_slots_) out.push_back(*slots[s]);
    return out;
  }

  /// Runs the graph on inputs given by name; returns the outputs by name.
  [[nodiscard]] std::map<std::string, Tensor> run_named(
      const std::map<std::string, Tensor>& named) const {
    std::vector<Tensor> ordered;
    for (const ValueInfo& in : inputs_) {
      const auto it = named.find(in.name);
      if (it == named.end()) throw graph_error("onnx: input '" + in.name + "' is not given");
      ordered.push_back(it->second);
    }
    if (named.size() != inputs_.size()) {
      for (const auto& [name, t] : named) {
        bool known = false;
        for (const ValueInfo& in : inputs_) known = known || in.name == name;
        if (!known) throw graph_error("onnx: the graph has no input '" + name + "'");
      }
    }
    std::vector<Tensor> results = run(ordered);
    std::map<std::string, Tensor> out;
    for (std::size_t i = 0; i < results.size(); ++i) out[outputs_[i].name] = std::move(results[i]);
    return out;
  }

 private:
  struct Step {
    const ::onnx::NodeProto* node;
    const OperatorInfo* op;
    std::int64_t opset;
    std::vector<std::optional<std::size_t>> inputs;   // nullopt: optional input not given
    std::vector<std::optional<std::size_t>> outputs;  // nullopt: output not wanted
    Fusion fusion;              // what this Conv computes of the nodes after it
    bool passes_input = false;  // a node fused into an earlier one: its input handed on
  };

  static std::string domain_of(const ::onnx::NodeProto& node) {
    return node.domain() == "ai.onnx" ? std::string() : node.domain();
  }
  static std::string op_key(const ::onnx::NodeProto& node) {
    const std::string d = domain_of(node);
    return d.empty() ? node.op_type() : d + ":" + node.op_type();
  }

  static ValueInfo value_info(const ::onnx::ValueInfoProto& v, const std::string& what) {
    ValueInfo info;
    info.name = v.name();
    const std::string where = "onnx: " + what + " '" + v.name() + "'";
    if (!v.has_type() || !v.type().has_tensor_type()) {
      const std::string kind = !v.has_type()                     ? "unknown"
                               : v.type().has_sequence_type()    ? "sequence"
                               : v.type().has_map_type()         ? "map"
                               : v.type().has_optional_type()    ? "optional"
                               : v.type().has_sparse_tensor_type() ? "sparse tensor"
                                                                   : "non-tensor";
      throw unsupported_error(unsupported_kind::data_type, kind,
                              where + ": unsupported data type " + kind + " (only tensors)");
    }
    const auto& tt = v.type().tensor_type();
    info.dtype = data_type_from_onnx(tt.elem_type(), where);
    if (tt.has_shape()) {
      info.has_shape = true;
      for (const auto& d : tt.shape().dim()) {
        info.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
        info.dim_names.push_back(d.has_dim_param() ? d.dim_param() : std::string());
      }
    }
    return info;
  }

  static void check_input(const ValueInfo& info, const Tensor& t) {
    if (t.dtype() != info.dtype) {
      throw shape_error("onnx: input '" + info.name + "': expected element type " +
                        to_string(info.dtype) + ", found " + to_string(t.dtype()));
    }
    if (!info.has_shape) return;
    bool ok = t.rank() == info.dims.size();
    for (std::size_t d = 0; ok && d < info.dims.size(); ++d) {
      ok = info.dims[d] < 0 || info.dims[d] == t.shape()[d];
    }
    if (!ok) {
      throw shape_error("onnx: input '" + info.name + "': expected shape " +
                        info.describe().substr(std::string(to_string(info.dtype)).size() + 1) +
                        ", found " + shape_string(t.shape()));
    }
  }

  void prepare(const std::string& where) {
    const auto& graph = model_->graph();
    // Opsets. IR version 3 and earlier models may omit the import: opset 1 is meant.
    for (const auto& imp : model_->opset_import()) {
      const std::string d = imp.domain() == "ai.onnx" ? std::string() : imp.domain();
      opsets_[d] = imp.version();
    }
    if (opsets_.empty()) opsets_[""] = 1;
    const auto& table = operator_table();
    // 1. Every operator known, in a supported opset: before the data types, so that a model
    //    with both problems is reported for the operator.
    for (const auto& node : graph.node()) {
      const std::string domain = domain_of(node);
      if (table.find(op_key(node)) == table.end()) {
        throw unsupported_error(unsupported_kind::op, node.op_type(),
                                NodeContext::describe(node) + ": unsupported operator " +
                                    node.op_type() + " (domain " +
                                    (domain.empty() ? std::string("ai.onnx") : domain) + ")");
      }
      const auto it = opsets_.find(domain);
      if (it == opsets_.end()) {
        throw graph_error(NodeContext::describe(node) + ": the model imports no opset for domain " +
                          (domain.empty() ? std::string("ai.onnx") : domain));
      }
      const std::int64_t max = domain.empty() ? max_onnx_opset : max_onnx_ml_opset;
      if (it->second < 1 || it->second > max) {
        const std::string opset = (domain.empty() ? "ai.onnx " : domain + " ") +
                                  std::to_string(it->second);
        throw unsupported_error(unsupported_kind::opset, opset,
                                NodeContext::describe(node) + ": unsupported opset " + opset +
                                    " (supported: 1 to " + std::to_string(max) + ")");
      }
    }
    // 2. Values: initializers, graph inputs (those without an initializer), node outputs.
    std::unordered_map<std::string, std::size_t> slot;
    const auto new_slot = [&](const std::string& name) {
      const auto [it, fresh] = slot.emplace(name, slot_count_);
      if (fresh) ++slot_count_;
      return it->second;
    };
    const auto consumer_of = [&](const std::string& name) -> std::string {
      for (const auto& node : graph.node())
        for (const auto& in : node.input())
          if (in == name) return " (input of " + NodeContext::describe(node).substr(6) + ")";
      return "";
    };
    for (const auto& init : graph.initializer()) {
      const std::string what = "onnx: initializer '" + init.name() + "'" + consumer_of(init.name());
      initializers_.push_back(tensor_from_proto(init, what));
      initializer_slots_.push_back(new_slot(init.name()));
    }
    if (graph.sparse_initializer_size() > 0) {
      throw unsupported_error(unsupported_kind::attribute, "sparse initializers",
                              where + ": sparse initializers are not supported");
    }
    for (const auto& in : graph.input()) {
      if (slot.count(in.name()) != 0) continue;  // an initializer listed as input (IR < 4)
      inputs_.push_back(value_info(in, "graph input"));
      input_slots_.push_back(new_slot(in.name()));
    }
    for (const auto& out : graph.output()) outputs_.push_back(value_info(out, "graph output"));
    // 3. Topological order (Kahn): a node runs once all its inputs exist.
    std::vector<bool> available(slot_count_, true);
    std::vector<bool> done(static_cast<std::size_t>(graph.node_size()), false);
    std::unordered_map<std::string, bool> ready_name;
    for (const auto& [name, s] : slot) ready_name[name] = true;
    std::size_t remaining = done.size();
    bool progress = true;
    while (remaining > 0 && progress) {
      progress = false;
      for (int n = 0; n < graph.node_size(); ++n) {
        if (done[static_cast<std::size_t>(n)]) continue;
        const auto& node = graph.node(n);
        bool ready = true;
        for (const auto& in : node.input()) ready = ready && (in.empty() || ready_name.count(in) != 0);
        if (!ready) continue;
        Step step{&node, table.at(op_key(node)), opsets_.at(domain_of(node)), {}, {}, {}, false};
        for (const auto& in : node.input()) {
          step.inputs.push_back(in.empty() ? std::nullopt : std::optional(slot.at(in)));
        }
        for (const auto& out : node.output()) {
          if (out.empty()) {
            step.outputs.emplace_back(std::nullopt);
            continue;
          }
          if (ready_name.count(out) != 0) {
            throw graph_error(NodeContext::describe(node) + ": output '" + out +
                              "' is already produced by another node, an initializer or a "
                              "graph input");
          }
          step.outputs.emplace_back(new_slot(out));
          ready_name[out] = true;
        }
        steps_.push_back(std::move(step));
        done[static_cast<std::size_t>(n)] = true;
        --remaining;
        progress = true;
      }
    }
    if (remaining > 0) {
      std::unordered_map<std::string, bool> produced_anywhere = ready_name;
      for (const auto& node : graph.node())
        for (const auto& out : node.output()) produced_anywhere[out] = true;
      for (int n = 0; n < graph.node_size(); ++n) {
        if (done[static_cast<std::size_t>(n)]) continue;
        for (const auto& in : graph.node(n).input()) {
          if (!in.empty() && produced_anywhere.count(in) == 0) {
            throw graph_error(NodeContext::describe(graph.node(n)) + ": input '" + in +
                              "' is not a graph input, an initializer or another node's output "
                              "(missing initializer?)");
          }
        }
      }
      for (int n = 0; n < graph.node_size(); ++n) {
        if (!done[static_cast<std::size_t>(n)]) {
          throw graph_error(NodeContext::describe(graph.node(n)) +
                            ": the graph has a cycle through this node");
        }
      }
    }
    for (const ValueInfo& out : outputs_) {
      const auto it = slot.find(out.name);
      if (it == slot.end()) {
        throw graph_error("onnx: graph output '" + out.name + "' is produced by no node");
      }
      output_slots_.push_back(it->second);
    }
    // 4. When each node output is last needed: released then, so a run holds only the tensors
    // still to be read (a network's activations one or two at a time, not all of them) and the
    // allocator hands the freed blocks to the next nodes instead of fresh pages.
    std::vector<std::optional<std::size_t>> last_use(slot_count_);
    for (std::size_t i = 0; i < steps_.size(); ++i) {
      for (const auto& s : steps_[i].outputs) if (s) last_use[*s] = i;  // unread: freed at once
      for (const auto& s : steps_[i].inputs) if (s && last_use[*s]) last_use[*s] = i;
    }
    for (const std::size_t s : output_slots_) last_use[s].reset();
    release_after_.resize(steps_.size());
    for (std::size_t s = 0; s < slot_count_; ++s) {
      if (last_use[s]) release_after_[*last_use[s]].push_back(s);
    }
    fuse_conv_followers();
  }

  /// 5. Fusion. A Conv whose output only a Relu reads applies the Relu itself, and a 2x2 /
  /// stride 2 MaxPool that alone reads the result (after the Relu or straight after the Conv)
  /// is computed by the Conv too, from each sample's output while it is in cache; the fused
  /// nodes hand their input on (moved: it expires there). On bench/'s cnn at batch 64 the
  /// separate passes and the full-size activations they wrote and read back were a third of
  /// a run. The numbers do not change: the Conv applies ops::relu_value, the Relu operator's
  /// function, and the pool's selects in the pool's order (nn/detail/pool.hpp). Not fused:
  /// outputs that are graph outputs or read by anything else, a MaxPool with any other
  /// window, padding, dilation, ceil_mode or with its Indices output.
  void fuse_conv_followers() {
    std::vector<std::size_t> readers(slot_count_, 0);
    std::vector<std::optional<std::size_t>> reader(slot_count_);
    for (std::size_t i = 0; i < steps_.size(); ++i) {
      for (const auto& s : steps_[i].inputs) {
        if (!s) continue;
        ++readers[*s];
        reader[*s] = i;
      }
    }
    for (const std::size_t s : output_slots_) readers[s] += 1;  // the caller reads it too
    const auto is = [](const Step& step, const char* op) {
      return step.node->op_type() == op && domain_of(*step.node).empty();
    };
    // The step that alone reads `step`'s only output, if any.
    const auto sole_reader = [&](const Step& step) -> Step* {
      if (step.outputs.empty() || !step.outputs[0]) return nullptr;
      for (std::size_t k = 1; k < step.outputs.size(); ++k) {
        if (step.outputs[k]) return nullptr;
      }
      const std::size_t s = *step.outputs[0];
      if (readers[s] != 1 || !reader[s]) return nullptr;  // read twice, or by the caller only
      Step& next = steps_[*reader[s]];
      return next.inputs.size() == 1 ? &next : nullptr;
    };
    for (Step& conv : steps_) {
      if (!is(conv, "Conv")) continue;
      Step* next = sole_reader(conv);
      if (next != nullptr && is(*next, "Relu")) {
        conv.fusion.relu = true;
        next->passes_input = true;
        next = sole_reader(*next);
      }
      if (next != nullptr && is(*next, "MaxPool") && is_plain_2x2_max_pool(*next->node)) {
        conv.fusion.max_pool_2x2 = true;
        next->passes_input = true;
      }
    }
  }

  /// A MaxPool with a 2x2 window, stride 2, no padding, dilation 1, no ceil_mode, whose
  /// Indices output is not wanted. Reads the attributes without raising: a malformed one
  /// means no fusion, and the MaxPool reports it when it runs.
  static bool is_plain_2x2_max_pool(const ::onnx::NodeProto& node) {
    const auto ints_are = [](const ::onnx::AttributeProto& a, std::int64_t value, int count) {
      if (a.type() != ::onnx::AttributeProto::INTS || a.ints_size() != count) return false;
      return std::all_of(a.ints().begin(), a.ints().end(), [&](std::int64_t v) { return v == value; });
    };
    if (node.output_size() > 1 && !node.output(1).empty()) return false;
    bool kernel = false, strides = false;
    for (const auto& a : node.attribute()) {
      const std::string& name = a.name();
      if (name == "kernel_shape") kernel = ints_are(a, 2, 2);
      else if (name == "strides") strides = ints_are(a, 2, 2);
      else if (name == "pads") { if (!ints_are(a, 0, 4)) return false; }
      else if (name == "dilations") { if (!ints_are(a, 1, 2)) return false; }
      else if (name == "ceil_mode") {
        if (a.type() != ::onnx::AttributeProto::INT || a.i() != 0) return false;
      } else if (name == "auto_pad") {
        if (a.type() != ::onnx::AttributeProto::STRING ||
            (a.s() != "NOTSET" && a.s() != "VALID" && !a.s().empty()))
          return false;
      } else if (name != "storage_order") {
        return false;
      }
    }
    return kernel && strides;
  }

  std::shared_ptr<const ::onnx::ModelProto> model_;
  std::map<std::string, std::int64_t> opsets_;
  std::vector<ValueInfo> inputs_, outputs_;
  std::vector<Tensor> initializers_;
  std::vector<std::size_t> initializer_slots_, input_slots_, output_slots_;
  std::vector<Step> steps_;
  std::vector<std::vector<std::size_t>> release_after_;  ///< per step: node outputs read last there
  std::size_t slot_count_ = 0;
};

/// Reads and prepares an ONNX model file.
inline Graph load(const std::filesystem::path& path) {
  return Graph(read_model_proto(path), path.string());
}

}  // namespace onelearn::onnx
