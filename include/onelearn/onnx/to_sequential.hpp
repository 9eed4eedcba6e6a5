#pragma once
/**
 * \file
 * \brief An ONNX graph that is a chain of layers, as a built and trainable `nn::Sequential<T>`.
 * \ingroup onnx
 *
 * <!-- example-context: nn -->
 * \code
 * #include <onelearn/onnx/to_sequential.hpp>
 * onelearn::onnx::Graph g = onelearn::onnx::load("cnn.onnx");        // from torch.onnx.export
 * onelearn::nn::Sequential<float> model = onelearn::onnx::to_sequential<float>(g);
 * onelearn::Matrix<float> logits = model.predict(X);                 // what the graph computes
 * model.compile(onelearn::nn::Adam{.learning_rate = 1e-4},
 *               onelearn::nn::SparseCategoricalCrossentropy{.from_logits = true});
 * model.fit(X, y, {.epochs = 3});                                    // fine-tuning
 * \endcode
 *
 * `onnx::to_sequential<T>(graph)`: an ONNX graph that is a chain of layers onelearn has becomes
 * a built, trainable `nn::Sequential<T>` holding the graph's weights: import a PyTorch MLP or
 * CNN, compile it and fine-tune it with fit.
 *
 * The graph: one input (its first dimension is the batch; the others must be known: they
 * become the Sequential's input shape, so images are N, C, H, W as in nn), one output, and
 * nodes that form a single chain from the input to the output, each reading the previous
 * one's output as its data input and only constants (initializers or Constant nodes) for the
 * rest. Each node is read by the importer of its op_type in the table of
 * `onnx/layers/registry.hpp` (one header per layer family under `onnx/layers/`, beside the
 * layer's exporter).
 *
 * \par Operators and the layers they become
 * - Gemm (transA = 0, transB 0 or 1, alpha and beta folded into the weights; bias C of one
 *   value per unit, or none): Dense.
 * - MatMul with a constant (in x units) matrix, and the Add of a constant bias that follows it
 *   (what PyTorch writes for nn.Linear on N-d input): Dense. (Transposes of constants are
 *   folded first: PyTorch 0.3 wrote a Linear without bias as Transpose(W) + MatMul.)
 * - Conv (2-D: kernel_shape, strides, pads, also asymmetric, dilations, group, auto_pad):
 *   Conv2D.
 * - MaxPool, AveragePool (2-D; pads smaller than the window; count_include_pad; dilations 1;
 *   ceil_mode only where it gives the same output size): MaxPool2D, AveragePool2D.
 * - GlobalAveragePool: GlobalAveragePool2D + Reshape to (C, 1, 1), ONNX's output shape.
 * - BatchNormalization (inference; epsilon, momentum): BatchNormalization with the moving mean
 *   and variance as its state.
 * - Relu, LeakyRelu, Elu, Sigmoid, Tanh: the activation layers.
 * - Softmax, LogSoftmax over the last axis: Softmax, LogSoftmax.
 * - Flatten (axis 1): Flatten.
 * - Reshape with a shape that keeps the batch (first entry 0, -1 or the input's fixed batch
 *   size): Reshape, or Flatten for (batch, -1). The shape is a constant, or computed from the
 *   shape of the data it reshapes as torch.onnx writes `x.view(x.size(0), -1)`: Shape(x) ->
 *   Gather(0) -> Unsqueeze([0]) -> Concat(., [-1]) -> Reshape(x, .), Unsqueeze's axes an
 *   attribute (opset < 13) or a constant input (13 on). Those nodes are read with the
 *   Reshape (onnx/detail/dynamic_shape.hpp follows Shape, Gather, Unsqueeze, Concat and
 *   constants, nothing else), and the batch size must come out as the target's first entry.
 * - Dropout, Identity: nothing (the identity).
 *
 * The model is built (weights and BatchNormalization statistics copied in) but not compiled:
 * compile it with an optimizer and a loss, then fit continues from the imported weights.
 * Layer settings ONNX does not carry take onelearn's defaults (no regularisation; a
 * Dense/Conv2D initializer that is never used since the weights are given).
 *
 * Errors (onnx/errors.hpp), each naming the node, the operator and the problem:
 * - `unsupported_error`: kind op: an operator with no onelearn layer (Selu, PRelu, Concat, Add
 *   not after a MatMul, ...); kind attribute: an attribute the layer cannot express
 *   (asymmetric or oversized pool padding, ceil_mode changing the output size, dilated
 *   pooling, a 1-D or 3-D convolution, transA, a softmax over another axis, a reshape across
 *   the batch, a Reshape's target computed by other nodes than those above);
 * - `graph_error`: a graph that is not a chain (a value read by two nodes, a node off the
 *   chain, a Shape read for anything but the target of a Reshape of the same value), weights
 *   that are not constants, several inputs or outputs, an input shape that is not known;
 * - and the errors of the layers' own checks (`invalid_argument`, `shape_error`), with the
 *   node named.
 */

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/nn/layer.hpp"
#include "onelearn/nn/sequential.hpp"
#include "onelearn/onnx/detail/chain_reader.hpp"
#include "onelearn/onnx/errors.hpp"
#include "onelearn/onnx/graph.hpp"
#include "onelearn/onnx/layers/layer_io.hpp"
#include "onelearn/onnx/layers/registry.hpp"
#include "onelearn/onnx/load.hpp"

namespace onelearn::onnx {

namespace detail {

/// Extra outputs (a Dropout's mask, a MaxPool's indices, BatchNormalization's training
/// statistics) must be unused: onelearn's layers do not produce them.
inline void check_extra_outputs(const ChainReader& r, const ::onnx::NodeProto& node) {
  for (int i = 1; i < node.output_size(); ++i) {
    const std::string& o = node.output(i);
    if (o.empty()) continue;
    if (!r.consumers(o).empty() || r.is_graph_output(o)) {
      throw unsupported_error(unsupported_kind::attribute, "output " + std::to_string(i),
                              ChainReader::describe(node) + ": output " + std::to_string(i) +
                                  " ('" + o +
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
  using Imported = ImportedLayer<T>;
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

  std::vector<Imported> imported;
  std::vector<bool> used(static_cast<std::size_t>(graph.node_size()), false);
  for (int n = 0; n < graph.node_size(); ++n) {
    if (r.is_folded(n)) used[static_cast<std::size_t>(n)] = true;
  }
  const LayerTable<T>& table = layers::layer_table<T>();
  std::string current = input.name();
  while (current != output) {
    std::vector<int> readers = r.consumers(current);
    // Shape nodes reading the chain's value compute the target of the Reshape that reads it
    // (x.view(x.size(0), -1)): that Reshape's importer follows them; checked below.
    std::vector<int> shape_readers;
    std::erase_if(readers, [&](int n) {
      const auto& node = graph.node(n);
      const bool is_shape = node.op_type() == "Shape" &&
                            (node.domain().empty() || node.domain() == "ai.onnx");
      if (is_shape) shape_readers.push_back(n);
      return is_shape;
    });
    if (!shape_readers.empty() &&
        (readers.size() != 1 || graph.node(readers[0]).op_type() != "Reshape" ||
         r.is_constant(graph.node(readers[0]).input_size() > 1 ? graph.node(readers[0]).input(1)
                                                               : std::string()))) {
      throw graph_error(ChainReader::describe(graph.node(shape_readers[0])) +
                        ": reads the shape of '" + current +
                        "', which to_sequential follows only into the computed target of a "
                        "Reshape of that same value (x.view(x.size(0), -1))");
    }
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
    const typename LayerTable<T>::Importer read = table.importer(op);
    if (read == nullptr) {
      throw unsupported_error(unsupported_kind::op, op,
                              what + ": no onelearn layer for operator " + op +
                                  " (to_sequential reads " + table.import_list() + ")");
    }
    for (int i = 1; i < node.input_size(); ++i) {
      // A Reshape's target may be computed from its data's shape: the importer follows it.
      if (op == "Reshape" && i == 1) continue;
      if (!node.input(i).empty() && !r.is_constant(node.input(i))) {
        throw graph_error(what + ": input '" + node.input(i) +
                          "' is not a constant (an initializer or a Constant node); "
                          "to_sequential needs constant weights");
      }
    }
    std::string next = node.output_size() > 0 ? node.output(0) : std::string();
    detail::check_extra_outputs(r, node);

    LayerImport<T> in(r, node, shape, fixed_batch, imported, used, next);
    read(in);
    for (const int n : shape_readers) {
      if (!used[static_cast<std::size_t>(n)]) {
        throw graph_error(ChainReader::describe(graph.node(n)) + ": reads the shape of '" +
                          current + "' but does not compute the target of " +
                          what.substr(6) + "; to_sequential needs a chain of layers");
      }
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
  if (imported.empty()) {
    throw graph_error(where + ": the graph has no layer (only identities); nothing to build");
  }

  nn::Sequential<T> seq;
  for (Imported& l : imported) seq.add(std::move(l.layer));
  seq.build(input_shape, 0);
  for (std::size_t i = 0; i < imported.size(); ++i) {
    nn::Layer<T>& layer = seq.layer(i);
    const auto copy = [&](std::vector<std::span<T>> to, const std::vector<std::vector<T>>& from,
                          const char* what) {
      if (to.size() != from.size()) {
        throw shape_error(imported[i].node + ": the layer has " + std::to_string(to.size()) +
                          " " + what + " buffers, the graph gives " +
                          std::to_string(from.size()));
      }
      for (std::size_t j = 0; j < to.size(); ++j) {
        if (to[j].size() != from[j].size()) {
          throw shape_error(imported[i].node + ": " + what + " buffer " + std::to_string(j) +
                            " holds " + std::to_string(to[j].size()) +
                            " values, the graph gives " + std::to_string(from[j].size()));
        }
        std::copy(from[j].begin(), from[j].end(), to[j].begin());
      }
    };
    copy(layer.parameters(), imported[i].parameters, "parameter");
    copy(layer.state(), imported[i].state, "state");
  }
  return seq;
}

/// The same for a loaded graph (onnx::load).
template <class T>
nn::Sequential<T> to_sequential(const Graph& graph) {
  return to_sequential<T>(graph.proto());
}

}  // namespace onelearn::onnx
