#pragma once
// What a fitted tree answers whatever it predicts (the classifier and the regressor hold one):
// the leaf of each row (apply), the nodes each row passes (decision_path, a sparse indicator
// as scikit-learn's CSR matrix), depth, leaves and the normalised feature importances.

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/SparseCore>

#include "onelearn/core/types.hpp"
#include "onelearn/core/validation.hpp"
#include "onelearn/tree/detail/tree_nodes.hpp"

namespace onelearn::tree {

/// decision_path's result: row i has a 1 in column j when row i passes node j.
using DecisionPath = Eigen::SparseMatrix<std::int8_t, Eigen::RowMajor, std::int64_t>;

}  // namespace onelearn::tree

namespace onelearn::tree::detail {

/// Importances divided by their sum (all zero for a tree that is one leaf), as scikit-learn's
/// feature_importances_.
inline Vector<double> normalized_importances(const std::vector<double>& raw) {
  Vector<double> out = Eigen::Map<const Vector<double>>(raw.data(), static_cast<index_t>(raw.size()));
  const double total = out.sum();
  if (total > 0) out /= total;
  return out;
}

template <class T>
std::vector<index_t> leaves_of(const TreeNodes& tree, const MatrixRef<T>& X) {
  std::vector<index_t> out(static_cast<std::size_t>(X.rows()));
  for (index_t i = 0; i < X.rows(); ++i) {
    out[static_cast<std::size_t>(i)] = tree.leaf_of([&](index_t f) { return X(i, f); });
  }
  return out;
}

/// Checks X for predict: fitted, the features seen in fit, finite.
template <class T>
void check_predict_input(std::string_view where, bool fitted, index_t n_features,
                         const MatrixRef<T>& X) {
  validation::check_fitted(where, fitted);
  validation::check_n_features(where, n_features, X.cols());
  validation::check_finite(where, "X", X);
}

template <class T>
Labels apply_tree(const TreeNodes& tree, const MatrixRef<T>& X) {
  const std::vector<index_t> leaves = leaves_of(tree, X);
  Labels out(X.rows());
  for (index_t i = 0; i < X.rows(); ++i) out(i) = leaves[static_cast<std::size_t>(i)];
  return out;
}

template <class T>
DecisionPath decision_path_of(const TreeNodes& tree, const MatrixRef<T>& X) {
  std::vector<Eigen::Triplet<std::int8_t, std::int64_t>> entries;
  for (index_t i = 0; i < X.rows(); ++i) {
    index_t node = 0;
    while (true) {
      entries.emplace_back(i, node, std::int8_t{1});
      if (tree.is_leaf(node)) break;
      const auto n = static_cast<std::size_t>(node);
      const auto v = static_cast<float>(X(i, static_cast<index_t>(tree.feature[n])));
      node = static_cast<index_t>(static_cast<double>(v) <= tree.threshold[n]
                                      ? tree.children_left[n]
                                      : tree.children_right[n]);
    }
  }
  DecisionPath out(X.rows(), tree.node_count());
  out.setFromTriplets(entries.begin(), entries.end());
  return out;
}

/// Depth of the deepest leaf (the root alone: 0).
inline index_t tree_depth(const TreeNodes& tree) {
  std::vector<index_t> depth(static_cast<std::size_t>(tree.node_count()), 0);
  index_t deepest = 0;
  for (index_t node = 0; node < tree.node_count(); ++node) {  // parents come before children
    const auto n = static_cast<std::size_t>(node);
    deepest = std::max(deepest, depth[n]);
    if (tree.is_leaf(node)) continue;
    depth[static_cast<std::size_t>(tree.children_left[n])] = depth[n] + 1;
    depth[static_cast<std::size_t>(tree.children_right[n])] = depth[n] + 1;
  }
  return deepest;
}

inline index_t leaf_count(const TreeNodes& tree) {
  index_t count = 0;
  for (index_t node = 0; node < tree.node_count(); ++node) count += tree.is_leaf(node) ? 1 : 0;
  return count;
}

}  // namespace onelearn::tree::detail
