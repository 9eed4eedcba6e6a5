#pragma once
// ONNX-ML TreeEnsembleClassifier and TreeEnsembleRegressor (ai.onnx.ml 1 and 3), evaluated as
// onnxruntime evaluates them, so that a model gives the same answers here and there:
// - the trees are the nodes sharing a nodes_treeids value; a tree's root is its node that no
//   node points to; a branch compares the feature (as float32) with its float threshold by
//   nodes_modes (or the feature in double with a double threshold where the node gives
//   nodes_values_as_tensor, opset 3's double thresholds; *_weights_as_tensor and
//   base_values_as_tensor give the weights and base values in double) (BRANCH_LEQ, BRANCH_LT, BRANCH_GTE, BRANCH_GT, BRANCH_EQ, BRANCH_NEQ); a NaN goes
//   the true way where nodes_missing_value_tracks_true says so;
// - the leaves' weights (class_* or target_*) are summed per class or target over the trees
//   (the regressor's aggregate_function SUM, AVERAGE, MIN or MAX), base_values added;
// - classifier with more than two classes: the label is the first class of the largest score,
//   the scores go through post_transform. Two classes: a row whose second class got no weight
//   has one score p, the positive class's (skl2onnx's binary layout: weights for class id 0
//   only); with weights of one class id, all non-negative, the label is the second class when
//   p > 0.5 and the scores are (1 - p, p); with some negative weights the threshold is 0 and
//   the scores (-p, p), LOGISTIC giving (sigmoid(-p), sigmoid(p)). With weights for both classes
//   onnxruntime labels rows 1 or 0 (not classlabels) by the second score's sign: kept, for
//   fidelity; onelearn's exports never use that layout.
// The outputs are float32 whatever the input, as the operators define them. String class
// labels are reported as unsupported.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "onelearn/onnx/ops/common.hpp"
#include "onelearn/onnx/ops/ml.hpp"

namespace onelearn::onnx::ops {

namespace detail {

enum class BranchMode { leq, lt, gte, gt, eq, neq, leaf };

struct EnsembleNode {
  std::int64_t feature = 0;
  double threshold = 0;  ///< a float value unless Ensemble::double_thresholds
  BranchMode mode = BranchMode::leaf;
  std::size_t true_child = 0, false_child = 0;  ///< indices into the node list
  bool missing_goes_true = false;
  std::vector<std::pair<std::int64_t, double>> weights;  ///< (class or target, weight) at a leaf
};

struct Ensemble {
  std::vector<EnsembleNode> nodes;
  std::vector<std::size_t> roots;  ///< one per tree
  bool double_thresholds = false;  ///< nodes_values_as_tensor: compare in double, not float
};

inline BranchMode branch_mode(const NodeContext& ctx, const std::string& mode) {
  if (mode == "BRANCH_LEQ") return BranchMode::leq;
  if (mode == "BRANCH_LT") return BranchMode::lt;
  if (mode == "BRANCH_GTE") return BranchMode::gte;
  if (mode == "BRANCH_GT") return BranchMode::gt;
  if (mode == "BRANCH_EQ") return BranchMode::eq;
  if (mode == "BRANCH_NEQ") return BranchMode::neq;
  if (mode == "LEAF") return BranchMode::leaf;
  ctx.fail("nodes_modes: expected BRANCH_LEQ, BRANCH_LT, BRANCH_GTE, BRANCH_GT, BRANCH_EQ, "
           "BRANCH_NEQ or LEAF, found '" + mode + "'");
}

/// The trees of the node's attributes; `prefix` is "class" or "target" (the leaf weights).
inline Ensemble read_ensemble(const NodeContext& ctx, const std::string& prefix,
                              std::int64_t n_features) {
  auto ints = [&](const std::string& name) {
    return ctx.get_ints(name).value_or(std::vector<std::int64_t>{});
  };
  const std::vector<std::int64_t> tree_ids = ints("nodes_treeids"), node_ids = ints("nodes_nodeids"),
                                  features = ints("nodes_featureids"),
                                  true_ids = ints("nodes_truenodeids"),
                                  false_ids = ints("nodes_falsenodeids"),
                                  missing = ints("nodes_missing_value_tracks_true");
  const std::vector<double> thresholds = ctx.get_reals("nodes_values");
  const std::vector<std::string> modes = ctx.get_strings("nodes_modes");
  const std::size_t n = tree_ids.size();
  if (n == 0) ctx.fail("attribute 'nodes_treeids' is required and not empty");
  for (const auto& [name, size] :
       {std::pair<const char*, std::size_t>{"nodes_nodeids", node_ids.size()},
        {"nodes_featureids", features.size()}, {"nodes_truenodeids", true_ids.size()},
        {"nodes_falsenodeids", false_ids.size()}, {"nodes_values", thresholds.size()},
        {"nodes_modes", modes.size()}}) {
    if (size != n) {
      ctx.fail_shape(std::string(name) + " has " + std::to_string(size) + " values, expected " +
                     std::to_string(n) + " (one per node)");
    }
  }
  if (!missing.empty() && missing.size() != n) {
    ctx.fail_shape("nodes_missing_value_tracks_true has " + std::to_string(missing.size()) +
                   " values, expected " + std::to_string(n));
  }
  std::map<std::pair<std::int64_t, std::int64_t>, std::size_t> index;
  for (std::size_t i = 0; i < n; ++i) {
    if (!index.emplace(std::pair{tree_ids[i], node_ids[i]}, i).second) {
      ctx.fail("node " + std::to_string(node_ids[i]) + " of tree " + std::to_string(tree_ids[i]) +
               " is given twice");
    }
  }
  auto find = [&](std::int64_t tree, std::int64_t node) {
    const auto it = index.find({tree, node});
    if (it == index.end()) {
      ctx.fail("tree " + std::to_string(tree) + " has no node " + std::to_string(node));
    }
    return it->second;
  };
  Ensemble e;
  e.double_thresholds = ctx.has("nodes_values_as_tensor");
  e.nodes.resize(n);
  std::vector<bool> is_child(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    EnsembleNode& node = e.nodes[i];
    node.mode = branch_mode(ctx, modes[i]);
    node.missing_goes_true = !missing.empty() && missing[i] != 0;
    if (node.mode == BranchMode::leaf) continue;
    if (features[i] < 0 || features[i] >= n_features) {
      ctx.fail("node " + std::to_string(node_ids[i]) + " of tree " + std::to_string(tree_ids[i]) +
               " reads feature " + std::to_string(features[i]) + ", the input has " +
               std::to_string(n_features));
    }
    node.feature = features[i];
    node.threshold = thresholds[i];
    node.true_child = find(tree_ids[i], true_ids[i]);
    node.false_child = find(tree_ids[i], false_ids[i]);
    if (node.true_child == i || node.false_child == i) ctx.fail("a node is its own child");
    is_child[node.true_child] = is_child[node.false_child] = true;
  }
  std::map<std::int64_t, std::size_t> root_of;
  for (std::size_t i = 0; i < n; ++i) {
    if (!is_child[i] && !root_of.emplace(tree_ids[i], i).second) {
      ctx.fail("tree " + std::to_string(tree_ids[i]) + " has more than one root");
    }
  }
  for (const auto& [tree, root] : root_of) e.roots.push_back(root);

  const std::vector<std::int64_t> w_trees = ints(prefix + "_treeids"),
                                  w_nodes = ints(prefix + "_nodeids"), w_ids = ints(prefix + "_ids");
  const std::vector<double> w = ctx.get_reals(prefix + "_weights");
  if (w_trees.size() != w.size() || w_nodes.size() != w.size() || w_ids.size() != w.size()) {
    ctx.fail_shape(prefix + "_treeids, " + prefix + "_nodeids, " + prefix + "_ids and " + prefix +
                   "_weights must have the same length");
  }
  for (std::size_t k = 0; k < w.size(); ++k) {
    e.nodes[find(w_trees[k], w_nodes[k])].weights.emplace_back(w_ids[k], w[k]);
  }
  return e;
}

/// The leaf row r reaches from `root`, comparing in `Real` (float: float thresholds, as
/// onnxruntime compares them; double: nodes_values_as_tensor).
template <class Real>
const EnsembleNode& leaf_for(const Ensemble& e, std::size_t root, const double* row) {
  const EnsembleNode* node = &e.nodes[root];
  // A tree is acyclic when every path ends; bound the walk by the node count all the same.
  for (std::size_t steps = 0; node->mode != BranchMode::leaf && steps <= e.nodes.size(); ++steps) {
    const auto x = static_cast<Real>(row[node->feature]);
    const auto t = static_cast<Real>(node->threshold);
    bool go_true = false;
    if (std::isnan(x) && node->missing_goes_true) {
      go_true = true;
    } else {
      switch (node->mode) {
        case BranchMode::leq: go_true = x <= t; break;
        case BranchMode::lt: go_true = x < t; break;
        case BranchMode::gte: go_true = x >= t; break;
        case BranchMode::gt: go_true = x > t; break;
        case BranchMode::eq: go_true = x == t; break;
        case BranchMode::neq: go_true = x != t; break;
        case BranchMode::leaf: break;
      }
    }
    node = &e.nodes[go_true ? node->true_child : node->false_child];
  }
  return *node;
}

inline const EnsembleNode& leaf_for(const Ensemble& e, std::size_t root, const double* row) {
  return e.double_thresholds ? leaf_for<double>(e, root, row) : leaf_for<float>(e, root, row);
}

}  // namespace detail

inline std::vector<Tensor> tree_ensemble_regressor(const NodeContext& ctx) {
  std::int64_t rows = 0, cols = 0;
  const std::vector<double> x = detail::ml_rows(ctx, rows, cols);
  const std::int64_t targets = ctx.get_int("n_targets", 1);
  if (targets <= 0) ctx.fail("attribute 'n_targets' must be positive");
  const detail::Ensemble e = detail::read_ensemble(ctx, "target", cols);
  const std::string aggregate = ctx.get_string("aggregate_function", "SUM");
  if (aggregate != "SUM" && aggregate != "AVERAGE" && aggregate != "MIN" && aggregate != "MAX") {
    ctx.unsupported_attribute("aggregate_function " + aggregate);
  }
  const std::vector<double> base = ctx.get_reals("base_values");
  if (!base.empty() && base.size() != 1 && base.size() != static_cast<std::size_t>(targets)) {
    ctx.fail_shape("base_values has " + std::to_string(base.size()) + " values, expected " +
                   std::to_string(targets) + " (n_targets)");
  }
  std::vector<double> z(static_cast<std::size_t>(rows * targets));
  for (std::int64_t r = 0; r < rows; ++r) {
    std::vector<double> acc(static_cast<std::size_t>(targets),
                            aggregate == "MIN"   ? std::numeric_limits<double>::infinity()
                            : aggregate == "MAX" ? -std::numeric_limits<double>::infinity()
                                                 : 0.0);
    std::vector<bool> seen(static_cast<std::size_t>(targets), false);
    for (const std::size_t root : e.roots) {
      const auto& leaf = detail::leaf_for(e, root, x.data() + r * cols);
      for (const auto& [id, w] : leaf.weights) {
        if (id < 0 || id >= targets) ctx.fail("target id " + std::to_string(id) + " out of range");
        auto& a = acc[static_cast<std::size_t>(id)];
        seen[static_cast<std::size_t>(id)] = true;
        a = aggregate == "MIN" ? std::min(a, w) : aggregate == "MAX" ? std::max(a, w) : a + w;
      }
    }
    for (std::int64_t t = 0; t < targets; ++t) {
      double v = seen[static_cast<std::size_t>(t)] ? acc[static_cast<std::size_t>(t)] : 0.0;
      if (aggregate == "AVERAGE") v /= static_cast<double>(e.roots.size());
      if (!base.empty()) v += base[static_cast<std::size_t>(base.size() == 1 ? 0 : t)];
      z[static_cast<std::size_t>(r * targets + t)] = v;
    }
  }
  detail::post_transform(ctx, ctx.get_string("post_transform", "NONE"), z, rows, targets);
  return single_output(Tensor(Shape{rows, targets}, detail::to_float(z)));
}

inline std::vector<Tensor> tree_ensemble_classifier(const NodeContext& ctx) {
  if (ctx.has("classlabels_strings")) {
    throw unsupported_error(unsupported_kind::data_type, "string",
                            ctx.where() + ": unsupported data type string (class labels)");
  }
  const std::vector<std::int64_t> labels =
      ctx.get_ints("classlabels_int64s").value_or(std::vector<std::int64_t>{});
  if (labels.size() < 2) ctx.fail("attribute 'classlabels_int64s' needs at least 2 labels");
  const auto k = static_cast<std::int64_t>(labels.size());
  std::int64_t rows = 0, cols = 0;
  const std::vector<double> x = detail::ml_rows(ctx, rows, cols);
  const detail::Ensemble e = detail::read_ensemble(ctx, "class", cols);
  const std::vector<std::int64_t> ids = ctx.get_ints("class_ids").value_or(std::vector<std::int64_t>{});
  const std::vector<double> weights = ctx.get_reals("class_weights");
  bool one_id = !ids.empty();
  for (const std::int64_t id : ids) {
    if (id < 0 || id >= k) ctx.fail("class id " + std::to_string(id) + " out of range");
    one_id = one_id && id == ids.front();
  }
  const bool all_positive =
      std::all_of(weights.begin(), weights.end(), [](double w) { return w >= 0; });
  const std::vector<double> base = ctx.get_reals("base_values");
  if (!base.empty() && base.size() != static_cast<std::size_t>(k) && !(k == 2 && base.size() == 1)) {
    ctx.fail_shape("base_values has " + std::to_string(base.size()) + " values, expected " +
                   std::to_string(k));
  }
  const std::string transform = ctx.get_string("post_transform", "NONE");
  std::vector<double> z(static_cast<std::size_t>(rows * k));
  std::vector<std::int64_t> y(static_cast<std::size_t>(rows));
  for (std::int64_t r = 0; r < rows; ++r) {
    std::vector<double> score(static_cast<std::size_t>(k), 0.0);
    std::vector<bool> has(static_cast<std::size_t>(k), false);
    for (const std::size_t root : e.roots) {
      const auto& leaf = detail::leaf_for(e, root, x.data() + r * cols);
      for (const auto& [id, w] : leaf.weights) {
        score[static_cast<std::size_t>(id)] += w;
        has[static_cast<std::size_t>(id)] = true;
      }
    }
    double* out = z.data() + r * k;
    if (k > 2) {
      for (std::int64_t c = 0; c < k; ++c) {
        out[c] = score[static_cast<std::size_t>(c)] + (base.empty() ? 0.0 : base[static_cast<std::size_t>(c)]);
      }
      std::int64_t best = 0;
      for (std::int64_t c = 1; c < k; ++c) best = out[c] > out[best] ? c : best;
      y[static_cast<std::size_t>(r)] = labels[static_cast<std::size_t>(best)];
      continue;
    }
    // Two classes, onnxruntime's rules: one score (no weight for the second class) is the
    // positive class's; it picks the label and becomes two columns.
    if (base.size() == 2) {
      if (has[1]) {
        score[1] = base[1] + score[0];
        score[0] = -score[1];
      } else {
        score[0] += base[0];
        score[1] += base[1];
        has[1] = true;
      }
    } else if (base.size() == 1) {
      score[0] += base[0];
    }
    const bool single = !has[1];
    const double positive = has[1] ? score[1] : score[0];
    bool second = positive > 0;
    bool complement = false;  // the first column is 1 - p (else -p)
    if (one_id) {
      complement = all_positive;
      second = all_positive ? positive > 0.5 : positive > 0;
      y[static_cast<std::size_t>(r)] = labels[second ? 1 : 0];
    } else {
      y[static_cast<std::size_t>(r)] = second ? 1 : 0;  // onnxruntime's raw labels in this case
    }
    std::vector<double> pair{score[0], score[1]};
    if (single && transform == "LOGISTIC") {
      const double p = 1.0 / (1.0 + std::exp(-positive));
      pair = {complement ? 1 - p : 1.0 / (1.0 + std::exp(positive)), p};
    } else {
      if (single) pair = {complement ? 1 - positive : -positive, positive};
      detail::post_transform(ctx, transform, pair, 1, 2);
    }
    out[0] = pair[0];
    out[1] = pair[1];
  }
  if (k > 2) detail::post_transform(ctx, transform, z, rows, k);
  return {Tensor(Shape{rows}, std::move(y)), Tensor(Shape{rows, k}, detail::to_float(z))};
}

}  // namespace onelearn::onnx::ops
