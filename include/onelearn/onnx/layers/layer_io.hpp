#pragma once
// What the ONNX translation of an nn layer is written against: LayerExport (what an exporter
// gets), LayerImport<T> (what an importer gets), and LayerTable<T>, where each layer family
// registers both directions. onnx/export/nn.hpp looks exporters up by the layer's dynamic type,
// onnx/to_sequential.hpp looks importers up by the node's op_type; onnx/layers/registry.hpp
// holds the table of onelearn's layers.
//
// Adding a layer means one header under onnx/layers/ holding
//
//   template <class T>
//   std::string export_scale(LayerExport& e, const ScaleLayer<T>& layer);   // -> its output
//   template <class T>
//   void import_mul(LayerImport<T>& in);           // in.add(nn spec, parameters, state)
//   template <class T>
//   void register_scale(LayerTable<T>& table) {
//     table.add_export("Scale", &export_scale<T>);
//     table.add_import("Mul", &import_mul<T>);
//   }
//
// and its line register_scale(table) in onnx/layers/registry.hpp.
//
// An exporter appends the layer's nodes reading e.x (per-sample shape e.input) to e.graph,
// returns the value holding the layer's output, and appends the layer's settings to
// e.description ("(units=10, activation=relu)" after the class name), which goes into the
// model's "parameters" metadata. It only reads the layer (several threads may export one model).
//
// An importer reads in.node() (its first input is the chain's current value, per-sample shape
// in.shape(); every other input is a constant: in.constant_input(i, what)), adds zero or more
// layers with in.add(spec, parameters, state) (the weights are copied in after the Sequential
// is built), and may take the node that follows into the same layer with in.absorb(index)
// (MatMul + Add becomes one Dense), or count nodes off the chain as read with in.take(index)
// (the nodes computing a Reshape's target from its data's shape). Errors name the node:
// in.unsupported_attribute(attribute, problem) for a setting the layer cannot express,
// shape_error / graph_error with in.where().

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <typeindex>
#include <typeinfo>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/nn/layer.hpp"
#include "onelearn/onnx/detail/attributes.hpp"
#include "onelearn/onnx/detail/chain_reader.hpp"
#include "onelearn/onnx/errors.hpp"
#include "onelearn/onnx/export/core.hpp"
#include "onelearn/onnx/tensor.hpp"

namespace onelearn::onnx {

/// What an exporter gets: the graph, the layer's input value and per-sample shape, and the
/// description of the layer's settings to append to.
struct LayerExport {
  GraphBuilder& graph;
  const nn::Shape& input;
  const std::string& x;
  std::string& description;
};

/// One layer read from the graph, and the weights to copy in once the Sequential is built.
template <class T>
struct ImportedLayer {
  std::unique_ptr<nn::Layer<T>> layer;
  std::vector<std::vector<T>> parameters;  // in parameters() order
  std::vector<std::vector<T>> state;       // in state() order
  std::string node;                        // "onnx: node 'x' (Op)", for errors
};

/// What an importer gets: the node, its attributes, the chain's current per-sample shape, the
/// graph's constants, and where the layers it makes go.
template <class T>
class LayerImport {
 public:
  LayerImport(const detail::ChainReader& reader, const ::onnx::NodeProto& node, nn::Shape& shape,
              std::int64_t fixed_batch, std::vector<ImportedLayer<T>>& layers,
              std::vector<bool>& used, std::string& output)
      : reader_(reader),
        node_(node),
        attributes_(node),
        shape_(shape),
        fixed_batch_(fixed_batch),
        layers_(layers),
        used_(used),
        output_(output) {}

  [[nodiscard]] const ::onnx::NodeProto& node() const noexcept { return node_; }
  [[nodiscard]] const NodeAttributes& attributes() const noexcept { return attributes_; }
  /// "onnx: node 'conv1' (Conv)", how errors start.
  [[nodiscard]] std::string where() const { return attributes_.where(); }
  /// The per-sample shape of the value the node reads (after the layers added so far).
  [[nodiscard]] const nn::Shape& shape() const noexcept { return shape_; }
  /// The batch size the graph's input fixes, or -1 for a symbolic batch.
  [[nodiscard]] std::int64_t fixed_batch() const noexcept { return fixed_batch_; }
  [[nodiscard]] std::int64_t opset() const noexcept { return reader_.opset(); }
  [[nodiscard]] const detail::ChainReader& reader() const noexcept { return reader_; }

  [[nodiscard]] bool has_input(int i) const { return reader_.has_input(node_, i); }
  /// Input `i`, which must be a constant; `what` names it in the error.
  [[nodiscard]] const Tensor& constant_input(int i, const std::string& what) const {
    return reader_.constant_input(node_, i, what);
  }

  /// The value the chain goes on from: the node's output, or that of a node absorbed.
  [[nodiscard]] const std::string& output() const noexcept { return output_; }
  /// Takes node `index` of the graph, which reads output(), into the layer being read.
  void absorb(int index) {
    used_[static_cast<std::size_t>(index)] = true;
    output_ = reader_.graph().node(index).output(0);
  }

  /// Counts node `index` of the graph as read into the layer being read without following it
  /// (the Shape, Gather, ... nodes that compute a Reshape's target from its data's shape).
  void take(int index) { used_[static_cast<std::size_t>(index)] = true; }

  /// Makes the layer `spec` describes, checks that it takes the current shape, and adds it
  /// with the weights to copy in.
  template <class Spec>
  void add(const Spec& spec, std::vector<std::vector<T>> parameters = {},
           std::vector<std::vector<T>> state = {}) {
    std::unique_ptr<nn::Layer<T>> layer;
    try {
      layer = spec.template make<T>();
    } catch (const shape_error&) {
      throw;
    } catch (const invalid_argument& e) {
      throw unsupported_error(unsupported_kind::attribute, node_.op_type(),
                              where() + ": the onelearn layer refuses it: " + e.what());
    }
    try {
      shape_ = layer->output_shape(shape_);
    } catch (const shape_error& e) {
      throw shape_error(where() + ": " + e.what());
    }
    layers_.push_back({std::move(layer), std::move(parameters), std::move(state), where()});
  }

  /// An unsupported_error (kind attribute, detail `attribute`) naming the node.
  [[noreturn]] void unsupported_attribute(const std::string& attribute,
                                          const std::string& problem) const {
    throw unsupported_error(unsupported_kind::attribute, attribute, where() + ": " + problem);
  }

 private:
  const detail::ChainReader& reader_;
  const ::onnx::NodeProto& node_;
  NodeAttributes attributes_;
  nn::Shape& shape_;
  std::int64_t fixed_batch_;
  std::vector<ImportedLayer<T>>& layers_;
  std::vector<bool>& used_;
  std::string& output_;
};

/// The exporters of layer classes (by exact dynamic type: onelearn's layers are final) and
/// the importers of ONNX operators (by op_type), with the labels that list them in errors.
template <class T>
class LayerTable {
 public:
  using Exporter = std::function<std::string(LayerExport&, const nn::Layer<T>&)>;
  using Importer = void (*)(LayerImport<T>&);

  /// Registers the export of layer class L; `label` lists it in the error for a layer without
  /// an export ("Dense", or a description such as "an activation layer").
  template <class L>
  void add_export(std::string label, std::string (*write)(LayerExport&, const L&)) {
    exporters_[std::type_index(typeid(L))] = [write](LayerExport& e, const nn::Layer<T>& layer) {
      return write(e, static_cast<const L&>(layer));
    };
    export_labels_.push_back(std::move(label));
  }

  /// Registers the import of operator `op` (default domain); `label` lists it in the error for
  /// an operator without an import (the op itself unless given, "MatMul (+ Add)").
  void add_import(const std::string& op, Importer read, std::string label = {}) {
    importers_[op] = read;
    import_labels_.push_back(label.empty() ? op : std::move(label));
  }

  /// The exporter of `layer`'s class, or null.
  [[nodiscard]] const Exporter* exporter(const nn::Layer<T>& layer) const {
    const auto it = exporters_.find(std::type_index(typeid(layer)));
    return it == exporters_.end() ? nullptr : &it->second;
  }
  /// The importer of operator `op`, or null.
  [[nodiscard]] Importer importer(const std::string& op) const {
    const auto it = importers_.find(op);
    return it == importers_.end() ? nullptr : it->second;
  }

  /// "Dense, Conv2D, ... or an activation layer": the class names first, descriptions last.
  [[nodiscard]] std::string export_list() const {
    std::vector<std::string> labels = export_labels_;
    std::stable_partition(labels.begin(), labels.end(), [](const std::string& l) {
      return l.empty() || std::isupper(static_cast<unsigned char>(l[0])) != 0;
    });
    return join(labels, " or ");
  }
  /// "Gemm, MatMul (+ Add), ... and Identity", in registration order.
  [[nodiscard]] std::string import_list() const { return join(import_labels_, " and "); }

 private:
  static std::string join(const std::vector<std::string>& labels, std::string_view last) {
    std::string out;
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) out += i + 1 == labels.size() ? std::string(last) : std::string(", ");
      out += labels[i];
    }
    return out;
  }

  std::map<std::type_index, Exporter> exporters_;
  std::map<std::string, Importer> importers_;
  std::vector<std::string> export_labels_;
  std::vector<std::string> import_labels_;
};

namespace detail {

// ---- shared by the exporters ----

inline std::vector<std::int64_t> dims_of(const nn::Shape& s) {
  std::vector<std::int64_t> out;
  for (int i = 0; i < s.rank(); ++i) out.push_back(static_cast<std::int64_t>(s[i]));
  return out;
}

/// A layer's parameters as GraphBuilder::constant takes them (it rounds them to the model's
/// precision).
template <class V>
std::vector<double> span_reals(std::span<const V> s) {
  return std::vector<double>(s.begin(), s.end());
}

inline std::string pair_string(index_t a, index_t b) {
  return "(" + std::to_string(a) + ", " + std::to_string(b) + ")";
}

// ---- shared by the importers ----

template <class V>
std::vector<V> values_as(const Tensor& t) {
  return t.to_vector<V>();
}

/// The pads (top, left, bottom, right in ONNX's order) of a 2-D window after auto_pad.
template <class T>
std::vector<std::int64_t> window_pads(const LayerImport<T>& in, const std::vector<std::int64_t>& k,
                                      const std::vector<std::int64_t>& s,
                                      const std::vector<std::int64_t>& d) {
  const std::string auto_pad = in.attributes().get_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    std::vector<std::int64_t> pads =
        in.attributes().get_ints("pads").value_or(std::vector<std::int64_t>(4, 0));
    if (pads.size() != 4) {
      throw graph_error(in.where() + ": expected 4 pads for a 2-D window, found " +
                        std::to_string(pads.size()));
    }
    return pads;
  }
  if (auto_pad == "VALID") return {0, 0, 0, 0};
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
    in.unsupported_attribute("auto_pad", "unsupported auto_pad '" + auto_pad + "'");
  }
  std::vector<std::int64_t> pads(4, 0);
  for (std::size_t a = 0; a < 2; ++a) {
    const std::int64_t n = in.shape()[static_cast<int>(a) + 1];
    const std::int64_t out = (n + s[a] - 1) / s[a];
    const std::int64_t eff = d[a] * (k[a] - 1) + 1;
    const std::int64_t total = std::max<std::int64_t>((out - 1) * s[a] + eff - n, 0);
    const std::int64_t small = total / 2, large = total - small;
    pads[a] = auto_pad == "SAME_UPPER" ? small : large;
    pads[a + 2] = auto_pad == "SAME_UPPER" ? large : small;
  }
  return pads;
}

/// A 2-D attribute (strides, dilations, kernel_shape): two values, both `fallback` if absent.
template <class T>
std::vector<std::int64_t> pair_attribute(const LayerImport<T>& in, const std::string& name,
                                         std::int64_t fallback) {
  std::vector<std::int64_t> v =
      in.attributes().get_ints(name).value_or(std::vector<std::int64_t>{fallback, fallback});
  if (v.size() != 2) {
    in.unsupported_attribute(name, name + " has " + std::to_string(v.size()) +
                                       " values; onelearn's layers are 2-D (expected 2)");
  }
  return v;
}

}  // namespace detail
}  // namespace onelearn::onnx
