#pragma once
/**
 * \file
 * \brief ONNX export of PCA.
 * \ingroup onnx
 *
 * \code
 * #include <onelearn/onnx/export/decomposition.hpp>
 * onelearn::decomposition::PCA<double> pca({.n_components = 2, .whiten = true});
 * onelearn::onnx::save(pca.fit(X), "pca.onnx");
 * \endcode
 *
 * ONNX export of PCA: Sub (the mean), MatMul (components transposed) and, with whiten, Div by
 * sqrt(explained_variance); output "variable" (float, N x n_components), as skl2onnx writes it.
 */

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "onelearn/decomposition/pca.hpp"
#include "onelearn/onnx/export/core.hpp"

namespace onelearn::onnx {

template <class T, class E, class S>
Exported export_model(GraphBuilder& b, const decomposition::PCA<T, E, S>& m, const std::string& x) {
  const Matrix<T>& components = m.components();  // k x p
  const auto k = static_cast<std::int64_t>(components.rows());
  const auto p = static_cast<std::int64_t>(components.cols());
  const std::string mean = b.constant("mean", {p}, to_reals(m.mean()));
  const Matrix<T> transposed = components.transpose();
  const std::string weights = b.constant("components_t", {p, k}, to_reals(transposed));
  const std::string centred = b.apply("Sub", {x, mean}, "centred");
  std::string y =
      b.apply("MatMul", {centred, weights}, m.get_params().whiten ? "scores" : "variable");
  if (m.get_params().whiten) {
    std::vector<double> sd;
    const auto& variance = m.explained_variance();
    for (index_t i = 0; i < variance.size(); ++i) {
      sd.push_back(std::sqrt(static_cast<double>(variance(i))));
    }
    const std::string sdev = b.constant("sqrt_explained_variance", {k}, sd);
    y = b.apply("Div", {y, sdev}, "variable");
  }
  return {{"variable", y, b.real_type(), {-1, k}}};
}

}  // namespace onelearn::onnx
