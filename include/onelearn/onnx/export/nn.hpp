#pragma once
/**
 * \file
 * \brief ONNX export of a built nn::Sequential.
 * \ingroup onnx
 *
 * <!-- example-context: nn -->
 * \code
 * #include <onelearn/onnx/export/nn.hpp>
 * namespace nn = onelearn::nn;
 * nn::Sequential<float> model{nn::Input({1, 8, 8}), nn::Conv2D(8, 3, {.padding = "same"}),
 *                             nn::BatchNormalization{}, nn::ReLU{}, nn::MaxPool2D(2),
 *                             nn::Flatten{}, nn::Dense(10)};
 * model.compile(nn::Adam{}, nn::SparseCategoricalCrossentropy{}).fit(X, y);
 * onelearn::onnx::save(model, "cnn.onnx");   // input "X" (float, N x 1 x 8 x 8),
 *                                            // output "variable" (float, N x 10)
 * \endcode
 *
 * ONNX export of a built nn::Sequential: one node (or a few) per layer, in the model's order.
 *
 * The model: as every onelearn export (onnx/export/core.hpp): IR version 8, opset 17, one
 * float32 input "X" of shape ("N", per-sample input shape...) (images N, C, H, W, as in nn),
 * one float32 output "variable" of shape ("N", per-sample output shape...) holding what
 * Sequential::predict returns (raw outputs), metadata_props "estimator" = "Sequential",
 * "parameters" (the input shape and each layer with its settings) and "onelearn_version".
 * With `{.precision = onnx::Precision::float64}` (a Sequential<double>'s numbers kept whole) the
 * input, every weight and the output are double. The layers' own constants that ONNX holds in
 * float32 attributes stay float32 (LeakyReLU's and ELU's alpha, BatchNormalization's epsilon):
 * a double network whose constants are not float32 values then reproduces predict to about
 * 1e-8 rather than 1e-12.
 *
 * Layers: each layer family's translation lives in its own header under onnx/layers/ (dense,
 * conv, pool, batch_normalization, reshape (Flatten, Reshape), dropout, embedding, activations),
 * which describes the nodes it writes; onnx/layers/registry.hpp is the table that maps each
 * layer class to its exporter (looked up here by the layer's dynamic type) and each ONNX
 * operator to its importer (onnx::to_sequential). In short: Dense Gemm (MatMul + Add on N-d
 * input), Conv2D Conv, MaxPool2D MaxPool, AveragePool2D AveragePool, GlobalAveragePool2D
 * GlobalAveragePool + Flatten, Flatten Flatten, Reshape Reshape, BatchNormalization the
 * inference op, Dropout nothing, Embedding Cast + Gather, the activations their ONNX operator
 * (GELU as Erf arithmetic); a fused activation follows its layer's node as its own node(s).
 *
 * How the layers' settings are read: through each layer class's const accessors
 * (activation(), alpha(), use_bias(), Conv2D's geometry() and groups(), a pool's
 * geometry(input) and count_include_pad(), parameters() const and state() const for the
 * weights). Nothing is run or written, so to_proto only reads the model: several threads may
 * export one model at once.
 *
 * Errors: not_fitted_error for a Sequential that is not built (fit or build first);
 * onnx::unsupported_error (an invalid_argument, kind op) naming the layer for a layer without
 * an exporter in the table (custom layers); save: io_error as onnx/export/core.hpp.
 */

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/version.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/nn/layer.hpp"
#include "onelearn/nn/sequential.hpp"
#include "onelearn/onnx/errors.hpp"
#include "onelearn/onnx/export/core.hpp"
#include "onelearn/onnx/layers/layer_io.hpp"
#include "onelearn/onnx/layers/registry.hpp"
#include "onelearn/space/concept.hpp"

namespace onelearn::onnx {

namespace detail {

/// Appends the nodes of one layer reading `x` (per-sample shape `in`), through the layer's
/// exporter in the table; returns the output value and adds the layer's description
/// ("Dense(units=10, activation=relu)") to `described`.
template <class T>
std::string export_layer(GraphBuilder& b, const nn::Layer<T>& layer, const nn::Shape& in,
                         const std::string& x, std::string& described) {
  const LayerTable<T>& table = layers::layer_table<T>();
  const auto* write = table.exporter(layer);
  if (write == nullptr) {
    throw unsupported_error(unsupported_kind::op, std::string(layer.class_name()),
                            "onnx::to_proto: layer '" + layer.name() + "' (" +
                                std::string(layer.class_name()) +
                                "): no ONNX export for this layer type (expected " +
                                table.export_list() + ")");
  }
  std::string desc(layer.class_name());
  LayerExport e{b, in, x, desc};
  std::string y = (*write)(e, layer);
  described += (described.empty() ? "" : ", ") + layer.name() + "=" + desc;
  return y;
}

}  // namespace detail

/// The built `model` as an ONNX ModelProto (see the top of this header); `{.precision =
/// Precision::float64}` writes the input, every weight and the output as double.
template <class T, exec::ExecutionPolicy Exec, space::ComputeSpace Space>
::onnx::ModelProto to_proto(const nn::Sequential<T, Exec, Space>& model,
                            const ExportOptions& options = {}) {
  if (!model.is_built()) {
    throw not_fitted_error(
        "onnx::to_proto: expected a built nn::Sequential, found one that is not built; call "
        "fit or build first");
  }
  ::onnx::ModelProto proto;
  proto.set_ir_version(export_ir_version);
  proto.set_producer_name("onelearn");
  proto.set_producer_version(std::string(version));
  proto.set_model_version(1);
  auto* opset = proto.add_opset_import();
  opset->set_domain("");
  opset->set_version(export_opset);

  ::onnx::GraphProto& graph = *proto.mutable_graph();
  graph.set_name("Sequential");
  std::vector<std::int64_t> in_dims = {-1};
  for (const std::int64_t d : detail::dims_of(model.input_shape())) in_dims.push_back(d);
  GraphBuilder builder(graph, options.precision);
  detail::set_value_info(*graph.add_input(), "X", builder.real_type(), in_dims);

  for (const char* reserved : {"X", "variable"}) builder.fresh(reserved);
  std::string x = "X";
  nn::Shape shape = model.input_shape();
  std::string described = "input_shape=" + shape.to_string();
  for (std::size_t i = 0; i < model.size(); ++i) {
    const nn::Layer<T>& layer = model.layer(i);
    builder.set_scope(layer.name());
    x = detail::export_layer<T>(builder, layer, shape, x, described);
    shape = layer.output_shape(shape);
  }
  builder.set_scope({});
  if (x == "X") {
    builder.node("Identity", {"X"}, {"variable"});
  } else {
    detail::rename_value(graph, x, "variable");
  }
  std::vector<std::int64_t> out_dims = {-1};
  for (const std::int64_t d : detail::dims_of(shape)) out_dims.push_back(d);
  detail::set_value_info(*graph.add_output(), "variable", builder.real_type(), out_dims);

  detail::add_metadata(proto, "estimator", "Sequential");
  detail::add_metadata(proto, "parameters", described);
  detail::add_metadata(proto, "onelearn_version", std::string(version));
  proto.set_doc_string("onelearn " + std::string(version) + " export of Sequential");
  return proto;
}

/// Exports the built `model` (to_proto) and writes it to `path` (temporary file + rename).
template <class T, exec::ExecutionPolicy Exec, space::ComputeSpace Space>
void save(const nn::Sequential<T, Exec, Space>& model, const std::filesystem::path& path,
          const ExportOptions& options = {}) {
  save_proto(to_proto(model, options), path);
}

}  // namespace onelearn::onnx
