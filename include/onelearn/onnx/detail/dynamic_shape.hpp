#pragma once
// ShapeTracer: a Reshape's target computed from the shape of the data it reshapes, read back
// entry by entry, for onnx::to_sequential (onnx/layers/reshape.hpp). torch.onnx writes
// `x.view(x.size(0), -1)` as
//
//   Shape(x) -> Gather(indices 0, axis 0) -> Unsqueeze(axes [0]) -> Concat(., [-1], axis 0)
//     -> Reshape(x, .)
//
// The batch size is only known when the model runs, so each entry of the target is either
// "the batch" (x's first dimension) or a number known now (a constant, or one of x's
// per-sample dimensions). Only what can be followed exactly is followed: Shape of the
// Reshape's own data (start/end of opset 15 too), Gather of constant indices along axis 0,
// Unsqueeze of a scalar at axis 0 (axes an attribute before opset 13, a constant input from
// 13), Concat along axis 0, and integer constants (initializers, Constant nodes). Any other
// node in the computation is an unsupported_error naming it (kind op: an operator not
// followed; kind attribute: a setting not followed), so that a target is never guessed; what
// the target means for the layer (the batch first, or not) is the Reshape importer's call.

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "onelearn/onnx/detail/attributes.hpp"
#include "onelearn/onnx/detail/chain_reader.hpp"
#include "onelearn/onnx/errors.hpp"
#include "onelearn/onnx/tensor.hpp"

namespace onelearn::onnx::detail {

/// One entry of a computed shape: a number known when importing, or a dimension of the data.
struct ShapeEntry {
  std::int64_t value = 0;  // unknown (0) for the batch
  int dimension = -1;      // the data's dimension it is (0: the batch), -1 for a constant
  [[nodiscard]] bool batch() const noexcept { return dimension == 0; }
};

/// "(batch, -1)": how errors show a computed target.
inline std::string shape_entries_string(const std::vector<ShapeEntry>& entries) {
  std::string out = "(";
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) out += ", ";
    out += entries[i].batch() ? std::string("batch") : std::to_string(entries[i].value);
  }
  if (entries.size() == 1) out += ",";
  return out + ")";
}

class ShapeTracer {
 public:
  /// For `reshape`, whose data input has the per-sample dimensions `per_sample` (after the
  /// batch).
  ShapeTracer(const ChainReader& reader, const ::onnx::NodeProto& reshape,
              std::vector<std::int64_t> per_sample)
      : reader_(reader), reshape_(reshape), per_sample_(std::move(per_sample)) {}

  /// The entries of the Reshape's target (its input 1), a 1-D tensor.
  [[nodiscard]] std::vector<ShapeEntry> target() {
    Value v = value(reshape_.input(1), 0);
    if (v.scalar) {
      throw graph_error(ChainReader::describe(reshape_) + ": the target shape '" +
                        reshape_.input(1) + "' is a scalar, not a 1-D tensor");
    }
    return std::move(v.entries);
  }

  /// The nodes that computed the target (each once), for to_sequential to count as read.
  [[nodiscard]] const std::vector<int>& nodes() const noexcept { return nodes_; }

 private:
  struct Value {
    bool scalar = false;  // rank 0; else rank 1
    std::vector<ShapeEntry> entries;
  };

  // Deeper and longer than any exporter writes: bound the recursion and the work on hostile
  // graphs (a value is computed once, then remembered).
  static constexpr int max_depth = 32;
  static constexpr std::size_t max_entries = 64;

  Value value(const std::string& name, int depth) {
    if (const auto it = known_.find(name); it != known_.end()) return it->second;
    Value v = compute(name, depth);
    known_.emplace(name, v);
    return v;
  }

  Value compute(const std::string& name, int depth) {
    if (const Tensor* c = reader_.find_constant(name)) return constant(*c, name);
    const int index = reader_.producer(name);
    if (index < 0) {
      throw graph_error(ChainReader::describe(reshape_) + ": the target shape depends on '" +
                        name + "', which is neither a constant nor computed by a node");
    }
    const ::onnx::NodeProto& node = reader_.graph().node(index);
    if (depth >= max_depth) {
      throw unsupported_error(unsupported_kind::attribute, "shape",
                              ChainReader::describe(node) + ": the target of " +
                                  ChainReader::describe(reshape_).substr(6) +
                                  " is computed through more than " +
                                  std::to_string(max_depth) + " nodes");
    }
    if (std::find(nodes_.begin(), nodes_.end(), index) == nodes_.end()) nodes_.push_back(index);
    const std::string& op = node.op_type();
    if (!node.domain().empty() && node.domain() != "ai.onnx") not_followed(node);
    if (op == "Shape") return shape(node);
    if (op == "Gather") return gather(node, depth);
    if (op == "Unsqueeze") return unsqueeze(node, depth);
    if (op == "Concat") return concat(node, depth);
    not_followed(node);
  }

  [[noreturn]] void not_followed(const ::onnx::NodeProto& node) const {
    throw unsupported_error(
        unsupported_kind::op, node.op_type(),
        ChainReader::describe(node) + ": computes part of the target shape of " +
            ChainReader::describe(reshape_).substr(6) +
            "; to_sequential follows only Shape, Gather, Unsqueeze, Concat and constants there");
  }

  [[noreturn]] static void not_followed(const ::onnx::NodeProto& node,
                                        const std::string& attribute,
                                        const std::string& problem) {
    throw unsupported_error(unsupported_kind::attribute, attribute,
                            ChainReader::describe(node) + ": " + problem +
                                " (to_sequential reads a Reshape's target only where it is exact)");
  }

  static void check_entries(const ::onnx::NodeProto& node, std::size_t n) {
    if (n > max_entries) {
      throw unsupported_error(unsupported_kind::attribute, "shape",
                              ChainReader::describe(node) + ": computes a shape of " +
                                  std::to_string(n) + " entries (to_sequential follows at most " +
                                  std::to_string(max_entries) + ")");
    }
  }

  Value constant(const Tensor& t, const std::string& name) const {
    if (t.dtype() != DataType::int64 && t.dtype() != DataType::int32) {
      throw graph_error(ChainReader::describe(reshape_) + ": constant '" + name +
                        "' in the target shape holds " + to_string(t.dtype()) +
                        ", not integers");
    }
    if (t.rank() > 1) {
      throw graph_error(ChainReader::describe(reshape_) + ": constant '" + name +
                        "' in the target shape has rank " + std::to_string(t.rank()) +
                        " (expected a scalar or a 1-D tensor)");
    }
    check_entries(reshape_, t.size());
    Value v;
    v.scalar = t.rank() == 0;
    for (const std::int64_t x : t.to_vector<std::int64_t>()) v.entries.push_back({x, -1});
    return v;
  }

  // Shape(data): (batch, per-sample dimensions...), sliced by start/end as the operator does.
  Value shape(const ::onnx::NodeProto& node) const {
    if (node.input_size() != 1 || node.input(0) != reshape_.input(0)) {
      not_followed(node, "input",
                   "the shape of '" + (node.input_size() > 0 ? node.input(0) : std::string()) +
                       "', not of '" + reshape_.input(0) + "', the data " +
                       ChainReader::describe(reshape_).substr(6) + " reshapes");
    }
    std::vector<ShapeEntry> all{{0, 0}};
    for (const std::int64_t d : per_sample_) {
      all.push_back({d, static_cast<int>(all.size())});
    }
    const NodeAttributes a(node);
    const auto r = static_cast<std::int64_t>(all.size());
    const auto clamp = [&](std::int64_t v) {
      return std::clamp(v < 0 ? v + r : v, std::int64_t{0}, r);
    };
    const std::int64_t start = clamp(a.get_int("start", 0));
    const std::int64_t end = a.has("end") ? clamp(a.get_int("end", r)) : r;
    Value v;
    for (std::int64_t i = start; i < end; ++i) {
      v.entries.push_back(all[static_cast<std::size_t>(i)]);
    }
    return v;
  }

  // Gather(shape, constant indices) along axis 0: picks entries.
  Value gather(const ::onnx::NodeProto& node, int depth) {
    if (node.input_size() != 2) {
      throw graph_error(ChainReader::describe(node) + ": expected 2 inputs, found " +
                        std::to_string(node.input_size()));
    }
    const std::int64_t axis = NodeAttributes(node).get_int("axis", 0);
    if (axis != 0 && axis != -1) {
      not_followed(node, "axis", "gathers along axis " + std::to_string(axis) + " of a shape");
    }
    const Tensor* indices = reader_.find_constant(node.input(1));
    if (indices == nullptr) {
      not_followed(node, "indices", "the indices '" + node.input(1) + "' are not a constant");
    }
    const Value data = value(node.input(0), depth + 1);
    if (data.scalar) {
      throw graph_error(ChainReader::describe(node) + ": gathers from a scalar");
    }
    const Value picked = constant(*indices, node.input(1));
    const auto n = static_cast<std::int64_t>(data.entries.size());
    Value v;
    v.scalar = picked.scalar;
    for (const ShapeEntry& e : picked.entries) {
      const std::int64_t i = e.value < 0 ? e.value + n : e.value;
      if (i < 0 || i >= n) {
        throw graph_error(ChainReader::describe(node) + ": index " + std::to_string(e.value) +
                          " is out of range for " + std::to_string(n) + " entries");
      }
      v.entries.push_back(data.entries[static_cast<std::size_t>(i)]);
    }
    return v;
  }

  // Unsqueeze(scalar, axes [0]): the one-entry 1-D tensor Concat takes.
  Value unsqueeze(const ::onnx::NodeProto& node, int depth) {
    std::vector<std::int64_t> axes;
    if (reader_.opset() < 13) {
      axes = NodeAttributes(node).get_ints("axes").value_or(std::vector<std::int64_t>{});
    } else if (node.input_size() >= 2) {
      const Tensor* given = reader_.find_constant(node.input(1));
      if (given == nullptr) {
        not_followed(node, "axes", "the axes '" + node.input(1) + "' are not a constant");
      }
      axes = given->to_vector<std::int64_t>();
    }
    if (axes.size() != 1 || (axes[0] != 0 && axes[0] != -1)) {
      not_followed(node, "axes", "unsqueezes at other axes than [0]");
    }
    Value v = value(node.input(0), depth + 1);
    if (!v.scalar) not_followed(node, "axes", "unsqueezes a 1-D tensor (the result is 2-D)");
    v.scalar = false;
    return v;
  }

  // Concat(1-D pieces, axis 0).
  Value concat(const ::onnx::NodeProto& node, int depth) {
    const NodeAttributes a(node);
    const std::int64_t axis = a.get_int("axis", 0);
    if (!a.has("axis") || (axis != 0 && axis != -1)) {
      not_followed(node, "axis", "concatenates along another axis than 0 (or none is given)");
    }
    Value v;
    for (const auto& in : node.input()) {
      if (in.empty()) continue;
      Value piece = value(in, depth + 1);
      if (piece.scalar) {
        throw graph_error(ChainReader::describe(node) + ": input '" + in +
                          "' is a scalar; Concat takes 1-D tensors");
      }
      check_entries(node, v.entries.size() + piece.entries.size());
      v.entries.insert(v.entries.end(), piece.entries.begin(), piece.entries.end());
    }
    return v;
  }

  const ChainReader& reader_;
  const ::onnx::NodeProto& reshape_;
  std::vector<std::int64_t> per_sample_;
  std::vector<int> nodes_;
  std::map<std::string, Value> known_;
};

}  // namespace onelearn::onnx::detail
