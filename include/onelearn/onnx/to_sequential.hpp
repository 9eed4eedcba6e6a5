#pragma once
// onelearn::onnx::to_sequential<T>(graph): an ONNX graph that is a chain of layers onelearn has
// becomes a built, trainable nn::Sequential<T> holding the graph's weights: import a PyTorch
// MLP or CNN, compile it and fine-tune it with fit.
//
// \code
//   #include <onelearn/onnx/to_sequential.hpp>
//   onelearn::onnx::Graph g = onelearn::onnx::load("cnn.onnx");        // from torch.onnx.export
//   onelearn::nn::Sequential<float> model = onelearn::onnx::to_sequential<float>(g);
//   model.predict(X);                                                  // what the graph computes
//   model.compile(onelearn::nn::Adam{{.learning_rate = 1e-4}},
//                 onelearn::nn::SparseCategoricalCrossentropy{{.from_logits = true}});
//   model.fit(X, y, {.epochs = 3});                                    // fine-tuning
// \endcode
//
// The graph: one input (its first dimension is the batch; the others must be known: they
// become the Sequential's input shape, so images are N, C, H, W as in nn), one output, and
// nodes that form a single chain from the input to the output, each reading the previous
// one's output as its data input and only constants (initializers or Constant nodes) for the
// rest. Operators and the layers they become:
//   Gemm (transA = 0, transB 0 or 1, alpha and beta folded into the weights; bias C of one
//        value per unit, or none)                          Dense
//   MatMul with a constant (in x units) matrix, and the Add of a constant bias that follows it
//        (what PyTorch writes for nn.Linear on N-d input)    Dense
//        (Transposes of constants are folded first: PyTorch 0.3 wrote a Linear without bias
//        as Transpose(W) + MatMul)
//   Conv (2-D: kernel_shape, strides, pads, also asymmetric, dilations, group, auto_pad)
//                                                           Conv2D
//   MaxPool, AveragePool (2-D; pads smaller than the window; count_include_pad; dilations 1;
//        ceil_mode only where it gives the same output size)  MaxPool2D, AveragePool2D
//   GlobalAveragePool                                       GlobalAveragePool2D + Reshape to
//                                                           (C, 1, 1), ONNX's output shape
//   BatchNormalization (inference; epsilon, momentum)       BatchNormalization with the moving
//                                                           mean and variance as its state
//   Relu, LeakyRelu, Elu, Sigmoid, Tanh                     the activation layers
//   Softmax, LogSoftmax over the last axis                  Softmax, LogSoftmax
//   Flatten (axis 1)                                        Flatten
//   Reshape with a constant shape that keeps the batch (first entry 0, -1 or the input's
//        fixed batch size)                                  Reshape
//   Dropout, Identity                                       nothing (the identity)
// The model is built (weights and BatchNormalization statistics copied in) but not compiled:
// compile it with an optimizer and a loss, then fit continues from the imported weights.
// Layer settings ONNX does not carry take onelearn's defaults (no regularisation; a
// Dense/Conv2D initializer that is never used since the weights are given).
//
// Errors (onnx/errors.hpp), each naming the node, the operator and the problem:
//   unsupported_error  kind op: an operator with no onelearn layer (Selu, PRelu, Concat, Add
//                      not after a MatMul, ...); kind attribute: an attribute the layer cannot
//                      express (asymmetric or oversized pool padding, ceil_mode changing the
//                      output size, dilated pooling, a 1-D or 3-D convolution, transA, a
//                      softmax over another axis, a reshape across the batch)
//   graph_error        a graph that is not a chain (a value read by two nodes, a node off the
//                      chain), weights that are not constants, several inputs or outputs, an
//                      input shape that is not known
// and the errors of the layers' own checks (invalid_argument, shape_error), with the node named.

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/nn/layer.hpp"
#include "onelearn/nn/layers/activation.hpp"
#include "onelearn/nn/layers/average_pool2d.hpp"
#include "onelearn/nn/layers/batch_normalization.hpp"
#include "onelearn/nn/layers/conv2d.hpp"
#include "onelearn/nn/layers/dense.hpp"
#include "onelearn/nn/layers/flatten.hpp"
#include "onelearn/nn/layers/global_average_pool2d.hpp"
#include "onelearn/nn/layers/max_pool2d.hpp"
#include "onelearn/nn/layers/reshape.hpp"
#include "onelearn/nn/sequential.hpp"
#include "onelearn/onnx/errors.hpp"
#include "onelearn/onnx/graph.hpp"
#include "onelearn/onnx/load.hpp"
#include "onelearn/onnx/tensor.hpp"

namespace onelearn::onnx {

namespace detail {

/// One layer of the Sequential being assembled, and the weights to copy in after build.
template <class T>
struct ImportedLayer {
  std::unique_ptr<nn::Layer<T>> layer;
  std::vector<std::vector<T>> parameters;  // in parameters() order
  std::vector<std::vector<T>> state;       // in state() order
  std::string node;                        // "onnx: node 'x' (Op)", for errors
};

class ChainReader {
 public:
  explicit ChainReader(const ::onnx::ModelProto& model) : model_(model), graph_(model.graph()) {
    for (const auto& imp : model.opset_import()) {
      if (imp.domain().empty() || imp.domain() == "ai.onnx") opset_ = imp.version();
    }
    for (const auto& init : graph_.initializer()) {
      constants_.emplace(init.name(),
                         tensor_from_proto(init, "onnx: initializer '" + init.name() + "'"));
    }
    for (const auto& node : graph_.node()) {
      if (node.op_type() != "Constant") continue;
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
      for (const auto& a : node.attribute()) {
        if (a.name() == "perm") perm.assign(a.ints().begin(), a.ints().end());
      }
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
    return "onnx: node '" + (node.name().empty() ? node.output(0) : node.name()) + "' (" +
           node.op_type() + ")";
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
  const ::onnx::ModelProto& model_;
  const ::onnx::GraphProto& graph_;
  std::int64_t opset_ = 1;
  std::map<std::string, Tensor> constants_;
  std::vector<int> folded_;
};

inline const ::onnx::AttributeProto* find_attribute(const ::onnx::NodeProto& node,
                                                    const std::string& name) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

inline std::int64_t int_attribute(const ::onnx::NodeProto& node, const std::string& name,
                                  std::int64_t fallback) {
  const auto* a = find_attribute(node, name);
  return a == nullptr ? fallback : a->i();
}

inline float float_attribute(const ::onnx::NodeProto& node, const std::string& name,
                             float fallback) {
  const auto* a = find_attribute(node, name);
  return a == nullptr ? fallback : a->f();
}

inline std::string string_attribute(const ::onnx::NodeProto& node, const std::string& name,
                                    const std::string& fallback) {
  const auto* a = find_attribute(node, name);
  return a == nullptr ? fallback : a->s();
}

inline std::optional<std::vector<std::int64_t>> ints_attribute(const ::onnx::NodeProto& node,
                                                               const std::string& name) {
  const auto* a = find_attribute(node, name);
  if (a == nullptr) return std::nullopt;
  return std::vector<std::int64_t>(a->ints().begin(), a->ints().end());
}

[[noreturn]] inline void unsupported_attribute(const ::onnx::NodeProto& node,
                                               const std::string& attribute,
                                               const std::string& problem) {
  throw unsupported_error(unsupported_kind::attribute, attribute,
                          ChainReader::describe(node) + ": " + problem);
}

template <class T>
std::vector<T> values_as(const Tensor& t) {
  return t.to_vector<T>();
}

/// The pads (top, left, bottom, right in ONNX's order) of a 2-D window after auto_pad.
inline std::vector<std::int64_t> window_pads(const ::onnx::NodeProto& node, const nn::Shape& in,
                                             const std::vector<std::int64_t>& k,
                                             const std::vector<std::int64_t>& s,
                                             const std::vector<std::int64_t>& d) {
  const std::string auto_pad = string_attribute(node, "auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    std::vector<std::int64_t> pads = ints_attribute(node, "pads").value_or(
        std::vector<std::int64_t>(4, 0));
    if (pads.size() != 4) {
      throw graph_error(ChainReader::describe(node) + ": expected 4 pads for a 2-D window, found " +
                        std::to_string(pads.size()));
    }
    return pads;
  }
  if (auto_pad == "VALID") return {0, 0, 0, 0};
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
    unsupported_attribute(node, "auto_pad", "unsupported auto_pad '" + auto_pad + "'");
  }
  std::vector<std::int64_t> pads(4, 0);
  for (std::size_t a = 0; a < 2; ++a) {
    const std::int64_t n = in[static_cast<int>(a) + 1];
    const std::int64_t out = (n + s[a] - 1) / s[a];
    const std::int64_t eff = d[a] * (k[a] - 1) + 1;
    const std::int64_t total = std::max<std::int64_t>((out - 1) * s[a] + eff - n, 0);
    const std::int64_t small = total / 2, large = total - small;
    pads[a] = auto_pad == "SAME_UPPER" ? small : large;
    pads[a + 2] = auto_pad == "SAME_UPPER" ? large : small;
  }
  return pads;
}

inline std::vector<std::int64_t> pair_attribute(const ::onnx::NodeProto& node,
                                                const std::string& name, std::int64_t fallback) {
  std::vector<std::int64_t> v =
      ints_attribute(node, name).value_or(std::vector<std::int64_t>{fallback, fallback});
  if (v.size() != 2) {
    unsupported_attribute(node, name,
                          name + " has " + std::to_string(v.size()) +
                              " values; onelearn's layers are 2-D (expected 2)");
  }
  return v;
}

/// Extra outputs (a Dropout's mask, a MaxPool's indices, BatchNormalization's training
/// statistics) must be unused: onelearn's layers do not produce them.
inline void check_extra_outputs(const ChainReader& r, const ::onnx::NodeProto& node) {
  for (int i = 1; i < node.output_size(); ++i) {
    const std::string& o = node.output(i);
    if (o.empty()) continue;
    if (!r.consumers(o).empty() || r.is_graph_output(o)) {
      unsupported_attribute(node, "output " + std::to_string(i),
                            "output " + std::to_string(i) + " ('" + o +
                                "') is used, and the onelearn layer does not produce it");
    }
  }
}

}  // namespace detail

/// The chain of layers `model` describes, as a built nn::Sequential<T> (see the top of this
/// header); `where` names the model in errors about the graph as a whole.
template <class T>
nn::Sequential<T> to_sequential(const ::onnx::ModelProto& model,
                                const std::string& where = "onnx model") {
  using detail::ChainReader;
  using Imported = detail::ImportedLayer<T>;
  const ChainReader r(model);
  const auto& graph = r.graph();
  // The one input and output.
  std::vector<const ::onnx::ValueInfoProto*> inputs;
  for (const auto& in : graph.input())
    if (!r.is_constant(in.name())) inputs.push_back(&in);
  if (inputs.size() != 1 || graph.output_size() != 1) {
    throw graph_error(where + ": to_sequential needs one input and one output, found " +
                      std::to_string(inputs.size()) + " inputs and " +
                      std::to_string(graph.output_size()) + " outputs");
  }
  const ::onnx::ValueInfoProto& input = *inputs[0];
  const std::string output = graph.output(0).name();
  nn::Shape shape;
  std::int64_t fixed_batch = -1;
  {
    const bool known = input.type().has_tensor_type() && input.type().tensor_type().has_shape();
    const auto* dims = known ? &input.type().tensor_type().shape() : nullptr;
    bool ok = dims != nullptr && dims->dim_size() >= 2 && dims->dim_size() <= nn::Shape::max_rank;
    for (int i = 1; ok && i < dims->dim_size(); ++i) {
      ok = dims->dim(i).has_dim_value() && dims->dim(i).dim_value() > 0;
      if (ok) shape.push_back(static_cast<index_t>(dims->dim(i).dim_value()));
    }
    if (!ok) {
      throw graph_error(where + ": input '" + input.name() +
                        "': to_sequential needs its shape (batch, d1, ...) with every dimension "
                        "but the batch known");
    }
    if (dims->dim(0).has_dim_value()) fixed_batch = dims->dim(0).dim_value();
  }
  const nn::Shape input_shape = shape;

  std::vector<Imported> layers;
  std::vector<bool> used(static_cast<std::size_t>(graph.node_size()), false);
  for (int n = 0; n < graph.node_size(); ++n) {
    if (r.is_folded(n)) used[static_cast<std::size_t>(n)] = true;
  }
  // Adds a layer, checks it takes the current shape and advances it.
  const auto push = [&](const ::onnx::NodeProto& node, std::unique_ptr<nn::Layer<T>> layer,
                        std::vector<std::vector<T>> params, std::vector<std::vector<T>> state) {
    try {
      shape = layer->output_shape(shape);
    } catch (const shape_error& e) {
      throw shape_error(ChainReader::describe(node) + ": " + e.what());
    }
    layers.push_back({std::move(layer), std::move(params), std::move(state),
                      ChainReader::describe(node)});
  };
  const auto make = [&](const ::onnx::NodeProto& node, const auto& spec) {
    try {
      return spec.template make<T>();
    } catch (const shape_error&) {
      throw;
    } catch (const invalid_argument& e) {
      throw unsupported_error(unsupported_kind::attribute, node.op_type(),
                              ChainReader::describe(node) + ": the onelearn layer refuses it: " +
                                  e.what());
    }
  };

  std::string current = input.name();
  while (current != output) {
    const std::vector<int> readers = r.consumers(current);
    if (readers.empty()) {
      throw graph_error(where + ": value '" + current +
                        "' is read by no node and is not the graph output");
    }
    if (readers.size() > 1) {
      throw graph_error(ChainReader::describe(graph.node(readers[1])) + ": the graph branches at '" +
                        current + "' (also read by " +
                        ChainReader::describe(graph.node(readers[0])).substr(6) +
                        "); to_sequential needs a chain of layers");
    }
    const int index = readers[0];
    const ::onnx::NodeProto& node = graph.node(index);
    used[static_cast<std::size_t>(index)] = true;
    const std::string& op = node.op_type();
    const std::string what = ChainReader::describe(node);
    if (!node.domain().empty() && node.domain() != "ai.onnx") {
      throw unsupported_error(unsupported_kind::op, op,
                              what + ": no onelearn layer for operator " + op + " (domain " +
                                  node.domain() + ")");
    }
    if (node.input_size() == 0 || node.input(0) != current) {
      throw graph_error(what + ": reads '" + current +
                        "' as another input than its first (data) input; to_sequential needs a "
                        "chain of layers");
    }
    static constexpr std::string_view supported[] = {
        "Gemm",    "MatMul",     "Conv",    "MaxPool",  "AveragePool", "GlobalAveragePool",
        "BatchNormalization", "Relu", "LeakyRelu", "Elu", "Sigmoid", "Tanh", "Softmax",
        "LogSoftmax", "Flatten", "Reshape", "Dropout", "Identity"};
    if (std::find(std::begin(supported), std::end(supported), op) == std::end(supported)) {
      throw unsupported_error(
          unsupported_kind::op, op,
          what + ": no onelearn layer for operator " + op +
              " (to_sequential reads Gemm, MatMul (+ Add), Conv, MaxPool, AveragePool, "
              "GlobalAveragePool, BatchNormalization, Relu, LeakyRelu, Elu, Sigmoid, Tanh, "
              "Softmax, LogSoftmax, Flatten, Reshape, Dropout and Identity)");
    }
    for (int i = 1; i < node.input_size(); ++i) {
      if (!node.input(i).empty() && !r.is_constant(node.input(i))) {
        throw graph_error(what + ": input '" + node.input(i) +
                          "' is not a constant (an initializer or a Constant node); "
                          "to_sequential needs constant weights");
      }
    }
    std::string next = node.output_size() > 0 ? node.output(0) : std::string();
    detail::check_extra_outputs(r, node);

    if (op == "Gemm") {
      if (detail::int_attribute(node, "transA", 0) != 0) {
        detail::unsupported_attribute(node, "transA", "transA = 1 (the batch would be the columns)");
      }
      if (shape.rank() != 1) {
        throw shape_error(what + ": expected a (batch, features) input, found per-sample shape " +
                          shape.to_string());
      }
      const bool trans_b = detail::int_attribute(node, "transB", 0) != 0;
      const double alpha = detail::float_attribute(node, "alpha", 1.f);
      const double beta = detail::float_attribute(node, "beta", 1.f);
      const Tensor& B = r.constant_input(node, 1, "the weight B");
      if (B.rank() != 2) throw graph_error(what + ": expected a 2-D weight B");
      const index_t in = shape[0];
      const std::int64_t units = trans_b ? B.shape()[0] : B.shape()[1];
      if ((trans_b ? B.shape()[1] : B.shape()[0]) != in) {
        throw shape_error(what + ": the weight B " + shape_string(B.shape()) +
                          (trans_b ? " (transposed)" : "") + " does not take " +
                          std::to_string(in) + " features");
      }
      const std::vector<double> b = detail::values_as<double>(B);
      std::vector<T> kernel(static_cast<std::size_t>(in * units));
      for (index_t i = 0; i < in; ++i) {
        for (std::int64_t u = 0; u < units; ++u) {
          const double w = trans_b ? b[static_cast<std::size_t>(u * in + i)]
                                   : b[static_cast<std::size_t>(i * units + u)];
          kernel[static_cast<std::size_t>(i * units + u)] = static_cast<T>(alpha * w);
        }
      }
      std::vector<std::vector<T>> params{std::move(kernel)};
      const bool has_bias = r.has_input(node, 2);
      if (has_bias) {
        const std::vector<double> c =
            detail::values_as<double>(r.constant_input(node, 2, "the bias C"));
        if (c.size() != 1 && c.size() != static_cast<std::size_t>(units)) {
          detail::unsupported_attribute(node, "C",
                                        "the bias C has " + std::to_string(c.size()) +
                                            " values; a Dense needs one per unit (" +
                                            std::to_string(units) + ")");
        }
        std::vector<T> bias(static_cast<std::size_t>(units));
        for (std::size_t u = 0; u < bias.size(); ++u) {
          bias[u] = static_cast<T>(beta * c[c.size() == 1 ? 0 : u]);
        }
        params.push_back(std::move(bias));
      }
      push(node, make(node, nn::Dense(static_cast<index_t>(units), {.use_bias = has_bias})),
           std::move(params), {});
    } else if (op == "MatMul") {
      const Tensor& B = r.constant_input(node, 1, "the weight matrix");
      if (B.rank() != 2 || B.shape()[0] != shape.back()) {
        throw shape_error(what + ": expected a constant (" + std::to_string(shape.back()) +
                          " x units) matrix, found " + shape_string(B.shape()));
      }
      const std::int64_t units = B.shape()[1];
      std::vector<std::vector<T>> params{detail::values_as<T>(B)};
      // The Add of a constant bias that follows (nn.Linear on N-d input): part of the Dense.
      const std::vector<int> after = next.empty() ? std::vector<int>{} : r.consumers(next);
      bool has_bias = false;
      if (after.size() == 1 && !r.is_graph_output(next)) {
        const ::onnx::NodeProto& add = graph.node(after[0]);
        if (add.op_type() == "Add" && add.input_size() == 2) {
          const int other = add.input(0) == next ? 1 : 0;
          if (r.is_constant(add.input(other))) {
            const Tensor& c = r.constant_input(add, other, "the bias");
            bool per_unit = c.size() == static_cast<std::size_t>(units) && c.rank() >= 1 &&
                            c.shape().back() == units;
            if (per_unit) {
              used[static_cast<std::size_t>(after[0])] = true;
              params.push_back(detail::values_as<T>(c));
              has_bias = true;
              next = add.output(0);
            }
          }
        }
      }
      push(node, make(node, nn::Dense(static_cast<index_t>(units), {.use_bias = has_bias})),
           std::move(params), {});
    } else if (op == "Conv") {
      const Tensor& W = r.constant_input(node, 1, "the weight W");
      if (W.rank() != 4 || shape.rank() != 3) {
        detail::unsupported_attribute(
            node, "kernel_shape",
            "a " + std::to_string(static_cast<int>(W.rank()) - 2) +
                "-D convolution on per-sample shape " + shape.to_string() +
                "; onelearn has Conv2D on (C, H, W) only");
      }
      const std::vector<std::int64_t> k = {W.shape()[2], W.shape()[3]};
      if (const auto ks = detail::ints_attribute(node, "kernel_shape"); ks && *ks != k) {
        throw graph_error(what + ": kernel_shape disagrees with the weight's shape " +
                          shape_string(W.shape()));
      }
      const std::vector<std::int64_t> s = detail::pair_attribute(node, "strides", 1);
      const std::vector<std::int64_t> d = detail::pair_attribute(node, "dilations", 1);
      const std::vector<std::int64_t> p = detail::window_pads(node, shape, k, s, d);
      const std::int64_t group = detail::int_attribute(node, "group", 1);
      if (group < 1 || W.shape()[1] * group != shape[0]) {
        throw shape_error(what + ": the weight " + shape_string(W.shape()) + " with group " +
                          std::to_string(group) + " does not take " + std::to_string(shape[0]) +
                          " channels");
      }
      std::vector<std::vector<T>> params{detail::values_as<T>(W)};
      const bool has_bias = r.has_input(node, 2);
      if (has_bias) {
        const Tensor& B = r.constant_input(node, 2, "the bias B");
        if (B.size() != static_cast<std::size_t>(W.shape()[0])) {
          throw shape_error(what + ": expected a bias of " + std::to_string(W.shape()[0]) +
                            " values, found " + std::to_string(B.size()));
        }
        params.push_back(detail::values_as<T>(B));
      }
      nn::Conv2DOptions options;
      options.strides = nn::Size2{s[0], s[1]};
      options.dilation_rate = nn::Size2{d[0], d[1]};
      options.padding = nn::Padding2D(p[0], p[2], p[1], p[3]);
      options.groups = group;
      options.use_bias = has_bias;
      push(node, make(node, nn::Conv2D(W.shape()[0], nn::Size2{k[0], k[1]}, options)),
           std::move(params), {});
    } else if (op == "MaxPool" || op == "AveragePool") {
      if (shape.rank() != 3) {
        detail::unsupported_attribute(node, "kernel_shape",
                                      "pooling on per-sample shape " + shape.to_string() +
                                          "; onelearn's pools are 2-D on (C, H, W)");
      }
      const std::vector<std::int64_t> k = detail::pair_attribute(node, "kernel_shape", 0);
      const std::vector<std::int64_t> s = detail::pair_attribute(node, "strides", 1);
      const std::vector<std::int64_t> d = detail::pair_attribute(node, "dilations", 1);
      if (d[0] != 1 || d[1] != 1) {
        detail::unsupported_attribute(node, "dilations",
                                      "dilated pooling (onelearn's pools have no dilation)");
      }
      const std::vector<std::int64_t> p = detail::window_pads(node, shape, k, s, d);
      if (detail::int_attribute(node, "ceil_mode", 0) != 0) {
        // Harmless only where rounding up gives the same output size.
        for (std::size_t a = 0; a < 2; ++a) {
          const std::int64_t span = shape[static_cast<int>(a) + 1] + p[a] + p[a + 2] - k[a];
          if (span % s[a] != 0) {
            detail::unsupported_attribute(node, "ceil_mode",
                                          "ceil_mode = 1 gives a larger output than onelearn's "
                                          "pools, which round down");
          }
        }
      }
      if (detail::int_attribute(node, "storage_order", 0) != 0 && node.output_size() > 1) {
        detail::unsupported_attribute(node, "storage_order", "storage_order = 1");
      }
      nn::PoolOptions options;
      options.strides = nn::Size2{s[0], s[1]};
      options.padding = nn::Padding2D(p[0], p[2], p[1], p[3]);
      options.count_include_pad = detail::int_attribute(node, "count_include_pad", 0) != 0;
      const nn::Size2 pool{k[0], k[1]};
      if (op == "MaxPool") {
        push(node, make(node, nn::MaxPool2D(pool, options)), {}, {});
      } else {
        push(node, make(node, nn::AveragePool2D(pool, options)), {}, {});
      }
    } else if (op == "GlobalAveragePool") {
      if (shape.rank() != 3) {
        detail::unsupported_attribute(node, "input", "global pooling on per-sample shape " +
                                                         shape.to_string() +
                                                         "; onelearn's is 2-D on (C, H, W)");
      }
      const index_t C = shape[0];
      push(node, make(node, nn::GlobalAveragePool2D{}), {}, {});
      // ONNX keeps the spatial dimensions as 1 x 1.
      push(node, make(node, nn::Reshape(nn::Shape{C, 1, 1})), {}, {});
    } else if (op == "BatchNormalization") {
      if (detail::int_attribute(node, "training_mode", 0) != 0) {
        detail::unsupported_attribute(node, "training_mode",
                                      "training_mode = 1 (only inference graphs are read)");
      }
      if (detail::int_attribute(node, "spatial", 1) != 1) {
        detail::unsupported_attribute(node, "spatial", "spatial = 0 (statistics per element)");
      }
      if (shape.rank() < 1) throw shape_error(what + ": expected an input with channels");
      const auto C = static_cast<std::size_t>(shape[0]);
      std::vector<std::vector<T>> values;
      const char* names[] = {"scale", "B", "input_mean", "input_var"};
      for (int i = 1; i <= 4; ++i) {
        const Tensor& t = r.constant_input(node, i, names[i - 1]);
        if (t.size() != C) {
          throw shape_error(what + ": expected " + std::to_string(C) + " values of " +
                            names[i - 1] + ", found " + std::to_string(t.size()));
        }
        values.push_back(detail::values_as<T>(t));
      }
      nn::BatchNormalizationOptions options;
      options.epsilon = detail::float_attribute(node, "epsilon", 1e-5f);
      options.momentum = detail::float_attribute(node, "momentum", 0.9f);
      push(node, make(node, nn::BatchNormalization{options}), {values[0], values[1]},
           {values[2], values[3]});
    } else if (op == "Relu") {
      push(node, make(node, nn::ReLU{}), {}, {});
    } else if (op == "LeakyRelu") {
      push(node, make(node, nn::LeakyReLU{detail::float_attribute(node, "alpha", 0.01f)}), {}, {});
    } else if (op == "Elu") {
      push(node, make(node, nn::ELU{detail::float_attribute(node, "alpha", 1.f)}), {}, {});
    } else if (op == "Sigmoid") {
      push(node, make(node, nn::Sigmoid{}), {}, {});
    } else if (op == "Tanh") {
      push(node, make(node, nn::Tanh{}), {}, {});
    } else if (op == "Softmax" || op == "LogSoftmax") {
      // onelearn's are over the last axis: opset 13+ the axis alone (default -1); before, the
      // input coerced to 2-D at `axis` (default 1), the same only when axis is the last.
      const auto rank = static_cast<std::int64_t>(shape.rank()) + 1;
      std::int64_t axis = detail::int_attribute(node, "axis", r.opset() >= 13 ? -1 : 1);
      if (axis < 0) axis += rank;
      if (axis != rank - 1) {
        detail::unsupported_attribute(node, "axis",
                                      "axis " + std::to_string(axis) + " of a rank-" +
                                          std::to_string(rank) +
                                          " input; onelearn's is over the last axis");
      }
      if (op == "Softmax") {
        push(node, make(node, nn::Softmax{}), {}, {});
      } else {
        push(node, make(node, nn::LogSoftmax{}), {}, {});
      }
    } else if (op == "Flatten") {
      std::int64_t axis = detail::int_attribute(node, "axis", 1);
      if (axis < 0) axis += static_cast<std::int64_t>(shape.rank()) + 1;
      if (axis != 1) {
        detail::unsupported_attribute(node, "axis",
                                      "axis " + std::to_string(axis) +
                                          " (onelearn's Flatten keeps the batch: axis 1)");
      }
      push(node, make(node, nn::Flatten{}), {}, {});
    } else if (op == "Reshape") {
      const std::vector<std::int64_t> target =
          detail::values_as<std::int64_t>(r.constant_input(node, 1, "the shape"));
      const bool allow_zero = detail::int_attribute(node, "allowzero", 0) != 0;
      if (target.empty() ||
          !(target[0] == -1 || (target[0] == 0 && !allow_zero) ||
            (fixed_batch > 0 && target[0] == fixed_batch))) {
        detail::unsupported_attribute(node, "shape",
                                      "a reshape across the batch dimension (the target's first "
                                      "entry must be 0, -1 or the batch size)");
      }
      nn::Shape per_sample;
      for (std::size_t i = 1; i < target.size(); ++i) {
        std::int64_t v = target[i];
        if (v == 0 && !allow_zero) {
          if (static_cast<int>(i) > shape.rank()) {
            throw shape_error(what + ": shape entry 0 copies dimension " + std::to_string(i) +
                              ", which the input lacks");
          }
          v = shape[static_cast<int>(i) - 1];
        }
        per_sample.push_back(static_cast<index_t>(v));
      }
      if (per_sample.rank() == 0) {
        detail::unsupported_attribute(node, "shape", "a reshape to (batch,) only");
      }
      if (target[0] == -1) {
        // -1 for the batch: the rest are all known.
        for (int i = 0; i < per_sample.rank(); ++i) {
          if (per_sample[i] < 1) {
            detail::unsupported_attribute(node, "shape",
                                          "two inferred (-1) dimensions with the batch");
          }
        }
      }
      push(node, make(node, nn::Reshape(per_sample)), {}, {});
    } else if (op == "Dropout" || op == "Identity") {
      if (op == "Dropout" && r.has_input(node, 2)) {
        const Tensor& training = r.constant_input(node, 2, "training_mode");
        if (!training.to_vector<double>().empty() && training.to_vector<double>()[0] != 0) {
          detail::unsupported_attribute(node, "training_mode", "training_mode = true");
        }
      }
      // The identity at inference: no layer.
    } else {
      throw unsupported_error(
          unsupported_kind::op, op,
          what + ": no onelearn layer for operator " + op +
              " (to_sequential reads Gemm, MatMul (+ Add), Conv, MaxPool, AveragePool, "
              "GlobalAveragePool, BatchNormalization, Relu, LeakyRelu, Elu, Sigmoid, Tanh, "
              "Softmax, LogSoftmax, Flatten, Reshape, Dropout and Identity)");
    }
    if (next.empty()) throw graph_error(what + ": has no output");
    current = next;
  }
  for (int n = 0; n < graph.node_size(); ++n) {
    if (!used[static_cast<std::size_t>(n)]) {
      throw graph_error(ChainReader::describe(graph.node(n)) +
                        ": not on the chain from the input to the output; to_sequential needs "
                        "a chain of layers");
    }
  }
  if (layers.empty()) {
    throw graph_error(where + ": the graph has no layer (only identities); nothing to build");
  }

  nn::Sequential<T> seq;
  for (Imported& l : layers) seq.add(std::move(l.layer));
  seq.build(input_shape, 0);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    nn::Layer<T>& layer = seq.layer(i);
    const auto copy = [&](std::vector<std::span<T>> to, const std::vector<std::vector<T>>& from,
                          const char* what) {
      if (to.size() != from.size()) {
        throw shape_error(layers[i].node + ": the layer has " + std::to_string(to.size()) +
                          " " + what + " buffers, the graph gives " +
                          std::to_string(from.size()));
      }
      for (std::size_t j = 0; j < to.size(); ++j) {
        if (to[j].size() != from[j].size()) {
          throw shape_error(layers[i].node + ": " + what + " buffer " + std::to_string(j) +
                            " holds " + std::to_string(to[j].size()) +
                            " values, the graph gives " + std::to_string(from[j].size()));
        }
        std::copy(from[j].begin(), from[j].end(), to[j].begin());
      }
    };
    copy(layer.parameters(), layers[i].parameters, "parameter");
    copy(layer.state(), layers[i].state, "state");
  }
  return seq;
}

/// The same for a loaded graph (onnx::load).
template <class T>
nn::Sequential<T> to_sequential(const Graph& graph) {
  return to_sequential<T>(graph.proto());
}

}  // namespace onelearn::onnx
