#pragma once
/**
 * \file
 * \brief ONNX export of the trees and forests as one ai.onnx.ml TreeEnsemble node.
 * \ingroup onnx
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/onnx/export/trees.hpp>
 * onelearn::ensemble::RandomForestClassifier<double> forest({.n_estimators = 50});
 * onelearn::onnx::save(forest.fit(X, y), "forest.onnx");
 * \endcode
 *
 * ONNX export of the trees and forests as one ai.onnx.ml TreeEnsembleClassifier or
 * TreeEnsembleRegressor node, in the layout skl2onnx writes (so that tools made for
 * scikit-learn's exports read them):
 * \code{.unparsed}
 *   DecisionTreeClassifier, RandomForestClassifier, ExtraTreesClassifier -> "label" (int64, N),
 *     "probabilities" (float, N x classes): each leaf weighs its class shares / the number of
 *     trees (two classes: the second class's share only, under class id 0: onnxruntime's
 *     binary layout, giving label and (1 - p, p));
 *   DecisionTreeRegressor, RandomForestRegressor, ExtraTreesRegressor -> "variable" (float,
 *     N x 1): the leaf means, aggregate_function AVERAGE.
 * \endcode
 *
 * The trees compare float32 features with double thresholds; a TreeEnsemble node compares
 * float32 with float32. Each threshold is written as the largest float at or below it, which
 * sends every float32 input the way the tree does (x <= t and x <= that float are the same for
 * any float x), so the graph's leaves are the model's leaves, not only nearly.
 *
 * In float64 (ExportOptions::precision) the same models are written in plain operators
 * (onnx/export/tree_walk.hpp), the outputs double:
 * \code{.unparsed}
 *   classifiers -> "label" = classes[ArgMax(probabilities)], "probabilities" (N x classes): the
 *     leaves' class shares summed over the trees, divided by the number of trees;
 *   regressors  -> "variable" (N x 1): the leaf values summed, divided by the number of trees.
 * \endcode
 */

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/ensemble/forest_classifier.hpp"
#include "onelearn/ensemble/forest_regressor.hpp"
#include "onelearn/onnx/export/core.hpp"
#include "onelearn/onnx/export/scores.hpp"
#include "onelearn/onnx/export/tree_walk.hpp"
#include "onelearn/tree/decision_tree_classifier.hpp"
#include "onelearn/tree/decision_tree_regressor.hpp"

namespace onelearn::onnx {

namespace detail {

/// The largest float at or below t.
inline float float_at_or_below(double t) {
  float f = static_cast<float>(t);
  if (static_cast<double>(f) > t) f = std::nextafter(f, -std::numeric_limits<float>::infinity());
  return f;
}

/// The attributes of a TreeEnsemble node, tree by tree.
struct EnsembleAttributes {
  std::vector<std::int64_t> tree_ids, node_ids, feature_ids, true_ids, false_ids;
  std::vector<float> thresholds;
  std::vector<std::string> modes;
  std::vector<std::int64_t> missing_tracks_true;  ///< 1 where NaN takes the true (left) branch
  std::vector<std::int64_t> weight_trees, weight_nodes, weight_ids;
  std::vector<float> weights;

  /// A leaf, with no weight yet (add_weight gives it its weights).
  void add_leaf(std::int64_t tree_id, std::int64_t node_id) {
    tree_ids.push_back(tree_id);
    node_ids.push_back(node_id);
    feature_ids.push_back(0);
    thresholds.push_back(0.f);
    modes.emplace_back("LEAF");
    true_ids.push_back(0);
    false_ids.push_back(0);
    missing_tracks_true.push_back(0);
  }
  void add_weight(std::int64_t tree_id, std::int64_t node_id, std::int64_t id, double weight) {
    weight_trees.push_back(tree_id);
    weight_nodes.push_back(node_id);
    weight_ids.push_back(id);
    weights.push_back(static_cast<float>(weight));
  }
  /// A split: the true (left) child takes x <= threshold, and NaN when missing_left.
  void add_branch(std::int64_t tree_id, std::int64_t node_id, std::int64_t feature,
                  double threshold, std::int64_t left, std::int64_t right,
                  bool missing_left = false) {
    tree_ids.push_back(tree_id);
    node_ids.push_back(node_id);
    feature_ids.push_back(feature);
    thresholds.push_back(float_at_or_below(threshold));
    modes.emplace_back("BRANCH_LEQ");
    true_ids.push_back(left);
    false_ids.push_back(right);
    missing_tracks_true.push_back(missing_left ? 1 : 0);
  }

  /// Adds one tree; leaf_weights(node, add) calls add(id, weight) for each weight of a leaf.
  template <class LeafWeights>
  void add_tree(const tree::detail::TreeNodes& t, std::int64_t tree_id, LeafWeights&& leaf_weights) {
    for (index_t node = 0; node < t.node_count(); ++node) {
      const auto i = static_cast<std::size_t>(node);
      if (t.is_leaf(node)) {
        add_leaf(tree_id, node);
        leaf_weights(node, [&](std::int64_t id, double w) { add_weight(tree_id, node, id, w); });
      } else {
        add_branch(tree_id, node, t.feature[i], t.threshold[i], t.children_left[i],
                   t.children_right[i]);
      }
    }
  }

  void write(::onnx::NodeProto& n, const std::string& prefix) const {
    set_attribute(n, "nodes_treeids", tree_ids);
    set_attribute(n, "nodes_nodeids", node_ids);
    set_attribute(n, "nodes_featureids", feature_ids);
    set_attribute(n, "nodes_values", thresholds);
    set_attribute(n, "nodes_modes", modes);
    set_attribute(n, "nodes_truenodeids", true_ids);
    set_attribute(n, "nodes_falsenodeids", false_ids);
    if (std::find(missing_tracks_true.begin(), missing_tracks_true.end(), 1) !=
        missing_tracks_true.end()) {
      set_attribute(n, "nodes_missing_value_tracks_true", missing_tracks_true);
    }
    set_attribute(n, prefix + "_treeids", weight_trees);
    set_attribute(n, prefix + "_nodeids", weight_nodes);
    set_attribute(n, prefix + "_ids", weight_ids);
    set_attribute(n, prefix + "_weights", weights);
  }
};

/// The walk of decision trees (features rounded to float32, as the trees test them);
/// `outputs` values per leaf, written by leaf_values(tree, leaf, out).
template <class LeafValues>
TreeWalk decision_tree_walk(const std::vector<tree::detail::TreeNodes>& trees, std::int64_t outputs,
                            LeafValues&& leaf_values) {
  TreeWalk w;
  w.outputs = outputs;
  w.compare_as_float32 = true;
  for (const auto& t : trees) {
    w.add_tree(
        t.node_count(),
        [&](std::int64_t node) {
          const auto i = static_cast<std::size_t>(node);
          if (t.is_leaf(node)) return TreeWalk::Node{};
          return TreeWalk::Node{false, t.feature[i], t.threshold[i], t.children_left[i],
                                t.children_right[i], false};
        },
        [&](std::int64_t leaf, std::span<double> out) { leaf_values(t, leaf, out); });
  }
  return w;
}

/// The tree walk's sum divided by the number of trees (the forests' mean; 1 for a tree).
inline std::string export_tree_mean(GraphBuilder& b, const std::string& x, const TreeWalk& w,
                                    std::string_view base) {
  const std::string sum = export_tree_walk(b, x, w);
  return b.apply("Div", {sum, b.constant("tree_count", {}, {static_cast<double>(w.roots.size())})},
                 base);
}

inline Exported export_tree_classifier(GraphBuilder& b, const std::string& x,
                                       const std::vector<tree::detail::TreeNodes>& trees,
                                       const Labels& classes) {
  if (b.is_float64()) {
    const auto k = static_cast<std::int64_t>(classes.size());
    const TreeWalk w = decision_tree_walk(
        trees, k, [](const tree::detail::TreeNodes& t, std::int64_t leaf, std::span<double> out) {
          t.for_each_class_share(leaf, [&](index_t c, double p) { out[static_cast<std::size_t>(c)] = p; });
        });
    const std::string proba = export_tree_mean(b, x, w, "probabilities");
    return {{"label", export_labels_of_argmax(b, proba, classes), ::onnx::TensorProto::INT64, {-1}},
            {"probabilities", proba, ::onnx::TensorProto::DOUBLE, {-1, k}}};
  }
  const auto k = static_cast<std::int64_t>(classes.size());
  const double share = 1.0 / static_cast<double>(trees.size());
  EnsembleAttributes a;
  for (std::size_t t = 0; t < trees.size(); ++t) {
    a.add_tree(trees[t], static_cast<std::int64_t>(t), [&](index_t leaf, auto add) {
      trees[t].for_each_class_share(leaf, [&](index_t c, double p) {
        // Two classes: onnxruntime's binary layout, class id 0 carrying the second class's share.
        if (k != 2) {
          add(c, p * share);
        } else if (c == 1) {
          add(0, p * share);
        }
      });
    });
  }
  const std::string label = b.fresh("label");
  const std::string proba = b.fresh("probabilities");
  auto& n = b.node("TreeEnsembleClassifier", {x}, {label, proba}, ml_domain);
  a.write(n, "class");
  set_attribute(n, "classlabels_int64s", std::vector<std::int64_t>(classes.begin(), classes.end()));
  set_attribute(n, "post_transform", std::string("NONE"));
  b.declare(label, ::onnx::TensorProto::INT64, {-1});
  b.declare(proba, ::onnx::TensorProto::FLOAT, {-1, k});
  return {{"label", label, ::onnx::TensorProto::INT64, {-1}},
          {"probabilities", proba, ::onnx::TensorProto::FLOAT, {-1, k}}};
}

inline Exported export_tree_regressor(GraphBuilder& b, const std::string& x,
                                      const std::vector<tree::detail::TreeNodes>& trees) {
  if (b.is_float64()) {
    const TreeWalk w = decision_tree_walk(
        trees, 1, [](const tree::detail::TreeNodes& t, std::int64_t leaf, std::span<double> out) {
          out[0] = t.node_value(leaf)[0];
        });
    return {{"variable", export_tree_mean(b, x, w, "variable"), ::onnx::TensorProto::DOUBLE, {-1, 1}}};
  }
  EnsembleAttributes a;
  for (std::size_t t = 0; t < trees.size(); ++t) {
    a.add_tree(trees[t], static_cast<std::int64_t>(t), [&](index_t leaf, auto add) {
      add(0, trees[t].node_value(leaf)[0]);
    });
  }
  const std::string out = b.fresh("variable");
  auto& n = b.node("TreeEnsembleRegressor", {x}, {out}, ml_domain);
  a.write(n, "target");
  set_attribute(n, "n_targets", std::int64_t{1});
  set_attribute(n, "aggregate_function", std::string("AVERAGE"));
  set_attribute(n, "post_transform", std::string("NONE"));
  b.declare(out, ::onnx::TensorProto::FLOAT, {-1, 1});
  return {{"variable", out, ::onnx::TensorProto::FLOAT, {-1, 1}}};
}

}  // namespace detail

template <class T, class E>
Exported export_model(GraphBuilder& b, const tree::DecisionTreeClassifier<T, E>& m,
                      const std::string& x) {
  return detail::export_tree_classifier(b, x, {m.tree()}, m.classes());
}

template <class T, class E>
Exported export_model(GraphBuilder& b, const tree::DecisionTreeRegressor<T, E>& m,
                      const std::string& x) {
  return detail::export_tree_regressor(b, x, {m.tree()});
}

template <class T, class E, class P>
Exported export_model(GraphBuilder& b, const ensemble::ForestClassifier<T, E, P>& m,
                      const std::string& x) {
  return detail::export_tree_classifier(b, x, m.estimators(), m.classes());
}

template <class T, class E, class P>
Exported export_model(GraphBuilder& b, const ensemble::ForestRegressor<T, E, P>& m,
                      const std::string& x) {
  return detail::export_tree_regressor(b, x, m.estimators());
}

}  // namespace onelearn::onnx
