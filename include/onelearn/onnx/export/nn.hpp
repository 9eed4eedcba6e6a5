#pragma once
// ONNX export of a built nn::Sequential: one node (or a few) per layer, in the model's order.
//
// \code
//   #include <onelearn/onnx/export/nn.hpp>
//   namespace nn = onelearn::nn;
//   nn::Sequential<float> model{nn::Input({1, 8, 8}), nn::Conv2D(8, 3, {.padding = "same"}),
//                               nn::BatchNormalization{}, nn::ReLU{}, nn::MaxPool2D(2),
//                               nn::Flatten{}, nn::Dense(10)};
//   model.compile(nn::Adam{}, nn::SparseCategoricalCrossentropy{}).fit(X, y);
//   onelearn::onnx::save(model, "cnn.onnx");   // input "X" (float, N x 1 x 8 x 8),
//                                              // output "variable" (float, N x 10)
// \endcode
//
// The model: as every onelearn export (onnx/export/core.hpp): IR version 8, opset 17, one
// float32 input "X" of shape ("N", per-sample input shape...) (images N, C, H, W, as in nn),
// one float32 output "variable" of shape ("N", per-sample output shape...) holding what
// Sequential::predict returns (raw outputs), metadata_props "estimator" = "Sequential",
// "parameters" (the input shape and each layer with its settings) and "onelearn_version".
//
// Layers:
//   Dense            Gemm (transB = 0, the kernel in Dense's (input x units) layout) on (N, F)
//                    input: one node, what PyTorch writes for nn.Linear, and what
//                    onnx::to_sequential reads back as a Dense. On input of rank > 2 per batch
//                    (Dense acts on the last axis) MatMul + Add, since Gemm is 2-D only.
//                    A fused activation follows as its own node(s).
//   Conv2D           Conv (kernel_shape, strides, pads as resolved for the input size,
//                    dilations, group); fused activation as for Dense.
//   MaxPool2D        MaxPool; AveragePool2D: AveragePool with count_include_pad as the layer's
//                    (0, the default, divides by the image positions in the window, as
//                    onelearn's default; 1 by the whole window). pads as resolved ("same"
//                    becomes explicit sizes), the bottom/right pad the smallest that gives the
//                    layer's output size (the windows are the same).
//   GlobalAveragePool2D  GlobalAveragePool + Flatten (ONNX keeps the 1 x 1 spatial dims).
//   Flatten          Flatten (axis 1); Reshape: Reshape to (-1, per-sample output shape).
//   BatchNormalization   the inference op (training_mode 0) with the moving mean and variance,
//                    epsilon and momentum as the layer's. Not folded into the previous layer:
//                    the graph keeps one node per layer, so onnx::to_sequential gives back the
//                    same layers (a trainable BatchNormalization with its statistics), and the
//                    numbers are computed in the same order as onelearn's inference.
//   Dropout          nothing (the identity at inference).
//   Embedding        Cast (to int64) + Gather (axis 0) of the table: onelearn carries the
//                    indices as float values. onnxruntime runs it; onelearn's own executor has
//                    neither operator. (An index that is not an integer is an error in onelearn
//                    and truncated by Cast.)
//   ReLU, LeakyReLU, ELU (with their alpha), Sigmoid, Tanh, Softmax, LogSoftmax (axis -1, the
//                    last axis, as onelearn's): the ONNX operator of the same name. GELU (exact,
//                    erf): opset 17 has no Gelu, so 0.5 x (1 + Erf(x / sqrt 2)) as Div, Erf,
//                    Add, Mul, Mul (onnxruntime runs it; onelearn's own executor has no Erf).
//
// How the layers' settings are read: each layer is dynamic_cast to its class and read through
// its const accessors (activation(), alpha(), use_bias(), Conv2D's geometry() and groups(), a
// pool's geometry(input) and count_include_pad(), parameters() const and state() const for the
// weights). Nothing is run or written, so to_proto only reads the model: several threads may
// export one model at once.
//
// Errors: not_fitted_error for a Sequential that is not built (fit or build first);
// onnx::unsupported_error (an invalid_argument, kind op) naming the layer for a layer without
// an ONNX translation here (custom layers); save: io_error as onnx/export/core.hpp.

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <numbers>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/core/version.hpp"
#include "onelearn/exec/policy.hpp"
#include "onelearn/nn/detail/activation_kernels.hpp"
#include "onelearn/nn/detail/im2col.hpp"
#include "onelearn/nn/layer.hpp"
#include "onelearn/nn/layers/activation.hpp"
#include "onelearn/nn/layers/average_pool2d.hpp"
#include "onelearn/nn/layers/batch_normalization.hpp"
#include "onelearn/nn/layers/conv2d.hpp"
#include "onelearn/nn/layers/dense.hpp"
#include "onelearn/nn/layers/dropout.hpp"
#include "onelearn/nn/layers/embedding.hpp"
#include "onelearn/nn/layers/flatten.hpp"
#include "onelearn/nn/layers/global_average_pool2d.hpp"
#include "onelearn/nn/layers/max_pool2d.hpp"
#include "onelearn/nn/layers/reshape.hpp"
#include "onelearn/nn/sequential.hpp"
#include "onelearn/onnx/errors.hpp"
#include "onelearn/onnx/export/core.hpp"

namespace onelearn::onnx {

namespace detail {

using NnActivation = nn::detail::Activation;

inline std::string_view activation_name(NnActivation a) {
  static constexpr std::array<std::string_view, 9> names = {
      "linear", "relu", "leaky_relu", "elu", "gelu", "sigmoid", "tanh", "softmax", "log_softmax"};
  return names[static_cast<std::size_t>(a)];
}

/// Appends the nodes of an activation; returns the output value (x itself for linear).
inline std::string export_activation(GraphBuilder& b, NnActivation kind, double alpha,
                                     const std::string& x) {
  switch (kind) {
    case NnActivation::linear:
      return x;
    case NnActivation::relu:
      return b.apply("Relu", {x}, "relu");
    case NnActivation::leaky_relu: {
      const std::string y = b.fresh("leaky_relu");
      set_attribute(b.node("LeakyRelu", {x}, {y}), "alpha", static_cast<float>(alpha));
      return y;
    }
    case NnActivation::elu: {
      const std::string y = b.fresh("elu");
      set_attribute(b.node("Elu", {x}, {y}), "alpha", static_cast<float>(alpha));
      return y;
    }
    case NnActivation::gelu: {
      // 0.5 x (1 + erf(x / sqrt 2)): opset 17 has no Gelu operator (opset 20 adds it).
      const std::string sqrt2 = b.constant("sqrt2", {}, {std::numbers::sqrt2_v<float>});
      const std::string one = b.constant("one", {}, {1.f});
      const std::string half = b.constant("half", {}, {0.5f});
      const std::string scaled = b.apply("Div", {x, sqrt2}, "gelu_scaled");
      const std::string erf = b.apply("Erf", {scaled}, "gelu_erf");
      const std::string plus = b.apply("Add", {erf, one}, "gelu_erf_plus_one");
      const std::string times = b.apply("Mul", {x, plus}, "gelu_times_x");
      return b.apply("Mul", {times, half}, "gelu");
    }
    case NnActivation::sigmoid:
      return b.apply("Sigmoid", {x}, "sigmoid");
    case NnActivation::tanh:
      return b.apply("Tanh", {x}, "tanh");
    case NnActivation::softmax:
    case NnActivation::log_softmax: {
      const bool log = kind == NnActivation::log_softmax;
      const std::string y = b.fresh(log ? "log_softmax" : "softmax");
      // onelearn's softmax is over the last axis.
      set_attribute(b.node(log ? "LogSoftmax" : "Softmax", {x}, {y}), "axis", std::int64_t{-1});
      return y;
    }
  }
  return x;
}

inline std::vector<std::int64_t> dims_of(const nn::Shape& s) {
  std::vector<std::int64_t> out;
  for (int i = 0; i < s.rank(); ++i) out.push_back(static_cast<std::int64_t>(s[i]));
  return out;
}

template <class T>
std::vector<float> span_floats(std::span<const T> s) {
  return std::vector<float>(s.begin(), s.end());
}

inline std::string pair_string(index_t a, index_t b) {
  return "(" + std::to_string(a) + ", " + std::to_string(b) + ")";
}

/// The end (bottom or right) pad of a pooling window along one axis that ONNX is given: the
/// smallest that gives the layer's output count `out` over `n` positions (window k, stride s,
/// begin pad as resolved). The windows are the layer's; a resolved "same" pad is already this.
inline index_t pool_end_pad(index_t n, index_t k, index_t s, index_t begin, index_t out) {
  return std::max<index_t>(0, (out - 1) * s + k - n - begin);
}

/// Appends a MaxPool or AveragePool node over the layer's resolved window `g`; returns its
/// output and appends the layer's settings to `desc`.
inline std::string export_pool(GraphBuilder& b, const nn::detail::WindowGeometry& g,
                               bool average, bool count_include_pad, const std::string& x,
                               std::string& desc) {
  const index_t end_h = pool_end_pad(g.height, g.kh, g.sh, g.pad_top, g.out_h);
  const index_t end_w = pool_end_pad(g.width, g.kw, g.sw, g.pad_left, g.out_w);
  std::string y = b.fresh(average ? "average_pool" : "max_pool");
  auto& n = b.node(average ? "AveragePool" : "MaxPool", {x}, {y});
  set_attribute(n, "kernel_shape", std::vector<std::int64_t>{g.kh, g.kw});
  set_attribute(n, "strides", std::vector<std::int64_t>{g.sh, g.sw});
  // ONNX's order: begin of each axis, then end of each axis.
  set_attribute(n, "pads", std::vector<std::int64_t>{g.pad_top, g.pad_left, end_h, end_w});
  if (average) set_attribute(n, "count_include_pad", std::int64_t{count_include_pad ? 1 : 0});
  desc += "(pool_size=" + pair_string(g.kh, g.kw) + ", strides=" + pair_string(g.sh, g.sw) +
          ", padding=(" + std::to_string(g.pad_top) + ", " + std::to_string(end_h) + ", " +
          std::to_string(g.pad_left) + ", " + std::to_string(end_w) + ")" +
          (average ? std::string(", count_include_pad=") + (count_include_pad ? "true" : "false")
                   : std::string()) +
          ")";
  return y;
}

/// Appends the nodes of one layer reading `x` (per-sample shape `in`); returns the output value
/// and adds the layer's description ("Dense(units=10, activation=relu)") to `described`.
template <class T>
std::string export_layer(GraphBuilder& b, const nn::Layer<T>& layer, const nn::Shape& in,
                         const std::string& x, std::string& described) {
  const std::string where = "onnx::to_proto: layer '" + layer.name() + "' (" +
                            std::string(layer.class_name()) + ")";
  const std::string_view cls = layer.class_name();
  std::string desc(cls);
  std::string y = x;
  if (const auto* dense = dynamic_cast<const nn::DenseLayer<T>*>(&layer)) {
    const index_t units = dense->units(), width = in.back();
    const NnActivation act = dense->activation();
    const auto p = dense->parameters();
    const std::string kernel = b.constant("kernel", {width, units}, span_floats<T>(p[0]));
    std::vector<std::string> inputs = {x, kernel};
    if (p.size() > 1) inputs.push_back(b.constant("bias", {units}, span_floats<T>(p[1])));
    if (in.rank() == 1) {
      y = b.apply("Gemm", inputs, "dense");
    } else {
      y = b.apply("MatMul", {x, kernel}, "matmul");
      if (inputs.size() > 2) y = b.apply("Add", {y, inputs[2]}, "dense");
    }
    y = export_activation(b, act, static_cast<double>(dense->alpha()), y);
    desc += "(units=" + std::to_string(units) +
            ", use_bias=" + (dense->use_bias() ? "true" : "false") +
            ", activation=" + std::string(activation_name(act)) + ")";
  } else if (const auto* conv = dynamic_cast<const nn::Conv2DLayer<T>*>(&layer)) {
    const NnActivation act = conv->activation();
    const nn::detail::WindowGeometry& g = conv->geometry();
    const auto p = conv->parameters();
    const index_t F = conv->filters(), groups = conv->groups();
    const index_t cg = in[0] / groups;
    const std::string kernel = b.constant("kernel", {F, cg, g.kh, g.kw}, span_floats<T>(p[0]));
    std::vector<std::string> inputs = {x, kernel};
    if (p.size() > 1) inputs.push_back(b.constant("bias", {F}, span_floats<T>(p[1])));
    y = b.fresh("conv");
    auto& n = b.node("Conv", inputs, {y});
    set_attribute(n, "kernel_shape", std::vector<std::int64_t>{g.kh, g.kw});
    set_attribute(n, "strides", std::vector<std::int64_t>{g.sh, g.sw});
    set_attribute(n, "dilations", std::vector<std::int64_t>{g.dh, g.dw});
    // ONNX's order: begin of each axis, then end of each axis.
    set_attribute(n, "pads",
                  std::vector<std::int64_t>{g.pad_top, g.pad_left, g.pad_bottom, g.pad_right});
    set_attribute(n, "group", static_cast<std::int64_t>(groups));
    y = export_activation(b, act, static_cast<double>(conv->alpha()), y);
    desc += "(filters=" + std::to_string(F) + ", kernel_size=" + pair_string(g.kh, g.kw) +
            ", strides=" + pair_string(g.sh, g.sw) +
            ", dilation_rate=" + pair_string(g.dh, g.dw) + ", padding=(" +
            std::to_string(g.pad_top) + ", " + std::to_string(g.pad_bottom) + ", " +
            std::to_string(g.pad_left) + ", " + std::to_string(g.pad_right) +
            "), groups=" + std::to_string(groups) +
            ", use_bias=" + (conv->use_bias() ? "true" : "false") +
            ", activation=" + std::string(activation_name(act)) + ")";
  } else if (const auto* max_pool = dynamic_cast<const nn::MaxPool2DLayer<T>*>(&layer)) {
    y = export_pool(b, max_pool->geometry(in), false, false, x, desc);
  } else if (const auto* average = dynamic_cast<const nn::AveragePool2DLayer<T>*>(&layer)) {
    y = export_pool(b, average->geometry(in), true, average->count_include_pad(), x, desc);
  } else if (dynamic_cast<const nn::GlobalAveragePool2DLayer<T>*>(&layer) != nullptr) {
    const std::string pooled = b.apply("GlobalAveragePool", {x}, "global_average_pool");
    y = b.fresh("flatten");
    set_attribute(b.node("Flatten", {pooled}, {y}), "axis", std::int64_t{1});
  } else if (dynamic_cast<const nn::FlattenLayer<T>*>(&layer) != nullptr) {
    y = b.fresh("flatten");
    set_attribute(b.node("Flatten", {x}, {y}), "axis", std::int64_t{1});
  } else if (dynamic_cast<const nn::ReshapeLayer<T>*>(&layer) != nullptr) {
    const nn::Shape out = layer.output_shape(in);
    std::vector<std::int64_t> target = {-1};
    for (const std::int64_t d : dims_of(out)) target.push_back(d);
    const std::string shape =
        b.constant_int64("shape", {static_cast<std::int64_t>(target.size())}, target);
    y = b.apply("Reshape", {x, shape}, "reshape");
    desc += "(target_shape=" + out.to_string() + ")";
  } else if (const auto* bn = dynamic_cast<const nn::BatchNormalizationLayer<T>*>(&layer)) {
    const auto p = bn->parameters();
    const auto s = bn->state();
    const auto C = static_cast<std::int64_t>(p[0].size());
    const std::string gamma = b.constant("gamma", {C}, span_floats<T>(p[0]));
    const std::string beta = b.constant("beta", {C}, span_floats<T>(p[1]));
    const std::string mean = b.constant("moving_mean", {C}, span_floats<T>(s[0]));
    const std::string var = b.constant("moving_variance", {C}, span_floats<T>(s[1]));
    y = b.fresh("batch_normalization");
    auto& n = b.node("BatchNormalization", {x, gamma, beta, mean, var}, {y});
    set_attribute(n, "epsilon", static_cast<float>(bn->epsilon()));
    // ONNX's momentum is Keras's: moving = momentum moving + (1 - momentum) batch.
    set_attribute(n, "momentum", static_cast<float>(bn->momentum()));
    desc += "(momentum=" + param_value_string(ParamValue(bn->momentum())) +
            ", epsilon=" + param_value_string(ParamValue(bn->epsilon())) + ")";
  } else if (dynamic_cast<const nn::DropoutLayer<T>*>(&layer) != nullptr) {
    // The identity at inference: no node.
  } else if (const auto* activation = dynamic_cast<const nn::ActivationLayer<T>*>(&layer)) {
    const NnActivation kind = activation->activation();
    const auto alpha = static_cast<double>(activation->alpha());
    y = export_activation(b, kind, alpha, x);
    if (kind == NnActivation::leaky_relu || kind == NnActivation::elu) {
      desc += "(alpha=" + param_value_string(ParamValue(alpha)) + ")";
    }
  } else if (const auto* embedding = dynamic_cast<const nn::EmbeddingLayer<T>*>(&layer)) {
    // The indices arrive as float values (the data between layers is one type): Cast them to
    // int64, then Gather rows of the table.
    const auto p = embedding->parameters();
    const std::string table = b.constant("embeddings",
                                         {embedding->input_dim(), embedding->output_dim()},
                                         span_floats<T>(p[0]));
    const std::string indices = b.fresh("indices");
    set_attribute(b.node("Cast", {x}, {indices}), "to",
                  static_cast<std::int64_t>(::onnx::TensorProto::INT64));
    y = b.fresh("embedding");
    set_attribute(b.node("Gather", {table, indices}, {y}), "axis", std::int64_t{0});
    desc += "(input_dim=" + std::to_string(embedding->input_dim()) +
            ", output_dim=" + std::to_string(embedding->output_dim()) + ")";
  } else {
    throw unsupported_error(unsupported_kind::op, std::string(cls),
                            where + ": no ONNX export for this layer type (expected Dense, "
                                    "Conv2D, MaxPool2D, AveragePool2D, GlobalAveragePool2D, "
                                    "Flatten, Reshape, BatchNormalization, Dropout, Embedding "
                                    "or an activation layer)");
  }
  described += (described.empty() ? "" : ", ") + layer.name() + "=" + desc;
  return y;
}

}  // namespace detail

/// The built `model` as an ONNX ModelProto (see the top of this header).
template <class T, exec::ExecutionPolicy Exec>
::onnx::ModelProto to_proto(const nn::Sequential<T, Exec>& model) {
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
  detail::set_value_info(*graph.add_input(), "X", ::onnx::TensorProto::FLOAT, in_dims);

  GraphBuilder builder(graph);
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
  detail::set_value_info(*graph.add_output(), "variable", ::onnx::TensorProto::FLOAT, out_dims);

  detail::add_metadata(proto, "estimator", "Sequential");
  detail::add_metadata(proto, "parameters", described);
  detail::add_metadata(proto, "onelearn_version", std::string(version));
  proto.set_doc_string("onelearn " + std::string(version) + " export of Sequential");
  return proto;
}

/// Exports the built `model` (to_proto) and writes it to `path` (temporary file + rename).
template <class T, exec::ExecutionPolicy Exec>
void save(const nn::Sequential<T, Exec>& model, const std::filesystem::path& path) {
  save_proto(to_proto(model), path);
}

}  // namespace onelearn::onnx
