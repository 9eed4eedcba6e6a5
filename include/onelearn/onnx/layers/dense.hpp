#pragma once
// ONNX translation of Dense (nn/layers/dense.hpp).
//
// Export: Gemm (transB = 0, the kernel in Dense's (input x units) layout) on (N, F) input: one
// node, what PyTorch writes for nn.Linear. On input of rank > 2 per batch (Dense acts on the
// last axis) MatMul + Add, since Gemm is 2-D only. A fused activation follows as its own
// node(s) (onnx/layers/activations.hpp).
//
// Import:
//   Gemm (transA = 0, transB 0 or 1, alpha and beta folded into the weights; bias C of one
//        value per unit, or none) on (N, F) input                      Dense
//   MatMul with a constant (in x units) matrix, and the Add of a constant bias that follows it
//        (what PyTorch writes for nn.Linear on N-d input)               Dense
// The Dense has no activation (the activation nodes that follow become their own layers).

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/nn/layers/dense.hpp"
#include "onelearn/onnx/errors.hpp"
#include "onelearn/onnx/export/core.hpp"
#include "onelearn/onnx/layers/activations.hpp"
#include "onelearn/onnx/layers/layer_io.hpp"
#include "onelearn/onnx/tensor.hpp"

namespace onelearn::onnx::layers {

template <class T>
std::string export_dense(LayerExport& e, const nn::DenseLayer<T>& dense) {
  GraphBuilder& b = e.graph;
  const index_t units = dense.units(), width = e.input.back();
  const NnActivation act = dense.activation();
  const auto p = dense.parameters();
  const std::string kernel = b.constant("kernel", {width, units}, detail::span_reals<T>(p[0]));
  std::vector<std::string> inputs = {e.x, kernel};
  if (p.size() > 1) inputs.push_back(b.constant("bias", {units}, detail::span_reals<T>(p[1])));
  std::string y;
  if (e.input.rank() == 1) {
    y = b.apply("Gemm", inputs, "dense");
  } else {
    y = b.apply("MatMul", {e.x, kernel}, "matmul");
    if (inputs.size() > 2) y = b.apply("Add", {y, inputs[2]}, "dense");
  }
  y = export_activation(b, act, static_cast<double>(dense.alpha()), y);
  e.description += "(units=" + std::to_string(units) +
                   ", use_bias=" + (dense.use_bias() ? "true" : "false") +
                   ", activation=" + std::string(activation_name(act)) + ")";
  return y;
}

template <class T>
void import_gemm(LayerImport<T>& in) {
  const NodeAttributes& a = in.attributes();
  const nn::Shape& shape = in.shape();
  if (a.get_int("transA", 0) != 0) {
    in.unsupported_attribute("transA", "transA = 1 (the batch would be the columns)");
  }
  if (shape.rank() != 1) {
    throw shape_error(in.where() +
                      ": expected a (batch, features) input, found per-sample shape " +
                      shape.to_string());
  }
  const bool trans_b = a.get_int("transB", 0) != 0;
  const double alpha = a.get_float("alpha", 1.f);
  const double beta = a.get_float("beta", 1.f);
  const Tensor& B = in.constant_input(1, "the weight B");
  if (B.rank() != 2) throw graph_error(in.where() + ": expected a 2-D weight B");
  const index_t width = shape[0];
  const std::int64_t units = trans_b ? B.shape()[0] : B.shape()[1];
  if ((trans_b ? B.shape()[1] : B.shape()[0]) != width) {
    throw shape_error(in.where() + ": the weight B " + shape_string(B.shape()) +
                      (trans_b ? " (transposed)" : "") + " does not take " +
                      std::to_string(width) + " features");
  }
  const std::vector<double> b = detail::values_as<double>(B);
  std::vector<T> kernel(static_cast<std::size_t>(width * units));
  for (index_t i = 0; i < width; ++i) {
    for (std::int64_t u = 0; u < units; ++u) {
      const double w = trans_b ? b[static_cast<std::size_t>(u * width + i)]
                               : b[static_cast<std::size_t>(i * units + u)];
      kernel[static_cast<std::size_t>(i * units + u)] = static_cast<T>(alpha * w);
    }
  }
  std::vector<std::vector<T>> params{std::move(kernel)};
  const bool has_bias = in.has_input(2);
  if (has_bias) {
    const std::vector<double> c = detail::values_as<double>(in.constant_input(2, "the bias C"));
    if (c.size() != 1 && c.size() != static_cast<std::size_t>(units)) {
      in.unsupported_attribute("C", "the bias C has " + std::to_string(c.size()) +
                                        " values; a Dense needs one per unit (" +
                                        std::to_string(units) + ")");
    }
    std::vector<T> bias(static_cast<std::size_t>(units));
    for (std::size_t u = 0; u < bias.size(); ++u) {
      bias[u] = static_cast<T>(beta * c[c.size() == 1 ? 0 : u]);
    }
    params.push_back(std::move(bias));
  }
  in.add(nn::Dense(static_cast<index_t>(units), {.use_bias = has_bias}), std::move(params));
}

template <class T>
void import_matmul(LayerImport<T>& in) {
  const nn::Shape& shape = in.shape();
  const Tensor& B = in.constant_input(1, "the weight matrix");
  if (B.rank() != 2 || B.shape()[0] != shape.back()) {
    throw shape_error(in.where() + ": expected a constant (" + std::to_string(shape.back()) +
                      " x units) matrix, found " + shape_string(B.shape()));
  }
  const std::int64_t units = B.shape()[1];
  std::vector<std::vector<T>> params{detail::values_as<T>(B)};
  // The Add of a constant bias that follows (nn.Linear on N-d input): part of the Dense.
  const detail::ChainReader& r = in.reader();
  const std::string& next = in.output();
  const std::vector<int> after = next.empty() ? std::vector<int>{} : r.consumers(next);
  bool has_bias = false;
  if (after.size() == 1 && !r.is_graph_output(next)) {
    const ::onnx::NodeProto& add = r.graph().node(after[0]);
    if (add.op_type() == "Add" && add.input_size() == 2) {
      const int other = add.input(0) == next ? 1 : 0;
      if (r.is_constant(add.input(other))) {
        const Tensor& c = r.constant_input(add, other, "the bias");
        const bool per_unit = c.size() == static_cast<std::size_t>(units) && c.rank() >= 1 &&
                              c.shape().back() == units;
        if (per_unit) {
          params.push_back(detail::values_as<T>(c));
          has_bias = true;
          in.absorb(after[0]);
        }
      }
    }
  }
  in.add(nn::Dense(static_cast<index_t>(units), {.use_bias = has_bias}), std::move(params));
}

template <class T>
void register_dense(LayerTable<T>& table) {
  table.add_export("Dense", &export_dense<T>);
  table.add_import("Gemm", &import_gemm<T>);
  table.add_import("MatMul", &import_matmul<T>, "MatMul (+ Add)");
}

}  // namespace onelearn::onnx::layers
