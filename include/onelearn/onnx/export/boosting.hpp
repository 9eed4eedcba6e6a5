#pragma once
/**
 * \file
 * \brief ONNX export of histogram gradient boosting as one ai.onnx.ml TreeEnsemble node, the trees'
 * leaf values summed onto the baseline (base_values).
 * \ingroup onnx
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/onnx/export/boosting.hpp>
 * onelearn::ensemble::HistGradientBoostingClassifier<double> gbdt;
 * onelearn::onnx::save(gbdt.fit(X, y), "gbdt.onnx");
 * \endcode
 *
 * ONNX export of histogram gradient boosting as one ai.onnx.ml TreeEnsemble node, the trees'
 * leaf values summed onto the baseline (base_values):
 * \code{.unparsed}
 *   HistGradientBoostingRegressor -> "variable" (float, N x 1), TreeEnsembleRegressor, SUM;
 *   HistGradientBoostingClassifier -> "label" (int64, N), "probabilities" (float, N x classes),
 *     TreeEnsembleClassifier: two classes in onnxruntime's binary layout (the log-odds under
 *     class id 0, post_transform LOGISTIC: label classes()(1) when the log-odds are positive,
 *     probabilities (1 - p, p)); more classes with one tree per class and iteration under its
 *     class id, post_transform SOFTMAX.
 * \endcode
 *
 * Splits compare raw feature values with double thresholds; the graph compares float32 inputs
 * with float thresholds, each the largest float at or below the double (onnx/export/trees.hpp),
 * so a float32 input goes the model's way. NaN goes where the split learned
 * (nodes_missing_value_tracks_true where missing values go to the left child, the true branch).
 * Models with categorical splits are refused (unsupported_error).
 *
 * In float64 (ExportOptions::precision) the trees are walked in plain operators
 * (onnx/export/tree_walk.hpp), comparing the double values, and the outputs are double:
 * \code{.unparsed}
 *   HistGradientBoostingRegressor  -> "variable" = the leaf values summed + the baseline;
 *   HistGradientBoostingClassifier -> "probabilities": two classes (1 - p, p) with p the
 *     Sigmoid of the log-odds, more classes the Softmax of each class's sum; "label" =
 *     classes[ArgMax(probabilities)], as predict takes it.
 * \endcode
 */

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/ensemble/hist_gradient_boosting.hpp"
#include "onelearn/onnx/errors.hpp"
#include "onelearn/onnx/export/core.hpp"
#include "onelearn/onnx/export/scores.hpp"
#include "onelearn/onnx/export/tree_walk.hpp"
#include "onelearn/onnx/export/trees.hpp"

namespace onelearn::onnx {

namespace detail {

/// Refuses a categorical split (tree `tree_id`, node `node`): a set of categories is no single
/// TreeEnsemble comparison (BRANCH_MEMBER is only in ai.onnx.ml opset 5) nor a LessOrEqual.
inline void require_numeric_split(const ensemble::detail::HistNode& n, std::int64_t tree_id,
                                  std::size_t node) {
  if (n.category_split >= 0) {
    throw unsupported_error(
        unsupported_kind::attribute, "categorical split",
        "onnx::export: HistGradientBoosting with categorical splits cannot be exported yet (tree " +
            std::to_string(tree_id) + ", node " + std::to_string(node) +
            " splits categorical feature " + std::to_string(n.feature) +
            "); fit without categorical_features to export");
  }
}

/// The walk of the boosted trees (double comparisons, NaN where each split learned); the trees
/// in iteration order, each leaf's value in the column of its tree's class (`outputs` columns).
inline TreeWalk boosting_walk(const std::vector<std::vector<ensemble::detail::HistTree>>& trees,
                              std::int64_t outputs) {
  TreeWalk w;
  w.outputs = outputs;
  std::int64_t tree_id = 0;
  for (const auto& iteration : trees) {
    for (std::size_t c = 0; c < iteration.size(); ++c, ++tree_id) {
      const auto& nodes = iteration[c].nodes;
      w.add_tree(
          static_cast<std::int64_t>(nodes.size()),
          [&](std::int64_t node) {
            const auto& n = nodes[static_cast<std::size_t>(node)];
            require_numeric_split(n, tree_id, static_cast<std::size_t>(node));
            if (n.is_leaf) return TreeWalk::Node{};
            return TreeWalk::Node{false, n.feature, n.threshold, n.left, n.right,
                                  n.missing_go_to_left};
          },
          [&](std::int64_t leaf, std::span<double> out) {
            out[c] = nodes[static_cast<std::size_t>(leaf)].value;
          });
    }
  }
  return w;
}

/// The raw predictions in float64: the walk's sums plus the baseline (N x baseline.size()).
inline std::string export_boosting_raw(GraphBuilder& b, const std::string& x,
                                       const std::vector<std::vector<ensemble::detail::HistTree>>& trees,
                                       const std::vector<double>& baseline, std::string_view base) {
  const auto k = static_cast<std::int64_t>(baseline.size());
  const std::string sum = export_tree_walk(b, x, boosting_walk(trees, k));
  return b.apply("Add", {sum, b.constant("baseline", {k}, baseline)}, base);
}

/// The nodes and leaf weights of every tree; the trees of iteration i are numbered
/// i * per_iteration + c and weigh under id `id_of(c)`.
template <class IdOf>
EnsembleAttributes boosting_attributes(const std::vector<std::vector<ensemble::detail::HistTree>>& trees,
                                       IdOf&& id_of, bool& all_non_negative) {
  EnsembleAttributes a;
  all_non_negative = true;
  std::int64_t tree_id = 0;
  for (const auto& iteration : trees) {
    for (std::size_t c = 0; c < iteration.size(); ++c, ++tree_id) {
      const auto& nodes = iteration[c].nodes;
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        const auto& n = nodes[i];
        const auto node = static_cast<std::int64_t>(i);
        require_numeric_split(n, tree_id, i);
        if (n.is_leaf) {
          a.add_leaf(tree_id, node);
          a.add_weight(tree_id, node, id_of(static_cast<std::int64_t>(c)), n.value);
          all_non_negative = all_non_negative && !(static_cast<float>(n.value) < 0);
        } else {
          a.add_branch(tree_id, node, n.feature, n.threshold, n.left, n.right,
                       n.missing_go_to_left);
        }
      }
    }
  }
  return a;
}

}  // namespace detail

template <class T, class E, class S>
Exported export_model(GraphBuilder& b, const ensemble::HistGradientBoostingRegressor<T, E, S>& m,
                      const std::string& x) {
  if (b.is_float64()) {
    return {{"variable", detail::export_boosting_raw(b, x, m.trees(), m.baseline(), "variable"),
             ::onnx::TensorProto::DOUBLE, {-1, 1}}};
  }
  bool all_non_negative = true;
  const detail::EnsembleAttributes a = detail::boosting_attributes(
      m.trees(), [](std::int64_t) { return std::int64_t{0}; }, all_non_negative);
  const std::string out = b.fresh("variable");
  auto& n = b.node("TreeEnsembleRegressor", {x}, {out}, ml_domain);
  a.write(n, "target");
  set_attribute(n, "n_targets", std::int64_t{1});
  set_attribute(n, "aggregate_function", std::string("SUM"));
  set_attribute(n, "base_values", std::vector<float>{static_cast<float>(m.baseline()[0])});
  set_attribute(n, "post_transform", std::string("NONE"));
  b.declare(out, ::onnx::TensorProto::FLOAT, {-1, 1});
  return {{"variable", out, ::onnx::TensorProto::FLOAT, {-1, 1}}};
}

template <class T, class E, class S>
Exported export_model(GraphBuilder& b, const ensemble::HistGradientBoostingClassifier<T, E, S>& m,
                      const std::string& x) {
  const Labels& classes = m.classes();
  const auto k = static_cast<std::int64_t>(classes.size());
  if (b.is_float64()) {
    const std::string raw = detail::export_boosting_raw(b, x, m.trees(), m.baseline(), "raw_scores");
    std::string proba = b.fresh("probabilities");
    if (k == 2) {
      const std::string p = b.apply("Sigmoid", {raw}, "positive_probability");
      const std::string q = b.apply("Sub", {b.constant("one", {}, {1.0}), p}, "negative_probability");
      set_attribute(b.node("Concat", {q, p}, {proba}), "axis", std::int64_t{1});
    } else {
      set_attribute(b.node("Softmax", {raw}, {proba}), "axis", std::int64_t{1});
    }
    return {{"label", detail::export_labels_of_argmax(b, proba, classes), ::onnx::TensorProto::INT64, {-1}},
            {"probabilities", proba, ::onnx::TensorProto::DOUBLE, {-1, k}}};
  }
  bool all_non_negative = true;
  detail::EnsembleAttributes a = detail::boosting_attributes(
      m.trees(), [&](std::int64_t c) { return k == 2 ? std::int64_t{0} : c; }, all_non_negative);
  std::vector<float> base;
  for (const double v : m.baseline()) base.push_back(static_cast<float>(v));
  if (k == 2 && all_non_negative) {
    // onnxruntime labels a binary ensemble whose weights are all non-negative by p > 0.5 (a
    // probability), not by the log-odds' sign: one more tree, a single leaf of weight -1, with
    // the baseline raised by 1, keeps the sum and makes the rule the log-odds' sign.
    const std::int64_t id = a.tree_ids.empty() ? 0 : a.tree_ids.back() + 1;
    a.add_leaf(id, 0);
    a.add_weight(id, 0, 0, -1.0);
    base[0] += 1.f;
  }
  const std::string label = b.fresh("label");
  const std::string proba = b.fresh("probabilities");
  auto& n = b.node("TreeEnsembleClassifier", {x}, {label, proba}, ml_domain);
  a.write(n, "class");
  set_attribute(n, "classlabels_int64s", std::vector<std::int64_t>(classes.begin(), classes.end()));
  set_attribute(n, "base_values", base);
  set_attribute(n, "post_transform", std::string(k == 2 ? "LOGISTIC" : "SOFTMAX"));
  b.declare(label, ::onnx::TensorProto::INT64, {-1});
  b.declare(proba, ::onnx::TensorProto::FLOAT, {-1, k});
  return {{"label", label, ::onnx::TensorProto::INT64, {-1}},
          {"probabilities", proba, ::onnx::TensorProto::FLOAT, {-1, k}}};
}

}  // namespace onelearn::onnx
