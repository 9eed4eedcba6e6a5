#pragma once
/**
 * \file
 * \brief ONNX export of GaussianNB in plain ONNX operators plus one LinearClassifier.
 * \ingroup onnx
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/onnx/export/naive_bayes.hpp>
 * onelearn::naive_bayes::GaussianNB<double> nb;
 * onelearn::onnx::save(nb.fit(X, y), "nb.onnx");
 * \endcode
 *
 * ONNX export of GaussianNB in plain ONNX operators plus one LinearClassifier: outputs "label"
 * (int64, N) and "probabilities" (float, N x n_classes), as skl2onnx names them.
 *
 * The joint log-likelihood jll[n, c] = log prior_c - 1/2 sum_j log(2 pi var_cj)
 * - 1/2 sum_j (x_j - theta_cj)^2 / var_cj is computed in the direct form (Unsqueeze, Sub, Mul,
 * Mul by -1/(2 var), MatMul with ones, Squeeze, Add), as GaussianNB itself does, for the
 * float32 precision (see onnx/export/cluster.hpp). jll then goes through a LinearClassifier
 * with identity coefficients, zero intercepts, classlabels_ints = classes() and SOFTMAX: its
 * label is classes()[argmax jll] and its probabilities softmax(jll) = predict_proba. In
 * float64 (ExportOptions) the same in plain operators: Softmax, ArgMax and Gather
 * (onnx/export/scores.hpp).
 */

#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

#include "onelearn/naive_bayes/gaussian_nb.hpp"
#include "onelearn/naive_bayes/multinomial_nb.hpp"
#include "onelearn/onnx/export/core.hpp"
#include "onelearn/onnx/export/scores.hpp"

namespace onelearn::onnx {

template <class T, class E, class S>
Exported export_model(GraphBuilder& b, const naive_bayes::GaussianNB<T, E, S>& m,
                      const std::string& x) {
  const Matrix<T>& theta = m.theta();  // k x p
  const Matrix<T>& var = m.var();
  const Labels& classes = m.classes();
  const auto k = static_cast<std::int64_t>(theta.rows());
  const auto p = static_cast<std::int64_t>(theta.cols());
  std::vector<double> weights, constants;
  for (index_t c = 0; c < theta.rows(); ++c) {
    double constant = std::log(static_cast<double>(m.class_prior()(c)));
    for (index_t j = 0; j < theta.cols(); ++j) {
      const auto v = static_cast<double>(var(c, j));
      weights.push_back(-0.5 / v);
      constant -= 0.5 * std::log(2.0 * std::numbers::pi * v);
    }
    constants.push_back(constant);
  }
  const std::string quadratic =
      detail::export_squared_differences(b, x, to_reals(theta), weights, k, p);
  const std::string prior = b.constant("log_prior_and_norm", {k}, constants);
  const std::string jll = b.apply("Add", {quadratic, prior}, "joint_log_likelihood");

  // The joint log-likelihood through an identity LinearClassifier (its SOFTMAX and labels).
  std::vector<double> identity(static_cast<std::size_t>(k * k), 0.0);
  for (std::int64_t c = 0; c < k; ++c) identity[static_cast<std::size_t>(c * k + c)] = 1.0;
  const auto [label, proba] = detail::export_linear_scores(
      b, jll, identity, std::vector<double>(static_cast<std::size_t>(k), 0.0), classes, "SOFTMAX",
      "probabilities");
  return {{"label", label, ::onnx::TensorProto::INT64, {-1}},
          {"probabilities", proba, b.real_type(), {-1, k}}};
}

/// MultinomialNB: its joint log-likelihood X feature_log_prob^T + class_log_prior is a linear
/// function of x, so one LinearClassifier (coefficients feature_log_prob, intercepts
/// class_log_prior, SOFTMAX) gives the label classes()[argmax jll] and predict_proba =
/// softmax(jll). Two classes keep two rows of coefficients: onnxruntime's one-row binary layout
/// would need the difference, which changes nothing but the rounding.
template <class T, class E>
Exported export_model(GraphBuilder& b, const naive_bayes::MultinomialNB<T, E>& m,
                      const std::string& x) {
  const Matrix<T>& log_prob = m.feature_log_prob();  // k x p
  const Labels& classes = m.classes();
  const auto k = static_cast<std::int64_t>(log_prob.rows());
  const std::vector<double> coefficients = to_reals(log_prob);
  const std::vector<double> intercepts = to_reals(m.class_log_prior());
  const auto [label, proba] = detail::export_linear_scores(b, x, coefficients, intercepts, classes,
                                                           "SOFTMAX", "probabilities");
  return {{"label", label, ::onnx::TensorProto::INT64, {-1}},
          {"probabilities", proba, b.real_type(), {-1, k}}};
}

}  // namespace onelearn::onnx
