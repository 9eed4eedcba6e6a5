#pragma once
// Growing one tree, as scikit-learn's DepthFirstTreeBuilder and BestFirstTreeBuilder
// (sklearn/tree/_tree.pyx), so that the nodes come out in its order:
// - without max_leaf_nodes, depth first: a node is numbered when it is taken off a stack, its
//   right child pushed before its left one (so the left subtree is numbered first);
// - with max_leaf_nodes, best first: each node's split is searched when the node is added, and
//   the frontier node of the largest improvement is expanded next (std::push_heap/pop_heap on
//   the same comparison as scikit-learn's, so equal improvements come out in the same order),
//   until max_leaf_nodes - 1 nodes are split; the others become leaves.
// A node is a leaf when it is at max_depth, has fewer than min_samples_split rows (or fewer
// than 2 min_samples_leaf, or less than 2 min_weight_leaf weight), is pure (impurity <= machine
// epsilon), has no acceptable split, or its split's improvement + epsilon is below
// min_impurity_decrease.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "onelearn/core/types.hpp"
#include "onelearn/tree/detail/sklearn_random.hpp"
#include "onelearn/tree/detail/splitter.hpp"
#include "onelearn/tree/detail/training_data.hpp"
#include "onelearn/tree/detail/tree_nodes.hpp"

namespace onelearn::tree::detail {

struct GrowSettings {
  SplitSettings split;
  index_t max_depth = std::numeric_limits<index_t>::max();
  index_t min_samples_split = 2;
  index_t max_leaf_nodes = 0;  ///< 0: depth first, without a limit on leaves
  double min_impurity_decrease = 0;
};

class TreeBuilder {
 public:
  TreeBuilder(Splitter& splitter, const GrowSettings& settings, index_t n_values)
      : splitter_(splitter), settings_(settings) {
    tree_.n_values = n_values;
  }

  TreeNodes grow() && {
    if (splitter_.n_rows() == 0) return std::move(tree_);
    root_weight_ = splitter_.totals(0, splitter_.n_rows()).weight;
    if (settings_.max_leaf_nodes > 0) {
      grow_best_first();
    } else {
      grow_depth_first();
    }
    return std::move(tree_);
  }

 private:
  static constexpr double epsilon = std::numeric_limits<double>::epsilon();

  struct Node {
    index_t begin, end, depth, parent;
    bool is_left;
    double impurity;  ///< +inf for the root: computed when it is added
    index_t n_constant = 0;
  };

  struct Evaluated {
    index_t id;
    Node node;
    bool is_leaf;
    Split split;
  };

  /// Adds `node` to the tree with its split (or as a leaf), scikit-learn's _add_node.
  Evaluated add(Node node, bool find_constants) {
    const NodeTotals totals = splitter_.totals(node.begin, node.end);
    const index_t n = node.end - node.begin;
    const SplitSettings& s = settings_.split;
    bool is_leaf = node.depth >= settings_.max_depth || n < settings_.min_samples_split ||
                   n < 2 * s.min_samples_leaf || totals.weight < 2 * s.min_weight_leaf;
    if (node.parent < 0) node.impurity = splitter_.impurity(totals);
    is_leaf = is_leaf || node.impurity <= epsilon;
    Split split;
    split.position = node.end;
    if (!is_leaf) {
      index_t n_constant = find_constants ? node.n_constant : 0;
      split = splitter_.split(node.begin, node.end, totals, node.impurity, root_weight_,
                              n_constant);
      node.n_constant = n_constant;
      is_leaf = split.position >= node.end ||
                split.improvement + epsilon < settings_.min_impurity_decrease;
    }
    const index_t id = tree_.add_node(
        node.parent, node.is_left, is_leaf ? undefined_feature : split.feature,
        is_leaf ? static_cast<double>(undefined_feature) : split.threshold, node.impurity, n,
        totals.weight, splitter_.node_value(totals));
    return {id, node, is_leaf, split};
  }

  void grow_depth_first() {
    std::vector<Node> stack{{0, splitter_.n_rows(), 0, -1, false,
                             std::numeric_limits<double>::infinity(), 0}};
    while (!stack.empty()) {
      const Node node = stack.back();
      stack.pop_back();
      const Evaluated e = add(node, true);
      if (e.is_leaf) continue;
      const Node& n = e.node;
      stack.push_back({e.split.position, n.end, n.depth + 1, e.id, false, e.split.impurity_right,
                       n.n_constant});
      stack.push_back({n.begin, e.split.position, n.depth + 1, e.id, true, e.split.impurity_left,
                       n.n_constant});
    }
  }

  void grow_best_first() {
    // scikit-learn's FrontierRecord order: a max-heap on the improvement (leaves have 0).
    auto smaller = [](const Evaluated& a, const Evaluated& b) {
      return improvement_of(a) < improvement_of(b);
    };
    std::vector<Evaluated> frontier{
        add({0, splitter_.n_rows(), 0, -1, false, std::numeric_limits<double>::infinity(), 0},
            false)};
    index_t split_budget = settings_.max_leaf_nodes - 1;
    while (!frontier.empty()) {
      std::pop_heap(frontier.begin(), frontier.end(), smaller);
      const Evaluated e = frontier.back();
      frontier.pop_back();
      if (e.is_leaf || split_budget <= 0) {
        tree_.make_leaf(e.id);
        continue;
      }
      --split_budget;
      const Node& n = e.node;
      Evaluated left = add({n.begin, e.split.position, n.depth + 1, e.id, true,
                            e.split.impurity_left, 0},
                           false);
      Evaluated right = add({e.split.position, n.end, n.depth + 1, e.id, false,
                             e.split.impurity_right, 0},
                            false);
      frontier.push_back(std::move(left));
      std::push_heap(frontier.begin(), frontier.end(), smaller);
      frontier.push_back(std::move(right));
      std::push_heap(frontier.begin(), frontier.end(), smaller);
    }
  }

  static double improvement_of(const Evaluated& e) { return e.is_leaf ? 0.0 : e.split.improvement; }

  Splitter& splitter_;
  GrowSettings settings_;
  TreeNodes tree_;
  double root_weight_ = 0;
};

/// One tree grown on `data` with the rows weighted by `weights` (rows of weight 0 are left
/// out): what a decision tree's fit and each tree of a forest do.
inline TreeNodes grow_tree(const TrainingData& data, std::vector<double> weights,
                           const GrowSettings& settings, TreeRandom random, bool threads) {
  Splitter splitter(data, std::move(weights), settings.split, random, threads);
  return TreeBuilder(splitter, settings, data.classification() ? data.n_classes : 1).grow();
}

}  // namespace onelearn::tree::detail
