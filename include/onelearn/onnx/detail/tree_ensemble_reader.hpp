#pragma once
// A TreeEnsembleClassifier or TreeEnsembleRegressor node's trees as onelearn trees
// (tree::detail::TreeNodes), for onnx::to_estimator. The attributes are read and checked once,
// by the executor's reader (onnx/ops/tree_ensemble.hpp: lengths, duplicate nodes, children,
// roots, feature range, leaf weights); this header only renumbers each tree depth first, left
// child first (so children come after their parent, as fit numbers them) and turns leaf weights
// into node values. Every split must be BRANCH_LEQ, as scikit-learn's and onelearn's trees
// split; thresholds are the file's values (float, or double from nodes_values_as_tensor, as
// onelearn's float64 export folds back: onnx/detail/tree_walk_fold.hpp), which send an input
// the same way as in the file. Leaf weights become node values:
//   classifier, class ids 0..k-1       value[c] = the weight of class c (any scale: the
//                                      estimators normalise each leaf)
//   classifier, 2 classes, only id 0   the weight is the second class's share of 1 / trees
//                                      (onnxruntime's binary layout): value = (1 - share, share)
//   regressor                          value = the weight, times the number of trees when the
//                                      aggregate is SUM (the estimators average their trees)
// The rest of a fitted tree's arrays (impurity, samples) are not in the file: 0.

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "onelearn/core/types.hpp"
#include "onelearn/onnx/ops/tree_ensemble.hpp"
#include "onelearn/tree/detail/tree_nodes.hpp"

namespace onelearn::onnx::detail {

struct ReadEnsemble {
  std::vector<tree::detail::TreeNodes> trees;
  Labels classes;  ///< classifier: classlabels_int64s
};

/// `features`: the input's width, or -1 when the graph does not declare it.
inline ReadEnsemble read_tree_ensemble(const ::onnx::NodeProto& node, bool classifier,
                                       std::int64_t features) {
  const NodeContext ctx(node, 3, {});
  const ops::detail::Ensemble e = ops::detail::read_ensemble(
      ctx, classifier ? "class" : "target",
      features >= 0 ? features : std::numeric_limits<std::int64_t>::max());
  ReadEnsemble out;
  index_t k = 1;
  bool only_id_zero = true;
  if (classifier) {
    const auto labels = ctx.get_ints("classlabels_int64s").value_or(std::vector<std::int64_t>{});
    if (labels.size() < 2) ctx.fail("expected classlabels_int64s with at least 2 labels");
    out.classes = Eigen::Map<const Labels>(labels.data(), static_cast<index_t>(labels.size()));
    k = out.classes.size();
    for (const std::int64_t id : ctx.get_ints("class_ids").value_or(std::vector<std::int64_t>{})) {
      only_id_zero = only_id_zero && id == 0;
    }
  }
  const auto n_trees = static_cast<double>(e.roots.size());
  const bool binary_share = classifier && k == 2 && only_id_zero;
  const bool sum_aggregate = !classifier && ctx.get_string("aggregate_function", "SUM") == "SUM";

  for (const std::size_t root : e.roots) {
    tree::detail::TreeNodes t;
    t.n_values = k;
    struct Pending {
      std::size_t node;
      index_t parent;
      bool is_left;
    };
    std::vector<Pending> stack{{root, -1, false}};
    while (!stack.empty()) {
      const Pending p = stack.back();
      stack.pop_back();
      // The executor's reader forbids a node being its own child, not longer cycles.
      if (t.node_count() >= static_cast<index_t>(e.nodes.size())) {
        ctx.fail("expected trees, found nodes that are reached twice (a cycle)");
      }
      const ops::detail::EnsembleNode& n = e.nodes[p.node];
      std::vector<double> value(static_cast<std::size_t>(k), 0.0);
      const bool leaf = n.mode == ops::detail::BranchMode::leaf;
      if (!leaf && n.mode != ops::detail::BranchMode::leq) {
        ctx.fail("expected BRANCH_LEQ or LEAF nodes (as tree estimators split)");
      }
      for (const auto& [id, w] : n.weights) {
        if (id < 0 || id >= k) {
          ctx.fail("expected " + std::string(classifier ? "class" : "target") + " ids below " +
                   std::to_string(k) + ", found " + std::to_string(id));
        }
        if (binary_share) {
          value[0] += 1.0 - w * n_trees;
          value[1] += w * n_trees;
        } else {
          value[static_cast<std::size_t>(id)] += w * (sum_aggregate ? n_trees : 1.0);
        }
      }
      if (leaf && binary_share && n.weights.empty()) value[0] = 1;  // share 0: the first class
      const index_t id = t.add_node(
          p.parent, p.is_left, leaf ? tree::detail::undefined_feature : n.feature,
          leaf ? static_cast<double>(tree::detail::undefined_feature)
               : n.threshold,
          0.0, 0, 0.0, value);
      if (!leaf) {
        stack.push_back({n.false_child, id, false});
        stack.push_back({n.true_child, id, true});
      }
    }
    out.trees.push_back(std::move(t));
  }
  return out;
}

}  // namespace onelearn::onnx::detail
