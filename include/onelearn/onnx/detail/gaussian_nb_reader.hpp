#pragma once
// Reads back what onnx/export/naive_bayes.hpp writes for GaussianNB, float32 or float64 (the
// float64 scores folded into a LinearClassifier first: onnx/detail/float64_layouts.hpp): the
// joint log-likelihood jll[n, c] = log prior_c - 1/2 sum_j log(2 pi var_cj) - 1/2 sum_j
// (x_j - theta_cj)^2 / var_cj as Unsqueeze(x), Sub of the k x p theta, Mul by itself, Mul by the
// k x p weights -1 / (2 var), MatMul with ones, Squeeze, Add of the k constants; then a
// LinearClassifier with identity coefficients, zero intercepts and SOFTMAX, whose labels are the
// classes. var = -1 / (2 weight); log prior_c = constant_c + 1/2 sum_j log(2 pi var_cj). KMeans'
// graph starts the same way without the weights: not a GaussianNB.

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/onnx/detail/attributes.hpp"
#include "onelearn/onnx/detail/float64_layouts.hpp"
#include "onelearn/onnx/detail/plain_graph.hpp"
#include "onelearn/onnx/errors.hpp"

namespace onelearn::onnx::detail {

struct ReadGaussianNB {
  std::vector<double> theta, var;     ///< k x p, row-major, rows in increasing label order
  std::vector<double> log_prior;      ///< k
  std::vector<std::int64_t> classes;  ///< k, increasing
  std::int64_t k = 0, p = 0;
};

inline ReadGaussianNB read_gaussian_nb(const ::onnx::ModelProto& file, std::string_view target) {
  const ::onnx::ModelProto model = fold_float64_layouts(file);
  const PlainGraph g(model, target);
  const std::vector<PlainGraph::Differences> differences = g.differences_of_features();
  if (differences.size() != 1) {
    g.fail(differences.empty()
               ? std::string("no differences to the class means (expected the layout of "
                             "GaussianNB's export: onnx/export/naive_bayes.hpp)")
               : std::string("more than one set of class means"));
  }
  const auto [sub, square] = differences[0];
  const Tensor* theta = g.constant(sub->input(1));
  const auto theta_values = g.reals(sub->input(1));
  if (theta == nullptr || theta->rank() != 2 || !theta_values) {
    NodeAttributes(*sub).fail("the class means are not a k x p real constant");
  }
  ReadGaussianNB out;
  out.k = theta->shape()[0];
  out.p = theta->shape()[1];
  // Squared, weighted (Mul by a k x p constant), summed (MatMul), Squeeze, Add.
  const ::onnx::NodeProto* weigh = square != nullptr ? g.consumer(square->output(0), "Mul") : nullptr;
  const auto weights = weigh != nullptr && weigh->input_size() == 2
                           ? g.reals(weigh->input(1), out.k * out.p)
                           : std::nullopt;
  if (!weights) {
    NodeAttributes(*sub).fail(
        "the squared differences to the means are not weighted by a k x p constant "
        "(-1 / (2 var)), as GaussianNB's are");
  }
  const ::onnx::NodeProto* matmul = g.consumer(weigh->output(0), "MatMul");
  const ::onnx::NodeProto* squeeze =
      matmul != nullptr ? g.consumer(matmul->output(0), "Squeeze") : nullptr;
  const ::onnx::NodeProto* add = squeeze != nullptr ? g.consumer(squeeze->output(0), "Add") : nullptr;
  const auto constants =
      add != nullptr && add->input_size() == 2 ? g.reals(add->input(1), out.k) : std::nullopt;
  if (!constants) {
    NodeAttributes(*weigh).fail("the weighted squares are not summed (MatMul, Squeeze) and added "
                                "to k constants (log prior and normalisation)");
  }
  const ::onnx::NodeProto* classifier = g.consumer(add->output(0), "LinearClassifier");
  if (classifier == nullptr) {
    NodeAttributes(*add).fail("the joint log-likelihood does not go through a LinearClassifier "
                              "(its labels and SOFTMAX)");
  }
  const NodeAttributes c(*classifier);
  const std::vector<std::int64_t> labels =
      c.get_ints("classlabels_ints").value_or(std::vector<std::int64_t>{});
  const std::vector<double> identity = c.get_reals("coefficients");
  const std::vector<double> zeros = c.get_reals("intercepts");
  const auto k = static_cast<std::size_t>(out.k);
  const auto p = static_cast<std::size_t>(out.p);
  bool is_identity = identity.size() == k * k && zeros.size() == k &&
                     c.get_string("post_transform", "NONE") == "SOFTMAX" && labels.size() == k;
  for (std::size_t i = 0; is_identity && i < k * k; ++i) {
    is_identity = identity[i] == (i % (k + 1) == 0 ? 1.0 : 0.0);
  }
  for (std::size_t i = 0; is_identity && i < k; ++i) is_identity = zeros[i] == 0.0;
  if (!is_identity) {
    c.fail("expected the identity LinearClassifier of GaussianNB's export (k x k identity "
           "coefficients, zero intercepts, SOFTMAX, one label per class)");
  }
  if (g.declared_width() > 0 && g.declared_width() != out.p) {
    throw shape_error("onnx: onnx::to_estimator<" + std::string(target) + ">: means of " +
                      std::to_string(out.p) + " features, the graph input has " +
                      std::to_string(g.declared_width()));
  }
  // Rows in increasing label order, as fit sorts the classes.
  std::vector<std::size_t> order(k);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return labels[a] < labels[b]; });
  for (const std::size_t from : order) {
    out.classes.push_back(labels[from]);
    double log_prior = (*constants)[from];
    for (std::size_t j = 0; j < p; ++j) {
      const double w = (*weights)[from * p + j];
      if (!(w < 0.0) || !std::isfinite(w)) {
        NodeAttributes(*weigh).fail("a weight is not negative and finite (it is -1 / (2 var))");
      }
      const double var = -0.5 / w;
      out.theta.push_back((*theta_values)[from * p + j]);
      out.var.push_back(var);
      log_prior += 0.5 * std::log(2.0 * std::numbers::pi * var);
    }
    out.log_prior.push_back(log_prior);
  }
  return out;
}

}  // namespace onelearn::onnx::detail
