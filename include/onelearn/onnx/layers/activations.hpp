#pragma once
// ONNX translation of the activation layers (nn/layers/activation.hpp), and of the activation
// fused into Dense and Conv2D (export_activation, used by onnx/layers/dense.hpp and conv.hpp).
//
// Export: ReLU, LeakyReLU, ELU (with their alpha), Sigmoid, Tanh, Softmax, LogSoftmax (axis -1,
// the last axis, as onelearn's): the ONNX operator of the same name. GELU (exact, erf): opset
// 17 has no Gelu, so 0.5 x (1 + Erf(x / sqrt 2)) as Div, Erf, Add, Mul, Mul (not read back:
// it is not one node).
//
// Import: Relu, LeakyRelu (alpha, default 0.01), Elu (alpha, default 1), Sigmoid, Tanh become
// the layer of the same name; Softmax and LogSoftmax only over the last axis (opset 13+: the
// axis alone, default -1; before, the input coerced to 2-D at `axis`, default 1, the same only
// when axis is the last), else an unsupported_error (kind attribute, "axis").

#include <onnx/onnx_pb.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <string>
#include <string_view>

#include "onelearn/core/params.hpp"
#include "onelearn/nn/detail/activation_kernels.hpp"
#include "onelearn/nn/layers/activation.hpp"
#include "onelearn/onnx/export/core.hpp"
#include "onelearn/onnx/layers/layer_io.hpp"

namespace onelearn::onnx::layers {

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
      const std::string sqrt2 = b.constant("sqrt2", {}, {std::numbers::sqrt2});
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
      set_attribute(b.node(log ? "LogSoftmax" : "Softmax", {x}, {y}), "axis",
                            std::int64_t{-1});
      return y;
    }
  }
  return x;
}

template <class T>
std::string export_activation_layer(LayerExport& e, const nn::ActivationLayer<T>& layer) {
  const NnActivation kind = layer.activation();
  const auto alpha = static_cast<double>(layer.alpha());
  if (kind == NnActivation::leaky_relu || kind == NnActivation::elu) {
    e.description += "(alpha=" + detail::param_value_string(ParamValue(alpha)) + ")";
  }
  return export_activation(e.graph, kind, alpha, e.x);
}

template <class T>
void import_relu(LayerImport<T>& in) {
  in.add(nn::ReLU{});
}

template <class T>
void import_leaky_relu(LayerImport<T>& in) {
  in.add(nn::LeakyReLU{in.attributes().get_float("alpha", 0.01f)});
}

template <class T>
void import_elu(LayerImport<T>& in) {
  in.add(nn::ELU{in.attributes().get_float("alpha", 1.f)});
}

template <class T>
void import_sigmoid(LayerImport<T>& in) {
  in.add(nn::Sigmoid{});
}

template <class T>
void import_tanh(LayerImport<T>& in) {
  in.add(nn::Tanh{});
}

/// The axis of a Softmax or LogSoftmax node, which must be the last (onelearn's).
template <class T>
void check_softmax_axis(const LayerImport<T>& in) {
  const auto rank = static_cast<std::int64_t>(in.shape().rank()) + 1;
  std::int64_t axis = in.attributes().get_int("axis", in.opset() >= 13 ? -1 : 1);
  if (axis < 0) axis += rank;
  if (axis != rank - 1) {
    in.unsupported_attribute("axis", "axis " + std::to_string(axis) + " of a rank-" +
                                         std::to_string(rank) +
                                         " input; onelearn's is over the last axis");
  }
}

template <class T>
void import_softmax(LayerImport<T>& in) {
  check_softmax_axis(in);
  in.add(nn::Softmax{});
}

template <class T>
void import_log_softmax(LayerImport<T>& in) {
  check_softmax_axis(in);
  in.add(nn::LogSoftmax{});
}

template <class T>
void register_activations(LayerTable<T>& table) {
  table.add_export("an activation layer", &export_activation_layer<T>);
  table.add_import("Relu", &import_relu<T>);
  table.add_import("LeakyRelu", &import_leaky_relu<T>);
  table.add_import("Elu", &import_elu<T>);
  table.add_import("Sigmoid", &import_sigmoid<T>);
  table.add_import("Tanh", &import_tanh<T>);
  table.add_import("Softmax", &import_softmax<T>);
  table.add_import("LogSoftmax", &import_log_softmax<T>);
}

}  // namespace onelearn::onnx::layers
