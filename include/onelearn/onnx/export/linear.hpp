#pragma once
/**
 * \file
 * \brief ONNX export of the linear models, with ONNX-ML's operators as scikit-learn's converters
 * (skl2onnx) write them.
 * \ingroup onnx
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/onnx/export/linear.hpp>
 * onelearn::linear_model::LogisticRegression<double> clf;
 * clf.fit(X, y);
 * onelearn::onnx::save(clf, "clf.onnx");   // outputs "label" (int64, N) and
 *                                          // "probabilities" (float, N x n_classes)
 * \endcode
 *
 * ONNX export of the linear models, with ONNX-ML's operators as scikit-learn's converters
 * (skl2onnx) write them.
 *
 * - LinearRegression, Ridge, Lasso, ElasticNet (every detail::LinearRegressor) and SGDRegressor:
 *   one LinearRegressor node; output "variable" (float, N x 1).
 * - LogisticRegression: one LinearClassifier node with classlabels_ints = classes(), outputs
 *   "label" (int64, N) and "probabilities" (float, N x k). Multinomial (k > 2): SOFTMAX of the
 *   k score rows. Binary: the two rows (-coef, coef), intercepts (-b, b) and LOGISTIC, giving
 *   (1 - p, p) as skl2onnx does.
 * - SGDClassifier: loss "log_loss" as above with LOGISTIC for two classes; for k > 2 the
 *   one-vs-rest probabilities sigmoid(s_k) / sum_j sigmoid(s_j), computed as
 *   Softmax(-Softplus(-s)) after a LinearClassifier without post_transform (skl2onnx's
 *   LOGISTIC + Normalizer underflows to 0/0 in float32 for very negative scores); losses
 *   without probabilities (hinge, squared_hinge, perceptron) give
 *   "label" and "scores" (the decision function, N x k; N x 2 as (-s, s) for two classes).
 *   modified_huber is refused (invalid_argument): its probabilities are uniform where every
 *   clipped score is 0, which needs operators (Equal/Where) beyond the set onelearn's own
 *   executor runs.
 *
 * In float64 (ExportOptions) the same functions in plain operators, since LinearRegressor's and
 * LinearClassifier's outputs are float32 only: MatMul + Add, then Sigmoid or Softmax, and the
 * label classes()[ArgMax] by Gather (onnx/export/scores.hpp).
 *
 * Why LinearClassifier in float32 and not Gemm + Softmax + ArgMax + Gather: it carries the
 * labels itself, is what skl2onnx writes (so tools that read scikit-learn exports read these,
 * and onnx::to_estimator reads them back), and is one node.
 */

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/linear_model/detail/linear_regressor.hpp"
#include "onelearn/linear_model/elastic_net.hpp"
#include "onelearn/linear_model/lasso.hpp"
#include "onelearn/linear_model/linear_regression.hpp"
#include "onelearn/linear_model/logistic_regression.hpp"
#include "onelearn/linear_model/ridge.hpp"
#include "onelearn/linear_model/sgd_classifier.hpp"
#include "onelearn/linear_model/sgd_regressor.hpp"
#include "onelearn/onnx/export/core.hpp"
#include "onelearn/onnx/export/scores.hpp"

namespace onelearn::onnx {

namespace detail {

template <class T>
Exported export_linear_regressor(GraphBuilder& b, const Vector<T>& coef, T intercept,
                                 const std::string& x) {
  const std::vector<std::int64_t> dims{-1, 1};
  if (b.is_float64()) {
    const std::string y = export_affine(b, x, to_reals(coef), {static_cast<double>(intercept)}, 1,
                                        static_cast<std::int64_t>(coef.size()), "variable");
    return {{"variable", y, b.real_type(), dims}};
  }
  const std::string y = b.fresh("variable");
  auto& n = b.node("LinearRegressor", {x}, {y}, ml_domain);
  set_attribute(n, "coefficients", to_floats(coef));
  set_attribute(n, "intercepts", std::vector<float>{static_cast<float>(intercept)});
  set_attribute(n, "targets", std::int64_t{1});
  b.declare(y, ::onnx::TensorProto::FLOAT, dims);
  return {{"variable", y, ::onnx::TensorProto::FLOAT, dims}};
}

/// A LinearClassifier node for coef (1 x p binary, k x p otherwise), `post` its
/// post_transform; `role` names the score output ("probabilities" or "scores").
template <class T>
Exported export_linear_classifier(GraphBuilder& b, const Matrix<T>& coef,
                                  const Vector<T>& intercept, const Labels& classes,
                                  const std::string& post, const std::string& role, bool normalize,
                                  const std::string& x) {
  std::vector<double> coefficients, intercepts;
  if (coef.rows() == 1) {
    // Binary: two rows (-w, w), so the scores are (-s, s) and LOGISTIC gives (1 - p, p).
    const Matrix<T> negated = -coef;
    coefficients = to_reals(negated);
    const std::vector<double> positive = to_reals(coef);
    coefficients.insert(coefficients.end(), positive.begin(), positive.end());
    intercepts = {-static_cast<double>(intercept(0)), static_cast<double>(intercept(0))};
  } else {
    coefficients = to_reals(coef);
    intercepts = to_reals(intercept);
  }
  const auto k = static_cast<std::int64_t>(classes.size());
  auto [label, scores] = export_linear_scores(b, x, coefficients, intercepts, classes,
                                              normalize ? std::string("NONE") : post,
                                              normalize ? std::string("decision") : role);
  if (normalize) {
    // One-vs-rest logistic scores divided by their row sum: sigmoid(s_k) / sum_j sigmoid(s_j)
    // = softmax_k(log sigmoid(s)) with log sigmoid(s) = -softplus(-s). skl2onnx's LOGISTIC +
    // Normalizer computes the quotient itself, which in float32 is 0/0 = NaN once every score
    // is below about -90 (SGD on unscaled iris gets there); Softmax subtracts the row maximum.
    std::string log_sigmoid;
    if (b.is_float64()) {
      // onnxruntime has Softplus in float32 only: log sigmoid(s) = min(s, 0) - log(1 +
      // exp(-|s|)) in operators it runs in double, as exact and as safe from overflow.
      const std::string zero = b.constant("zero", {}, {0.0});
      const std::string negative_part = b.apply("Min", {scores, zero}, "negative_part");
      const std::string magnitude = b.apply("Abs", {scores}, "magnitude");
      const std::string decay = b.apply("Exp", {b.apply("Neg", {magnitude}, "negated_magnitude")}, "decay");
      const std::string log1p =
          b.apply("Log", {b.apply("Add", {decay, b.constant("one", {}, {1.0})}, "one_plus_decay")},
                  "log_one_plus_decay");
      log_sigmoid = b.apply("Sub", {negative_part, log1p}, "log_sigmoid");
    } else {
      const std::string negated = b.apply("Neg", {scores}, "negated_decision");
      const std::string softplus = b.apply("Softplus", {negated}, "softplus");
      log_sigmoid = b.apply("Neg", {softplus}, "log_sigmoid");
    }
    scores = b.fresh(role);
    auto& softmax = b.node("Softmax", {log_sigmoid}, {scores});
    set_attribute(softmax, "axis", std::int64_t{1});
  }
  return {{"label", label, ::onnx::TensorProto::INT64, {-1}},
          {role, scores, b.real_type(), {-1, k}}};
}

}  // namespace detail

/// LinearRegression, Ridge, Lasso, ElasticNet: every model built on detail::LinearRegressor.
template <class D, class P, class T, class E, class S>
Exported export_model(GraphBuilder& b,
                      const linear_model::detail::LinearRegressor<D, P, T, E, S>& m,
                      const std::string& x) {
  return detail::export_linear_regressor<T>(b, m.coef(), m.intercept(), x);
}

template <class T, class E>
Exported export_model(GraphBuilder& b, const linear_model::SGDRegressor<T, E>& m,
                      const std::string& x) {
  return detail::export_linear_regressor<T>(b, m.coef(), m.intercept(), x);
}

template <class T, class E, class S>
Exported export_model(GraphBuilder& b, const linear_model::LogisticRegression<T, E, S>& m,
                      const std::string& x) {
  const bool binary = m.coef().rows() == 1;
  return detail::export_linear_classifier<T>(b, m.coef(), m.intercept(), m.classes(),
                                             binary ? "LOGISTIC" : "SOFTMAX", "probabilities",
                                             false, x);
}

template <class T, class E>
Exported export_model(GraphBuilder& b, const linear_model::SGDClassifier<T, E>& m,
                      const std::string& x) {
  const std::string& loss = m.get_params().loss;
  if (loss == "modified_huber") {
    throw invalid_argument(
        "onnx::to_proto: SGDClassifier with loss 'modified_huber' cannot be exported (expected "
        "loss 'log_loss', 'hinge', 'squared_hinge' or 'perceptron')");
  }
  const bool binary = m.coef().rows() == 1;
  if (loss == "log_loss") {
    return detail::export_linear_classifier<T>(b, m.coef(), m.intercept(), m.classes(), "LOGISTIC",
                                               "probabilities", !binary, x);
  }
  return detail::export_linear_classifier<T>(b, m.coef(), m.intercept(), m.classes(), "NONE",
                                             "scores", false, x);
}

}  // namespace onelearn::onnx
