#pragma once
/**
 * \file
 * \brief The float64 form of the tree exports: every tree walked in plain ONNX operators, its
 * leaf values summed, all in double.
 * \ingroup onnx
 *
 * <!-- example-context: classification -->
 * \code
 * #include <onelearn/onnx/export/trees.hpp>
 * onelearn::ensemble::RandomForestClassifier<double> forest({.n_estimators = 20});
 * forest.fit(X, y);
 * onelearn::onnx::save(forest, "forest64.onnx", {.precision = onelearn::onnx::Precision::float64});
 * \endcode
 *
 * ai.onnx.ml opset 3's TreeEnsemble operators output float32 whatever their input, and opset 5's
 * TreeEnsemble, which has double outputs, is newer than the ONNX library onelearn builds with
 * (1.12, whose checker does not know it). A float64 export of the trees, forests and histogram
 * boosting therefore walks the trees in plain operators. All trees are laid out as one array of
 * nodes (a leaf is its own left and right child), and every row walks every tree at once:
 * \code{.unparsed}
 *   at = Expand(roots, [N, 1])                                  N x trees, each tree's root
 *   depth times:
 *     x  = GatherElements(X, Gather(features, at), axis 1)      the value each row tests
 *     go = LessOrEqual(x, Gather(thresholds, at))
 *          [Or(go, And(IsNaN(x), Gather(missing_left, at)))     where NaN goes left]
 *     at = Where(go, Gather(left, at), Gather(right, at))
 *   sum = ReduceSum(Gather(leaf_values, at), axes [1])          N x outputs
 * \endcode
 * after which each model adds its own ending (trees.hpp, boosting.hpp): the forests divide by
 * the number of trees, boosting adds its baseline and applies Sigmoid or Softmax, and the
 * classifiers' labels are classes[ArgMax(probabilities)], as predict takes them.
 * The decision trees compare a feature rounded to float32 with a double threshold (as
 * scikit-learn's trees do, and onelearn's), so their walk reads X through Cast to float and
 * back; histogram boosting compares the double value. The result is the model's own
 * arithmetic: the same leaves, the same sums up to their order.
 * onnx::to_estimator reads the walk back (onnx/detail/tree_walk_fold.hpp).
 */

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "onelearn/onnx/export/core.hpp"

namespace onelearn::onnx::detail {

/// Trees as one array of nodes, node ids global; what export_tree_walk writes.
struct TreeWalk {
  std::int64_t outputs = 1;                  ///< leaf values per leaf
  std::vector<std::int64_t> roots;           ///< one per tree
  std::vector<std::int64_t> feature;         ///< per node (0 at a leaf)
  std::vector<double> threshold;             ///< per node (0 at a leaf)
  std::vector<std::int64_t> left, right;     ///< per node (a leaf's own id)
  std::vector<std::uint8_t> missing_left;    ///< per node: NaN goes left
  std::vector<double> values;                ///< per node, `outputs` each (0 at a branch)
  std::int64_t depth = 0;                    ///< the longest root-to-leaf path (branches)
  bool compare_as_float32 = false;           ///< features rounded to float32 before the test

  /// The description of a tree's node `i` (its ids local to the tree, 0 the root).
  struct Node {
    bool is_leaf = true;
    std::int64_t feature = 0;
    double threshold = 0;
    std::int64_t left = 0, right = 0;
    bool missing_left = false;
  };

  /// Adds a tree of `count` nodes: `node(i)` describes node i, `leaf_values(i, out)` writes
  /// the `outputs` values of leaf i.
  template <class Describe, class LeafValues>
  void add_tree(std::int64_t count, Describe&& node, LeafValues&& leaf_values) {
    const auto offset = static_cast<std::int64_t>(feature.size());
    roots.push_back(offset);
    values.resize(values.size() + static_cast<std::size_t>(count * outputs), 0.0);
    for (std::int64_t i = 0; i < count; ++i) {
      const Node n = node(i);
      const std::int64_t id = offset + i;
      feature.push_back(n.is_leaf ? 0 : n.feature);
      threshold.push_back(n.is_leaf ? 0.0 : n.threshold);
      left.push_back(n.is_leaf ? id : offset + n.left);
      right.push_back(n.is_leaf ? id : offset + n.right);
      missing_left.push_back(!n.is_leaf && n.missing_left ? 1 : 0);
      if (n.is_leaf) {
        leaf_values(i, std::span<double>(values.data() + id * outputs,
                                         static_cast<std::size_t>(outputs)));
      }
    }
    // The walk takes as many steps as the deepest leaf is below its root.
    std::vector<std::pair<std::int64_t, std::int64_t>> stack{{offset, 0}};  // (node, depth)
    while (!stack.empty()) {
      const auto [at, d] = stack.back();
      stack.pop_back();
      const auto i = static_cast<std::size_t>(at);
      if (left[i] == at) {
        depth = std::max(depth, d);
      } else {
        stack.emplace_back(left[i], d + 1);
        stack.emplace_back(right[i], d + 1);
      }
    }
  }
};

/// The summed leaf values of every tree for each row of `x`: N x w.outputs, in double.
inline std::string export_tree_walk(GraphBuilder& b, const std::string& x, const TreeWalk& w) {
  const auto nodes = static_cast<std::int64_t>(w.feature.size());
  const auto trees = static_cast<std::int64_t>(w.roots.size());
  std::string features_of = x;
  if (w.compare_as_float32 && w.depth > 0) {  // (trees of one leaf read no feature)
    const std::string rounded = b.fresh("x_float32");
    set_attribute(b.node("Cast", {x}, {rounded}), "to", std::int64_t{::onnx::TensorProto::FLOAT});
    features_of = b.fresh("x_rounded");
    set_attribute(b.node("Cast", {rounded}, {features_of}), "to",
                  std::int64_t{::onnx::TensorProto::DOUBLE});
  }
  // Every row starts at every tree's root.
  const std::string rows = b.fresh("rows");
  set_attribute(b.node("Shape", {x}, {rows}), "end", std::int64_t{1});
  const std::string walk_shape = b.fresh("walk_shape");
  set_attribute(b.node("Concat", {rows, b.constant_int64("one", {1}, {1})}, {walk_shape}), "axis",
                std::int64_t{0});
  std::string at = b.apply("Expand", {b.constant_int64("tree_roots", {1, trees}, w.roots), walk_shape},
                           "tree_nodes");

  const std::string features = b.constant_int64("tree_features", {nodes}, w.feature);
  const std::string thresholds = b.constant("tree_thresholds", {nodes}, w.threshold);
  const std::string left = b.constant_int64("tree_left", {nodes}, w.left);
  const std::string right = b.constant_int64("tree_right", {nodes}, w.right);
  bool any_missing_left = false;
  for (const std::uint8_t m : w.missing_left) any_missing_left = any_missing_left || m != 0;
  const std::string missing_left =
      any_missing_left ? b.constant_bool("tree_missing_left", {nodes}, w.missing_left) : "";
  for (std::int64_t step = 0; step < w.depth; ++step) {
    const std::string tested = b.apply("Gather", {features, at}, "tested_feature");
    const std::string value = b.fresh("tested_value");
    set_attribute(b.node("GatherElements", {features_of, tested}, {value}), "axis", std::int64_t{1});
    std::string go_left =
        b.apply("LessOrEqual", {value, b.apply("Gather", {thresholds, at}, "threshold")}, "go_left");
    if (any_missing_left) {
      const std::string missing_goes_left =
          b.apply("And", {b.apply("IsNaN", {value}, "is_missing"),
                          b.apply("Gather", {missing_left, at}, "missing_goes_left")},
                  "missing_left");
      go_left = b.apply("Or", {go_left, missing_goes_left}, "go_left");
    }
    at = b.apply("Where", {go_left, b.apply("Gather", {left, at}, "left_child"),
                           b.apply("Gather", {right, at}, "right_child")},
                 "tree_nodes");
  }
  const std::string leaf_values =
      b.apply("Gather", {b.constant("leaf_values", {nodes, w.outputs}, w.values), at},
              "leaf_values_reached");  // N x trees x outputs
  const std::string summed = b.fresh("tree_sum");
  set_attribute(b.node("ReduceSum", {leaf_values, b.constant_int64("tree_axis", {1}, {1})}, {summed}),
                "keepdims", std::int64_t{0});
  return summed;
}

}  // namespace onelearn::onnx::detail
