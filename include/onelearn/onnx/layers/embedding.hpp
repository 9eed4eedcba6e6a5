#pragma once
// ONNX translation of Embedding (nn/layers/embedding.hpp).
//
// Export: Cast (to int64) + Gather (axis 0) of the table: onelearn carries the indices as float
// values. onnxruntime runs it; onelearn's own executor has neither operator. (An index that is
// not an integer is an error in onelearn and truncated by Cast.)
//
// Import: none. Gather reads the table as its first input and the chain's value as its second,
// which is not a chain of layers as onnx::to_sequential reads them.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>

#include "onelearn/nn/layers/embedding.hpp"
#include "onelearn/onnx/export/core.hpp"
#include "onelearn/onnx/layers/layer_io.hpp"

namespace onelearn::onnx::layers {

template <class T>
std::string export_embedding(LayerExport& e, const nn::EmbeddingLayer<T>& embedding) {
  // The indices arrive as float values (the data between layers is one type): Cast them to
  // int64, then Gather rows of the table.
  GraphBuilder& b = e.graph;
  const auto p = embedding.parameters();
  const std::string table = b.constant("embeddings",
                                       {embedding.input_dim(), embedding.output_dim()},
                                       detail::span_reals<T>(p[0]));
  const std::string indices = b.fresh("indices");
  set_attribute(b.node("Cast", {e.x}, {indices}), "to",
                static_cast<std::int64_t>(::onnx::TensorProto::INT64));
  std::string y = b.fresh("embedding");
  set_attribute(b.node("Gather", {table, indices}, {y}), "axis", std::int64_t{0});
  e.description += "(input_dim=" + std::to_string(embedding.input_dim()) +
                   ", output_dim=" + std::to_string(embedding.output_dim()) + ")";
  return y;
}

template <class T>
void register_embedding(LayerTable<T>& table) {
  table.add_export("Embedding", &export_embedding<T>);
}

}  // namespace onelearn::onnx::layers
