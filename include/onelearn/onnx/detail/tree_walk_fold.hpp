#pragma once
// The float64 tree walk (onnx/export/tree_walk.hpp) folded back into the ai.onnx.ml
// TreeEnsembleClassifier or TreeEnsembleRegressor node that the float32 export writes, with
// its thresholds, leaf weights and base values in double ("<attribute>_as_tensor", as
// ai.onnx.ml opset 3 defines them), so that onnx::to_estimator reads both precisions with the
// same readers (tree_ensemble_reader.hpp, boosting_reader.hpp). The walk is matched from its
// ReduceSum back to the Expand of the roots, one step at a time, every step reading the same
// node arrays; what reads the sum tells the model:
//   Div(sum, trees)              trees and forests: a regressor (aggregate AVERAGE), or a
//                                classifier when ArgMax -> Gather(classes) reads the mean
//   Add(sum, baseline)           boosting: a regressor (SUM, base_values), or a classifier:
//     -> Sigmoid -> Sub, Concat  two classes (post_transform LOGISTIC, weights under id 0)
//     -> Softmax                 more classes (SOFTMAX; the trees take the classes in turn)
// A graph that does not match is left as it is, for the readers to report what they miss.
// A walk that stops before a tree's deepest leaf (fewer steps than the tree is deep) is a
// graph_error: the file would not compute what the trees do.

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "onelearn/onnx/detail/attribute_writers.hpp"
#include "onelearn/onnx/detail/attributes.hpp"
#include "onelearn/onnx/detail/chain_reader.hpp"
#include "onelearn/onnx/detail/plain_graph.hpp"
#include "onelearn/onnx/errors.hpp"
#include "onelearn/onnx/tensor.hpp"

namespace onelearn::onnx::detail {

/// A matched walk: its input, node arrays, step count and the nodes it is made of.
struct MatchedTreeWalk {
  std::string x;  ///< the features the walk reads (before any Cast)
  std::vector<std::int64_t> roots, feature, left, right, missing_left;
  std::vector<double> threshold;
  std::vector<double> values;  ///< nodes x outputs, row-major
  std::int64_t outputs = 0;
  std::int64_t steps = 0;
  bool rounds_to_float32 = false;  ///< reads X through Cast to float32 and back (decision trees)
  std::set<int> nodes;  ///< graph nodes of the walk, the ReduceSum included
};

class TreeWalkMatcher {
 public:
  explicit TreeWalkMatcher(const ::onnx::ModelProto& model) : graph_(model), g_(model.graph()) {
    for (int n = 0; n < g_.node_size(); ++n)
      for (const auto& out : g_.node(n).output()) producers_.emplace(out, n);
  }

  /// The walk whose ReduceSum is node `sum`, or nullopt when it is not one.
  [[nodiscard]] std::optional<MatchedTreeWalk> match(int sum) const {
    MatchedTreeWalk w;
    const ::onnx::NodeProto& reduce = g_.node(sum);
    const auto axes = int64s(reduce, 1);
    if (reduce.op_type() != "ReduceSum" || !axes || *axes != std::vector<std::int64_t>{1} ||
        NodeAttributes(reduce).get_int("keepdims", 1) != 0) {
      return std::nullopt;
    }
    const int leaf_gather = gather_of(reduce.input(0));
    const Tensor* values = leaf_gather < 0 ? nullptr : constant(g_.node(leaf_gather).input(0));
    if (values == nullptr || values->rank() != 2 || !is_real(*values)) return std::nullopt;
    w.values = real_values(*values);
    w.outputs = values->shape()[1];
    w.nodes = {sum, leaf_gather};
    std::string at = g_.node(leaf_gather).input(1);
    std::string tested;  // what GatherElements reads: x, or x through Cast to float and back
    std::vector<std::string> arrays;  // features, thresholds, left, right[, missing]
    for (;;) {
      const int p = producer(at);
      if (p < 0 || w.steps > g_.node_size()) return std::nullopt;
      const ::onnx::NodeProto& n = g_.node(p);
      if (n.op_type() == "Expand") {
        if (!read_start(n, p, w)) return std::nullopt;
        break;
      }
      std::string previous;
      std::vector<std::string> step_arrays;
      std::string step_tested;
      if (n.op_type() != "Where" || n.input_size() != 3 ||
          !read_step(n, p, w, previous, step_arrays, step_tested)) {
        return std::nullopt;
      }
      if (w.steps > 0 && (step_arrays != arrays || step_tested != tested)) return std::nullopt;
      arrays = std::move(step_arrays);
      tested = std::move(step_tested);
      at = previous;
      ++w.steps;
    }
    if (w.steps > 0 && !read_arrays(arrays, tested, w)) return std::nullopt;
    if (w.steps == 0) {  // stumps only: every root a leaf, no arrays read
      const auto m = static_cast<std::int64_t>(w.values.size()) / std::max<std::int64_t>(w.outputs, 1);
      w.feature.assign(static_cast<std::size_t>(m), 0);
      w.threshold.assign(static_cast<std::size_t>(m), 0.0);
      w.left.resize(static_cast<std::size_t>(m));
      for (std::int64_t i = 0; i < m; ++i) w.left[static_cast<std::size_t>(i)] = i;
      w.right = w.left;
    }
    return w;
  }

  [[nodiscard]] const ChainReader& graph() const noexcept { return graph_; }

  /// The one node that reads `value`, when it is of op `op` and has an output; else -1.
  [[nodiscard]] int only_reader(const std::string& value, const std::string& op) const {
    const std::vector<int> readers = graph_.consumers(value);
    return readers.size() == 1 && g_.node(readers[0]).op_type() == op &&
                   g_.node(readers[0]).output_size() >= 1
               ? readers[0]
               : -1;
  }
  /// A reader of `value` of op `op` with an output, or -1.
  [[nodiscard]] int reader(const std::string& value, const std::string& op) const {
    for (const int n : graph_.consumers(value))
      if (g_.node(n).op_type() == op && g_.node(n).output_size() >= 1) return n;
    return -1;
  }
  [[nodiscard]] const Tensor* constant(const std::string& name) const {
    return graph_.find_constant(name);
  }
  /// The int64 constant read as input `i` of `n`, or nullopt.
  [[nodiscard]] std::optional<std::vector<std::int64_t>> int64s(const ::onnx::NodeProto& n,
                                                                int i) const {
    if (n.input_size() <= i) return std::nullopt;
    const Tensor* t = constant(n.input(i));
    if (t == nullptr || !t->holds<std::int64_t>()) return std::nullopt;
    return t->to_vector<std::int64_t>();
  }

 private:
  /// The node producing `value` when it is of op `op` with `inputs` inputs, else -1.
  [[nodiscard]] int made_by(const std::string& value, const std::string& op, int inputs) const {
    const int p = producer(value);
    return p >= 0 && g_.node(p).op_type() == op && g_.node(p).input_size() == inputs ? p : -1;
  }

  /// The node producing `value` when it is a Gather (axis 0) of a constant, else -1.
  [[nodiscard]] int gather_of(const std::string& value) const {
    const int p = producer(value);
    if (p < 0) return -1;
    const ::onnx::NodeProto& n = g_.node(p);
    if (n.op_type() != "Gather" || n.input_size() != 2 || NodeAttributes(n).get_int("axis", 0) != 0 ||
        constant(n.input(0)) == nullptr) {
      return -1;
    }
    return p;
  }

  /// One step: at' = Where(go_left, Gather(left, at), Gather(right, at)), go_left from
  /// LessOrEqual(GatherElements(tested, Gather(features, at)), Gather(thresholds, at)), maybe
  /// Or-ed with And(IsNaN(that value), Gather(missing, at)).
  bool read_step(const ::onnx::NodeProto& where, int where_index, MatchedTreeWalk& w,
                 std::string& previous, std::vector<std::string>& arrays, std::string& tested) const {
    const int left = gather_of(where.input(1)), right = gather_of(where.input(2));
    if (left < 0 || right < 0) return false;
    previous = g_.node(left).input(1);
    std::vector<int> gathers{left, right};
    std::set<int> nodes{where_index, left, right};
    int compare = made_by(where.input(0), "LessOrEqual", 2);
    std::string missing, nan_tested;
    if (const int either = made_by(where.input(0), "Or", 2); either >= 0) {
      const int both = made_by(g_.node(either).input(1), "And", 2);
      if (both < 0) return false;
      const int is_nan = made_by(g_.node(both).input(0), "IsNaN", 1);
      const int gm = gather_of(g_.node(both).input(1));
      if (is_nan < 0 || gm < 0) return false;
      missing = g_.node(gm).input(0);
      nan_tested = g_.node(is_nan).input(0);
      gathers.push_back(gm);
      nodes.insert({either, both, is_nan, gm});
      compare = made_by(g_.node(either).input(0), "LessOrEqual", 2);
    }
    if (compare < 0) return false;
    const ::onnx::NodeProto& le = g_.node(compare);
    const int gt = gather_of(le.input(1));
    const int elements = made_by(le.input(0), "GatherElements", 2);
    if (gt < 0 || elements < 0 || NodeAttributes(g_.node(elements)).get_int("axis", 0) != 1 ||
        (!missing.empty() && nan_tested != le.input(0))) {
      return false;
    }
    const int gf = gather_of(g_.node(elements).input(1));
    if (gf < 0) return false;
    gathers.insert(gathers.end(), {gt, gf});
    for (const int gi : gathers)
      if (g_.node(gi).input(1) != previous) return false;
    nodes.insert({compare, gt, elements, gf});
    tested = g_.node(elements).input(0);
    arrays = {g_.node(gf).input(0), g_.node(gt).input(0), g_.node(left).input(0),
              g_.node(right).input(0)};
    if (!missing.empty()) arrays.push_back(missing);
    w.nodes.insert(nodes.begin(), nodes.end());
    return true;
  }

  /// The start: at = Expand(roots (1 x trees), Concat(Shape(x, end 1), [1])).
  bool read_start(const ::onnx::NodeProto& expand, int expand_index, MatchedTreeWalk& w) const {
    const Tensor* roots = expand.input_size() == 2 ? constant(expand.input(0)) : nullptr;
    if (roots == nullptr || !roots->holds<std::int64_t>() || roots->rank() != 2 ||
        roots->shape()[0] != 1) {
      return false;
    }
    const int concat = made_by(expand.input(1), "Concat", 2);
    const int shape = concat < 0 ? -1 : made_by(g_.node(concat).input(0), "Shape", 1);
    if (shape < 0) return false;
    w.roots = roots->to_vector<std::int64_t>();
    w.x = g_.node(shape).input(0);
    w.nodes.insert({expand_index, concat, shape});
    return true;
  }

  /// The node arrays named by the steps, checked against each other; the walk's input behind
  /// the Cast to float32 and back that the decision trees' walks read through.
  bool read_arrays(const std::vector<std::string>& arrays, const std::string& tested,
                   MatchedTreeWalk& w) const {
    const auto ints = [&](const std::string& name) -> std::optional<std::vector<std::int64_t>> {
      const Tensor* t = constant(name);
      if (t == nullptr || t->rank() != 1) return std::nullopt;
      if (t->holds<std::int64_t>()) return t->to_vector<std::int64_t>();
      if (t->holds<boolean>()) {
        std::vector<std::int64_t> out;
        for (const boolean b : t->to_vector<boolean>()) out.push_back(b ? 1 : 0);
        return out;
      }
      return std::nullopt;
    };
    const auto features = ints(arrays[0]), left = ints(arrays[2]), right = ints(arrays[3]);
    const Tensor* thresholds = constant(arrays[1]);
    if (!features || !left || !right || thresholds == nullptr || thresholds->rank() != 1 ||
        !is_real(*thresholds)) {
      return false;
    }
    w.feature = *features;
    w.threshold = real_values(*thresholds);
    w.left = *left;
    w.right = *right;
    if (arrays.size() == 5) {
      const auto missing = ints(arrays[4]);
      if (!missing) return false;
      w.missing_left = *missing;
    }
    if (tested != w.x) {
      const int back = made_by(tested, "Cast", 1);
      const int rounded = back < 0 ? -1 : made_by(g_.node(back).input(0), "Cast", 1);
      if (rounded < 0 || g_.node(rounded).input(0) != w.x ||
          NodeAttributes(g_.node(rounded)).get_int("to", 0) != ::onnx::TensorProto::FLOAT ||
          NodeAttributes(g_.node(back)).get_int("to", 0) != ::onnx::TensorProto::DOUBLE) {
        return false;
      }
      w.nodes.insert({back, rounded});
      w.rounds_to_float32 = true;
    }
    return true;
  }

  /// The node that produces `value`, or -1 (a map: the walk asks ten times a step).
  [[nodiscard]] int producer(const std::string& value) const {
    const auto it = producers_.find(value);
    return it == producers_.end() ? -1 : it->second;
  }

  ChainReader graph_;
  const ::onnx::GraphProto& g_;
  std::unordered_map<std::string, int> producers_;
};

namespace tree_walk {

/// What reads the walk's sum: the model's kind and the nodes and outputs of its ending.
struct Ending {
  bool classifier = false;
  bool boosting = false;
  std::string post = "NONE";
  std::vector<double> base;
  std::vector<std::int64_t> classes;
  std::vector<std::string> outputs;  ///< (label, probabilities) or (variable)
  std::set<int> nodes;
};

/// classes[ArgMax(scores)] read from `scores`: sets the classifier's label, or leaves it out.
inline void read_labels(const TreeWalkMatcher& m, const std::string& scores, Ending& e) {
  const ::onnx::GraphProto& g = m.graph().graph();
  const int argmax = m.reader(scores, "ArgMax");
  const int gather = argmax < 0 ? -1 : m.only_reader(g.node(argmax).output(0), "Gather");
  if (gather < 0 || g.node(gather).input_size() != 2 ||
      g.node(gather).input(1) != g.node(argmax).output(0)) {
    return;
  }
  // The first largest score of each row, as the estimators' predict takes it.
  const NodeAttributes a(g.node(argmax));
  if (a.get_int("axis", 0) != 1 || a.get_int("keepdims", 1) != 0 ||
      a.get_int("select_last_index", 0) != 0) {
    return;
  }
  const auto classes = m.int64s(g.node(gather), 0);
  if (!classes) return;
  e.classifier = true;
  e.classes = *classes;
  e.outputs = {g.node(gather).output(0), scores};
  e.nodes.insert({argmax, gather});
}

inline std::optional<Ending> read_ending(const TreeWalkMatcher& m, const MatchedTreeWalk& w,
                                         int sum) {
  const ::onnx::GraphProto& g = m.graph().graph();
  const std::string& total = g.node(sum).output(0);
  Ending e;
  const auto real_constant = [&](const ::onnx::NodeProto& n) -> std::optional<std::vector<double>> {
    const Tensor* t = n.input_size() == 2 && n.input(0) == total ? m.constant(n.input(1)) : nullptr;
    if (t == nullptr || !is_real(*t)) return std::nullopt;
    return real_values(*t);
  };
  if (const int div = m.only_reader(total, "Div"); div >= 0) {
    const auto count = real_constant(g.node(div));
    if (!count || count->size() != 1 || (*count)[0] != static_cast<double>(w.roots.size())) {
      return std::nullopt;
    }
    e.nodes.insert(div);
    const std::string& mean = g.node(div).output(0);
    e.outputs = {mean};
    read_labels(m, mean, e);
    return e;
  }
  const int add = m.only_reader(total, "Add");
  if (add < 0) return std::nullopt;
  const auto base = real_constant(g.node(add));
  if (!base || static_cast<std::int64_t>(base->size()) != w.outputs) return std::nullopt;
  e.boosting = true;
  e.base = *base;
  e.nodes.insert(add);
  const std::string& raw = g.node(add).output(0);
  e.outputs = {raw};
  if (const int sigmoid = m.reader(raw, "Sigmoid"); sigmoid >= 0) {
    const std::string& p = g.node(sigmoid).output(0);
    const int complement = m.reader(p, "Sub"), pair = m.reader(p, "Concat");
    if (complement < 0 || pair < 0) return std::nullopt;
    // (1 - p, p): Sub(1, p), then Concat(1 - p, p) on axis 1.
    const ::onnx::NodeProto& sub = g.node(complement);
    const ::onnx::NodeProto& concat = g.node(pair);
    const Tensor* one = sub.input_size() == 2 ? m.constant(sub.input(0)) : nullptr;
    if (one == nullptr || !is_real(*one) || real_values(*one) != std::vector<double>{1.0} ||
        sub.input(1) != p || concat.input_size() != 2 || concat.input(0) != sub.output(0) ||
        concat.input(1) != p || NodeAttributes(concat).get_int("axis", 0) != 1) {
      return std::nullopt;
    }
    read_labels(m, g.node(pair).output(0), e);
    if (!e.classifier) return std::nullopt;
    e.post = "LOGISTIC";
    e.nodes.insert({sigmoid, complement, pair});
  } else if (const int softmax = m.reader(raw, "Softmax"); softmax >= 0) {
    read_labels(m, g.node(softmax).output(0), e);
    if (!e.classifier) return std::nullopt;
    e.post = "SOFTMAX";
    e.nodes.insert(softmax);
  }
  return e;
}

/// Each tree's nodes, root first (graph_error for arrays that are not trees, or a tree
/// deeper than the walk's steps).
inline std::vector<std::vector<std::int64_t>> trees_of(const MatchedTreeWalk& w,
                                                       const std::string& where) {
  const auto m = static_cast<std::int64_t>(w.feature.size());
  if (w.threshold.size() != w.feature.size() || w.left.size() != w.feature.size() ||
      w.right.size() != w.feature.size() ||
      (!w.missing_left.empty() && w.missing_left.size() != w.feature.size()) ||
      static_cast<std::int64_t>(w.values.size()) != m * w.outputs) {
    throw graph_error(where + ": expected the node arrays and leaf values to have one entry per "
                      "node (" + std::to_string(m) + "), found other lengths");
  }
  std::vector<std::vector<std::int64_t>> trees;
  std::vector<bool> seen(static_cast<std::size_t>(m), false);  // trees share no node
  for (const std::int64_t root : w.roots) {
    std::vector<std::int64_t> nodes;
    std::vector<std::pair<std::int64_t, std::int64_t>> stack{{root, 0}};  // (node, depth)
    while (!stack.empty()) {
      const auto [at, depth] = stack.back();
      stack.pop_back();
      if (at < 0 || at >= m || seen[static_cast<std::size_t>(at)]) {
        throw graph_error(where + ": expected trees over nodes 0.." + std::to_string(m - 1) +
                          ", each node in one tree once, found node " + std::to_string(at) +
                          (at < 0 || at >= m ? "" : " reached twice"));
      }
      seen[static_cast<std::size_t>(at)] = true;
      nodes.push_back(at);
      const auto i = static_cast<std::size_t>(at);
      const bool stays_left = w.left[i] == at, stays_right = w.right[i] == at;
      if (stays_left != stays_right) {
        throw graph_error(where + ": node " + std::to_string(at) +
                          " is its own child on one side only (a leaf is its own child on both)");
      }
      if (stays_left) {
        if (depth > w.steps) {
          throw graph_error(where + ": a leaf " + std::to_string(depth) +
                            " splits below its root, the walk takes " + std::to_string(w.steps) +
                            " steps");
        }
        continue;
      }
      stack.emplace_back(w.right[i], depth + 1);
      stack.emplace_back(w.left[i], depth + 1);
    }
    trees.push_back(std::move(nodes));
  }
  return trees;
}

/// The TreeEnsemble node that computes what the walk and its ending compute.
inline ::onnx::NodeProto ensemble_node(const MatchedTreeWalk& w, const Ending& e,
                                       const std::vector<std::vector<std::int64_t>>& trees,
                                       const std::string& where) {
  const auto k = e.classifier ? static_cast<std::int64_t>(e.classes.size()) : 1;
  if (e.classifier && k < 2) {
    throw graph_error(where + ": expected at least 2 classes, found " + std::to_string(k));
  }
  if (e.boosting && e.classifier && (k == 2) != (e.post == "LOGISTIC")) {
    throw graph_error(where + ": expected Sigmoid for 2 classes and Softmax for more, found " +
                      (e.post == "LOGISTIC" ? "Sigmoid" : "Softmax") + " for " +
                      std::to_string(k) + " classes");
  }
  // Values per leaf: one per class (a forest's class shares, boosting's k classes' trees), one
  // otherwise (regressors, boosting's log-odds of two classes).
  const std::int64_t per_leaf = e.classifier && !(e.boosting && k == 2) ? k : 1;
  if (w.outputs != per_leaf) {
    throw graph_error(where + ": expected " + std::to_string(per_leaf) + " value" +
                      (per_leaf == 1 ? "" : "s") + " per leaf, found " + std::to_string(w.outputs));
  }
  const std::int64_t per_iteration = e.boosting && e.classifier && k > 2 ? k : 1;
  if (trees.size() % static_cast<std::size_t>(per_iteration) != 0) {
    throw graph_error(where + ": expected trees in groups of " + std::to_string(per_iteration) +
                      " (one per class), found " + std::to_string(trees.size()) + " trees");
  }
  // Decision trees test features rounded to float32, histogram boosting tests doubles: a walk
  // that reads them the other way computes another model than the one it would import as.
  if (w.steps > 0 && w.rounds_to_float32 == e.boosting) {
    throw graph_error(where + (e.boosting ? ": a boosted ensemble whose walk rounds the features "
                                            "to float32 (histogram boosting compares doubles)"
                                          : ": trees whose walk compares the features in double "
                                            "(decision trees round them to float32 first)"));
  }
  const std::string prefix = e.classifier ? "class" : "target";
  std::vector<std::int64_t> tree_ids, node_ids, features, true_ids, false_ids, missing;
  std::vector<double> thresholds;
  std::vector<std::string> modes;
  std::vector<std::int64_t> w_trees, w_nodes, w_ids;
  std::vector<double> weights;
  bool any_missing = false;
  for (std::size_t t = 0; t < trees.size(); ++t) {
    for (const std::int64_t node : trees[t]) {
      const auto i = static_cast<std::size_t>(node);
      const bool leaf = w.left[i] == node;
      tree_ids.push_back(static_cast<std::int64_t>(t));
      node_ids.push_back(node);
      features.push_back(leaf ? 0 : w.feature[i]);
      thresholds.push_back(leaf ? 0.0 : w.threshold[i]);
      modes.emplace_back(leaf ? "LEAF" : "BRANCH_LEQ");
      true_ids.push_back(leaf ? 0 : w.left[i]);
      false_ids.push_back(leaf ? 0 : w.right[i]);
      missing.push_back(!leaf && !w.missing_left.empty() && w.missing_left[i] != 0 ? 1 : 0);
      any_missing = any_missing || missing.back() != 0;
      if (!leaf) continue;
      const double* v = w.values.data() + node * w.outputs;
      const auto add = [&](std::int64_t id, double value) {
        w_trees.push_back(static_cast<std::int64_t>(t));
        w_nodes.push_back(node);
        w_ids.push_back(id);
        weights.push_back(value);
      };
      if (per_iteration > 1) {
        // Boosting with k classes: tree t adds to class t mod k only.
        const auto c = static_cast<std::int64_t>(t) % k;
        for (std::int64_t j = 0; j < k; ++j) {
          if (j != c && v[j] != 0) {
            throw graph_error(where + ": expected tree " + std::to_string(t) +
                              " to add to class " + std::to_string(c) + " only, found a value for class " +
                              std::to_string(j));
          }
        }
        add(c, v[c]);
      } else if (e.classifier && !e.boosting) {
        for (std::int64_t c = 0; c < k; ++c) add(c, v[c]);
      } else {
        add(0, v[0]);
      }
    }
  }
  ::onnx::NodeProto n;
  n.set_op_type(e.classifier ? "TreeEnsembleClassifier" : "TreeEnsembleRegressor");
  n.set_domain("ai.onnx.ml");
  n.set_name(e.outputs.back());
  n.add_input(w.x);
  for (const std::string& o : e.outputs) n.add_output(o);
  set_attribute(n, "nodes_treeids", tree_ids);
  set_attribute(n, "nodes_nodeids", node_ids);
  set_attribute(n, "nodes_featureids", features);
  set_double_values(n, "nodes_values", thresholds);
  set_attribute(n, "nodes_modes", modes);
  set_attribute(n, "nodes_truenodeids", true_ids);
  set_attribute(n, "nodes_falsenodeids", false_ids);
  if (any_missing) set_attribute(n, "nodes_missing_value_tracks_true", missing);
  set_attribute(n, prefix + "_treeids", w_trees);
  set_attribute(n, prefix + "_nodeids", w_nodes);
  set_attribute(n, prefix + "_ids", w_ids);
  set_double_values(n, prefix + "_weights", weights);
  if (e.classifier) set_attribute(n, "classlabels_int64s", e.classes);
  if (!e.classifier) {
    set_attribute(n, "n_targets", std::int64_t{1});
    set_attribute(n, "aggregate_function", std::string(e.boosting ? "SUM" : "AVERAGE"));
  }
  if (e.boosting) set_double_values(n, "base_values", e.base);
  set_attribute(n, "post_transform", e.post);
  return n;
}

}  // namespace tree_walk

/// `model` with its float64 tree walk folded into a TreeEnsemble node (a copy; unchanged when
/// it has none).
inline ::onnx::ModelProto fold_tree_walks(const ::onnx::ModelProto& model) {
  const ::onnx::GraphProto& g = model.graph();
  bool has_sum = false;
  for (const auto& n : g.node()) has_sum = has_sum || n.op_type() == "ReduceSum";
  if (!has_sum) return model;
  const TreeWalkMatcher matcher(model);
  for (int i = 0; i < g.node_size(); ++i) {
    if (g.node(i).op_type() != "ReduceSum" || g.node(i).output_size() < 1) continue;
    const std::optional<MatchedTreeWalk> walk = matcher.match(i);
    if (!walk) continue;
    const std::optional<tree_walk::Ending> ending = tree_walk::read_ending(matcher, *walk, i);
    if (!ending) continue;
    const std::string where = "onnx: the tree walk summed by node '" +
                              (g.node(i).name().empty() ? g.node(i).output(0) : g.node(i).name()) + "'";
    ::onnx::NodeProto ensemble =
        tree_walk::ensemble_node(*walk, *ending, tree_walk::trees_of(*walk, where), where);
    std::set<int> removed = walk->nodes;
    removed.insert(ending->nodes.begin(), ending->nodes.end());
    ::onnx::ModelProto out = model;
    auto* nodes = out.mutable_graph()->mutable_node();
    nodes->Clear();
    for (int j = 0; j < g.node_size(); ++j) {
      if (j == *removed.begin()) *nodes->Add() = ensemble;
      if (removed.count(j) == 0) *nodes->Add() = g.node(j);
    }
    return out;  // a model holds one walk (the last step of a pipeline)
  }
  return model;
}

}  // namespace onelearn::onnx::detail
