#pragma once
// The table of the ONNX translations of onelearn's layers: one registration line per layer
// family (each family's header under onnx/layers/ holds its exporter and its importers).
// onnx/export/nn.hpp looks up the exporter of each layer of a Sequential by the layer's
// dynamic type; onnx/to_sequential.hpp looks up the importer of each node by its op_type.
//
// \code
//   const auto& table = onelearn::onnx::layers::layer_table<float>();
//   table.exporter(layer);        // null for a layer class without an export (custom layers)
//   table.importer("Conv");       // null for an operator without a layer
// \endcode
//
// Adding a layer: see onnx/layers/layer_io.hpp. The order of the lines is the order in which
// errors list what is supported.

#include "onelearn/onnx/layers/activations.hpp"
#include "onelearn/onnx/layers/batch_normalization.hpp"
#include "onelearn/onnx/layers/conv.hpp"
#include "onelearn/onnx/layers/dense.hpp"
#include "onelearn/onnx/layers/dropout.hpp"
#include "onelearn/onnx/layers/embedding.hpp"
#include "onelearn/onnx/layers/layer_io.hpp"
#include "onelearn/onnx/layers/pool.hpp"
#include "onelearn/onnx/layers/reshape.hpp"

namespace onelearn::onnx::layers {

/// The exporters and importers of onelearn's layers for scalar type T (built once, then only
/// read: safe to use from several threads).
template <class T>
const LayerTable<T>& layer_table() {
  static const LayerTable<T> table = [] {
    LayerTable<T> t;
    register_dense(t);
    register_conv(t);
    register_pools(t);
    register_batch_normalization(t);
    register_activations(t);
    register_reshapes(t);
    register_dropout(t);
    register_embedding(t);
    return t;
  }();
  return table;
}

}  // namespace onelearn::onnx::layers
