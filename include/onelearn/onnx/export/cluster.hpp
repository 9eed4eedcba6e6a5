#pragma once
/**
 * \file
 * \brief ONNX export of KMeans.
 * \ingroup onnx
 *
 * \code
 * #include <onelearn/onnx/export/cluster.hpp>
 * onelearn::cluster::KMeans<double> km({.n_clusters = 3, .random_state = 0});
 * onelearn::onnx::save(km.fit(X), "kmeans.onnx");
 * \endcode
 *
 * ONNX export of KMeans: outputs "label" (int64, N: the nearest centre) and "scores" (float,
 * N x n_clusters: the Euclidean distance to each centre, KMeans::transform), the two outputs
 * skl2onnx gives.
 *
 * The squared distances are computed as sum((x - c)^2) (Unsqueeze, Sub, Mul, MatMul with ones,
 * Squeeze), not as skl2onnx's |x|^2 - 2 x.c + |c|^2: in float32 the expanded form cancels
 * (on iris |x|^2 ~ 40 against distances ~ 0.1) and loses four digits; the direct one keeps the
 * float32 precision at the cost of an N x k x p intermediate. Then Sqrt for "scores" and
 * ArgMax of the negated squares for "label" (ties: the first centre, as KMeans::predict).
 */

#include <cstdint>
#include <string>
#include <vector>

#include "onelearn/cluster/k_means.hpp"
#include "onelearn/onnx/export/core.hpp"

namespace onelearn::onnx {

template <class T, class E, class S>
Exported export_model(GraphBuilder& b, const cluster::KMeans<T, E, S>& m, const std::string& x) {
  const Matrix<T>& centres = m.cluster_centers();
  const auto k = static_cast<std::int64_t>(centres.rows());
  const auto p = static_cast<std::int64_t>(centres.cols());
  const std::string d2 = detail::export_squared_differences(b, x, to_reals(centres), {}, k, p);
  const std::string scores = b.apply("Sqrt", {d2}, "scores");
  const std::string negated = b.apply("Neg", {d2}, "negated_squares");
  const std::string label = b.fresh("label");
  auto& n = b.node("ArgMax", {negated}, {label});
  set_attribute(n, "axis", std::int64_t{1});
  set_attribute(n, "keepdims", std::int64_t{0});
  return {{"label", label, ::onnx::TensorProto::INT64, {-1}},
          {"scores", scores, b.real_type(), {-1, k}}};
}

}  // namespace onelearn::onnx
