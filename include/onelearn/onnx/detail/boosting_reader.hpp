#pragma once
// A boosted TreeEnsembleClassifier or TreeEnsembleRegressor node as histogram gradient
// boosting's trees (ensemble::detail::HistTree), for onnx::to_estimator. The attributes are
// read and checked once, by the executor's reader (onnx/ops/tree_ensemble.hpp); this header
// renumbers each tree depth first, left (true) child first, and sorts the trees by the class
// their leaves weigh on. Layouts read (onelearn's export and skl2onnx's):
//   regressor    aggregate SUM, post_transform NONE, base_values [baseline] (or none: 0)
//   classifier   two classes: every weight under one class id (0 in onnxruntime's binary
//                layout, or 1), the log-odds of the second class, post_transform LOGISTIC,
//                base_values [log-odds baseline]; k > 2 classes: each tree's weights under one
//                class id, post_transform SOFTMAX, base_values one per class
// Every split must be BRANCH_LEQ with its threshold as the file's value (float, or double from
// nodes_values_as_tensor; base_values_as_tensor likewise); NaN goes to the side
// nodes_missing_value_tracks_true says. The k-th tree of class c becomes iteration k's tree c;
// a class with fewer trees than another gets trees of one zero leaf (they add nothing).

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "onelearn/core/types.hpp"
#include "onelearn/ensemble/detail/hist_tree.hpp"
#include "onelearn/onnx/ops/tree_ensemble.hpp"

namespace onelearn::onnx::detail {

struct ReadBoosting {
  std::vector<std::vector<ensemble::detail::HistTree>> trees;  ///< [iteration][class tree]
  std::vector<double> baseline;
  Labels classes;            ///< classifier: classlabels_int64s
  std::int64_t n_features;   ///< the largest feature read + 1 (when the input's width is unknown)
};

/// `features`: the input's width, or -1 when the graph does not declare it.
inline ReadBoosting read_boosted_ensemble(const ::onnx::NodeProto& node, bool classifier,
                                          std::int64_t features) {
  const NodeContext ctx(node, 3, {});
  const ops::detail::Ensemble e = ops::detail::read_ensemble(
      ctx, classifier ? "class" : "target",
      features >= 0 ? features : std::numeric_limits<std::int64_t>::max());
  ReadBoosting out;
  out.n_features = features;
  std::int64_t k = 1;  // trees per iteration
  if (classifier) {
    const auto labels = ctx.get_ints("classlabels_int64s").value_or(std::vector<std::int64_t>{});
    if (labels.size() < 2) ctx.fail("expected classlabels_int64s with at least 2 labels");
    out.classes = Eigen::Map<const Labels>(labels.data(), static_cast<index_t>(labels.size()));
    k = out.classes.size() == 2 ? 1 : out.classes.size();
  }
  const std::string post = ctx.get_string("post_transform", "NONE");
  const std::string expected_post =
      !classifier ? "NONE" : (out.classes.size() == 2 ? "LOGISTIC" : "SOFTMAX");
  if (post != expected_post) {
    ctx.fail("expected post_transform " + expected_post + " (a boosted ensemble), found " + post);
  }
  if (!classifier && ctx.get_string("aggregate_function", "SUM") != "SUM") {
    ctx.fail("expected aggregate_function SUM (a boosted ensemble)");
  }
  const std::vector<double> base = ctx.get_reals("base_values");
  out.baseline.assign(static_cast<std::size_t>(k), 0.0);
  if (!base.empty()) {
    if (base.size() != static_cast<std::size_t>(k)) {
      ctx.fail_shape("base_values has " + std::to_string(base.size()) + " values, expected " +
                     std::to_string(k));
    }
    for (std::size_t c = 0; c < base.size(); ++c) out.baseline[c] = base[c];
  }

  std::vector<std::vector<ensemble::detail::HistTree>> per_class(static_cast<std::size_t>(k));
  for (const std::size_t root : e.roots) {
    ensemble::detail::HistTree t;
    std::int64_t tree_class = -1;
    struct Pending {
      std::size_t node;
      std::int32_t parent;
      bool is_left;
    };
    std::vector<Pending> stack{{root, -1, false}};
    while (!stack.empty()) {
      const Pending p = stack.back();
      stack.pop_back();
      // The executor's reader forbids a node being its own child, not longer cycles.
      if (t.nodes.size() >= e.nodes.size()) {
        ctx.fail("expected trees, found nodes that are reached twice (a cycle)");
      }
      const ops::detail::EnsembleNode& n = e.nodes[p.node];
      const auto at = static_cast<std::int32_t>(t.nodes.size());
      t.nodes.emplace_back();
      if (p.parent >= 0) {
        auto& parent = t.nodes[static_cast<std::size_t>(p.parent)];
        (p.is_left ? parent.left : parent.right) = at;
      }
      ensemble::detail::HistNode& out_node = t.nodes.back();
      if (n.mode == ops::detail::BranchMode::leaf) {
        for (const auto& [id, w] : n.weights) {
          // Two classes: one column of log-odds, under id 0 or id 1 alike.
          const std::int64_t c = out.classes.size() == 2 ? 0 : id;
          if (id < 0 || id >= (out.classes.size() == 2 ? 2 : k) ||
              (tree_class >= 0 && tree_class != c)) {
            ctx.fail("expected each tree's leaf weights under one " +
                     std::string(classifier ? "class" : "target") + " id below " +
                     std::to_string(classifier ? out.classes.size() : 1) + ", found id " +
                     std::to_string(id));
          }
          tree_class = c;
          out_node.value += w;
        }
        continue;
      }
      if (n.mode != ops::detail::BranchMode::leq) {
        ctx.fail("expected BRANCH_LEQ or LEAF nodes (as histogram gradient boosting splits)");
      }
      out_node.is_leaf = false;
      out_node.feature = static_cast<std::int32_t>(n.feature);
      out_node.threshold = n.threshold;
      out_node.missing_go_to_left = n.missing_goes_true;
      out.n_features = std::max(out.n_features, n.feature + 1);
      stack.push_back({n.false_child, at, false});
      stack.push_back({n.true_child, at, true});
    }
    per_class[static_cast<std::size_t>(tree_class < 0 ? 0 : tree_class)].push_back(std::move(t));
  }
  if (out.n_features < 1) {
    ctx.fail("expected the input's width declared or at least one split, found neither");
  }
  std::size_t iterations = 0;
  for (const auto& trees : per_class) iterations = std::max(iterations, trees.size());
  ensemble::detail::HistTree zero;
  zero.nodes.emplace_back();  // one leaf of value 0
  out.trees.assign(iterations, std::vector<ensemble::detail::HistTree>(static_cast<std::size_t>(k)));
  for (std::size_t c = 0; c < per_class.size(); ++c) {
    for (std::size_t i = 0; i < iterations; ++i) {
      out.trees[i][c] = i < per_class[c].size() ? std::move(per_class[c][i]) : zero;
    }
  }
  return out;
}

}  // namespace onelearn::onnx::detail
