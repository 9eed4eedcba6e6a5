#pragma once
// Reads back what onnx/export/decomposition.hpp writes for PCA, float32 or float64: Sub of the
// mean from the features, MatMul with the p x k components transposed and, with whiten, Div by
// sqrt(explained_variance) (a constant, or a Sqrt node of the variances). A converter may instead fold the whitening into the matrix (each
// column divided by its component's sqrt(explained_variance)); since a PCA's components have
// unit norm, columns whose norms are not 1 say so, and give the variances back as 1 / norm².

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/onnx/detail/attributes.hpp"
#include "onelearn/onnx/detail/plain_graph.hpp"
#include "onelearn/onnx/errors.hpp"

namespace onelearn::onnx::detail {

struct ReadPCA {
  std::vector<double> components;          ///< k x p, row-major (PCA's components())
  std::vector<double> mean;                ///< p
  std::vector<double> explained_variance;  ///< k with whiten; empty without (not in the file)
  bool whiten = false;
  std::int64_t k = 0, p = 0;
};

/// How far from 1 a component's norm may be before the column is taken as whitened: float32
/// rounding moves a unit norm by ~1e-7, and a whitened column's norm is 1 / sqrt(variance).
/// When every component's variance is within ~2e-4 of 1, a folded file reads as a PCA without
/// whiten whose transform differs from the original's by at most that much.
inline constexpr double pca_unit_norm_tolerance = 1e-4;

inline ReadPCA read_pca(const ::onnx::ModelProto& model, std::string_view target) {
  const PlainGraph g(model, target);
  std::vector<const ::onnx::NodeProto*> projections;
  for (const auto* matmul : g.nodes("MatMul")) {
    if (matmul->input_size() != 2) continue;
    const ::onnx::NodeProto* sub = g.producer(matmul->input(0));
    if (sub != nullptr && sub->op_type() == "Sub" && sub->input_size() == 2 &&
        g.is_features(sub->input(0))) {
      projections.push_back(matmul);
    }
  }
  if (projections.size() != 1) {
    g.fail(projections.empty()
               ? std::string("no MatMul of the centred features (expected the layout of PCA's "
                             "export: Sub of the mean, MatMul with the components, "
                             "onnx/export/decomposition.hpp)")
               : std::string("more than one MatMul of the centred features"));
  }
  const ::onnx::NodeProto& matmul = *projections[0];
  const ::onnx::NodeProto& sub = *g.producer(matmul.input(0));
  const Tensor* weights = g.constant(matmul.input(1));
  const auto weight_values = g.reals(matmul.input(1));
  if (weights == nullptr || weights->rank() != 2 || !weight_values) {
    NodeAttributes(matmul).fail("the components are not a p x k real constant");
  }
  ReadPCA out;
  out.p = weights->shape()[0];
  out.k = weights->shape()[1];
  const auto mean = g.reals(sub.input(1));
  if (!mean || static_cast<std::int64_t>(mean->size()) != out.p) {
    NodeAttributes(sub).fail("the mean is not a real constant of " + std::to_string(out.p) +
                             " values (the components' rows)");
  }
  if (g.declared_width() > 0 && g.declared_width() != out.p) {
    throw shape_error("onnx: onnx::to_estimator<" + std::string(target) + ">: components of " +
                      std::to_string(out.p) + " features, the graph input has " +
                      std::to_string(g.declared_width()));
  }
  out.mean = *mean;
  const auto k = static_cast<std::size_t>(out.k);
  const auto p = static_cast<std::size_t>(out.p);
  out.components.resize(k * p);
  for (std::size_t c = 0; c < k; ++c) {
    for (std::size_t j = 0; j < p; ++j) out.components[c * p + j] = (*weight_values)[j * k + c];
  }
  // Whitening as a Div of the scores by k values: a constant sqrt(explained_variance) (as
  // onelearn writes it), or a Sqrt node of the constant variances themselves.
  const ::onnx::NodeProto* div = g.consumer(matmul.output(0), "Div");
  if (div != nullptr && div->input_size() == 2 && div->input(0) == matmul.output(0)) {
    const ::onnx::NodeProto* sqrt = g.producer(div->input(1));
    if (sqrt != nullptr && sqrt->op_type() == "Sqrt" && sqrt->input_size() == 1) {
      const auto variance = g.reals(sqrt->input(0), out.k);
      if (!variance) {
        NodeAttributes(*sqrt).fail("the explained variance is not a real constant of " +
                                   std::to_string(out.k) + " values");
      }
      out.explained_variance = *variance;
    } else {
      const auto sdev = g.reals(div->input(1), out.k);
      if (!sdev) {
        NodeAttributes(*div).fail("the scores' divisor is not a real constant of " +
                                  std::to_string(out.k) + " values (sqrt(explained_variance))");
      }
      for (const double s : *sdev) out.explained_variance.push_back(s * s);
    }
    out.whiten = true;
    return out;
  }
  // Whitening folded into the matrix: components of norm 1 / sqrt(variance).
  std::vector<double> norms(k, 0.0);
  for (std::size_t c = 0; c < k; ++c) {
    for (std::size_t j = 0; j < p; ++j) norms[c] += out.components[c * p + j] * out.components[c * p + j];
    norms[c] = std::sqrt(norms[c]);
  }
  bool folded = false;
  for (const double n : norms) folded = folded || std::abs(n - 1.0) > pca_unit_norm_tolerance;
  if (folded) {
    out.whiten = true;
    for (std::size_t c = 0; c < k; ++c) {
      if (!(norms[c] > 0.0) || !std::isfinite(norms[c])) {
        NodeAttributes(matmul).fail("component " + std::to_string(c) +
                                    " is zero or not finite, which a PCA's component is not");
      }
      out.explained_variance.push_back(1.0 / (norms[c] * norms[c]));
      for (std::size_t j = 0; j < p; ++j) out.components[c * p + j] /= norms[c];
    }
  }
  return out;
}

}  // namespace onelearn::onnx::detail
