#pragma once
// A TreeEnsembleClassifier or TreeEnsembleRegressor node's trees as onelearn trees
// (tree::detail::TreeNodes), for onnx::to_estimator. Node ids are the trees' node indices (the
// ONNX-ML specification numbers each tree's nodes from 0); every split must be BRANCH_LEQ, as
// scikit-learn's and onelearn's trees are; thresholds are the file's float values, which send a
// float32 input the same way as in the file. Leaf weights become node values:
//   classifier, classes ids 0..k-1     value[c] = the weight of class c (any scale: the
//                                      estimators normalise each leaf)
//   classifier, 2 classes, one id 0    the weight is the second class's share of 1 / trees
//                                      (onnxruntime's binary layout): value = (1 - share, share)
//   regressor                          value = the weight, times the number of trees when the
//                                      aggregate is SUM (the estimators average their trees)
// The rest of a fitted tree's arrays (impurity, samples) are not in the file: 0.
// Problems are invalid_argument naming what was expected and found.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/onnx/detail/attributes.hpp"
#include "onelearn/tree/detail/tree_nodes.hpp"

namespace onelearn::onnx::detail {

struct ReadEnsemble {
  std::vector<tree::detail::TreeNodes> trees;
  Labels classes;  ///< classifier: classlabels_int64s
};

inline ReadEnsemble read_tree_ensemble(const NodeAttributes& a, bool classifier) {
  auto fail = [](const std::string& problem) { throw invalid_argument(problem); };
  auto ints = [&](const std::string& name) {
    return a.get_ints(name).value_or(std::vector<std::int64_t>{});
  };
  const std::string prefix = classifier ? "class" : "target";
  const auto tree_ids = ints("nodes_treeids"), node_ids = ints("nodes_nodeids"),
             features = ints("nodes_featureids"), true_ids = ints("nodes_truenodeids"),
             false_ids = ints("nodes_falsenodeids");
  const std::vector<float> thresholds = a.get_floats("nodes_values");
  const std::vector<std::string> modes = a.get_strings("nodes_modes");
  const std::size_t n = tree_ids.size();
  if (n == 0 || node_ids.size() != n || features.size() != n || true_ids.size() != n ||
      false_ids.size() != n || thresholds.size() != n || modes.size() != n) {
    fail("expected the nodes_* attributes with one entry per node, found lengths that differ "
         "(or no nodes)");
  }
  ReadEnsemble out;
  index_t k = 1;
  if (classifier) {
    const auto labels = ints("classlabels_int64s");
    if (labels.size() < 2) fail("expected classlabels_int64s with at least 2 labels");
    out.classes = Eigen::Map<const Labels>(labels.data(), static_cast<index_t>(labels.size()));
    k = out.classes.size();
  }
  // Trees in the order of their ids; each tree's nodes by id.
  std::map<std::int64_t, std::map<std::int64_t, std::size_t>> nodes_of;
  for (std::size_t i = 0; i < n; ++i) {
    if (!nodes_of[tree_ids[i]].emplace(node_ids[i], i).second) {
      fail("expected each node once, found node " + std::to_string(node_ids[i]) + " of tree " +
           std::to_string(tree_ids[i]) + " twice");
    }
  }
  const auto weight_trees = ints(prefix + "_treeids"), weight_nodes = ints(prefix + "_nodeids"),
             weight_ids = ints(prefix + "_ids");
  const std::vector<float> weights = a.get_floats(prefix + "_weights");
  if (weight_trees.size() != weights.size() || weight_nodes.size() != weights.size() ||
      weight_ids.size() != weights.size()) {
    fail("expected " + prefix + "_treeids, _nodeids, _ids and _weights of one length");
  }
  bool only_id_zero = true;
  for (const std::int64_t id : weight_ids) {
    if (id < 0 || id >= k) fail("expected " + prefix + " ids below " + std::to_string(k) + ", found " + std::to_string(id));
    only_id_zero = only_id_zero && id == 0;
  }
  const auto n_trees = static_cast<double>(nodes_of.size());
  const bool binary_share = classifier && k == 2 && only_id_zero;
  const bool sum_aggregate = !classifier && a.get_string("aggregate_function", "SUM") == "SUM";

  std::map<std::int64_t, std::size_t> tree_index;
  for (const auto& [id, nodes] : nodes_of) {
    tree_index[id] = out.trees.size();
    tree::detail::TreeNodes t;
    t.n_values = classifier ? k : 1;
    std::size_t expected = 0;
    for (const auto& [node, at] : nodes) {
      if (node != static_cast<std::int64_t>(expected++)) {
        fail("expected tree " + std::to_string(id) + "'s node ids 0, 1, 2, ..., found " +
             std::to_string(node));
      }
      const bool leaf = modes[at] == "LEAF";
      if (!leaf && modes[at] != "BRANCH_LEQ") {
        fail("expected BRANCH_LEQ or LEAF nodes (as tree estimators split), found " + modes[at]);
      }
      t.children_left.push_back(leaf ? tree::detail::leaf_child : true_ids[at]);
      t.children_right.push_back(leaf ? tree::detail::leaf_child : false_ids[at]);
      t.feature.push_back(leaf ? tree::detail::undefined_feature : features[at]);
      t.threshold.push_back(leaf ? static_cast<double>(tree::detail::undefined_feature)
                                 : static_cast<double>(thresholds[at]));
      t.impurity.push_back(0);
      t.n_node_samples.push_back(0);
      t.weighted_n_node_samples.push_back(0);
      t.value.insert(t.value.end(), static_cast<std::size_t>(t.n_values), 0.0);
    }
    out.trees.push_back(std::move(t));
  }
  for (std::size_t w = 0; w < weights.size(); ++w) {
    const auto tree_it = tree_index.find(weight_trees[w]);
    if (tree_it == tree_index.end() || weight_nodes[w] < 0 ||
        weight_nodes[w] >= out.trees[tree_it->second].node_count()) {
      fail("expected " + prefix + " weights on existing nodes, found node " +
           std::to_string(weight_nodes[w]) + " of tree " + std::to_string(weight_trees[w]));
    }
    tree::detail::TreeNodes& t = out.trees[tree_it->second];
    double* value = t.value.data() + weight_nodes[w] * t.n_values;
    if (binary_share) {
      const double share = static_cast<double>(weights[w]) * n_trees;
      value[0] += 1.0 - share;
      value[1] += share;
    } else {
      value[weight_ids[w]] += static_cast<double>(weights[w]) * (sum_aggregate ? n_trees : 1.0);
    }
  }
  if (binary_share) {
    // A leaf without a weight has share 0: all of it is the first class.
    for (tree::detail::TreeNodes& t : out.trees) {
      for (index_t node = 0; node < t.node_count(); ++node) {
        double* value = t.value.data() + node * 2;
        if (t.is_leaf(node) && value[0] == 0 && value[1] == 0) value[0] = 1;
      }
    }
  }
  return out;
}

}  // namespace onelearn::onnx::detail
