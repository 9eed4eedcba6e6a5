#pragma once
// ONNX translation of BatchNormalization (nn/layers/batch_normalization.hpp).
//
// Export: the inference op (training_mode 0) with the moving mean and variance, epsilon and
// momentum as the layer's. Not folded into the previous layer: the graph keeps one node per
// layer, so onnx::to_sequential gives back the same layers (a trainable BatchNormalization with
// its statistics), and the numbers are computed in the same order as onelearn's inference.
//
// Import: BatchNormalization (inference; epsilon, default 1e-5; momentum, default 0.9) becomes a
// BatchNormalization with scale and B as its parameters and the mean and variance as its state;
// training_mode = 1 or spatial = 0 is an unsupported_error (kind attribute).

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/params.hpp"
#include "onelearn/nn/layers/batch_normalization.hpp"
#include "onelearn/onnx/export/core.hpp"
#include "onelearn/onnx/layers/layer_io.hpp"
#include "onelearn/onnx/tensor.hpp"

namespace onelearn::onnx::layers {

template <class T>
std::string export_batch_normalization(LayerExport& e, const nn::BatchNormalizationLayer<T>& bn) {
  GraphBuilder& b = e.graph;
  const auto p = bn.parameters();
  const auto s = bn.state();
  const auto C = static_cast<std::int64_t>(p[0].size());
  const std::string gamma = b.constant("gamma", {C}, detail::span_reals<T>(p[0]));
  const std::string beta = b.constant("beta", {C}, detail::span_reals<T>(p[1]));
  const std::string mean = b.constant("moving_mean", {C}, detail::span_reals<T>(s[0]));
  const std::string var = b.constant("moving_variance", {C}, detail::span_reals<T>(s[1]));
  std::string y = b.fresh("batch_normalization");
  auto& n = b.node("BatchNormalization", {e.x, gamma, beta, mean, var}, {y});
  set_attribute(n, "epsilon", static_cast<float>(bn.epsilon()));
  // ONNX's momentum is Keras's: moving = momentum moving + (1 - momentum) batch.
  set_attribute(n, "momentum", static_cast<float>(bn.momentum()));
  e.description += "(momentum=" + detail::param_value_string(ParamValue(bn.momentum())) +
                   ", epsilon=" + detail::param_value_string(ParamValue(bn.epsilon())) + ")";
  return y;
}

template <class T>
void import_batch_normalization(LayerImport<T>& in) {
  const NodeAttributes& a = in.attributes();
  if (a.get_int("training_mode", 0) != 0) {
    in.unsupported_attribute("training_mode",
                             "training_mode = 1 (only inference graphs are read)");
  }
  if (a.get_int("spatial", 1) != 1) {
    in.unsupported_attribute("spatial", "spatial = 0 (statistics per element)");
  }
  if (in.shape().rank() < 1) throw shape_error(in.where() + ": expected an input with channels");
  const auto C = static_cast<std::size_t>(in.shape()[0]);
  std::vector<std::vector<T>> values;
  const char* names[] = {"scale", "B", "input_mean", "input_var"};
  for (int i = 1; i <= 4; ++i) {
    const Tensor& t = in.constant_input(i, names[i - 1]);
    if (t.size() != C) {
      throw shape_error(in.where() + ": expected " + std::to_string(C) + " values of " +
                        names[i - 1] + ", found " + std::to_string(t.size()));
    }
    values.push_back(detail::values_as<T>(t));
  }
  nn::BatchNormalizationOptions options;
  options.epsilon = a.get_float("epsilon", 1e-5f);
  options.momentum = a.get_float("momentum", 0.9f);
  in.add(nn::BatchNormalization{options}, {values[0], values[1]}, {values[2], values[3]});
}

template <class T>
void register_batch_normalization(LayerTable<T>& table) {
  table.add_export("BatchNormalization", &export_batch_normalization<T>);
  table.add_import("BatchNormalization", &import_batch_normalization<T>);
}

}  // namespace onelearn::onnx::layers
