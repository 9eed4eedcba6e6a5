#pragma once
// ONNX translation of Conv2D (nn/layers/conv2d.hpp).
//
// Export: Conv (kernel_shape, strides, pads as resolved for the input size, dilations, group);
// a fused activation follows as its own node(s) (onnx/layers/activations.hpp).
//
// Import: Conv, 2-D (kernel_shape, strides, pads, also asymmetric, dilations, group, auto_pad)
// on (C, H, W) input, with an optional bias: a Conv2D without activation. A 1-D or 3-D
// convolution is an unsupported_error (kind attribute, "kernel_shape").

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/nn/detail/im2col.hpp"
#include "onelearn/nn/layers/conv2d.hpp"
#include "onelearn/onnx/errors.hpp"
#include "onelearn/onnx/export/core.hpp"
#include "onelearn/onnx/layers/activations.hpp"
#include "onelearn/onnx/layers/layer_io.hpp"
#include "onelearn/onnx/tensor.hpp"

namespace onelearn::onnx::layers {

template <class T>
std::string export_conv2d(LayerExport& e, const nn::Conv2DLayer<T>& conv) {
  GraphBuilder& b = e.graph;
  const NnActivation act = conv.activation();
  const nn::detail::WindowGeometry& g = conv.geometry();
  const auto p = conv.parameters();
  const index_t F = conv.filters(), groups = conv.groups();
  const index_t cg = e.input[0] / groups;
  const std::string kernel =
      b.constant("kernel", {F, cg, g.kh, g.kw}, detail::span_reals<T>(p[0]));
  std::vector<std::string> inputs = {e.x, kernel};
  if (p.size() > 1) inputs.push_back(b.constant("bias", {F}, detail::span_reals<T>(p[1])));
  std::string y = b.fresh("conv");
  auto& n = b.node("Conv", inputs, {y});
  set_attribute(n, "kernel_shape", std::vector<std::int64_t>{g.kh, g.kw});
  set_attribute(n, "strides", std::vector<std::int64_t>{g.sh, g.sw});
  set_attribute(n, "dilations", std::vector<std::int64_t>{g.dh, g.dw});
  // ONNX's order: begin of each axis, then end of each axis.
  set_attribute(n, "pads",
                std::vector<std::int64_t>{g.pad_top, g.pad_left, g.pad_bottom, g.pad_right});
  set_attribute(n, "group", static_cast<std::int64_t>(groups));
  y = export_activation(b, act, static_cast<double>(conv.alpha()), y);
  e.description += "(filters=" + std::to_string(F) +
                   ", kernel_size=" + detail::pair_string(g.kh, g.kw) +
                   ", strides=" + detail::pair_string(g.sh, g.sw) +
                   ", dilation_rate=" + detail::pair_string(g.dh, g.dw) + ", padding=(" +
                   std::to_string(g.pad_top) + ", " + std::to_string(g.pad_bottom) + ", " +
                   std::to_string(g.pad_left) + ", " + std::to_string(g.pad_right) +
                   "), groups=" + std::to_string(groups) +
                   ", use_bias=" + (conv.use_bias() ? "true" : "false") +
                   ", activation=" + std::string(activation_name(act)) + ")";
  return y;
}

template <class T>
void import_conv(LayerImport<T>& in) {
  const nn::Shape& shape = in.shape();
  const Tensor& W = in.constant_input(1, "the weight W");
  if (W.rank() != 4 || shape.rank() != 3) {
    in.unsupported_attribute("kernel_shape", "a " + std::to_string(static_cast<int>(W.rank()) - 2) +
                                                 "-D convolution on per-sample shape " +
                                                 shape.to_string() +
                                                 "; onelearn has Conv2D on (C, H, W) only");
  }
  const std::vector<std::int64_t> k = {W.shape()[2], W.shape()[3]};
  if (const auto ks = in.attributes().get_ints("kernel_shape"); ks && *ks != k) {
    throw graph_error(in.where() + ": kernel_shape disagrees with the weight's shape " +
                      shape_string(W.shape()));
  }
  const std::vector<std::int64_t> s = detail::pair_attribute(in, "strides", 1);
  const std::vector<std::int64_t> d = detail::pair_attribute(in, "dilations", 1);
  const std::vector<std::int64_t> p = detail::window_pads(in, k, s, d);
  const std::int64_t group = in.attributes().get_int("group", 1);
  if (group < 1 || W.shape()[1] * group != shape[0]) {
    throw shape_error(in.where() + ": the weight " + shape_string(W.shape()) + " with group " +
                      std::to_string(group) + " does not take " + std::to_string(shape[0]) +
                      " channels");
  }
  std::vector<std::vector<T>> params{detail::values_as<T>(W)};
  const bool has_bias = in.has_input(2);
  if (has_bias) {
    const Tensor& B = in.constant_input(2, "the bias B");
    if (B.size() != static_cast<std::size_t>(W.shape()[0])) {
      throw shape_error(in.where() + ": expected a bias of " + std::to_string(W.shape()[0]) +
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
  in.add(nn::Conv2D(W.shape()[0], nn::Size2{k[0], k[1]}, options), std::move(params));
}

template <class T>
void register_conv(LayerTable<T>& table) {
  table.add_export("Conv2D", &export_conv2d<T>);
  table.add_import("Conv", &import_conv<T>);
}

}  // namespace onelearn::onnx::layers
