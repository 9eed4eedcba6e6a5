#pragma once
// GraphSegments: a model's graph cut where one value carries everything that follows, and the
// pieces between two cuts made into models of their own. onnx::to_estimator<Pipeline> uses it
// when a step is read from a whole graph (PCA, GaussianNB, the plain-operator transformers,
// the k-NN models) rather than from one ai.onnx.ml node: each step is then read from the model
// of the pieces it spans, as if it had been exported alone.
//
// The cuts come from the data flow, not from value names (scikit-learn's converter names values
// its own way). A node is dynamic when it reads the graph input or another dynamic node's
// output; the others (Constant nodes, computations on constants only) are static and go with
// whichever piece reads them. After the k-th dynamic node (in the graph's order, which ONNX
// requires to be topological) the graph is cut when exactly one value produced so far (the
// input included) is read by a later dynamic node or is a graph output: everything after the
// cut depends on that value alone. A pipeline's export has a cut between any two steps, and
// usually some inside a step too; which cuts are the steps' boundaries is for the caller to
// find (to_estimator tries them, shortest piece first).

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace onelearn::onnx::detail {

class GraphSegments {
 public:
  /// A place the graph may be cut: after `position` dynamic nodes, everything later reads
  /// `value` only (position 0: the graph input itself).
  struct Cut {
    std::size_t position;
    std::string value;
  };

  explicit GraphSegments(const ::onnx::ModelProto& model) : model_(model) {
    const ::onnx::GraphProto& g = model.graph();
    std::set<std::string> initializers;
    for (const auto& init : g.initializer()) initializers.insert(init.name());
    int inputs = 0;
    for (const auto& in : g.input()) {
      if (initializers.count(in.name()) != 0) continue;
      ++inputs;
      input_ = &in;
    }
    if (inputs != 1) {  // not one chain of steps from the features: no cuts
      input_ = nullptr;
      return;
    }
    // (An empty name is an omitted optional input or output, never a value.)
    std::set<std::string> dynamic_values{input_->name()};
    for (int n = 0; n < g.node_size(); ++n) {
      const auto& node = g.node(n);
      bool dynamic = false;
      for (const auto& in : node.input()) dynamic = dynamic || dynamic_values.count(in) != 0;
      if (!dynamic) continue;
      dynamic_.push_back(n);
      for (const auto& out : node.output())
        if (!out.empty()) dynamic_values.insert(out);
    }
    for (const auto& out : g.output()) graph_outputs_.insert(out.name());
    find_cuts();
  }

  /// The cuts in order: the graph input first, the last dynamic node's place last (its
  /// value empty: the graph's outputs).
  [[nodiscard]] const std::vector<Cut>& cuts() const noexcept { return cuts_; }

  /// The model of the dynamic nodes between cuts `from` and `to` (indices into cuts()) and the
  /// static nodes and initializers they read: its one input is cuts()[from].value, declared
  /// as the original input's element type and N x `width` (width < 1: not declared); its outputs
  /// are cuts()[to].value, or the graph's outputs when `to` is the last cut. Opsets and the
  /// other model fields are the original's; the metadata is replaced by `metadata`.
  [[nodiscard]] ::onnx::ModelProto piece(std::size_t from, std::size_t to, std::int64_t width,
                                         const std::map<std::string, std::string>& metadata) const {
    const ::onnx::GraphProto& g = model_.graph();
    // A fresh model, not a copy cleared: the original's initializers can be large (a k-NN
    // model's rows), and a piece takes only those its nodes read.
    ::onnx::ModelProto out;
    out.set_ir_version(model_.ir_version());
    out.set_producer_name(model_.producer_name());
    out.set_producer_version(model_.producer_version());
    *out.mutable_opset_import() = model_.opset_import();
    for (const auto& [key, value] : metadata) {
      auto* kv = out.add_metadata_props();
      kv->set_key(key);
      kv->set_value(value);
    }
    ::onnx::GraphProto* graph = out.mutable_graph();
    graph->set_name(g.name());
    // The dynamic nodes of the piece, then the static ones they read, found backwards.
    std::set<int> keep;
    for (std::size_t k = cuts_[from].position; k < cuts_[to].position; ++k)
      keep.insert(dynamic_[k]);
    std::set<std::string> needed;
    for (const int n : keep)
      for (const auto& in : g.node(n).input())
        if (!in.empty()) needed.insert(in);
    for (int n = g.node_size(); n-- > 0;) {
      if (keep.count(n) != 0 || is_dynamic(n)) continue;
      bool read = false;
      for (const auto& o : g.node(n).output()) read = read || needed.count(o) != 0;
      if (!read) continue;
      keep.insert(n);
      for (const auto& in : g.node(n).input())
        if (!in.empty()) needed.insert(in);
    }
    for (const int n : keep) *graph->add_node() = g.node(n);
    for (const auto& init : g.initializer()) {
      if (needed.count(init.name()) != 0) *graph->add_initializer() = init;
    }
    const std::string& input = cuts_[from].value;
    if (from == 0 && input_ != nullptr && (width < 1 || declared_width() == width)) {
      *graph->add_input() = *input_;
    } else {
      *graph->add_input() = matrix_value(input, width);
    }
    if (to + 1 == cuts_.size()) {
      for (const auto& o : g.output()) *graph->add_output() = o;
    } else {
      *graph->add_output() = matrix_value(cuts_[to].value, -1);
    }
    return out;
  }

  /// The graph input's declared width (N x width), or -1.
  [[nodiscard]] std::int64_t declared_width() const {
    if (input_ == nullptr || !input_->type().has_tensor_type()) return -1;
    const auto& t = input_->type().tensor_type();
    if (!t.has_shape() || t.shape().dim_size() != 2 || !t.shape().dim(1).has_dim_value()) return -1;
    return t.shape().dim(1).dim_value();
  }

 private:
  [[nodiscard]] bool is_dynamic(int n) const {
    for (const int d : dynamic_)
      if (d == n) return true;
    return false;
  }

  /// A tensor value of the graph input's element type, N x width (width < 1: unknown). (A step
  /// that changes the type, an encoder of int64 codes writing floats, hands on a value declared
  /// with the input's type: the readers look at the width only.)
  [[nodiscard]] ::onnx::ValueInfoProto matrix_value(const std::string& name,
                                                    std::int64_t width) const {
    ::onnx::ValueInfoProto v;
    v.set_name(name);
    auto* t = v.mutable_type()->mutable_tensor_type();
    const bool typed = input_ != nullptr && input_->type().has_tensor_type();
    t->set_elem_type(typed ? input_->type().tensor_type().elem_type()
                           : static_cast<int>(::onnx::TensorProto::FLOAT));
    auto* shape = t->mutable_shape();
    shape->add_dim()->set_dim_param("N");
    auto* columns = shape->add_dim();
    if (width > 0) columns->set_dim_value(width);
    return v;
  }

  void find_cuts() {
    const ::onnx::GraphProto& g = model_.graph();
    if (input_ == nullptr) return;
    cuts_.push_back({0, input_->name()});
    // Where each dynamic value is produced (its dynamic node's position + 1; the input: 0) and
    // the last position that reads it (graph outputs: read "after the end").
    std::map<std::string, std::size_t> made{{input_->name(), 0}};
    std::map<std::string, std::size_t> last_read;
    const std::size_t end = dynamic_.size();
    for (std::size_t k = 0; k < end; ++k) {
      const auto& node = g.node(dynamic_[k]);
      for (const auto& in : node.input())
        if (!in.empty() && made.count(in) != 0) last_read[in] = k + 1;
      for (const auto& o : node.output())
        if (!o.empty()) made[o] = k + 1;
    }
    for (const auto& o : graph_outputs_)
      if (made.count(o) != 0) last_read[o] = end + 1;
    // A cut after position p (1 <= p < end): the values made at or before p and read after p.
    for (std::size_t p = 1; p < end; ++p) {
      std::string crossing;
      int count = 0;
      for (const auto& [value, position] : made) {
        const auto r = last_read.find(value);
        if (position <= p && r != last_read.end() && r->second > p) {
          ++count;
          crossing = value;
        }
      }
      if (count == 1) cuts_.push_back({p, crossing});
    }
    if (end > 0) cuts_.push_back({end, std::string{}});
  }

  const ::onnx::ModelProto& model_;
  const ::onnx::ValueInfoProto* input_ = nullptr;
  std::vector<int> dynamic_;  ///< the dynamic nodes' indices, in order
  std::set<std::string> graph_outputs_;
  std::vector<Cut> cuts_;
};

}  // namespace onelearn::onnx::detail
