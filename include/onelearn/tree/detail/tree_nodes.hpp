#pragma once
// A fitted decision tree as scikit-learn's Tree stores it (sklearn/tree/_tree.pyx): parallel
// arrays indexed by node id, node 0 the root, -1 (leaf) in children_left/right, -2 (undefined)
// in feature and threshold of a leaf. A sample goes left when x[feature] <= threshold, with x
// rounded to float32 first, as scikit-learn does. `value` holds, per node, the weighted class
// counts (classification, scikit-learn 1.2's layout) or the weighted mean target (regression).
//
// The arrays travel between ranks as one vector of doubles (pack/unpack): a distributed forest
// builds its trees on several ranks and every rank ends with all of them.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"

namespace onelearn::tree::detail {

inline constexpr std::int64_t leaf_child = -1;         ///< scikit-learn's TREE_LEAF
inline constexpr std::int64_t undefined_feature = -2;  ///< scikit-learn's TREE_UNDEFINED

struct TreeNodes {
  std::vector<std::int64_t> children_left, children_right, feature;
  std::vector<double> threshold, impurity, weighted_n_node_samples;
  std::vector<std::int64_t> n_node_samples;
  std::vector<double> value;  ///< node_count x n_values, row-major
  index_t n_values = 1;       ///< classes (classification) or 1 (regression)

  [[nodiscard]] index_t node_count() const noexcept {
    return static_cast<index_t>(feature.size());
  }
  [[nodiscard]] bool is_leaf(index_t node) const noexcept {
    return children_left[static_cast<std::size_t>(node)] == leaf_child;
  }
  [[nodiscard]] std::span<const double> node_value(index_t node) const noexcept {
    return {value.data() + node * n_values, static_cast<std::size_t>(n_values)};
  }

  /// Calls share(c, weight of class c / the node's total weight) for every class: a
  /// classification leaf's predict_proba, written once for trees, forests and their export.
  template <class Share>
  void for_each_class_share(index_t node, Share&& share) const {
    const auto v = node_value(node);
    double total = 0;
    for (double w : v) total += w;
    for (std::size_t c = 0; c < v.size(); ++c) share(static_cast<index_t>(c), v[c] / total);
  }

  /// Appends a node and returns its id; its children are set when they are added.
  index_t add_node(index_t parent, bool is_left, std::int64_t split_feature, double split_threshold,
                   double node_impurity, std::int64_t n_samples, double weighted_n_samples,
                   std::span<const double> node_values) {
    const auto id = static_cast<std::int64_t>(feature.size());
    if (parent >= 0) {
      (is_left ? children_left : children_right)[static_cast<std::size_t>(parent)] = id;
    }
    children_left.push_back(leaf_child);
    children_right.push_back(leaf_child);
    feature.push_back(split_feature);
    threshold.push_back(split_threshold);
    impurity.push_back(node_impurity);
    n_node_samples.push_back(n_samples);
    weighted_n_node_samples.push_back(weighted_n_samples);
    value.insert(value.end(), node_values.begin(), node_values.end());
    return id;
  }

  /// Turns a node that was given a split into a leaf (best-first growth out of leaves).
  void make_leaf(index_t node) {
    const auto i = static_cast<std::size_t>(node);
    children_left[i] = children_right[i] = leaf_child;
    feature[i] = undefined_feature;
    threshold[i] = static_cast<double>(undefined_feature);
  }

  /// The leaf a row reaches; `x(f)` gives the row's feature f.
  template <class Row>
  [[nodiscard]] index_t leaf_of(const Row& x) const {
    index_t node = 0;
    while (!is_leaf(node)) {
      const auto i = static_cast<std::size_t>(node);
      const auto v = static_cast<float>(x(static_cast<index_t>(feature[i])));
      node = static_cast<index_t>(static_cast<double>(v) <= threshold[i] ? children_left[i]
                                                                          : children_right[i]);
    }
    return node;
  }

  /// Impurity decrease brought by each feature, weighted by the samples reaching the node and
  /// divided by the root's weight (scikit-learn's compute_feature_importances(normalize=False)).
  [[nodiscard]] std::vector<double> raw_feature_importances(index_t n_features) const {
    std::vector<double> out(static_cast<std::size_t>(n_features), 0.0);
    for (index_t node = 0; node < node_count(); ++node) {
      if (is_leaf(node)) continue;
      const auto i = static_cast<std::size_t>(node);
      const auto l = static_cast<std::size_t>(children_left[i]);
      const auto r = static_cast<std::size_t>(children_right[i]);
      out[static_cast<std::size_t>(feature[i])] +=
          weighted_n_node_samples[i] * impurity[i] -
          weighted_n_node_samples[l] * impurity[l] - weighted_n_node_samples[r] * impurity[r];
    }
    for (double& v : out) v /= weighted_n_node_samples[0];
    return out;
  }

  /// Checks a tree that was not grown here (from_fitted: an imported model): the arrays agree
  /// in length, every split reads one of n_features features and points to two later nodes
  /// (so every path ends), every leaf has n_values values.
  void check_structure(std::string_view where, index_t n_features) const {
    auto fail = [&](const std::string& problem) {
      throw invalid_argument(std::string(where) + ": " + problem);
    };
    const auto n = static_cast<std::size_t>(node_count());
    if (n == 0) fail("expected a tree of at least one node, found none");
    if (children_left.size() != n || children_right.size() != n || threshold.size() != n ||
        impurity.size() != n || n_node_samples.size() != n ||
        weighted_n_node_samples.size() != n || value.size() != n * static_cast<std::size_t>(n_values)) {
      fail("expected node arrays of " + std::to_string(n) + " entries (value: " +
           std::to_string(n_values) + " per node), found arrays of other lengths");
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (children_left[i] == leaf_child && children_right[i] == leaf_child) continue;
      const auto node = static_cast<std::int64_t>(i);
      if (children_left[i] <= node || children_right[i] <= node ||
          children_left[i] >= static_cast<std::int64_t>(n) ||
          children_right[i] >= static_cast<std::int64_t>(n)) {
        fail("expected node " + std::to_string(i) + "'s children among the later nodes, found " +
             std::to_string(children_left[i]) + " and " + std::to_string(children_right[i]));
      }
      if (feature[i] < 0 || feature[i] >= n_features) {
        fail("expected node " + std::to_string(i) + " to split one of the " +
             std::to_string(n_features) + " features, found feature " + std::to_string(feature[i]));
      }
    }
  }

  /// The arrays as one vector of doubles (ids and counts are exact in a double up to 2^53).
  [[nodiscard]] std::vector<double> pack() const {
    std::vector<double> out{static_cast<double>(node_count()), static_cast<double>(n_values)};
    auto put = [&](const auto& v) { out.insert(out.end(), v.begin(), v.end()); };
    put(children_left);
    put(children_right);
    put(feature);
    put(threshold);
    put(impurity);
    put(n_node_samples);
    put(weighted_n_node_samples);
    put(value);
    return out;
  }

  /// Reads one tree written by pack() at `at`, and moves `at` past it.
  static TreeNodes unpack(std::span<const double> packed, std::size_t& at) {
    auto need = [&](std::size_t count) {
      if (at + count > packed.size()) {
        throw invalid_argument("tree::unpack: expected " + std::to_string(count) +
                               " more values, found " + std::to_string(packed.size() - at));
      }
    };
    need(2);
    TreeNodes t;
    const auto n = static_cast<std::size_t>(packed[at]);
    t.n_values = static_cast<index_t>(packed[at + 1]);
    at += 2;
    need(n * 7 + n * static_cast<std::size_t>(t.n_values));
    auto take = [&](auto& v, std::size_t count) {
      using V = typename std::decay_t<decltype(v)>::value_type;
      v.resize(count);
      for (std::size_t i = 0; i < count; ++i) v[i] = static_cast<V>(packed[at + i]);
      at += count;
    };
    take(t.children_left, n);
    take(t.children_right, n);
    take(t.feature, n);
    take(t.threshold, n);
    take(t.impurity, n);
    take(t.n_node_samples, n);
    take(t.weighted_n_node_samples, n);
    take(t.value, n * static_cast<std::size_t>(t.n_values));
    return t;
  }
};

}  // namespace onelearn::tree::detail
