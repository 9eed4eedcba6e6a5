#pragma once
/**
 * \file
 * \brief The scores and labels of the linear classifiers in either precision: one ONNX-ML
 * LinearClassifier in float32, plain operators in float64.
 * \ingroup onnx
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/onnx/export/linear.hpp>
 * onelearn::linear_model::LogisticRegression<double> clf;
 * clf.fit(X, y);
 * // MatMul, Add, Softmax, then ArgMax and Gather for the labels, all in double:
 * onelearn::onnx::save(clf, "clf64.onnx", {.precision = onelearn::onnx::Precision::float64});
 * \endcode
 *
 * The scores of the linear classifiers (LogisticRegression, SGDClassifier, the naive Bayes
 * models) and their labels, in the precision of the GraphBuilder. ONNX-ML's LinearClassifier
 * and LinearRegressor compute in float32 whatever their input, so a float64 model writes the
 * same function in plain operators, as skl2onnx's double converters do: MatMul with the
 * transposed coefficients, Add of the intercepts, Sigmoid (LOGISTIC) or Softmax, and the label
 * classes[ArgMax] by Gather. ArgMax breaks ties towards the first class, as the estimators'
 * predict does.
 */

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onelearn/core/types.hpp"
#include "onelearn/onnx/export/core.hpp"

namespace onelearn::onnx::detail {

/// x W^T + intercepts for `coefficients`, k rows of p (row-major): N x k, in plain operators
/// (MatMul, Add). The float64 form of LinearRegressor's and LinearClassifier's arithmetic.
inline std::string export_affine(GraphBuilder& b, const std::string& x,
                                 const std::vector<double>& coefficients,
                                 const std::vector<double>& intercepts, std::int64_t k,
                                 std::int64_t p, std::string_view base) {
  std::vector<double> transposed(coefficients.size());
  for (std::int64_t r = 0; r < k; ++r)
    for (std::int64_t c = 0; c < p; ++c)
      transposed[static_cast<std::size_t>(c * k + r)] = coefficients[static_cast<std::size_t>(r * p + c)];
  const std::string product =
      b.apply("MatMul", {x, b.constant("coefficients_t", {p, k}, transposed)}, "products");
  return b.apply("Add", {product, b.constant("intercepts", {k}, intercepts)}, base);
}

/// classes[argmax of each row of `scores`] (N), ties to the first column as ArgMax breaks
/// them: the labels of the float64 classifiers, whose scores are not LinearClassifier's.
inline std::string export_labels_of_argmax(GraphBuilder& b, const std::string& scores,
                                           const Labels& classes) {
  const std::string best = b.fresh("best_class_index");
  auto& argmax = b.node("ArgMax", {scores}, {best});
  set_attribute(argmax, "axis", std::int64_t{1});
  set_attribute(argmax, "keepdims", std::int64_t{0});
  const std::string values =
      b.constant_int64("classes", {static_cast<std::int64_t>(classes.size())},
                       std::vector<std::int64_t>(classes.begin(), classes.end()));
  return b.apply("Gather", {values, best}, "label");
}

/// The scores of a linear classifier, k rows of coefficients (row-major) and k intercepts, with
/// `post` ("NONE", "LOGISTIC" or "SOFTMAX") applied, and its labels classes()[argmax]: one
/// ONNX-ML LinearClassifier node in float32; MatMul, Add, Sigmoid or Softmax, ArgMax and
/// Gather in float64 (LinearClassifier's scores are float32 only). Returns {label, scores}.
inline std::pair<std::string, std::string> export_linear_scores(
    GraphBuilder& b, const std::string& x, const std::vector<double>& coefficients,
    const std::vector<double>& intercepts, const Labels& classes, const std::string& post,
    std::string_view scores_base) {
  const auto k = static_cast<std::int64_t>(intercepts.size());
  const auto p = static_cast<std::int64_t>(coefficients.size()) / k;
  if (b.is_float64()) {
    const std::string decision =
        export_affine(b, x, coefficients, intercepts, k, p, post == "NONE" ? scores_base : "decision");
    // The labels from the decision function itself, as predict takes them: Sigmoid and Softmax
    // keep a row's order, but can round two close scores to one probability.
    const std::string label = export_labels_of_argmax(b, decision, classes);
    std::string scores = decision;
    if (post == "LOGISTIC") {
      scores = b.apply("Sigmoid", {decision}, scores_base);
    } else if (post == "SOFTMAX") {
      scores = b.fresh(scores_base);
      set_attribute(b.node("Softmax", {decision}, {scores}), "axis", std::int64_t{1});
    }
    return {label, scores};
  }
  const std::string label = b.fresh("label");
  const std::string scores = b.fresh(scores_base);
  auto& n = b.node("LinearClassifier", {x}, {label, scores}, ml_domain);
  set_attribute(n, "coefficients", to_floats(coefficients));
  set_attribute(n, "intercepts", to_floats(intercepts));
  set_attribute(n, "classlabels_ints", std::vector<std::int64_t>(classes.begin(), classes.end()));
  set_attribute(n, "multi_class", std::int64_t{0});
  set_attribute(n, "post_transform", post);
  b.declare(label, ::onnx::TensorProto::INT64, {-1});
  b.declare(scores, ::onnx::TensorProto::FLOAT, {-1, k});
  return {label, scores};
}

}  // namespace onelearn::onnx::detail
