#pragma once
// One fitted tree of histogram gradient boosting, as scikit-learn's TreePredictor: nodes in an
// array (the root first), a split sending x to the left when x <= threshold (raw values) or
// bin <= bin_threshold (binned values), and missing values (NaN, or the missing-values bin) to
// the side learned in fit. Leaf values already include the learning rate. A categorical split
// sends a category left when it is in the split's bitset (of raw categories, or of bins);
// a raw value that is not one of the feature's known categories goes where missing values go.

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "onelearn/core/errors.hpp"
#include "onelearn/core/types.hpp"
#include "onelearn/ensemble/detail/hist_categories.hpp"

namespace onelearn::ensemble::detail {

struct HistNode {
  double value = 0;              ///< the leaf's contribution (learning rate included)
  double threshold = 0;          ///< raw-value threshold (+inf: every non-missing value left)
  double gain = -1;              ///< the split's gain (-1 for a leaf)
  std::int64_t count = 0;        ///< training rows that reached the node (all ranks)
  std::int32_t feature = -1;
  std::int32_t left = -1;
  std::int32_t right = -1;
  std::uint8_t bin_threshold = 0;
  bool missing_go_to_left = false;
  bool is_leaf = true;
  std::int32_t category_split = -1;  ///< categorical split: index into HistTree::category_splits
};

/// The sets of a categorical split (scikit-learn's binned and raw left_cat_bitsets, and its
/// known_cat_bitsets row of the feature).
struct CategorySplit {
  CategoryBitset left_bins;        ///< bins sent left (the missing-values bin included if so)
  CategoryBitset left_categories;  ///< raw category values sent left
  CategoryBitset known_categories; ///< every category of the feature seen in fit
};

struct HistTree {
  std::vector<HistNode> nodes;
  std::vector<CategorySplit> category_splits;

  /// Whether raw value v (not NaN) goes left at split node `node`.
  [[nodiscard]] bool goes_left(const HistNode& node, double v) const {
    if (node.category_split < 0) return v <= node.threshold;
    const CategorySplit& split = category_splits[static_cast<std::size_t>(node.category_split)];
    const int c = category_index(v);
    if (c < 0 || !split.known_categories.has(static_cast<unsigned>(c))) {
      return node.missing_go_to_left;
    }
    return split.left_categories.has(static_cast<unsigned>(c));
  }

  /// The child of split node `node` that raw value v (NaN: missing) goes to.
  [[nodiscard]] std::int32_t child(const HistNode& node, double v) const {
    const bool left = std::isnan(v) ? node.missing_go_to_left : goes_left(node, v);
    return left ? node.left : node.right;
  }

  /// The leaf value reached by row x (raw feature values, NaN as missing).
  template <class Row>
  [[nodiscard]] double predict(const Row& x) const {
    std::size_t at = 0;
    while (!nodes[at].is_leaf) {
      const HistNode& node = nodes[at];
      at = static_cast<std::size_t>(child(node, static_cast<double>(x(node.feature))));
    }
    return nodes[at].value;
  }

  /// The leaf value reached by a binned row (its bins, feature f at row_bins[f]).
  [[nodiscard]] double predict_binned(const std::uint8_t* row_bins, int missing_bin) const {
    std::size_t at = 0;
    while (!nodes[at].is_leaf) {
      const HistNode& node = nodes[at];
      const int b = row_bins[node.feature];
      const bool left =
          b == missing_bin ? node.missing_go_to_left
          : node.category_split >= 0
              ? category_splits[static_cast<std::size_t>(node.category_split)].left_bins.has(
                    static_cast<unsigned>(b))
              : b <= node.bin_threshold;
      at = static_cast<std::size_t>(left ? node.left : node.right);
    }
    return nodes[at].value;
  }

  /// Throws invalid_argument (prefixed by `where`) unless the nodes form a tree rooted at node
  /// 0 whose children come after their parent, whose splits read features below n_features
  /// and whose categorical splits exist: what predict relies on, for trees not grown here.
  void check_structure(const std::string& where, index_t n_features) const {
    auto fail = [&](std::size_t node, const std::string& what) {
      throw invalid_argument(where + ": node " + std::to_string(node) + " " + what);
    };
    if (nodes.empty()) throw invalid_argument(where + ": expected a tree with nodes, found none");
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const HistNode& node = nodes[i];
      if (node.is_leaf) continue;
      if (node.feature < 0 || node.feature >= n_features) {
        fail(i, "reads feature " + std::to_string(node.feature) + ", expected one below " +
                    std::to_string(n_features));
      }
      for (const std::int32_t child : {node.left, node.right}) {
        if (child <= static_cast<std::int32_t>(i) || child >= static_cast<std::int32_t>(nodes.size())) {
          fail(i, "has child " + std::to_string(child) + ", expected one after it and below " +
                      std::to_string(nodes.size()));
        }
      }
      if (node.category_split >= static_cast<std::int32_t>(category_splits.size())) {
        fail(i, "names categorical split " + std::to_string(node.category_split) + " of " +
                    std::to_string(category_splits.size()));
      }
    }
  }

  [[nodiscard]] index_t n_leaves() const {
    index_t n = 0;
    for (const HistNode& node : nodes) n += node.is_leaf ? 1 : 0;
    return n;
  }
};

/// A tree without categorical splits laid out for walking rows in lockstep (Booster::
/// raw_predict): 24 bytes a node, the children by index, a leaf its own two children. A step
/// of a walk is then three loads and no branch: the child is picked by index, and a row at a
/// leaf stays there. (HistNode's walk branches on the leaf flag and on the side taken, half of
/// them mispredicted.)
struct WalkTable {
  struct Step {
    double threshold = 0;           ///< go left when x <= threshold (never for NaN)
    std::int32_t feature = 0;       ///< a leaf reads feature 0, and goes nowhere
    std::int32_t missing_left = 0;  ///< 1: NaN goes left
    std::array<std::int32_t, 2> child{};  ///< {left, right}
  };
  std::vector<Step> steps;

  /// The table of `tree`, or empty when the tree has a categorical split.
  static WalkTable of(const HistTree& tree) {
    WalkTable out;
    if (!tree.category_splits.empty()) return out;
    out.steps.resize(tree.nodes.size());
    for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
      const HistNode& node = tree.nodes[i];
      Step& step = out.steps[i];
      const auto self = static_cast<std::int32_t>(i);
      if (node.is_leaf) {
        step.child = {self, self};
        continue;
      }
      step.threshold = node.threshold;
      step.feature = node.feature;
      step.missing_left = node.missing_go_to_left ? 1 : 0;
      step.child = {node.left, node.right};
    }
    return out;
  }

  /// The node that raw value x (NaN: missing) of step's feature leads to.
  [[nodiscard]] static std::int32_t next(const Step& step, double x) {
    const int left = int{x <= step.threshold} | (int{std::isnan(x)} & step.missing_left);
    return step.child[static_cast<std::size_t>(1 - left)];
  }
};

}  // namespace onelearn::ensemble::detail
